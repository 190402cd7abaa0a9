#include "search/frontier.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace realign {

Objective objective_from_json(const Json& value, const std::string& path) {
  Objective o;
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (s == "time") return o;
    if (s == "gpu_hours") {
      o.kind = Objective::Kind::kGpuHours;
      return o;
    }
  } else if (value.is_object()) {
    ObjectReader r(value, path);
    o.kind = Objective::Kind::kTimeWithin;
    o.time_within = r.get_double("time_within");
    if (!(o.time_within >= 1) || o.time_within > 100)
      throw Error(r.path_of("time_within"), "the slowdown allowed against the fastest plan: a number in "
                                            "[1, 100], e.g. 1.2; got " + std::to_string(o.time_within));
    r.finish();
    return o;
  }
  throw Error(path, "'" + value.dump() + "': choose time, gpu_hours or {time_within: X} (the fewest "
                    "GPU-hours within X times the fastest)");
}

std::string to_string(const Objective& o) {
  switch (o.kind) {
    case Objective::Kind::kTime:
      return "time";
    case Objective::Kind::kGpuHours:
      return "gpu_hours";
    case Objective::Kind::kTimeWithin: {
      char s[48];
      std::snprintf(s, sizeof s, "time_within %g", o.time_within);
      return s;
    }
  }
  return "";
}

namespace {

std::vector<int64_t> positive_list(ObjectReader& r, const std::string& key) {
  std::vector<int64_t> out;
  const Json* v = r.find(key);
  if (!v) return out;
  if (!v->is_array() || v->empty()) throw Error(r.path_of(key), "a non-empty list of sizes");
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = r.path_of(key) + "[" + std::to_string(i) + "]";
    const int64_t n = json_to_int((*v)[i], at);
    if (n < 1 || n > (int64_t(1) << 20)) throw Error(at, "a size in [1, 1048576]; got " + std::to_string(n));
    out.push_back(n);
  }
  return out;
}

}  // namespace

FrontierOptions frontier_options_from_json(const Json& section, const std::string& path) {
  ObjectReader r(section, path);
  FrontierOptions o;
  o.nodes = positive_list(r, "nodes");
  o.devices = positive_list(r, "devices");
  if (!o.nodes.empty() && !o.devices.empty())
    throw Error(r.path_of("devices"), "give the sizes once: nodes or devices");
  o.knee_gain = r.get_double("knee_gain", o.knee_gain);
  if (!(o.knee_gain > 0) || o.knee_gain > 10)
    throw Error(r.path_of("knee_gain"), "a share in (0, 10]; got " + std::to_string(o.knee_gain));
  r.finish();
  return o;
}

Cluster cluster_of_size(const Cluster& cluster, int64_t devices) {
  Cluster c = cluster;
  const int64_t per_node = cluster.devices_per_node;
  if (devices < per_node) {
    c.n_nodes = 1;
    c.devices_per_node = int(devices);
  } else {
    c.n_nodes = int(devices / per_node);
  }
  return c;
}

