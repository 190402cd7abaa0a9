// Pipelined inference: each stage streams the micro-batches through its layers; sends stay in flight so that
// neighbouring stages work on different micro-batches at the same time.
#include <ATen/ATen.h>

#include <c10/core/GradMode.h>
#include <deque>

#include "core/check.h"
#include "runtime/detail/pipeline_link.h"
#include "runtime/pipeline.h"

namespace realign::runtime {

std::vector<at::Tensor> pipeline_forward(comm::Group& pp, model::Transformer& model,
                                         const std::vector<model::TokenBatch>& micro_batches,
                                         const StageHead& head) {
  check_pipeline_args(pp, model, micro_batches, "pipeline_forward");
  c10::NoGradGuard no_grad;
  const int stage = pp.rank(), n_micro = int(micro_batches.size());
  const bool first = model.first_stage(), last = model.last_stage();
  auto post_recv = [&](int m) {
    return PostedRecv(pp, boundary_buffer(model, micro_batches[size_t(m)]), stage - 1, kActivationTag);
  };

  std::vector<at::Tensor> outputs;
  PostedRecv next;
  if (!first && n_micro > 0) next = post_recv(0);
  // At most two sends in flight: waiting on send m-2 only needs stage s+1 to have received m-3, which it can
  // always do (it depends on nothing this stage has not sent), so the wait cannot deadlock.
  std::deque<std::unique_ptr<comm::PendingOp>> sends;
  for (int m = 0; m < n_micro; ++m) {
    at::Tensor in;
    if (!first) {
      in = next.wait();
      if (m + 1 < n_micro) next = post_recv(m + 1);  // the next input arrives while this one computes
    }
    at::Tensor hidden = model.forward_stage(micro_batches[size_t(m)], in);
    if (last) {
      at::Tensor out = head(hidden, m);
      REALIGN_CHECK(out.defined()) << "pipeline_forward: the head returned no tensor for micro-batch " << m;
      outputs.push_back(out);
      continue;
    }
    if (sends.size() == 2) {
      sends.front()->wait();
      sends.pop_front();
    }
    sends.push_back(pp.isend(to_host(hidden), stage + 1, kActivationTag));
  }
  for (auto& s : sends) s->wait();
  return broadcast_tensors(pp, outputs, pp.size() - 1);
}

}  // namespace realign::runtime
