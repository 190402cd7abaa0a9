#include "search/presets.h"

#include <algorithm>
#include <optional>

#include "graph/call_schedule.h"
#include "search/candidates.h"
#include "search/mcmc.h"

namespace realign {

std::vector<std::string> preset_names() {
  return {"co-located", "heuristic", "interleaving", "disaggregated"};
}

std::vector<DeviceMesh> split_cluster(const Cluster& c, int parts) {
  std::vector<DeviceMesh> pieces;
  if (!mesh_problem(DeviceMesh{0, c.n_devices()}, c).empty()) return pieces;
  pieces.push_back(DeviceMesh{0, c.n_devices()});
  while (int(pieces.size()) < parts) {
    auto largest = std::max_element(pieces.begin(), pieces.end(),
                                    [](const DeviceMesh& a, const DeviceMesh& b) { return a.size < b.size; });
    const DeviceMesh m = *largest;
    const int dpn = c.devices_per_node;
    DeviceMesh a, b;
    if (m.size > dpn) {
      const int nodes = m.size / dpn, first_nodes = (nodes + 1) / 2;
      a = DeviceMesh{m.first, first_nodes * dpn};
      b = DeviceMesh{m.first + first_nodes * dpn, (nodes - first_nodes) * dpn};
    } else {
      a = DeviceMesh{m.first, m.size / 2};
      b = DeviceMesh{m.first + m.size / 2, m.size / 2};
    }
    if (a.size == 0 || b.size == 0 || !mesh_problem(a, c).empty() || !mesh_problem(b, c).empty()) break;
    *largest = a;
    pieces.push_back(b);
  }
  std::stable_sort(pieces.begin(), pieces.end(), [](const DeviceMesh& x, const DeviceMesh& y) {
    return x.size != y.size ? x.size > y.size : x.first < y.first;
  });
  return pieces;
}

namespace {

bool better(const PlanScore& a, const PlanScore& b) { return search_objective(a) < search_objective(b); }

using Options = std::vector<std::vector<Strategy>>;  // per call, the strategies it may take

// Every call on its mesh with the option that needs the least memory on its own (most model parallelism,
// then ZeRO-1, recomputation, more micro-batches). Empty when a call has no option.
std::optional<ExecutionPlan> least_memory_plan(const DataflowGraph& g, PlanEvaluator& ev,
                                               const std::vector<DeviceMesh>& meshes,
                                               const Options& options) {
  ExecutionPlan plan;
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    if (options[i].empty()) return std::nullopt;
    const Mfc& mfc = g.mfcs[i];
    Strategy least = options[i][0];
    PlanScore least_score = ev.evaluate_call(int(i), MfcAssignment{mfc.name, meshes[i], least});
    for (const Strategy& s : options[i]) {
      const PlanScore score = ev.evaluate_call(int(i), MfcAssignment{mfc.name, meshes[i], s});
      if (score.overflow_bytes < least_score.overflow_bytes ||
          (score.overflow_bytes == least_score.overflow_bytes && s.tp * s.pp > least.tp * least.pp)) {
        least = s;
        least_score = score;
      }
    }
    plan.assignments.push_back(MfcAssignment{mfc.name, meshes[i], least});
  }
  return plan;
}

// Coordinate descent on the whole plan: each call in turn takes the option that makes the whole plan fastest
// (plans that fit first), for `rounds` rounds, or until the plan fits with `until_fits`. Whole-plan scores
// see the memory that other models keep on the same devices, which a call's standalone estimate cannot.
PlanScore descend(const DataflowGraph& g, PlanEvaluator& ev, const Options& options, ExecutionPlan& plan,
                  int rounds = 2, bool until_fits = false) {
  PlanScore best = ev.evaluate(plan);
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < g.mfcs.size(); ++i)
      for (const Strategy& s : options[i]) {
        if (until_fits && best.fits()) return best;
        const Strategy previous = plan.assignments[i].strategy;
        if (s == previous) continue;
        plan.assignments[i].strategy = s;
        const PlanScore score = ev.evaluate(plan);
        if (better(score, best))
          best = score;
        else
          plan.assignments[i].strategy = previous;
      }
  return best;
}

// Every call on its given mesh with its own strategy: from the least-memory plan, by coordinate descent.
std::optional<ExecutionPlan> per_call_best(const DataflowGraph& g, const Cluster& c, PlanEvaluator& ev,
                                           const std::vector<DeviceMesh>& meshes, bool runtime_limits) {
  Options options(g.mfcs.size());
  for (size_t i = 0; i < g.mfcs.size(); ++i)
    options[i] = call_strategies(g, c, i, meshes[i].size, runtime_limits);
  auto plan = least_memory_plan(g, ev, meshes, options);
  if (plan) descend(g, ev, options, *plan);
  return plan;
}