std::vector<int64_t> frontier_sizes(const Cluster& cluster, const FrontierOptions& options) {
  const int64_t per_node = cluster.devices_per_node;
  std::vector<int64_t> sizes;
  auto too_big = [&](const std::string& path, int64_t devices) {
    return Error(path, std::to_string(devices) + " devices is beyond the largest cluster realign plans, " +
                           std::to_string(kMaxDevices));
  };
  if (!options.nodes.empty()) {
    for (size_t i = 0; i < options.nodes.size(); ++i) {
      const int64_t d = options.nodes[i] * per_node;
      if (d > kMaxDevices) throw too_big("plan.frontier.nodes[" + std::to_string(i) + "]", d);
      sizes.push_back(d);
    }
  } else if (!options.devices.empty()) {
    for (size_t i = 0; i < options.devices.size(); ++i) {
      const int64_t d = options.devices[i];
      const std::string path = "plan.frontier.devices[" + std::to_string(i) + "]";
      if (d > per_node && d % per_node != 0)
        throw Error(path, std::to_string(d) + " devices is not whole nodes of " + std::to_string(per_node));
      if (d > kMaxDevices) throw too_big(path, d);
      sizes.push_back(d);
    }
  } else {
    // A quarter to four times the config's, within the largest cluster realign plans.
    const int64_t own = cluster.n_devices();
    for (int64_t s : {own / 4, own / 2, own, own * 2, own * 4})
      if (s >= 1 && s <= kMaxDevices && (s <= per_node || s % per_node == 0) && s * 4 >= own) sizes.push_back(s);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

void price_point(FrontierPoint& p, int64_t samples_per_iteration) {
  p.gpu_hours_per_iteration = double(p.devices) * p.iteration_time_s / 3600.0;
  p.gpu_hours_per_1k_samples =
      samples_per_iteration > 0 ? p.gpu_hours_per_iteration * 1000.0 / double(samples_per_iteration) : 0.0;
}

void mark_frontier(std::vector<FrontierPoint>& points, double knee_gain) {
  std::sort(points.begin(), points.end(),
            [](const FrontierPoint& a, const FrontierPoint& b) { return a.devices < b.devices; });
  for (FrontierPoint& p : points) {
    p.pareto = p.fits;
    p.knee = false;
    for (const FrontierPoint& q : points)
      if (&q != &p && q.fits && p.fits && q.iteration_time_s <= p.iteration_time_s &&
          q.gpu_hours_per_iteration <= p.gpu_hours_per_iteration &&
          (q.iteration_time_s < p.iteration_time_s || q.gpu_hours_per_iteration < p.gpu_hours_per_iteration))
        p.pareto = false;
  }
  // Along the Pareto set from the cheapest to the fastest: the knee is the last point reached while every
  // step bought at least knee_gain of relative time per relative GPU-hour.
  std::vector<FrontierPoint*> set;
  for (FrontierPoint& p : points)
    if (p.pareto) set.push_back(&p);
  std::sort(set.begin(), set.end(), [](const FrontierPoint* a, const FrontierPoint* b) {
    return a->gpu_hours_per_iteration < b->gpu_hours_per_iteration;
  });
  if (set.empty()) return;
  FrontierPoint* knee = set.front();
  for (size_t i = 1; i < set.size(); ++i) {
    const FrontierPoint& a = *set[i - 1];
    const FrontierPoint& b = *set[i];
    const double time_cut = (a.iteration_time_s - b.iteration_time_s) / a.iteration_time_s;
    const double cost_growth = (b.gpu_hours_per_iteration - a.gpu_hours_per_iteration) / a.gpu_hours_per_iteration;
    if (cost_growth <= 0 || time_cut / cost_growth < knee_gain) break;
    knee = set[i];
  }
  knee->knee = true;
}

std::optional<size_t> choose_point(std::vector<FrontierPoint>& points, const Objective& objective) {
  std::optional<size_t> best;
  double fastest = 0;
  for (const FrontierPoint& p : points)
    if (p.fits && (fastest == 0 || p.iteration_time_s < fastest)) fastest = p.iteration_time_s;
  for (size_t i = 0; i < points.size(); ++i) {
    FrontierPoint& p = points[i];
    p.chosen = false;
    if (!p.fits) continue;
    if (objective.kind == Objective::Kind::kTimeWithin &&
        p.iteration_time_s > objective.time_within * fastest * (1 + 1e-12))
      continue;
    auto better = [&](const FrontierPoint& a, const FrontierPoint& b) {  // a better than b
      if (objective.kind == Objective::Kind::kTime)
        return a.iteration_time_s < b.iteration_time_s ||
               (a.iteration_time_s == b.iteration_time_s && a.devices < b.devices);
      return a.gpu_hours_per_iteration < b.gpu_hours_per_iteration ||
             (a.gpu_hours_per_iteration == b.gpu_hours_per_iteration && a.iteration_time_s < b.iteration_time_s);
    };
    if (!best || better(p, points[*best])) best = i;
  }
  if (best) points[*best].chosen = true;
  return best;
}

}  // namespace realign
