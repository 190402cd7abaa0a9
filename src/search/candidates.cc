#include "search/candidates.h"

#include <algorithm>
#include <map>

namespace realign {

std::vector<Strategy> enumerate_strategies(const Mfc& mfc, const ModelSpec& spec, const Cluster& cluster,
                                           int mesh_size, int max_micro_batches, bool generation_waves) {
  std::vector<Strategy> out;
  for (int tp = 1; tp <= mesh_size; tp *= 2) {
    if (mesh_size % tp) break;
    for (int pp = 1; pp <= mesh_size / tp; ++pp) {
      if ((mesh_size / tp) % pp) continue;
      const int dp = mesh_size / tp / pp;
      for (int mb = 1; mb <= max_micro_batches; mb *= 2) {
        // Generation gains nothing from micro-batches without pipelining but memory; keep the space small.
        if (mfc.kind() == MfcKind::kGenerate && pp == 1 && mb > 1 && !generation_waves) break;
        // A mixture-of-experts model's experts spread over ep ranks of each stage's dp x tp grid: every
        // power of two the rules allow (plan/expert_parallel.h); a dense model has ep 1 only.
        for (int ep = 1; ep <= (spec.is_moe() ? dp * tp : 1); ep *= 2) {
          Strategy s{dp, tp, pp, mb};
          s.ep = ep;
          if (!strategy_problem(mfc, spec, cluster, mesh_size, s, generation_waves).empty()) continue;
          out.push_back(s);
          if (mfc.kind() != MfcKind::kTrain) continue;
          // A train call may shard its optimizer state over dp (ZeRO-1) and recompute activations: less
          // memory for a little more time; the search weighs both.
          for (const bool zero1 : {false, true})
            for (const bool recompute : {false, true}) {
              if ((!zero1 && !recompute) || (zero1 && dp == 1)) continue;
              Strategy v = s;
              v.zero1 = zero1;
              v.recompute = recompute;
              out.push_back(v);
            }
        }
      }
    }
  }
  return out;
}

namespace {

struct Ranked {
  PlanScore score;
  MfcAssignment a;
};

// The time/memory Pareto front: strategies sorted by time, each needing less memory than every faster one.
// When some fit on their own, only those count. At most `cap`, evenly spread from the fastest to the leanest.
std::vector<Ranked> pareto_front(std::vector<Ranked> ranked, int cap) {
  const bool any_fits =
      std::any_of(ranked.begin(), ranked.end(), [](const Ranked& r) { return r.score.fits(); });
  if (any_fits)
    ranked.erase(
        std::remove_if(ranked.begin(), ranked.end(), [](const Ranked& r) { return !r.score.fits(); }),
        ranked.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& x, const Ranked& y) {
    if (x.score.time_s != y.score.time_s) return x.score.time_s < y.score.time_s;
    return x.score.memory_bytes < y.score.memory_bytes;
  });
  std::vector<Ranked> front;
  for (const auto& r : ranked)
    if (front.empty() || r.score.memory_bytes < front.back().score.memory_bytes) front.push_back(r);
  if (int(front.size()) <= cap) return front;
  if (cap <= 1) return {front.front()};
  std::vector<Ranked> picked;
  for (int k = 0; k < cap; ++k) picked.push_back(front[size_t(k) * (front.size() - 1) / size_t(cap - 1)]);
  return picked;
}

}  // namespace

std::string runtime_limit_problem(const DataflowGraph& graph, const MfcAssignment& a) {
  const int index = graph.mfc_index(a.mfc);
  if (index < 0) return "no call named " + a.mfc;
  const Strategy& s = a.strategy;
  if (s.recompute) return a.mfc + " recomputes activations; realign's runtime keeps them (recompute = false)";
  if (s.cp > 1)
    return a.mfc + " splits its sequences over " + std::to_string(s.cp) +
           " context-parallel ranks (cp); realign's runtime runs every sequence whole on a rank (cp = 1)";
  if (s.ep > 1 && s.zero1)
    return a.mfc +
           " shards its optimizer state (zero1) with expert parallelism (ep = " + std::to_string(s.ep) +
           "); realign's runtime runs ZeRO-1 with ep = 1 only";
  if (s.ep > 1 && s.pp == 1 && s.micro_batches > 1 && graph.mfcs[size_t(index)].kind() == MfcKind::kGenerate)
    return a.mfc + " generates in " + std::to_string(s.micro_batches) +
           " waves with expert parallelism (ep = " + std::to_string(s.ep) +
           "); realign's runtime generates with ep > 1 in one wave (micro_batches = 1)";
  if (s.ep > 1 && s.pp > 1 && graph.mfcs[size_t(index)].kind() == MfcKind::kGenerate)
    return a.mfc + " generates pipelined (pp = " + std::to_string(s.pp) +
           ") with expert parallelism (ep = " + std::to_string(s.ep) +
           "); realign's runtime generates with ep > 1 at pp = 1 only";
  return "";
}

