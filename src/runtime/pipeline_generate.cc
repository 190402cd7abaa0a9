// Pipelined generation: every stage keeps one KV cache per micro-batch and walks the (step, micro-batch)
// items in the same order; the last stage samples and sends the tokens back to the others.
#include <ATen/ATen.h>

#include <algorithm>
#include <c10/core/GradMode.h>
#include <deque>
#include <memory>

#include "core/check.h"
#include "core/error.h"
#include "runtime/detail/pipeline_link.h"
#include "runtime/pipeline.h"

namespace realign::runtime {
namespace {

struct MicroGeneration {
  int64_t begin = 0, end = 0;  // its rows of the prompts
  model::PaddedPrompts prompts;
  model::KvCache cache;                   // this stage's layers
  std::vector<at::Generator> generators;  // last stage only
  std::unique_ptr<model::DecodeRows> rows;
  PostedRecv tokens;  // other stages: the tokens sampled in the step this stage ran last
  int64_t size() const { return end - begin; }
};

// Sends left in flight, at most `limit`: waiting on the oldest cannot deadlock, since its receiver posts the
// matching receive once it reaches that (step, micro-batch), which needs only messages sent before it.
class SendQueue {
 public:
  explicit SendQueue(size_t limit) : limit_(std::max<size_t>(1, limit)) {}
  void push(std::unique_ptr<comm::PendingOp> op) {
    ops_.push_back(std::move(op));
    if (ops_.size() > limit_) {
      ops_.front()->wait();
      ops_.pop_front();
    }
  }
  void wait_all() {
    for (auto& op : ops_) op->wait();
    ops_.clear();
  }

 private:
  size_t limit_;
  std::deque<std::unique_ptr<comm::PendingOp>> ops_;
};

}  // namespace

model::GenerateResult pipeline_generate(comm::Group& pp, model::Transformer& model,
                                        const std::vector<std::vector<int64_t>>& prompts,
                                        const model::GenerateOptions& o, int64_t rows_per_micro) {
  check_pipeline_args(pp, model, {}, "pipeline_generate");
  REALIGN_CHECK(rows_per_micro >= 1) << "pipeline_generate: " << rows_per_micro << " rows per micro-batch";
  model::check_generate_args(model, prompts, o);
  // The stages finish their micro-batches at different steps, which expert parallelism's per-step
  // all-to-alls cannot follow (search/candidates.cc keeps such plans out).
  if (model.parallel().ep && model.ep().size() > 1)
    throw Error("plan", "pipelined generation (pp > 1) with expert parallelism (ep > 1) is not supported");
  c10::NoGradGuard no_grad;
  const int n_stages = pp.size(), stage = pp.rank();
  const bool first = model.first_stage(), last = model.last_stage();
  const at::Device dev = model.device();
  const int64_t B = int64_t(prompts.size()), H = model.spec().hidden;

  // Without row seeds the micro-batches draw from one generator (copies share its state).
  const std::vector<at::Generator> shared =
      o.row_seeds.empty() ? model::make_generators(o, 0, B) : std::vector<at::Generator>{};
  std::vector<MicroGeneration> micro;
  micro.reserve(size_t((B + rows_per_micro - 1) / rows_per_micro));
  for (int64_t begin = 0; begin < B; begin += rows_per_micro) {
    MicroGeneration& mg = micro.emplace_back();
    mg.begin = begin;
    mg.end = std::min(B, begin + rows_per_micro);
    mg.prompts = model::left_pad({prompts.begin() + begin, prompts.begin() + mg.end});
    mg.cache = model.make_cache(mg.size(), mg.prompts.length() + o.max_new_tokens);
    if (last) mg.generators = o.row_seeds.empty() ? shared : model::make_generators(o, mg.begin, mg.end);
    mg.rows = std::make_unique<model::DecodeRows>(mg.prompts, o, dev);
  }

  SendQueue sends(2 * micro.size() * size_t(n_stages));
  const auto boundary = at::TensorOptions().dtype(model.dtype()).device(at::kCPU);
  size_t live = micro.size();
  for (int64_t step = 0; live > 0; ++step) {
    for (MicroGeneration& mg : micro) {
      if (mg.rows->finished()) continue;
      if (step > 0 && !last) {
        mg.rows->record(mg.tokens.wait(), at::Tensor());
        if (mg.rows->finished()) {
          --live;
          continue;
        }
      }
      const int64_t T = step == 0 ? mg.prompts.length() : 1;
      at::Tensor in;
      if (!first)
        in = PostedRecv(pp, at::empty({mg.size(), T, H}, boundary), stage - 1, kActivationTag).wait();
      at::Tensor h;
      if (step == 0) {
        h = model.forward_cached(mg.prompts.tokens.to(dev), mg.prompts.positions.to(dev),
                                 mg.prompts.valid.to(dev), mg.cache, in);
      } else {
        const model::DecodeRows::Step s = mg.rows->next_step();
        h = model.forward_cached(s.tokens, s.positions, s.valid, mg.cache, in);
      }
      if (!last) {
        sends.push(pp.isend(to_host(h), stage + 1, kActivationTag));
        mg.tokens = PostedRecv(pp, at::empty({mg.size()}, at::kLong), n_stages - 1, kTokenTag);
        continue;
      }
      const model::Choice c = model::sample_next(model, h.narrow(1, T - 1, 1), o, mg.generators);
      mg.rows->record(c.tokens, c.logprobs);
      const at::Tensor tokens = to_host(c.tokens);
      for (int s = 0; s < n_stages - 1; ++s) sends.push(pp.isend(tokens, s, kTokenTag));
      if (mg.rows->finished()) --live;
    }
  }
  sends.wait_all();

  // Every stage recorded the same tokens; the log-probs exist on the last stage only.
  std::vector<model::GenerateResult> parts;
  std::vector<at::Tensor> logprobs;
  int64_t N = 0;
  for (const MicroGeneration& mg : micro) {
    parts.push_back(mg.rows->result());
    N = std::max(N, parts.back().tokens.size(1));
    if (last) logprobs.push_back(parts.back().logprobs);
  }
  logprobs = broadcast_tensors(pp, logprobs, n_stages - 1);
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  model::GenerateResult out{at::full({B, N}, o.pad_id, i64), at::zeros({B, N}, at::kFloat),
                            at::zeros({B}, i64)};
  for (size_t k = 0; k < micro.size(); ++k) {
    const MicroGeneration& mg = micro[k];
    const int64_t n = parts[k].tokens.size(1);
    out.tokens.narrow(0, mg.begin, mg.size()).narrow(1, 0, n).copy_(parts[k].tokens);
    out.logprobs.narrow(0, mg.begin, mg.size()).narrow(1, 0, n).copy_(logprobs[k]);
    out.lengths.narrow(0, mg.begin, mg.size()).copy_(parts[k].lengths);
  }
  return {out.tokens.to(dev), out.logprobs.to(dev), out.lengths.to(dev)};
}

}  // namespace realign::runtime
