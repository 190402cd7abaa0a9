// bench_simulator: how long Simulator::run takes on a warm cache (the search calls it thousands of times),
// for PPO on LLaMA-2-7B over 2 nodes x 8 H100 with a few plans; prints the machine, settings and figures.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "core/host.h"
#include "cost/simulator.h"
#include "cost/timeline_svg.h"
#include "graph/algorithms.h"

using namespace realign;

namespace {


MfcAssignment assign(const std::string& mfc, int first, int dp, int tp, int pp, int mb) {
  return MfcAssignment{mfc, DeviceMesh{first, dp * tp * pp}, Strategy{dp, tp, pp, mb}};
}

}  // namespace

int main(int argc, char** argv) {
  // bench_simulator [runs] [file.svg]: the second argument writes the disaggregated plan's timeline.
  const int runs = argc > 1 ? std::stoi(argv[1]) : 200000;
  AlgorithmConfig config;
  config.algorithm = Algorithm::kPpo;
  for (Role role : all_roles()) config.models[role] = builtin_model("llama2-7b");
  config.batch.prompts = 512;
  config.batch.prompt_len = 1024;
  config.batch.gen_len = 1024;
  config.batch.mini_batches = 4;
  const DataflowGraph graph = build_graph(config);
  Cluster cluster;
  cluster.n_nodes = 2;
  cluster.devices_per_node = 8;
  cluster.device = builtin_device("h100-sxm", "device");
  Simulator sim(graph, cluster, builtin_profile(cluster.device));

  ExecutionPlan colocated, disaggregated;
  for (const char* m : {"actor_gen", "ref_inf", "reward_inf", "actor_inf", "critic_inf", "actor_train", "critic_train"})
    colocated.assignments.push_back(assign(m, 0, 2, 8, 1, 4));
  disaggregated.assignments = {assign("actor_gen", 0, 2, 4, 1, 1),   assign("ref_inf", 8, 1, 4, 1, 2),
                               assign("reward_inf", 12, 1, 4, 1, 2), assign("actor_inf", 8, 2, 4, 1, 2),
                               assign("critic_inf", 8, 2, 4, 1, 2),
                               assign("actor_train", 8, 2, 4, 1, 8), assign("critic_train", 8, 2, 4, 1, 8)};
  const ExecutionPlan* plans[] = {&colocated, &disaggregated};

  std::printf("machine: %s, %u hardware threads (shared), single-threaded run\n", cpu_model_name().c_str(),
              std::thread::hardware_concurrency());
  std::printf(
      "settings: PPO, llama2-7b x 4 roles, 512 prompts x (1024 + 1024) tokens, 4 mini-batches; "
      "2 nodes x 8 h100-sxm; default profile; 2 plans alternated; %d warm runs\n",
      runs);
  for (const ExecutionPlan* p : plans) {
    const auto c0 = std::chrono::steady_clock::now();
    const SimulationResult r = sim.run(*p);
    const double cold_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    std::printf("cold run (empty caches): %.0f us\n", cold_s * 1e6);
    std::printf("plan %s: iteration %.2f s, realloc %.1f GiB, fits %s %s\n",
                p == &colocated ? "co-located" : "disaggregated", r.iteration_time_s,
                r.realloc_bytes / (1024.0 * 1024 * 1024), r.fits ? "yes" : "no", r.oom_report.c_str());
    for (const auto& c : r.calls)
      std::printf("  %-13s start %8.2f s  end %8.2f s  realloc %6.3f s  data %6.4f s  peak %5.1f GiB\n",
                  c.name.c_str(), c.start_s, c.end_s, c.realloc_s, c.data_s,
                  c.peak_mem_bytes / (1024.0 * 1024 * 1024));
  }
  if (argc > 2) {
    std::ofstream(argv[2]) << timeline_svg(sim.run(disaggregated).timeline, "PPO llama2-7b, disaggregated");
    std::printf("wrote %s\n", argv[2]);
  }
  double checksum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) checksum += sim.run(*plans[i & 1]).iteration_time_s;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("warm Simulator::run: %.2f us per run (%d runs in %.3f s; checksum %.6g)\n", s / runs * 1e6,
              runs, s, checksum);
  return 0;
}
