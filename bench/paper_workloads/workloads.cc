#include "paper_workloads/workloads.h"

#include <algorithm>
#include <fstream>

#include "core/json.h"
#include "cost/simulator.h"
#include "search/presets.h"
#include "search/simulator_evaluator.h"

namespace realign::paper_workloads {

std::string short_name(const std::string& model) { return model.substr(model.find('-') + 1); }

std::vector<Point> published_points(const std::string& file) {
  std::ifstream in(file);
  if (!in) return {};
  const Json j = Json::parse(in);
  std::vector<Point> out;
  for (const Json& p : j.at("points"))
    out.push_back(Point{"scale actor", p.at("actor"), p.at("critic"), p.at("gpus"), p.at("prompts"),
                        p.at("gen_len"), p.at("heuristic_iteration_s"), p.at("real_iteration_s")});
  return out;
}

std::vector<Point> grid(const std::vector<Point>& published) {
  const std::vector<std::pair<int, int>> gens = {{128, 512}, {384, 256}, {896, 128}};
  struct Pair {
    const char* row;
    const char *actor, *critic;
    int gpus;
  };
  const std::vector<Pair> pairs = {
      {"scale actor", "llama2-7b", "llama2-7b", 8},    {"scale actor", "llama2-13b", "llama2-7b", 16},
      {"scale actor", "llama2-34b", "llama2-7b", 32},  {"scale actor", "llama2-70b", "llama2-7b", 64},
      {"scale critic", "llama2-7b", "llama2-13b", 16}, {"scale critic", "llama2-7b", "llama2-34b", 32},
      {"scale critic", "llama2-7b", "llama2-70b", 64}, {"scale both", "llama2-7b", "llama2-7b", 16},
      {"scale both", "llama2-13b", "llama2-13b", 32},  {"scale both", "llama2-34b", "llama2-34b", 64},
      {"scale both", "llama2-70b", "llama2-70b", 128}};
  std::vector<Point> out;
  for (const Pair& p : pairs)
    for (const auto& [gen, prompts] : gens) {
      Point pt{p.row, p.actor, p.critic, p.gpus, prompts, gen, 0, 0};
      for (const Point& q : published)
        if (q.actor == pt.actor && q.critic == pt.critic && q.gpus == pt.gpus && q.gen_len == pt.gen_len)
          pt.heuristic_s = q.heuristic_s, pt.real_s = q.real_s;
      out.push_back(pt);
    }
  return out;
}

apps::RunConfig config_of(const Point& p, const std::string& root, const std::string& budget,
                          const std::string& profile) {
  std::vector<std::string> o = {"models.actor=" + p.actor, "models.critic=" + p.critic,
                                "batch.prompts=" + std::to_string(p.prompts), "batch.prompt_len=128",
                                "batch.gen_len=" + std::to_string(p.gen_len), "batch.mini_batches=4",
                                "cluster.nodes=" + std::to_string(p.gpus / 8), "cluster.devices_per_node=8",
                                "cluster.device=h100-sxm", "plan.time_budget_s=" + budget,
                                // ReaL's PPO takes the behaviour log-probs from the sampling: its FLOP count
                                // (data/published, flops_formula) has no forward of the actor beside the
                                // generation, the reference's, the reward's and the critic's.
                                "train.ppo.behaviour_logprobs=generation"};
  if (!profile.empty()) o.push_back("profile=" + profile);
  return apps::load_run_config(root + "/examples/ppo_llama2_7b_16xh100.yaml", o);
}

std::optional<ExecutionPlan> pipe_model_plan(const apps::RunConfig& config, PlanEvaluator& ev) {
  const Cluster& c = config.cluster;
  return one_layout_plan(config.graph, c, ev, Layout{0, 1, c.devices_per_node, c.n_nodes});
}

std::optional<ExecutionPlan> co_located_plan(const apps::RunConfig& config, PlanEvaluator& ev) {
  return make_preset("co-located", config.graph, config.cluster, ev);
}

std::vector<double> class_estimates(const std::vector<apps::RunConfig>& configs,
                                    const HardwareProfile& profile, PlanClass make) {
  std::vector<double> out;
  for (const apps::RunConfig& config : configs) {
    Simulator sim(config.graph, config.cluster, profile);
    SimulatorEvaluator ev(sim);
    const auto plan = make(config, ev);
    const SimulationResult r = plan ? sim.run(*plan) : SimulationResult{};
    out.push_back(plan && r.fits ? r.iteration_time_s : 1e9);
  }
  return out;
}

Line line_through(const std::vector<double>& gen_len, const std::vector<double>& time_s) {
  const double n = double(gen_len.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < gen_len.size(); ++i)
    sx += gen_len[i], sy += time_s[i], sxx += gen_len[i] * gen_len[i], sxy += gen_len[i] * time_s[i];
  Line l;
  l.per_step_s = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  l.fixed_s = (sy - l.per_step_s * sx) / n;
  return l;
}

std::vector<std::vector<size_t>> pairs_of(const std::vector<Point>& points) {
  std::vector<std::vector<size_t>> out;
  for (size_t i = 0; i < points.size(); ++i) {
    auto same = [&](const std::vector<size_t>& g) {
      const Point& q = points[g[0]];
      return q.row == points[i].row && q.actor == points[i].actor && q.critic == points[i].critic &&
             q.gpus == points[i].gpus;
    };
    auto it = std::find_if(out.begin(), out.end(), same);
    if (it == out.end())
      out.push_back({i});
    else
      it->push_back(i);
  }
  return out;
}

}  // namespace realign::paper_workloads
