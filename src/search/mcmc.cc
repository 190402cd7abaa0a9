#include "search/mcmc.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <unordered_map>

#include "core/check.h"
#include "core/rng.h"
#include "core/units.h"

namespace realign {

double search_objective(const PlanScore& s) {
  if (s.fits()) return s.time_s;
  return 1e6 + s.time_s + 1e3 * (s.overflow_bytes / kGiB);
}

bool breaks_disjoint(const DataflowGraph& graph, const ExecutionPlan& plan,
                     const std::vector<std::vector<std::string>>& disjoint) {
  for (const auto& group : disjoint)
    for (size_t a = 0; a < group.size(); ++a)
      for (size_t b = a + 1; b < group.size(); ++b) {
        const int i = graph.mfc_index(group[a]), j = graph.mfc_index(group[b]);
        REALIGN_CHECK(i >= 0 && j >= 0) << "disjoint names unknown calls";
        if (plan.assignments[size_t(i)].mesh.overlaps(plan.assignments[size_t(j)].mesh)) return true;
      }
  return false;
}

namespace {

// Models the chain may keep in host memory between their calls: those never trained.
std::vector<Role> offloadable_models(const DataflowGraph& graph) {
  std::vector<Role> out;
  for (const auto& m : graph.models)
    if (!m.trained) out.push_back(m.role);
  return out;
}

// The chain's state: a candidate index per call and an offload bit per offloadable model.
struct ChainState {
  std::vector<int> call;
  std::vector<bool> offload;
};

std::vector<Role> offloaded(const ChainState& state, const std::vector<Role>& offloadable) {
  std::vector<Role> out;
  for (size_t k = 0; k < offloadable.size(); ++k)
    if (state.offload[k]) out.push_back(offloadable[k]);
  return out;
}

ExecutionPlan make_plan(const std::vector<std::vector<MfcAssignment>>& candidates, const ChainState& state,
                        const std::vector<Role>& offloadable) {
  ExecutionPlan plan;
  plan.name = "searched";
  plan.assignments.reserve(state.call.size());
  for (size_t i = 0; i < state.call.size(); ++i) plan.assignments.push_back(candidates[i][state.call[i]]);
  plan.offload = offloaded(state, offloadable);
  return plan;
}

// A chain state as a hashable key: the candidate index of every call and the offload bits.
std::string state_key(const ChainState& state) {
  std::string key(reinterpret_cast<const char*>(state.call.data()), state.call.size() * sizeof(int));
  for (bool b : state.offload) key.push_back(b ? '1' : '0');
  return key;
}

}  // namespace

SearchResult mcmc_search(const DataflowGraph& graph,
                         const std::vector<std::vector<MfcAssignment>>& candidates, PlanEvaluator& evaluator,
                         const std::vector<ExecutionPlan>& starts, const SearchOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const size_t n = graph.mfcs.size();
  REALIGN_CHECK(candidates.size() == n);
  for (const auto& c : candidates) REALIGN_CHECK(!c.empty()) << "a call without candidates";

  SearchResult result;
  Rng rng(options.seed);
  // leader[i]: the call whose moves call i follows (itself when it moves on its own).
  std::vector<size_t> leader(n);
  for (size_t i = 0; i < n; ++i) leader[i] = i;
  for (const auto& group : options.tied)
    for (size_t k = 1; k < group.size(); ++k) {
      const int l = graph.mfc_index(group[0]), f = graph.mfc_index(group[k]);
      REALIGN_CHECK(l >= 0 && f >= 0) << "tied names unknown calls";
      REALIGN_CHECK(candidates[size_t(f)].size() == candidates[size_t(l)].size()) << "tied lists not aligned";
      leader[size_t(f)] = size_t(l);
    }

  // Begin from the fastest standalone candidate of every call, nothing offloaded, then let better starts
  // replace it.
  const std::vector<Role> offloadable = options.offload ? offloadable_models(graph) : std::vector<Role>{};
  ChainState state{std::vector<int>(n, 0), std::vector<bool>(offloadable.size(), false)};
  ExecutionPlan current_plan = make_plan(candidates, state, offloadable);
  PlanScore current_score = evaluator.evaluate(current_plan);
  ++result.evaluations;
  result.plan = current_plan;
  result.score = current_score;
  const bool constrained = !options.disjoint.empty();
  auto value_of = [&](const ExecutionPlan& plan, const PlanScore& score) {
    return constrained && breaks_disjoint(graph, plan, options.disjoint) ? 2e6 + search_objective(score)
                                                                         : search_objective(score);
  };
  double result_value = value_of(result.plan, result.score);
  for (const auto& start : starts) {
    REALIGN_CHECK(start.assignments.size() == n);
    const PlanScore s = evaluator.evaluate(start);
    ++result.evaluations;
    if (value_of(start, s) < result_value) {
      result.plan = start;
      result.score = s;
      result_value = value_of(start, s);
    }
  }
  // Starts may use assignments outside the candidate lists; the chain walks on indices, so the best start
  // is kept as the result and the chain begins from the nearest candidates of each call (same mesh and
  // strategy when present) and the start's offloaded models.
  auto state_of = [&](const ExecutionPlan& plan) {
    ChainState near = state;
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < candidates[i].size(); ++k)
        if (candidates[i][k].mesh == plan.assignments[i].mesh &&
            candidates[i][k].strategy == plan.assignments[i].strategy) {
          near.call[i] = int(k);
          break;
        }
    for (size_t i = 0; i < n; ++i) near.call[i] = near.call[leader[i]];
    for (size_t k = 0; k < offloadable.size(); ++k)
      near.offload[k] = std::count(plan.offload.begin(), plan.offload.end(), offloadable[k]) > 0;
    return near;
  };
  // Every start is a place to restart from: a chain stuck near the best plan found so far (plans that
  // differ from a better one in several calls at once, such as actor and critic trained side by side on
  // halves instead of one after the other on all devices, are not a single move away) alternates with
  // chains from the other starts.
  std::vector<ChainState> restarts;
  for (const auto& start : starts) restarts.push_back(state_of(start));
  state = state_of(result.plan);
  current_plan = make_plan(candidates, state, offloadable);
  current_score = evaluator.evaluate(current_plan);
  ++result.evaluations;
  // The evaluator is deterministic and the chain at a low temperature keeps proposing the plans around its
  // optimum: a plan seen before is scored from memory (the chain walks exactly as without it).
  std::unordered_map<std::string, PlanScore> scores{{state_key(state), current_score}};
  auto score_of = [&]() {
    auto [seen, fresh] = scores.try_emplace(state_key(state));
    if (fresh) {
      seen->second = evaluator.evaluate(current_plan);
      ++result.evaluations;
    }
    return seen->second;
  };
  double current = value_of(current_plan, current_score);
  ChainState best_state = state;
  double best = current;
  double run_best = current;  // the best of the chain since its last restart
  int64_t since_improvement = 0, restart_count = 0;