std::optional<ModelProblem> runtime_model_problem(const DataflowGraph& graph) {
  for (const ModelRole& m : graph.models)
    if (std::string why = runtime_model_problem(m.spec); !why.empty())
      return ModelProblem{"models." + to_string(m.role), why + "; realign plan plans it"};
  return std::nullopt;
}

bool runtime_runs(const Cluster& cluster) { return is_cpu_device(cluster.device); }

std::vector<Strategy> call_strategies(const DataflowGraph& graph, const Cluster& cluster, size_t call,
                                      int mesh_size, bool runtime_limits, int max_micro_batches,
                                      bool generation_waves) {
  const Mfc& mfc = graph.mfcs[call];
  std::vector<Strategy> out;
  for (const Strategy& s : enumerate_strategies(mfc, graph.model(mfc.model).spec, cluster, mesh_size,
                                                max_micro_batches, generation_waves))
    if (!runtime_limits ||
        runtime_limit_problem(graph, MfcAssignment{mfc.name, DeviceMesh{0, mesh_size}, s}).empty())
      out.push_back(s);
  return out;
}

std::vector<std::vector<MfcAssignment>> build_candidates(const DataflowGraph& graph, const Cluster& cluster,
                                                         PlanEvaluator& evaluator,
                                                         const CandidateOptions& options) {
  const std::vector<DeviceMesh> meshes = enumerate_meshes(cluster, options.all_node_runs);
  // Standalone cost depends on the mesh's size only (and node span): each size is priced on its first mesh.
  std::vector<std::vector<MfcAssignment>> out(graph.mfcs.size());
  for (size_t i = 0; i < graph.mfcs.size(); ++i) {
    const Mfc& mfc = graph.mfcs[i];
    std::map<int, std::vector<Ranked>> best_by_size;
    std::map<int, DeviceMesh> allowed_of_size;  // the first mesh of each size the filter allows
    for (const auto& m : meshes)
      if (!options.mesh_filter || options.mesh_filter(i, m).empty()) allowed_of_size.emplace(m.size, m);
    for (const auto& [size, mesh] : allowed_of_size) {
      std::vector<Ranked> ranked;
      for (const Strategy& s :
           call_strategies(graph, cluster, i, size, options.runtime_limits, 16, options.generation_waves)) {
        if (options.strategy_filter && !options.strategy_filter(i, size, s).empty()) continue;
        MfcAssignment a{mfc.name, mesh, s};
        ranked.push_back({evaluator.evaluate_call(int(i), a), a});
      }
      best_by_size[size] = pareto_front(std::move(ranked), options.strategies_per_mesh_size);
    }
    std::vector<std::pair<PlanScore, MfcAssignment>> all;
    for (const auto& m : meshes) {
      if (options.mesh_filter && !options.mesh_filter(i, m).empty()) continue;
      for (const auto& r : best_by_size[m.size]) {
        MfcAssignment a = r.a;
        a.mesh = m;
        all.push_back({r.score, a});
      }
    }
    const bool any_fits = std::any_of(all.begin(), all.end(), [](const auto& x) { return x.first.fits(); });
    std::stable_sort(all.begin(), all.end(), [&](const auto& x, const auto& y) {
      if (x.first.fits() != y.first.fits()) return x.first.fits();
      if (!x.first.fits()) return x.first.overflow_bytes < y.first.overflow_bytes;
      return x.first.time_s < y.first.time_s;
    });
    for (const auto& [score, a] : all)
      if (score.fits() || !any_fits) out[i].push_back(a);
  }
  return out;
}

}  // namespace realign
