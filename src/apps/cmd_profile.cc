// `realign profile`: measure this machine and write a hardware profile the planner can load.
#include <ATen/Parallel.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "apps/commands.h"
#include "comm/launcher.h"
#include "comm/world.h"
#include "core/config_file.h"
#include "core/host.h"
#include "core/json.h"
#include "core/torch_compat.h"
#include "core/units.h"
#include "profile/host_probe.h"
#include "profile/link_profile.h"
#include "profile/machine_profile.h"

namespace realign::apps {
namespace {

// Message sizes of the ping-pong: latency-bound to bandwidth-bound.
const std::vector<int64_t> kLinkSizes = {4 << 10, 64 << 10, 1 << 20, 8 << 20, 32 << 20};

// The hidden worker side of --links: every rank of a local launch runs the ping-pong; rank 0 writes the fit.
int run_link_worker(const std::string& out_file, bool quick) {
  return comm::run_worker([&](comm::World& world) {
    const auto fit = profile::measure_link(*world.global(), kLinkSizes, quick ? 3 : 10);
    if (world.rank() != 0) return;
    Json samples = Json::array();
    for (const auto& [bytes, seconds] : fit.samples) samples.push_back({bytes, seconds});
    std::ofstream out(out_file);
    out << Json{{"latency_s", fit.latency_s}, {"bandwidth", fit.bandwidth}, {"samples", samples}}.dump() << "\n";
    if (!out) throw Error(out_file, "cannot write the link measurement");
  });
}

// Measures the link between two local processes over Gloo (what local workers use on this machine).
profile::LinkFit measure_local_gloo_link(bool quick) {
  const std::string out_file = "/tmp/realign-link-" + std::to_string(::getpid()) + ".json";
  comm::LaunchOptions launch;
  launch.nprocs = 2;
  launch.argv = {comm::current_executable(), "profile", "--link-worker", out_file};
  if (quick) launch.argv.push_back("--quick");
  launch.capture_output = true;
  launch.forward_output = false;
  launch.timeout = std::chrono::milliseconds(120'000);
  const auto result = comm::launch_local(launch);
  if (result.exit_code != 0)
    throw Error("profile --links", "the link measurement failed: " + result.failure + "\n" + result.output_text());
  const Json j = load_config_file(out_file);
  std::remove(out_file.c_str());
  profile::LinkFit fit;
  fit.latency_s = j.at("latency_s").get<double>();
  fit.bandwidth = j.at("bandwidth").get<double>();
  for (const auto& s : j.at("samples")) fit.samples.emplace_back(s.at(0).get<double>(), s.at(1).get<double>());
  return fit;
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto* sub = app.add_subcommand("profile", "Measure this machine's GEMM, attention, memory and decode speed");
  struct Args {
    std::string out = "profile.json";
    std::string spec;
    std::string device = "auto";
    std::string dtype;
    int threads = 0;
    bool quick = false;
    bool links = true;
    std::string link_worker;
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
  sub->add_flag("--links,!--no-links", args->links,
                "Measure the alpha-beta of the Gloo link between two local processes (default on)");
  sub->add_option("--link-worker", args->link_worker)->group("");  // internal: one rank of --links
  sub->footer("Load the result with `realign plan CONFIG profile=profile.json`.");
  on_run(sub, [args] {
    if (!args->link_worker.empty()) return run_link_worker(args->link_worker, args->quick);
    const bool gpu_here = torch_compat::cuda_device_count() > 0;
    const bool cuda = args->device == "cuda" || (args->device == "auto" && gpu_here);
    if (cuda && !gpu_here)
      throw Error("--device", std::string("cuda was asked for but no GPU is available (libtorch ") +
                                  torch_compat::kVersion + ")");
    profile::ProfileOptions options;
    options.device = cuda ? at::Device(at::kCUDA) : at::Device(at::kCPU);
    const std::string dtype = args->dtype.empty() ? (cuda ? "bf16" : "fp32") : args->dtype;
    options.dtype = dtype == "bf16" ? at::kBFloat16 : at::kFloat;
    options.quick = args->quick;
    if (!cuda) at::set_num_threads(args->threads > 0 ? args->threads : int(std::thread::hardware_concurrency()));
    const std::string spec_name = args->spec.empty() ? (cuda ? "h100-sxm" : "cpu-gloo") : args->spec;
    const DeviceSpec spec = builtin_device(spec_name, "--spec");
    // First, as `train` and `validate` time it: in a process that has not yet run other work.
    const double host_probe_s = cuda ? 0.0 : profile::measure_host_probe_s();
    auto result = profile::measure_machine(spec, options, [](int done, int total, const std::string& what) {
      const int width = 30, filled = total > 0 ? done * width / total : width;
      std::fprintf(stderr, "\r[%s%s] %d/%d %-44s", std::string(size_t(filled), '#').c_str(),
                   std::string(size_t(width - filled), '.').c_str(), done, total, what.c_str());
      if (done == total) std::fprintf(stderr, "\n");
    });
    auto& measurements = result.measurements;
    HardwareProfile& p = result.profile;
    if (args->links) {
      std::fprintf(stderr, "measuring the Gloo link between 2 local processes...\n");
      const auto link = measure_local_gloo_link(args->quick);
      for (const auto& [bytes, seconds] : link.samples)
        measurements.push_back({"gloo p2p " + format_bytes(bytes), seconds, bytes / seconds, "B/s"});
      // Local workers talk over Gloo on a CPU machine; on a GPU node the intra-node link is NVLink/NCCL,
      // which one GPU cannot measure, so there the spec's figure stays.
      if (!cuda) {
        const std::string source = "measured by realign profile: Gloo ping-pong between 2 local processes";
        p.intra_node_latency_s = {link.latency_s, source};
        p.intra_node_bandwidth = {link.bandwidth, source};
        p.intra_node_alltoall_bandwidth = {link.bandwidth, source};
        p.oversubscribed_wait_s = {link.latency_s,
                                   source +
                                       " (its latency): a start for `realign validate "
                                       "--calibrate`, which fits the wait of oversubscribed workers"};
      }
    }
    if (!cuda) {
      // So that a run on another machine carries this profile there (cost/host_scaling.h).
      p.host_probe_s = {host_probe_s,
                        "measured by `realign profile` on " + cpu_model_name() + " (profile/host_probe.h)"};
      measurements.push_back({"host probe (llama-tiny forward + backward, 1 thread)", host_probe_s, 0, ""});
    }
    std::printf("%-40s %12s %16s\n", "measurement", "time", "rate");
    for (const auto& m : measurements) {
      char rate[32] = "";
      if (!m.unit.empty())
        std::snprintf(rate, sizeof rate, "%.2f %s", m.rate / 1e9, m.unit == "FLOP/s" ? "GFLOP/s" : "GB/s");
      std::printf("%-40s %12s %16s\n", m.name.c_str(), format_seconds(m.seconds).c_str(), rate);
    }
    const auto& shallowest = p.gemm_depth_efficiency.points.front();
    std::printf("\ngemm_efficiency %.3f (x%.3f at depth %.0f), attention_efficiency %.3f, memory_bandwidth "
                "%.1f GB/s, decode_bandwidth_efficiency %.3f, layer_launch_overhead %s (peak %sFLOP/s from %s)\n",
                p.gemm_efficiency.value, shallowest.second, shallowest.first, p.attention_efficiency.value,
                p.memory_bandwidth.value / 1e9,
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
