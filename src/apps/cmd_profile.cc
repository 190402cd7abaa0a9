// `realign profile`: measure this machine and write a hardware profile the planner can load.
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "apps/commands.h"
#include "core/units.h"
#include "profile/machine_profile.h"

namespace realign::apps {

void add_profile_command(CLI::App& app) {
  auto* sub = app.add_subcommand("profile", "Measure this machine's GEMM, attention, memory and decode speed");
  struct Args {
    std::string out = "profile.json";
    std::string spec;
    std::string device = "auto";
    std::string dtype;
    int threads = 0;
    bool quick = false;
  };
  auto args = std::make_shared<Args>();
  sub->add_option("--out", args->out, "Where to write the profile (JSON)")->capture_default_str();
  sub->add_option("--spec", args->spec,
                  "Device spec whose peaks the efficiencies refer to (default: cpu-gloo on CPU, h100-sxm on CUDA)");
  sub->add_option("--device", args->device, "cpu, cuda or auto")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  sub->add_option("--dtype", args->dtype, "fp32 or bf16 (default: fp32 on CPU, bf16 on CUDA)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  sub->add_option("--threads", args->threads, "CPU threads for torch (default: all cores)");
  sub->add_flag("--quick", args->quick, "Smaller shapes (seconds instead of a minute)");
  sub->footer("Load the result with `realign plan CONFIG profile=profile.json`.");
  on_run(sub, [args] {
    const bool cuda = args->device == "cuda" || (args->device == "auto" && torch::cuda::is_available());
    if (cuda && !torch::cuda::is_available()) throw Error("--device", "cuda was asked for but no GPU is available");
    profile::ProfileOptions options;
    options.device = cuda ? at::Device(at::kCUDA) : at::Device(at::kCPU);
    const std::string dtype = args->dtype.empty() ? (cuda ? "bf16" : "fp32") : args->dtype;
    options.dtype = dtype == "bf16" ? at::kBFloat16 : at::kFloat;
    options.quick = args->quick;
    if (!cuda) at::set_num_threads(args->threads > 0 ? args->threads : int(std::thread::hardware_concurrency()));
    const std::string spec_name = args->spec.empty() ? (cuda ? "h100-sxm" : "cpu-gloo") : args->spec;
    const DeviceSpec spec = builtin_device(spec_name, "--spec");
    const auto result = profile::measure_machine(spec, options, [](int done, int total, const std::string& what) {
      const int width = 30, filled = total > 0 ? done * width / total : width;
      std::fprintf(stderr, "\r[%s%s] %d/%d %-44s", std::string(size_t(filled), '#').c_str(),
                   std::string(size_t(width - filled), '.').c_str(), done, total, what.c_str());
      if (done == total) std::fprintf(stderr, "\n");
    });
    std::printf("%-40s %12s %16s\n", "measurement", "time", "rate");
    for (const auto& m : result.measurements) {
      char rate[32] = "";
      if (!m.unit.empty())
        std::snprintf(rate, sizeof rate, "%.2f %s", m.rate / 1e9, m.unit == "FLOP/s" ? "GFLOP/s" : "GB/s");
      std::printf("%-40s %12s %16s\n", m.name.c_str(), format_seconds(m.seconds).c_str(), rate);
    }
    const HardwareProfile& p = result.profile;
    std::printf("\ngemm_efficiency %.3f, attention_efficiency %.3f, memory_bandwidth %.1f GB/s, "
                "decode_bandwidth_efficiency %.3f, layer_launch_overhead %s (peak %sFLOP/s from %s)\n",
                p.gemm_efficiency.value, p.attention_efficiency.value, p.memory_bandwidth.value / 1e9,
                p.decode_bandwidth_efficiency.value, format_seconds(p.layer_launch_overhead_s.value).c_str(),
                std::to_string(int64_t(p.peak_flops.value / 1e9)).append("G").c_str(), spec.name.c_str());
    std::ofstream out(args->out);
    out << to_json(p).dump(2) << "\n";
    if (!out) throw Error(args->out, "cannot write the profile");
    std::printf("profile written to %s\n", args->out.c_str());
    return 0;
  });
}

}  // namespace realign::apps
