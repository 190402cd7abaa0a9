#include "apps/run_config.h"

#include "core/config_file.h"

namespace realign::apps {

RunConfig run_config_from_json(Json raw) {
  RunConfig rc;
  rc.raw = std::move(raw);
  ObjectReader root(rc.raw, "");
  rc.algorithm = algorithm_config_from_json(root);
  rc.graph = build_graph(rc.algorithm);
  rc.cluster = cluster_from_json(root.at("cluster"), "cluster");
  if (const Json* p = root.find("plan")) rc.plan = plan_options_from_json(*p, "plan");
  rc.profile_path = root.get_string("profile", "");
  rc.training = runtime::training_sections_from_json(root);
  root.finish();
  return rc;
}

RunConfig load_run_config(const std::string& file, const std::vector<std::string>& overrides) {
  Json raw = load_config_file(file);
  apply_overrides(raw, overrides);
  return run_config_from_json(std::move(raw));
}

}  // namespace realign::apps
