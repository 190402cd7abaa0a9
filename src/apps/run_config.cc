#include "apps/run_config.h"

#include <algorithm>
#include <cstdio>

#include "core/config_file.h"
#include "core/host.h"
#include "cost/hardware_profile.h"
#include "cost/host_scaling.h"

namespace realign::apps {

RunConfig run_config_from_json(Json raw) {
  RunConfig rc;
  rc.raw = std::move(raw);
  ObjectReader root(rc.raw, "");
  rc.algorithm = algorithm_config_from_json(root);
  rc.training = train::training_sections_from_json(root, rc.algorithm.reference);
  rc.algorithm = with_training_sections(rc.algorithm, rc.training);
  const bool names_reward_model =
      rc.raw.contains("models") && rc.raw["models"].contains(to_string(Role::kReward));
  const auto roles = algorithm_roles(rc.algorithm.algorithm);
  if (names_reward_model && !rc.algorithm.reward_model &&
      std::count(roles.begin(), roles.end(), Role::kReward))
    throw Error("reward.kind", "models.reward names a reward model but reward.kind is " +
                                   rc.training.reward.kind +
                                   ": set reward.kind: model to score with it, or remove models.reward");
  rc.cluster = cluster_from_json(root.at("cluster"), "cluster");
  // realign's runtime (CPU workers) batches generation statically; a GPU cluster is planned as serving
  // engines generate there (continuous batching), which realign's runtime does not do yet.
  rc.algorithm.batching = is_cpu_device(rc.cluster.device) ? Batching::kStatic : Batching::kContinuous;
  rc.graph = build_graph(rc.algorithm);
  if (const Json* p = root.find("plan")) rc.plan = plan_options_from_json(*p, "plan");
  // Plans for a cluster the runtime runs keep to its limits, unless the runtime cannot build the models at
  // all (DeepSeek-V3): `realign plan` still plans them, `realign train` refuses (plan_iteration).
  rc.plan.candidates.runtime_limits = runtime_runs(rc.cluster) && !runtime_model_problem(rc.graph);
  rc.profile_path = root.get_string("profile", "");
  root.finish();
  return rc;
}

RunConfig load_run_config(const std::string& file, const std::vector<std::string>& overrides) {
  Json raw = load_config_file(file);
  apply_overrides(raw, overrides);
  return run_config_from_json(std::move(raw));
}

namespace {

HardwareProfile profile_as_given(const RunConfig& config) {
  return config.profile_path.empty() ? builtin_profile(config.cluster.device)
                                     : load_hardware_profile(config.profile_path);
}

}  // namespace

HardwareProfile run_profile(const RunConfig& config) {
  const HardwareProfile given = profile_as_given(config);
  if (config.host_probe_s <= 0 || !is_cpu_device(config.cluster.device)) return given;
  return scaled_to_host(given, config.host_probe_s, cpu_model_name());
}

std::string profile_name(const RunConfig& config) {
  std::string name = !config.profile_path.empty() ? config.profile_path
                     : has_shipped_profile(config.cluster.device)
                         ? "profiles/" + config.cluster.device.name + ".json"
                         : "defaults for " + config.cluster.device.name;
  if (config.host_probe_s > 0 && is_cpu_device(config.cluster.device)) {
    const HardwareProfile given = profile_as_given(config);
    if (given.host_probe_s.value > 0) {
      char scaled[160];
      std::snprintf(scaled, sizeof scaled,
                    ", carried to this machine: times x%.2f (its host probe %.2f ms, %.2f ms where fitted)",
                    host_speed_ratio(given, config.host_probe_s), config.host_probe_s * 1e3,
                    given.host_probe_s.value * 1e3);
      name += scaled;
    }
  }
  return name;
}

}  // namespace realign::apps