// Every call's strategies on the whole cluster in one layout.
Options layout_options(const DataflowGraph& g, const Options& every, const Layout& l) {
  Options options(g.mfcs.size());
  for (size_t i = 0; i < g.mfcs.size(); ++i)
    for (const Strategy& s : every[i])
      if (s.dp == l.dp && s.tp == l.tp && s.pp == l.pp) options[i].push_back(s);
  return options;
}

Options whole_cluster_options(const DataflowGraph& g, const Cluster& c, bool runtime_limits) {
  Options every(g.mfcs.size());
  for (size_t i = 0; i < g.mfcs.size(); ++i)
    every[i] = call_strategies(g, c, i, c.n_devices(), runtime_limits);
  return every;
}

// A fixed-layout engine trains with activation recomputation whatever the memory: ReaLHF's default
// (gradient_checkpointing = True, realhf/api/quickstart/model.py), which its throughput figures count as 4
// forwards per train step. The one-layout baselines run their train calls so (where the runtime could: a
// training run keeps activations), which is what the search, deciding per call, can save.
Options recomputing_training(const DataflowGraph& g, Options options, bool runtime_limits) {
  if (runtime_limits) return options;
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    if (g.mfcs[i].kind() != MfcKind::kTrain) continue;
    std::vector<Strategy> recomputing;
    for (const Strategy& s : options[i])
      if (s.recompute) recomputing.push_back(s);
    if (!recomputing.empty()) options[i] = recomputing;
  }
  return options;
}

// Megatron-LM's rule for one layout (Narayanan et al. 2021, takeaways 1 and 2): the smallest model-parallel
// size t * p with which everything fits, tensor parallelism first up to a node's devices, then pipeline
// stages across nodes; data parallelism takes the remaining devices. Every call shares the layout and
// chooses its micro-batches and ZeRO-1 (coordinate descent); train calls recompute activations
// (recomputing_training). The search's other presets and the search itself cover the fastest layouts; this
// one is the baseline that users of Megatron-based systems run.
std::optional<ExecutionPlan> co_located(const DataflowGraph& g, const Cluster& c, PlanEvaluator& ev,
                                        bool runtime_limits) {
  const DeviceMesh all{0, c.n_devices()};
  if (!mesh_problem(all, c).empty()) return std::nullopt;
  const std::vector<DeviceMesh> meshes(g.mfcs.size(), all);
  const Options every = recomputing_training(g, whole_cluster_options(g, c, runtime_limits), runtime_limits);
  std::vector<Layout> layouts;
  for (const Strategy& s : every[0]) {
    const Layout l{0, s.dp, s.tp, s.pp};
    if (std::find(layouts.begin(), layouts.end(), l) == layouts.end()) layouts.push_back(l);
  }
  // tp never spans nodes here (strategy_problem lets only a serving engine's generation span them, and this
  // one layout serves the train calls too), so "tensor parallelism first" is simply the larger tp.
  std::stable_sort(layouts.begin(), layouts.end(), [](const Layout& a, const Layout& b) {
    if (a.tp * a.pp != b.tp * b.pp) return a.tp * a.pp < b.tp * b.pp;
    return a.tp > b.tp;
  });
  std::optional<ExecutionPlan> least_overflow;
  PlanScore least_score;
  for (const Layout& l : layouts) {
    const Options options = layout_options(g, every, l);
    auto plan = least_memory_plan(g, ev, meshes, options);
    if (!plan) continue;
    // Whether the layout can fit at all: one round of descent that stops once it does.
    const PlanScore score = descend(g, ev, options, *plan, 1, true);
    if (score.fits()) {
      descend(g, ev, options, *plan);
      return plan;
    }
    if (!least_overflow || score.overflow_bytes < least_score.overflow_bytes)
      least_overflow = plan, least_score = score;
  }
  return least_overflow;
}

// Calls grouped by dependency level: a call's level is one more than its deepest parent's.
std::vector<std::vector<int>> levels(const DataflowGraph& g) {
  std::vector<int> level(g.mfcs.size(), 0);
  int depth = 0;
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    for (int p : g.parents(int(i))) level[i] = std::max(level[i], level[p] + 1);
    depth = std::max(depth, level[i] + 1);
  }
  std::vector<std::vector<int>> out(depth);
  for (size_t i = 0; i < g.mfcs.size(); ++i) out[level[i]].push_back(int(i));
  return out;
}

double call_weight(const DataflowGraph& g, int i) {
  const Mfc& m = g.mfcs[i];
  const double factor = m.kind() == MfcKind::kTrain ? 3.0 : 1.0;
  return factor *
         g.model(m.model).spec.forward_flops(double(m.n_seqs * m.seq_len()), double(m.seq_len()) / 2);
}

