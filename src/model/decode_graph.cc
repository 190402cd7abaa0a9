#include "model/decode_graph.h"

#include <ATen/ATen.h>

#include "core/check.h"

#if REALIGN_WITH_CUDA_GRAPHS
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace realign::model {

#if REALIGN_WITH_CUDA_GRAPHS
struct DecodeGraph::Impl {
  explicit Impl(c10::DeviceIndex device) : stream(c10::cuda::getStreamFromPool(false, device)) {}
  // Recording needs a stream other than the default one; the warm-up step runs there too, so that cuBLAS
  // sets up its handle and workspace for that stream before the recording.
  c10::cuda::CUDAStream stream;
  at::cuda::CUDAGraph graph;
  bool recorded = false;
};
#else
struct DecodeGraph::Impl {};
#endif

std::string DecodeGraph::unavailable_because(const Transformer& m) {
#if !REALIGN_WITH_CUDA_GRAPHS
  (void)m;
  return "this libtorch has no CUDA graphs";
#else
  if (!m.device().is_cuda()) return "the model is not on a GPU";
  if (m.parallel().n_stages != 1) return "pipeline stages decode through runtime::pipeline_generate";
  if (m.tp().size() > 1) return "tensor-parallel peers meet in Gloo collectives on the host";
  if (m.spec().moe.num_experts > 0) return "mixture-of-experts routing reads its sizes on the host";
  return "";
#endif
}

DecodeGraph::DecodeGraph(Transformer& model, KvCache& cache, std::unique_ptr<Impl> impl)
    : model_(model), cache_(cache), impl_(std::move(impl)) {
  const int64_t B = cache.valid.size(0);
  const auto i64 = at::TensorOptions().dtype(at::kLong).device(model.device());
  tokens_ = at::zeros({B, 1}, i64);
  positions_ = at::zeros({B, 1}, i64);
  valid_ = at::zeros({B, 1}, i64.dtype(at::kBool));
  slot_ = at::zeros({1}, i64);
}

DecodeGraph::~DecodeGraph() { cache_.write_slots = at::Tensor(); }

std::unique_ptr<DecodeGraph> DecodeGraph::make(Transformer& model, KvCache& cache) {
  if (!unavailable_because(model).empty()) return nullptr;
#if REALIGN_WITH_CUDA_GRAPHS
  return std::unique_ptr<DecodeGraph>(
      new DecodeGraph(model, cache, std::make_unique<Impl>(model.device().index())));
#else
  (void)cache;
  return nullptr;
#endif
}

at::Tensor DecodeGraph::run_body() {
  cache_.write_slots = slot_;
  at::Tensor out = model_.forward_cached(tokens_, positions_, valid_, cache_);
  cache_.write_slots = at::Tensor();
  return out;
}

at::Tensor DecodeGraph::step(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& valid) {
  const int64_t slot = cache_.length;
  REALIGN_CHECK(slot < cache_.capacity()) << "slot " << slot << " of " << cache_.capacity();
  tokens_.copy_(tokens);
  positions_.copy_(positions);
  valid_.copy_(valid);
  slot_.fill_(slot);
#if REALIGN_WITH_CUDA_GRAPHS
  if (impl_->recorded) {
    impl_->graph.replay();
    ++replays_;
  } else {
    // The side stream starts after the copies above and the default stream resumes after its work.
    c10::cuda::device_synchronize();
    {
      c10::cuda::CUDAStreamGuard on_side(impl_->stream);
      if (steps_ == 0) {
        out_ = run_body();  // the warm-up is this step's real work
      } else {
        // Every decode graph of the process records into one memory pool: a recording then reuses the
        // blocks the graphs before it left (each destroyed with its generate() call) instead of a new
        // private pool that allocates from the driver while the old ones stay cached. On the H200 a graphed
        // call of 64 steps paid about 1 s more than its steps (gpu-check of 2026-11-28, as a difference of
        // two calls); whether the pools were that cost is for bench/model's phase timing to say.
        static const auto shared_pool = at::cuda::graph_pool_handle();
        impl_->graph.capture_begin(shared_pool);
        out_ = run_body();
        impl_->graph.capture_end();
        impl_->recorded = true;
      }
    }
    c10::cuda::device_synchronize();
    if (impl_->recorded) {
      impl_->graph.replay();  // recording ran nothing
      ++replays_;
    }
  }
#else
  out_ = run_body();
#endif
  cache_.length = slot + 1;
  ++steps_;
  return out_;
}

}  // namespace realign::model
