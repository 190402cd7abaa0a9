#include "engines/write_helpers.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "core/check.h"
#include "core/error.h"
#include "graph/model_spec.h"

namespace realign::engines {

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Placement written_placement(const Engine& engine, const WriteInput& in, const ExecutionPlan& plan) {
  const DataflowGraph& g = *in.graph;
  Placement p;
  const std::string why = can_run(engine, g, *in.cluster, plan, &p);
  if (!why.empty()) throw Error("plan", engine.display_name() + " cannot run this plan: " + why);
  if (!in.placement) return p;
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    const MfcAssignment& a = plan.assignments[i];
    REALIGN_CHECK(a.mesh == in.placement->meshes[i] &&
                  engine.strategy_problem(g, *in.placement, i, a.mesh.size, a.strategy).empty())
        << "the plan is not of the placement given";
  }
  return *in.placement;
}

bool writes(const std::vector<ConfigEntry>& entries, const std::string& key, const Json& value) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const ConfigEntry& e) { return e.key == key && e.value == value; });
}

void keep_workload(std::vector<ConfigEntry>& entries, const std::vector<ConfigEntry>& workload) {
  for (ConfigEntry& e : entries)
    for (const ConfigEntry& w : workload)
      if (e.key == w.key) e.value = w.value;
}

double written_kl_coef(const WriteInput& in) {
  if (in.graph->mfc_index("ref_inf") < 0) return 0;
  if (!(in.kl_coef > 0))
    throw Error("train.ppo.kl_coef",
                "0 with a reference model: the engines build the reference only for a KL term; set a "
                "coefficient above 0, or models.ref: none");
  return in.kl_coef;
}

std::string model_path(const Json& raw, Role r) {
  const std::string role = to_string(r);
  if (raw.contains("models") && raw["models"].contains(role) && raw["models"][role].is_string()) {
    std::string source = raw["models"][role].get<std::string>();
    const auto builtin = builtin_model_names();
    if (std::find(builtin.begin(), builtin.end(), source) == builtin.end()) {
      const std::string suffix = "/config.json";
      if (source.size() > suffix.size() &&
          source.compare(source.size() - suffix.size(), suffix.size(), suffix) == 0)
        source.resize(source.size() - suffix.size());
      return source;
    }
  }
  return "${" + upper(role) + "_MODEL_PATH}";
}

std::string train_data(const Json& raw) {
  if (raw.contains("data") && raw["data"].contains("prompts") && raw["data"]["prompts"].is_string())
    return raw["data"]["prompts"].get<std::string>();
  return "${TRAIN_DATA}";
}

std::vector<std::string> placeholders(const std::vector<ConfigEntry>& entries) {
  std::set<std::string> names;
  for (const auto& e : entries) {
    if (!e.value.is_string()) continue;
    const std::string v = e.value.get<std::string>();
    for (size_t at = v.find("${"); at != std::string::npos; at = v.find("${", at + 2)) {
      const size_t end = v.find('}', at);
      if (end == std::string::npos) break;
      names.insert(v.substr(at + 2, end - at - 2));
    }
  }
  return {names.begin(), names.end()};
}

std::string shell_value(const Json& value) {
  if (!value.is_string()) return value.dump();
  std::string out = "\"";
  for (char c : value.get<std::string>()) {
    if (c == '"' || c == '\\' || c == '`') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string launch_script(const Engine& engine, const std::string& title,
                          const std::vector<ConfigEntry>& entries, const std::string& command,
                          const std::vector<std::string>& arguments) {
  std::string s = "#!/usr/bin/env bash\n# " + title + "\n# Written by `realign plan --engine` for " +
                  engine.release().describe(engine.display_name()) +
                  "; see realign's docs/engines.md.\nset -euo pipefail\n";
  for (const auto& name : placeholders(entries))
    s += ": \"${" + name + ":?set " + name + " (see docs/engines.md, placeholders)}\"\n";
  s += command;
  for (const auto& a : arguments) s += " \\\n  " + a;
  return s + "\n";
}

std::string nested_yaml(const std::vector<ConfigEntry>& entries) {
  // A tree of keys in first-appearance order.
  struct Node {
    std::vector<std::string> order;
    std::map<std::string, Node> children;
    const Json* value = nullptr;
  };
  Node root;
  for (const auto& e : entries) {
    Node* n = &root;
    size_t start = 0;
    while (true) {
      const size_t dot = e.key.find('.', start);
      const std::string part =
          e.key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (!n->children.count(part)) n->order.push_back(part);
      n = &n->children[part];
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    n->value = &e.value;
  }
  std::string out;
  std::function<void(const Node&, int)> write = [&](const Node& n, int depth) {
    for (const auto& k : n.order) {
      const Node& c = n.children.at(k);
      out += std::string(size_t(depth) * 2, ' ') + k + ":";
      if (c.value) {
        out +=
            " " + (c.value->is_string() ? Json(c.value->get<std::string>()).dump() : c.value->dump()) + "\n";
      } else {
        out += "\n";
        write(c, depth + 1);
      }
    }
  };
  write(root, 0);
  return out;
}

}  // namespace realign::engines
