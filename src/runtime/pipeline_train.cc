// The 1F1B training schedule over a pp group, and the gradient sync of a tied embedding.
#include <ATen/ATen.h>

#include <c10/core/GradMode.h>
#include <deque>

#include "core/check.h"
#include "runtime/detail/pipeline_link.h"
#include "runtime/detail/pipeline_schedule.h"
#include "runtime/pipeline.h"

namespace realign::runtime {
namespace {

// One micro-batch between its forward and its backward on this stage.
struct InFlight {
  at::Tensor input;   // (B, T, H) leaf received from stage s-1 (requires grad); undefined on the first stage
  at::Tensor output;  // the loss on the last stage, else the stage's output (B, T, H)
  std::unique_ptr<comm::PendingOp> send;  // the output's send to stage s+1 (non-last stages)
};

}  // namespace

std::vector<double> pipeline_train_1f1b(comm::Group& pp, model::Transformer& model,
                                        const std::vector<model::TokenBatch>& micro_batches,
                                        const StageHead& loss_fn) {
  check_pipeline_args(pp, model, micro_batches, "pipeline_train_1f1b");
  c10::AutoGradMode grad_mode(true);
  const int stage = pp.rank(), n_stages = pp.size(), n_micro = int(micro_batches.size());
  const bool first = model.first_stage(), last = model.last_stage();
  auto batch = [&](int m) -> const model::TokenBatch& { return micro_batches[size_t(m)]; };

  // Receives are posted one micro-batch ahead, so the next input (or output gradient) arrives while this
  // stage computes; posting early never blocks.
  PostedRecv next_input, next_grad;
  if (!first && n_micro > 0)
    next_input = PostedRecv(pp, boundary_buffer(model, batch(0)), stage - 1, kActivationTag);
  if (!last && n_micro > 0)
    next_grad = PostedRecv(pp, boundary_buffer(model, batch(0)), stage + 1, kGradientTag);

  std::vector<double> losses(size_t(n_micro), 0.0);
  std::deque<InFlight> in_flight;  // forwards whose backward is pending, oldest first
  std::deque<std::unique_ptr<comm::PendingOp>> grad_sends;
  int n_forward = 0, n_backward = 0;

  auto forward = [&]() {
    const int m = n_forward++;
    InFlight f;
    if (!first) {
      f.input = next_input.wait();
      f.input.set_requires_grad(true);
      if (m + 1 < n_micro)
        next_input = PostedRecv(pp, boundary_buffer(model, batch(m + 1)), stage - 1, kActivationTag);
    }
    at::Tensor hidden = model.forward_stage(batch(m), f.input);
    if (last) {
      f.output = loss_fn(hidden, m);
      REALIGN_CHECK(f.output.defined() && f.output.numel() == 1 && f.output.requires_grad())
          << "pipeline_train_1f1b: loss_fn must return a scalar that depends on the parameters (micro-batch "
          << m << ")";
      losses[size_t(m)] = f.output.detach().to(at::kDouble).item<double>();
    } else {
      f.output = hidden;
      f.send = pp.isend(to_host(hidden.detach()), stage + 1, kActivationTag);
    }
    in_flight.push_back(std::move(f));
  };

  auto backward = [&]() {
    const int m = n_backward++;
    REALIGN_CHECK(!in_flight.empty()) << "1F1B: backward of micro-batch " << m << " before its forward";
    InFlight f = std::move(in_flight.front());
    in_flight.pop_front();
    if (last) {
      f.output.backward();
    } else {
      at::Tensor grad = next_grad.wait();
      if (m + 1 < n_micro)
        next_grad = PostedRecv(pp, boundary_buffer(model, batch(m + 1)), stage + 1, kGradientTag);
      f.output.backward(grad.to(f.output.device()));
      // Stage s+1 sent this gradient after receiving our output, so the send is complete: the wait only
      // releases the buffer.
      f.send->wait();
    }
    if (!first) {
      const at::Tensor g = f.input.grad();
      REALIGN_CHECK(g.defined()) << "stage " << stage << ": no gradient reached the input of micro-batch "
                                 << m;
      // At most two gradient sends in flight. Waiting on the older one needs stage s-1 to have posted its
      // receive, which it does after receiving the gradient before it (already sent) and depends on nothing
      // else from this stage, so the wait cannot deadlock.
      if (grad_sends.size() == 2) {
        grad_sends.front()->wait();
        grad_sends.pop_front();
      }
      grad_sends.push_back(pp.isend(to_host(g), stage - 1, kGradientTag));
    }
  };

  for (const PipelineStep& step : one_f_one_b_schedule(stage, n_stages, n_micro)) {
    if (step.kind == PipelineStep::Kind::kForward) {
      REALIGN_CHECK(step.micro == n_forward);
      forward();
    } else {
      REALIGN_CHECK(step.micro == n_backward);
      backward();
    }
  }
  REALIGN_CHECK(in_flight.empty() && n_forward == n_micro && n_backward == n_micro);
  for (auto& s : grad_sends) s->wait();

  at::Tensor all = at::tensor(losses, at::TensorOptions().dtype(at::kDouble));
  pp.broadcast(all, n_stages - 1);
  return std::vector<double>(all.data_ptr<double>(), all.data_ptr<double>() + n_micro);
}

void sync_tied_embedding_grads(comm::Group& pp, model::Transformer& model) {
  const auto& par = model.parallel();
  REALIGN_CHECK(pp.size() == par.n_stages && pp.rank() == par.stage)
      << "sync_tied_embedding_grads: pp group rank " << pp.rank() << " of " << pp.size() << " runs stage "
      << par.stage << " of " << par.n_stages;
  if (!model.spec().tied_embeddings || model.head() != HeadKind::kLanguageModel || par.n_stages == 1) return;
  if (!model.first_stage() && !model.last_stage()) return;
  at::Tensor& w = model.named_params().at("embed.weight");
  c10::NoGradGuard no_grad;
  const at::Tensor mine =
      w.grad().defined() ? to_host(w.grad()) : at::zeros(w.sizes(), w.options().device(at::kCPU));
  at::Tensor theirs = at::empty_like(mine);
  const int peer = model.first_stage() ? par.n_stages - 1 : 0;
  auto send = pp.isend(mine, peer, kTiedGradTag);
  auto recv = pp.irecv(theirs, peer, kTiedGradTag);
  send->wait();
  recv->wait();
  // The same operand order on both stages (first stage's + last stage's), so both copies are bit-equal.
  at::Tensor sum = model.first_stage() ? mine + theirs : theirs + mine;
  if (w.grad().defined())
    w.mutable_grad().copy_(sum);
  else
    w.mutable_grad() = sum.to(w.device());
}

}  // namespace realign::runtime