std::optional<ExecutionPlan> interleaving(const DataflowGraph& g, const Cluster& c, PlanEvaluator& ev,
                                          bool runtime_limits) {
  std::vector<DeviceMesh> meshes(g.mfcs.size(), DeviceMesh{0, c.n_devices()});
  bool any_split = false;
  for (const auto& group : levels(g)) {
    if (group.size() < 2) continue;
    const auto pieces = split_cluster(c, int(group.size()));
    if (pieces.size() < group.size()) return std::nullopt;
    std::vector<int> by_weight = group;
    std::stable_sort(by_weight.begin(), by_weight.end(),
                     [&](int a, int b) { return call_weight(g, a) > call_weight(g, b); });
    for (size_t k = 0; k < by_weight.size(); ++k) meshes[by_weight[k]] = pieces[k];
    any_split = true;
  }
  if (!any_split) return std::nullopt;
  return per_call_best(g, c, ev, meshes, runtime_limits);
}

// Calls for which `apart(i)` holds on one part of the cluster, the others on the rest.
template <class Apart>
std::optional<ExecutionPlan> split_plan(const DataflowGraph& g, const Cluster& c, PlanEvaluator& ev,
                                        bool runtime_limits, Apart apart) {
  std::vector<std::string> gen_calls, other_calls;
  for (int i = 0; i < int(g.mfcs.size()); ++i)
    (apart(i) ? gen_calls : other_calls).push_back(g.mfcs[size_t(i)].name);
  if (gen_calls.empty() || other_calls.empty()) return std::nullopt;
  // Try generation on 1/2, 1/4 and 3/4 of the cluster (as valid meshes allow); keep the fastest.
  std::optional<ExecutionPlan> best;
  PlanScore best_score;
  const auto halves = split_cluster(c, 2);
  if (halves.size() < 2) return std::nullopt;
  std::vector<std::pair<DeviceMesh, DeviceMesh>> splits = {{halves[1], halves[0]}, {halves[0], halves[1]}};
  const auto quarters = split_cluster(c, 4);
  if (quarters.size() == 4) {
    // The last quarter for generation, the first three quarters' largest valid block for the rest.
    splits.push_back({quarters[3], halves[0]});
  }
  for (const auto& [gen_mesh, train_mesh] : splits) {
    std::vector<DeviceMesh> meshes;
    for (int i = 0; i < int(g.mfcs.size()); ++i) meshes.push_back(apart(i) ? gen_mesh : train_mesh);
    auto plan = per_call_best(g, c, ev, meshes, runtime_limits);
    if (!plan) continue;
    // Generation stays apart from every other call; the others may share devices among themselves.
    for (const auto& gc : gen_calls)
      for (const auto& oc : other_calls) plan->disjoint.push_back({gc, oc});
    const PlanScore score = ev.evaluate(*plan);
    if (!best || better(score, best_score)) {
      best = plan;
      best_score = score;
    }
  }
  return best;
}

std::optional<ExecutionPlan> disaggregated(const DataflowGraph& g, const Cluster& c, PlanEvaluator& ev,
                                           bool runtime_limits) {
  return split_plan(g, c, ev, runtime_limits,
                    [&](int i) { return g.mfcs[size_t(i)].kind() == MfcKind::kGenerate; });
}

}  // namespace

std::optional<ExecutionPlan> asynchronous_split(const DataflowGraph& g, const Cluster& c, PlanEvaluator& ev,
                                                bool runtime_limits) {
  auto plan = split_plan(g, c, ev, runtime_limits, [&](int i) { return runs_ahead(g, i); });
  if (!plan) return plan;
  plan->name = "asynchronous split";
  plan->disjoint.clear();  // a start for the search, not a constraint
  return plan;
}

std::optional<ExecutionPlan> one_layout_plan(const DataflowGraph& g, const Cluster& c, PlanEvaluator& ev,
                                             const Layout& layout, bool runtime_limits) {
  const DeviceMesh all{0, c.n_devices()};
  if (!mesh_problem(all, c).empty()) return std::nullopt;
  const Options options = layout_options(
      g, recomputing_training(g, whole_cluster_options(g, c, runtime_limits), runtime_limits), layout);
  auto plan = least_memory_plan(g, ev, std::vector<DeviceMesh>(g.mfcs.size(), all), options);
  if (plan) descend(g, ev, options, *plan);
  return plan;
}

std::optional<ExecutionPlan> make_preset(const std::string& name, const DataflowGraph& g, const Cluster& c,
                                         PlanEvaluator& ev, bool runtime_limits) {
  std::optional<ExecutionPlan> plan;
  if (name == "co-located")
    plan = co_located(g, c, ev, runtime_limits);
  else if (name == "heuristic")
    plan = per_call_best(g, c, ev, std::vector<DeviceMesh>(g.mfcs.size(), DeviceMesh{0, c.n_devices()}),
                         runtime_limits);
  else if (name == "interleaving")
    plan = interleaving(g, c, ev, runtime_limits);
  else if (name == "disaggregated")
    plan = disaggregated(g, c, ev, runtime_limits);
  else
    throw Error("plan.preset", "unknown preset '" + name +
                                   "'; presets are co-located, heuristic, interleaving, disaggregated");
  if (plan) plan->name = name;
  return plan;
}

}  // namespace realign
