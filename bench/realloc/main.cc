// bench/realloc: parameter reallocation between typical train/generate layouts on local processes, against
// the raw Gloo point-to-point bandwidth and (on one host) Gloo's own all-gather, both measured in the same run,
// and against the naive way (every destination gathers the full model, then slices its shard).
//   bench_realloc [--world N] [--dtype bf16|fp32] [--layers L] [--hidden H] [--reps R] [--chunk-mib C]
//                 [--window-mib W] [--naive 0|1]
// Starts N copies of itself (comm/launcher.h); rank 0 prints the table. Started by torchrun (RANK and
// WORLD_SIZE set; --world is then the job's) it runs as one rank of that job, on as many hosts as the job
// has, and also measures the raw Gloo bandwidth from rank 0 to the first rank of the next host
// (LOCAL_WORLD_SIZE ranks a host), which bounds moves that cross hosts.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <tuple>

#include "comm/launcher.h"
#include "comm/world.h"
#include "realloc/realloc_check.h"

namespace realign {
namespace {

struct Settings {
  int world = 4;
  std::string dtype = "bf16";
  int64_t layers = 16;
  int64_t hidden = 1536;
  int reps = 2;
  int64_t chunk_mib = 4;    // ReallocOptions::chunk_bytes
  int64_t window_mib = 64;  // ReallocOptions::window_bytes
  bool naive = true;        // also time the naive way (--naive 0 skips it: a shorter run)
};

ModelSpec bench_model(const Settings& s) {
  ModelSpec m = builtin_model("llama-tiny");
  m.name = "llama-bench";
  m.n_layers = s.layers;
  m.hidden = s.hidden;
  m.n_heads = s.hidden / 128;
  m.n_kv_heads = m.n_heads / 3 > 0 && m.n_heads % 3 == 0 ? m.n_heads / 3 : m.n_heads;
  m.head_dim = 128;
  m.intermediate = s.hidden * 8 / 3 / 256 * 256;
  m.vocab = 32000;
  return m;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// This process's CPU seconds, every thread counted (Gloo's I/O threads do the socket copies).
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// One timed step on every rank: the slowest rank's seconds, and how many cores the ranks kept busy on average
// (their CPU seconds summed, over those seconds). On a machine with few cores the cores figure says whether
// a step was bound by CPU (every core busy) or by waiting (latency, a single stream's pace).
struct Timing {
  double seconds = 0;
  double cores = 0;
};

Timing timed(comm::Group& g, const std::function<void()>& step) {
  g.barrier();
  const double t0 = now(), c0 = cpu_now();
  step();
  at::Tensor t = at::tensor({now() - t0}, at::kDouble), c = at::tensor({cpu_now() - c0}, at::kDouble);
  g.all_reduce(t, comm::ReduceOp::kMax);
  g.all_reduce_sum(c);
  return {t.item<double>(), c.item<double>() / t.item<double>()};
}

// Rank 0 -> rank `peer`, `bytes` a message, best of `reps` (GB/s, and the cores busy in that run).
std::pair<double, double> raw_p2p_gbps(comm::Group& g, int64_t bytes, int reps, int peer) {
  at::Tensor buf = at::ones({bytes}, at::kByte);
  double best = 0, cores = 0;
  for (int r = 0; r < reps + 1; ++r) {
    const Timing t = timed(g, [&] {
      if (g.rank() == 0) g.send(buf, peer);
      if (g.rank() == peer) g.recv(buf, 0);
    });
    const double gbps = double(bytes) / t.seconds / 1e9;
    if (r > 0 && gbps > best) best = gbps, cores = t.cores;  // first run warms up
  }
  return {best, cores};
}

// Every rank's `bytes` to every other at once, by Gloo's own all-gather: the pattern of a move in which every
// destination needs every source's slice, as one collective. GB/s received over all ranks (best of `reps`),
// and the cores busy in that run: unlike one point-to-point stream, it keeps every core of the host busy.
std::pair<double, double> raw_all_gather_gbps(comm::Group& g, int64_t bytes, int reps) {
  const at::Tensor mine = at::ones({bytes / 4}, at::kFloat);
  double best = 0, cores = 0;
  for (int r = 0; r < reps + 1; ++r) {
    const Timing t = timed(g, [&] { g.all_gather_cat(mine, 0); });
    const double gbps = double(bytes) * g.size() * (g.size() - 1) / t.seconds / 1e9;
    if (r > 0 && gbps > best) best = gbps, cores = t.cores;  // first run warms up
  }
  return {best, cores};
}

// The naive way: every destination rank receives the whole model (own shards used in place, as an all-gather
// would), then slices its shard out of it. Returns (bytes moved, slowest rank's seconds).
std::pair<int64_t, double> naive(comm::Group& g, const std::vector<ParamInfo>& params, int64_t n_layers,
                                 const Layout& from, const Layout& to, const ShardMap& src,
                                 at::ScalarType dtype, const Settings& s) {
  Layout full = to;
  full.dp = to.size();
  full.tp = full.pp = 1;
  const TransferPlan plan = plan_reallocation(params, n_layers, from, full);
  ReallocOptions o;
  o.dtype = dtype;
  o.chunk_bytes = s.chunk_mib << 20;
  o.window_bytes = s.window_mib << 20;
  g.barrier();
  const double t0 = now();
  ShardMap whole = execute_reallocation(g, plan, params, n_layers, src, o);
  ShardMap mine;
  if (to.contains(g.rank()))
    for (const ParamInfo& p : params) {
      const Range r = held_slice(p, n_layers, to, g.rank());
      if (r.size() > 0) mine[p.name] = whole.at(p.name).narrow(slice_dim(p), r.begin, r.size()).clone();
    }
  whole.clear();
  at::Tensor t = at::tensor({now() - t0}, at::kDouble);
  g.all_reduce(t, comm::ReduceOp::kMax);
  return {plan.bytes_moved(int64_t(at::elementSize(dtype))), t.item<double>()};
}

void worker(comm::World& world, const Settings& s) {
  auto g = world.global();
  const ModelSpec spec = bench_model(s);
  const auto params = model_params(spec, HeadKind::kLanguageModel);
  const at::ScalarType dtype = s.dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  const int64_t elem = int64_t(at::elementSize(dtype));
  const bool lead = world.rank() == 0;
  const char* lws = std::getenv("LOCAL_WORLD_SIZE");
  const int per_host = lws && std::atoi(lws) > 0 ? std::atoi(lws) : world.size();
  if (lead) {
    char host[256] = "?";
    gethostname(host, sizeof host);
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    std::printf("GLIBC_TUNABLES=%s\n", tunables ? tunables : "");
    std::printf("machine: %s, %u hardware threads, torch intra-op threads %d per rank\n", host,
                std::thread::hardware_concurrency(), at::get_num_threads());
    std::printf(
        "settings: %d %s, model %s (%lld layers, hidden %lld, %lld heads, "
        "%lld KV heads, vocab %lld) = %.0fM params, %.2f GB in %s; best of %d runs; chunks %lld MiB, window "
        "%lld MiB per rank\n",
        world.size(),
        per_host < world.size() ? ("ranks over Gloo, " + std::to_string(per_host) + " a host").c_str()
                                : "local ranks over Gloo (loopback TCP)",
        spec.name.c_str(), (long long)spec.n_layers, (long long)spec.hidden, (long long)spec.n_heads,
        (long long)spec.n_kv_heads, (long long)spec.vocab, double(spec.total_params()) / 1e6,
        double(spec.total_params() * elem) / 1e9, s.dtype.c_str(), s.reps, (long long)s.chunk_mib,
        (long long)s.window_mib);
  }
  double raw = 0, raw_cores = 0;
  if (per_host > 1) std::tie(raw, raw_cores) = raw_p2p_gbps(*g, int64_t(256) << 20, 3, 1);
  if (lead && per_host > 1)
    std::printf(
        "raw Gloo point-to-point (rank 0 -> 1, same host, 256 MiB messages, blocking send/recv): %.3f GB/s, "
        "%.2f cores busy\n",
        raw, raw_cores);
  if (per_host < world.size()) {
    // Moves between hosts are bounded by the link between them: "% raw" is taken against this figure.
    std::tie(raw, raw_cores) = raw_p2p_gbps(*g, int64_t(256) << 20, 3, per_host);
    if (lead)
      std::printf(
          "raw Gloo point-to-point (rank 0 -> %d, across hosts, 256 MiB messages, blocking send/recv): %.3f "
          "GB/s, %.2f cores busy\n",
          per_host, raw, raw_cores);
  }
  // A single host's yardstick for moves that keep every rank sending and receiving (the cores, not one
  // stream, bound them there): "% ag" is taken against it.
  double all_gather = 0, all_gather_cores = 0;
  if (per_host == world.size()) {
    std::tie(all_gather, all_gather_cores) = raw_all_gather_gbps(*g, int64_t(128) << 20, 3);
    if (lead)
      std::printf("raw Gloo all-gather (%d ranks, 128 MiB each): %.3f GB/s received in all, %.2f cores busy\n",
                  world.size(), all_gather, all_gather_cores);
  }
  if (lead) std::printf("\n");
  const char* pairs[][2] = {{"d1t2p2", "d4t1p1"},
                            {"d2t2p1", "d1t4p1"},
                            {"d1t1p4", "d2t2p1"},
                            {"d4t1p1", "d1t2p2"},
                            {"d2t1p1", "d2t1p1@2"}};
  if (lead)
    std::printf("%-22s %10s %10s %9s %8s %7s %7s %6s | %10s %9s %8s\n", "pair", "moved GB", "min GB", "seconds",
                "GB/s", "% raw", "% ag", "cores", "naive GB", "seconds", "GB/s");
  const SliceSource source = synthetic_params(1);
  for (const auto& pr : pairs) {
    const Layout from = parse_layout(pr[0]), to = parse_layout(pr[1]);
    if (std::max(from.first_device + from.size(), to.first_device + to.size()) > world.size()) continue;
    const TransferPlan plan = plan_reallocation(params, spec.n_layers, from, to);
    const ShardMap src = make_shards(params, spec.n_layers, from, world.rank(), source, dtype);
    Timing best{1e30, 0};
    bool exact = true;
    for (int r = 0; r < s.reps; ++r) {
      ReallocOptions o;
      o.dtype = dtype;
      o.chunk_bytes = s.chunk_mib << 20;
      o.window_bytes = s.window_mib << 20;
      ShardMap dst;
      const Timing t =
          timed(*g, [&] { dst = execute_reallocation(*g, plan, params, spec.n_layers, src, o); });
      if (t.seconds < best.seconds) best = t;
      if (r == 0) {  // verify once (outside the timing)
        at::Tensor bad = at::tensor(
            {int64_t(verify_shards(params, spec.n_layers, to, world.rank(), dst, source, dtype).size())},
            at::kLong);
        g->all_reduce_sum(bad);
        exact = bad.item<int64_t>() == 0;
      }
    }
    double naive_best = 1e30;
    int64_t naive_bytes = 0;
    for (int r = 0; r < (s.naive ? s.reps : 0); ++r) {
      const auto [bytes, secs] = naive(*g, params, spec.n_layers, from, to, src, dtype, s);
      naive_bytes = bytes;
      naive_best = std::min(naive_best, secs);
    }
    if (lead) {
      const double moved = double(plan.bytes_moved(elem)), gbps = moved / best.seconds / 1e9;
      char naive_cols[64] = "         -         -        -";
      if (s.naive)
        std::snprintf(naive_cols, sizeof naive_cols, "%10.3f %9.3f %8.3f", double(naive_bytes) / 1e9,
                      naive_best, double(naive_bytes) / naive_best / 1e9);
      char of_all_gather[16] = "      -";
      if (all_gather > 0) std::snprintf(of_all_gather, sizeof of_all_gather, "%6.0f%%", 100 * gbps / all_gather);
      std::printf("%-22s %10.3f %10.3f %9.3f %8.3f %6.0f%% %s %6.2f | %s%s\n",
                  (std::string(pr[0]) + " -> " + pr[1]).c_str(), moved / 1e9,
                  double(plan.bytes_minimum(elem)) / 1e9, best.seconds, gbps, 100 * gbps / raw, of_all_gather,
                  best.cores, naive_cols, exact ? "" : "  MISMATCH");
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace realign

int main(int argc, char** argv) {
  using namespace realign;
  Settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--world")
      s.world = std::stoi(v);
    else if (k == "--dtype")
      s.dtype = v;
    else if (k == "--layers")
      s.layers = std::stoll(v);
    else if (k == "--hidden")
      s.hidden = std::stoll(v);
    else if (k == "--reps")
      s.reps = std::stoi(v);
    else if (k == "--chunk-mib")
      s.chunk_mib = std::stoll(v);
    else if (k == "--window-mib")
      s.window_mib = std::stoll(v);
    else if (k == "--naive" && (v == "0" || v == "1"))
      s.naive = v == "1";
    else {
      std::fprintf(stderr,
                   "usage: bench_realloc [--world N] [--dtype bf16|fp32] [--layers L] [--hidden H] [--reps "
                   "R] [--chunk-mib C] [--window-mib W] [--naive 0|1]\n");
      return 1;
    }
  }
  if (std::getenv("REALLOC_BENCH_WORKER") || (std::getenv("RANK") && std::getenv("WORLD_SIZE")))
    return comm::run_worker([&](comm::World& w) { worker(w, s); });
  comm::LaunchOptions o;
  o.nprocs = s.world;
  o.argv.assign(argv, argv + argc);
  o.argv[0] = comm::current_executable();
  // Transparent huge pages for malloc: first-touch page faults dominate fresh shard buffers on these VMs
  // (about 3x slower reallocation without it, measured on the project's 2-core machines).
  o.env = {{"REALLOC_BENCH_WORKER", "1"}, {"GLIBC_TUNABLES", "glibc.malloc.hugetlb=1"}};
  o.forward_output = false;
  o.capture_output = true;
  const comm::LaunchResult r = comm::launch_local(o);
  std::fputs(r.output.empty() ? "" : r.output[0].c_str(), stdout);
  if (r.exit_code != 0)
    std::fprintf(stderr, "bench_realloc failed: %s\n%s", r.failure.c_str(), r.output_text().c_str());
  return r.exit_code;
}
