// bench/paper_workloads: realign's estimates on the workloads of ReaL's published PPO throughput figure
// (LLaMA-2 7B to 70B, 8 to 128 H100, prompt 128, generation 128/384/896 with 512/256/128 prompts, 4
// mini-batches): the searched plan and every preset, the search time, the searched layouts, and, where the
// figure was published (data/published), the measured times beside them. `--fit` fits the profile's engine
// factors (compute efficiency over a pass, the host's cost of a collective) to the heuristic bars, whose plan
// is one 3D-parallel layout for every model on every GPU, and the per-layer launch overhead to ReaL's
// decoding floor.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/plan_report.h"
#include "core/host.h"
#include "core/units.h"
#include "paper_workloads/fit.h"
#include "paper_workloads/workloads.h"

namespace {

using namespace realign;
using namespace realign::paper_workloads;

std::string layouts(const DataflowGraph& g, const ExecutionPlan& plan) {
  std::string out;
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    const MfcAssignment& a = plan.assignments[i];
    out += (out.empty() ? "" : ", ") + g.mfcs[i].name + " " + to_string(a.mesh) + " " +
           to_string(a.layout()) + " x" + std::to_string(a.strategy.micro_batches) +
           (a.strategy.zero1 ? " z1" : "") + (a.strategy.recompute ? " rc" : "");
  }
  for (Role m : plan.offload) out += ", offload " + to_string(m);
  return out;
}

