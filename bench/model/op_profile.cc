#include "op_profile.h"

#include <ATen/ATen.h>

#include "core/torch_compat.h"
#if REALIGN_TORCH_HAS_LEGACY_PROFILER
#include <torch/csrc/autograd/profiler_legacy.h>
#endif

#include <chrono>
#include <utility>
#include <vector>

namespace bench {

#if REALIGN_TORCH_HAS_LEGACY_PROFILER
OpProfile profile_ops(const std::function<void()>& work) {
  namespace prof = torch::autograd::profiler;
  prof::enableProfilerLegacy(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU,
                                                                   /*report_input_shapes=*/true));
  work();
  const prof::thread_event_lists lists = prof::disableProfilerLegacy();
  OpProfile out;
  for (const auto& events : lists) {
    // Ranges nest per thread: a pop closes the latest push; its children's time is kept beside it.
    std::vector<std::pair<const prof::LegacyEvent*, double>> open;
    for (const prof::LegacyEvent& e : events) {
      if (e.kind() == prof::EventKind::PushRange) {
        open.emplace_back(&e, 0.0);
        if (is_gemm(e.name())) out.gemms.push_back(GemmCall{e.name(), e.shapes()});
      } else if (e.kind() == prof::EventKind::PopRange && !open.empty()) {
        const auto [push, children_us] = open.back();
        open.pop_back();
        const double total_us = push->cpuElapsedUs(e);
        OpTime& t = out.ops[push->name()];
        t.self_s += (total_us - children_us) / 1e6;
        ++t.calls;
        if (!open.empty()) open.back().second += total_us;
      }
    }
  }
  return out;
}
#endif

double replay_seconds(const std::vector<GemmCall>& gemms) {
  std::vector<std::vector<at::Tensor>> operands;
  for (const GemmCall& g : gemms) {
    std::vector<at::Tensor> in;
    for (const auto& shape : g.shapes)
      if (!shape.empty()) in.push_back(at::randn(shape));
    operands.push_back(std::move(in));
  }
  auto run = [&](size_t i) {
    const std::string& op = gemms[i].op;
    const std::vector<at::Tensor>& x = operands[i];
    if (op == "aten::mm") return at::mm(x[0], x[1]);
    if (op == "aten::bmm") return at::bmm(x[0], x[1]);
    if (op == "aten::addmm") return at::addmm(x[0], x[1], x[2]);
    if (op == "aten::baddbmm") return at::baddbmm(x[0], x[1], x[2]);
    return at::addbmm(x[0], x[1], x[2]);
  };
  for (size_t i = 0; i < gemms.size(); ++i) run(i);  // warm-up: first-touch of outputs
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < gemms.size(); ++i) run(i);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool is_gemm(const std::string& op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         op == "aten::addbmm";
}

}  // namespace bench