  for (int64_t step = 0; step < options.max_steps; ++step) {
    if ((step & 255) == 0 && std::chrono::duration<double>(Clock::now() - t0).count() > options.time_budget_s)
      break;
    ++result.steps;
    // A move changes one call's candidate or toggles one offloadable model (uniformly over both).
    const size_t i = size_t(rng.uniform_int(int64_t(n + offloadable.size())));
    auto toggle = [&] {
      state.offload[i - n] = !state.offload[i - n];
      current_plan.offload = offloaded(state, offloadable);
    };
    // A call that follows another moves only with it.
    if (i < n && leader[i] != i) continue;
    auto set_call = [&](int k) {
      for (size_t j = 0; j < n; ++j)
        if (leader[j] == i) {
          state.call[j] = k;
          current_plan.assignments[j] = candidates[j][size_t(k)];
        }
    };
    auto undo = [&, previous = i < n ? state.call[i] : 0] {
      if (i >= n) {
        toggle();
      } else {
        set_call(previous);
      }
    };
    if (i >= n) {
      toggle();
    } else {
      const int64_t m = int64_t(candidates[i].size());
      if (m == 1) continue;
      // Candidates are sorted fastest first: favour the front without excluding the rest.
      const double u = rng.uniform();
      int proposal = int(std::floor(u * u * double(m)));
      if (proposal == state.call[i]) proposal = int(rng.uniform_int(m));
      if (proposal == state.call[i]) continue;
      set_call(proposal);
      if (constrained && breaks_disjoint(graph, current_plan, options.disjoint)) {
        undo();
        continue;
      }
    }
    const PlanScore s = score_of();
    const double value = search_objective(s);
    const double scale = options.temperature * std::max(current, 1e-9);
    if (value <= current || rng.uniform() < std::exp(-(value - current) / scale)) {
      current = value;
      ++result.accepted;
      if (value < run_best) {
        run_best = value;
        since_improvement = 0;
        if (value < best) best = value, best_state = state;
        if (value < result_value) {
          result.plan = current_plan;
          result.score = s;
          result_value = value;
          result.best_step = result.steps;
        }
        continue;
      }
    } else {
      undo();
    }
    if (++since_improvement >= options.restart_every) {
      // Odd restarts go back to the best plan, even ones to the starts in turn.
      ++restart_count;
      const bool from_start = restart_count % 2 == 0 && !restarts.empty();
      state = from_start ? restarts[size_t(restart_count / 2 - 1) % restarts.size()] : best_state;
      current_plan = make_plan(candidates, state, offloadable);
      current = from_start ? value_of(current_plan, score_of()) : best;
      run_best = current;
      since_improvement = 0;
    }
  }
  result.plan.name = "searched";
  result.plan.disjoint = options.disjoint;
  result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return result;
}

}  // namespace realign