// Every model pair's iteration time as fixed + per decoding step (line_through), published beside
// estimated: where a plan's estimate misses, this says whether the passes (fixed) or the decoding (per step)
// are mispriced.
void print_decomposition(const std::vector<Point>& points, const std::vector<double>& colocated,
                         const std::vector<double>& searched) {
  std::printf("\nfixed + per decoding step (a line through gen 128/384/896):\n");
  std::printf("%-12s %-9s %4s | %18s %18s | %18s %18s\n", "row", "models", "gpus", "pub.heur", "pub.ReaL",
              "co-located", "searched");
  for (const std::vector<size_t>& pair : pairs_of(points)) {
    if (pair.size() < 2) continue;
    std::vector<double> gen, heur, real, colo, srch;
    for (size_t i : pair) {
      gen.push_back(points[i].gen_len);
      heur.push_back(points[i].heuristic_s), real.push_back(points[i].real_s);
      colo.push_back(colocated[i]), srch.push_back(searched[i]);
    }
    auto cell = [&gen](const std::vector<double>& t) {
      char b[32];
      if (std::any_of(t.begin(), t.end(), [](double v) { return v <= 0; }))
        std::snprintf(b, sizeof b, "%18s", "-");
      else {
        const Line l = line_through(gen, t);
        std::snprintf(b, sizeof b, "%7.2fs + %5.1fms", l.fixed_s, 1e3 * l.per_step_s);
      }
      return std::string(b);
    };
    const Point& p = points[pair[0]];
    std::printf("%-12s %-9s %4d | %s %s | %s %s\n", p.row.c_str(),
                (short_name(p.actor) + "+" + short_name(p.critic)).c_str(), p.gpus, cell(heur).c_str(),
                cell(real).c_str(), cell(colo).c_str(), cell(srch).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = REALIGN_SOURCE_DIR, budget = "10", profile, only;
  std::string published_file = root + "/data/published/real_ppo_throughput_scale_actor.json";
  bool do_fit = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(1);
      }
      return argv[++i];
    };
    if (a == "--fit")
      do_fit = true;
    else if (a == "--budget")
      budget = next();
    else if (a == "--profile")
      profile = next();
    else if (a == "--published")
      published_file = next();
    else if (a == "--row")
      only = next();
    else {
      std::fprintf(
          stderr,
          "usage: bench_paper_workloads [--fit] [--budget SECONDS] [--profile FILE] [--published FILE] "
          "[--row 'scale actor'|'scale critic'|'scale both']\n");
      return 1;
    }
  }
  const std::vector<Point> published = published_points(published_file);
  std::printf("bench/paper_workloads: machine %s, %ld cores online; search single-threaded\n",
              cpu_model_name().c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("published: %s (%zu points)\n", published_file.c_str(), published.size());
  if (do_fit) {
    if (published.empty()) {
      std::fprintf(stderr, "no published points in %s\n", published_file.c_str());
      return 1;
    }
    fit(published, root);
    return 0;
  }
  std::printf(
      "settings: PPO, prompt 128, 4 mini-batches, nodes of 8 H100, plan.seed=1, plan.time_budget_s=%s, "
      "profile %s\n\n",
      budget.c_str(), profile.empty() ? "profiles/h100-sxm.json" : profile.c_str());
  std::printf("%-12s %-9s %4s %4s %8s %9s %9s %9s %9s %9s %9s | %9s %9s %6s %6s %6s %6s\n", "row", "models",
              "gpus", "gen", "search", "searched", "co-loc", "heurist", "interl", "disagg", "pipe-mdl",
              "pub.heur", "pub.ReaL", "p/h", "c/h", "s/R", "gain");
  double sum_gain = 0, sum_pipe_gain = 0, sum_real_gain = 0;
  std::vector<double> colo_ratio, pipe_ratio;
  int n_pub = 0, searched_no_slower = 0;
  std::vector<Point> shown;
  std::vector<double> shown_colocated, shown_searched;
  for (const Point& p : grid(published)) {
    if (!only.empty() && p.row != only) continue;
    const apps::RunConfig config = config_of(p, root, budget, profile);
    const apps::PlanReport r = apps::make_plan_report(config, "");
    double preset_s[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < r.planner.presets.size() && i < 4; ++i)
      if (r.planner.presets[i].plan && r.preset_simulations[i].fits)
        preset_s[i] = r.preset_simulations[i].iteration_time_s;
    const double searched = r.simulation.fits ? r.simulation.iteration_time_s : 0;
    const double pipe_model = class_estimates({config}, apps::run_profile(config), pipe_model_plan)[0];
    auto cell = [](double s) {
      char b[16];
      if (s > 0)
        std::snprintf(b, sizeof b, "%8.2fs", s);
      else
        std::snprintf(b, sizeof b, "%9s", "no fit");
      return std::string(b);
    };
    const double gain = preset_s[0] > 0 && searched > 0 ? preset_s[0] / searched : 0;
    std::string pub = "";
    if (p.heuristic_s > 0) {
      char b[128];
      std::snprintf(b, sizeof b, " %8.2fs %8.2fs %6.2f %6.2f %6.2f %6.2f", p.heuristic_s, p.real_s,
                    pipe_model / p.heuristic_s, preset_s[0] / p.heuristic_s, searched / p.real_s,
                    p.heuristic_s / p.real_s);
      pub = b;
      ++n_pub;
      colo_ratio.push_back(preset_s[0] / p.heuristic_s);
      pipe_ratio.push_back(pipe_model / p.heuristic_s);
      if (searched > 0 && searched <= p.real_s) ++searched_no_slower;
      sum_gain += gain;
      sum_pipe_gain += pipe_model < 1e9 && searched > 0 ? pipe_model / searched : 0;
      sum_real_gain += p.heuristic_s / p.real_s;
    }
    std::printf("%-12s %-9s %4d %4d %8s %s %s %s %s %s %s |%s\n", p.row.c_str(),
                (short_name(p.actor) + "+" + short_name(p.critic)).c_str(), p.gpus, p.gen_len,
                format_seconds(r.planner.planning_seconds).c_str(), cell(searched).c_str(),
                cell(preset_s[0]).c_str(), cell(preset_s[1]).c_str(), cell(preset_s[2]).c_str(),
                cell(preset_s[3]).c_str(), cell(pipe_model < 1e9 ? pipe_model : 0).c_str(), pub.c_str());
    std::printf("%12s searched gain over co-located %.2fx; plan: %s\n", "", gain,
                layouts(config.graph, r.planner.plan).c_str());
    std::fflush(stdout);
    shown.push_back(p);
    shown_colocated.push_back(preset_s[0]);
    shown_searched.push_back(searched);
  }
  print_decomposition(shown, shown_colocated, shown_searched);
  if (n_pub > 0) {
    auto median_and_worst = [](std::vector<double> ratios) {
      std::sort(ratios.begin(), ratios.end());
      double worst = 0;
      for (double x : ratios) worst = std::max(worst, std::abs(x - 1));
      return std::make_pair(ratios[ratios.size() / 2], 100 * worst);
    };
    const auto [pipe_median, pipe_worst] = median_and_worst(pipe_ratio);
    const auto [colo_median, colo_worst] = median_and_worst(colo_ratio);
    std::printf(
        "\npublished points: %d; against ReaL-Heuristic: pipe_model median %.3f, worst |error| %.1f%%; "
        "co-located median %.3f, worst |error| %.1f%%; searched no slower than ReaL on %d of %d; mean gain "
        "searched/co-located %.3f and searched/pipe_model %.3f vs ReaL's heuristic/ReaL %.3f\n",
        n_pub, pipe_median, pipe_worst, colo_median, colo_worst, searched_no_slower, n_pub, sum_gain / n_pub,
        sum_pipe_gain / n_pub, sum_real_gain / n_pub);
  }
  std::printf(
      "\ncolumns: search = planning wall time; searched/co-loc/heurist/interl/disagg = estimated iteration "
      "time; pipe-mdl = ReaLHF's pipe_model plan (tp = node, pp = nodes, dp = 1 for every call); "
      "pub.heur/pub.ReaL "
      "= published (ReaL-Heuristic, ReaL); p/h = pipe-mdl / pub.heur; c/h = co-located / pub.heur; s/R = "
      "searched / pub.ReaL; gain = pub.heur / pub.ReaL (ReaL's gain)\n");
  return 0;
}
