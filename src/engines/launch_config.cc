#include "engines/launch_config.h"

#include <algorithm>
#include <filesystem>

#include "core/config_file.h"
#include "core/error.h"
#include "core/read_file.h"
#include "engines/script_reader.h"

namespace realign::engines {
namespace {

bool is_yaml(const std::string& file) {
  const std::string ext = std::filesystem::path(file).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

const ConfigEntry* entry(const std::vector<ConfigEntry>& entries, const std::string& key) {
  for (const ConfigEntry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

// The value of one interpolation's body ("actor.path", "oc.env:NAME,default"), or null when it names
// nothing known.
const Json* lookup(const std::string& body, const std::vector<ConfigEntry>& entries,
                   const std::map<std::string, std::string>& env, Json& scratch) {
  if (body.rfind("oc.env:", 0) == 0) {
    const std::string spec = body.substr(7);
    const size_t comma = spec.find(',');
    const auto it = env.find(spec.substr(0, comma));
    if (it != env.end()) return &(scratch = it->second);
    if (comma == std::string::npos) return nullptr;
    std::string fallback = spec.substr(comma + 1);
    while (!fallback.empty() && fallback.front() == ' ') fallback.erase(0, 1);
    return &(scratch = fallback);
  }
  // NeMo-RL's arithmetic resolvers over two numbers (nemo_rl/utils/config.py registers add, mul, div, max:
  // `${mul:${policy.max_total_sequence_length},4}` once the inner one is resolved).
  for (const char* op : {"add", "mul", "div", "max"}) {
    const std::string prefix = std::string(op) + ":";
    if (body.rfind(prefix, 0) != 0) continue;
    const std::string args = body.substr(prefix.size());
    const size_t comma = args.find(',');
    if (comma == std::string::npos) return nullptr;
    Json a, b;
    try {
      a = Json::parse(args.substr(0, comma)), b = Json::parse(args.substr(comma + 1));
    } catch (...) {
      return nullptr;
    }
    if (!a.is_number() || !b.is_number()) return nullptr;
    const bool integers = a.is_number_integer() && b.is_number_integer();
    const std::string o = op;
    if (o == "div") {
      if (b.get<double>() == 0) return nullptr;
      return &(scratch = a.get<double>() / b.get<double>());  // Python's `/`: a float
    }
    if (integers) {
      const int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
      return &(scratch = o == "add" ? x + y : o == "mul" ? x * y : std::max(x, y));
    }
    const double x = a.get<double>(), y = b.get<double>();
    return &(scratch = o == "add" ? x + y : o == "mul" ? x * y : std::max(x, y));
  }
  const ConfigEntry* e = entry(entries, body);
  return e ? &e->value : nullptr;
}

// One pass over the entries: each "${...}" whose target is itself free of interpolations is replaced.
// Returns whether anything changed.
bool resolve_once(std::vector<ConfigEntry>& entries, const std::map<std::string, std::string>& env) {
  bool changed = false;
  for (ConfigEntry& e : entries) {
    if (!e.value.is_string()) continue;
    const std::string text = e.value.get<std::string>();
    std::string out;
    size_t at = 0;
    bool whole = false;
    Json typed;
    for (size_t open = text.find("${"); open != std::string::npos; open = text.find("${", at)) {
      const size_t close = text.find('}', open);
      if (close == std::string::npos) break;
      const std::string body = text.substr(open + 2, close - open - 2);
      if (body.find("${") != std::string::npos) {  // a resolver's argument: the inner one first
        out += text.substr(at, open + 2 - at);
        at = open + 2;
        continue;
      }
      Json scratch;
      const Json* target = lookup(body, entries, env, scratch);
      const bool pending =
          target && target->is_string() && target->get<std::string>().find("${") != std::string::npos;
      out += text.substr(at, open - at);
      if (!target || pending) {
        out += text.substr(open, close + 1 - open);
      } else {
        if (open == 0 && close + 1 == text.size()) whole = true, typed = *target;
        out += target->is_string() ? target->get<std::string>() : target->dump();
      }
      at = close + 1;
    }
    out += text.substr(std::min(at, text.size()));
    if (whole) {
      e.value = typed, changed = true;
    } else if (out != text) {
      e.value = out, changed = true;
    }
  }
  return changed;
}

// The config a script names, found from the working directory or beside the script; "" when neither has it.
std::string find_config(const std::string& named, const std::string& script) {
  if (std::filesystem::exists(named)) return named;
  const std::filesystem::path beside = std::filesystem::path(script).parent_path() / named;
  if (!std::filesystem::path(named).is_absolute() && std::filesystem::exists(beside)) return beside.string();
  return "";
}

Json load_tree(const std::filesystem::path& path, int depth);

// `config` (read from `path`) with the configs its `defaults` names merged under it.
Json with_defaults(Json config, const std::filesystem::path& path, int depth) {
  if (!config.is_object()) throw Error(path.string(), "a config file must hold a mapping");
  if (!config.contains("defaults")) return config;
  Json defaults = config["defaults"];
  config.erase("defaults");
  if (!defaults.is_array()) defaults = Json::array({defaults});
  Json merged = Json::object();
  for (const Json& parent : defaults) {
    if (!parent.is_string())
      throw Error(path.string(), "defaults: expected file paths, got " + parent.dump());
    const std::filesystem::path named = parent.get<std::string>();
    merge_config(merged, load_tree(named.is_absolute() ? named : path.parent_path() / named, depth + 1));
  }
  merge_config(merged, std::move(config));
  return merged;
}

Json load_tree(const std::filesystem::path& path, int depth) {
  if (depth > 16) throw Error(path.string(), "its defaults include one another in a loop");
  if (!std::filesystem::exists(path)) throw Error(path.string(), "not found (named as a config's defaults)");
  return with_defaults(parse_yaml(read_file(path.string()), path.string()), path, depth);
}

}  // namespace

void merge_config(Json& base, Json child) {
  for (auto& [key, value] : child.items()) {
    if (value.is_object() && value.value("_override_", false)) {
      value.erase("_override_");
      base[key] = std::move(value);
    } else if (value.is_object() && base.contains(key) && base[key].is_object()) {
      merge_config(base[key], std::move(value));
    } else {
      base[key] = std::move(value);
    }
  }
}

std::vector<ConfigEntry> flatten_config(const Json& tree, const std::string& prefix) {
  std::vector<ConfigEntry> out;
  if (!tree.is_object()) return {{prefix, tree}};
  for (const auto& [key, value] : tree.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object() && !value.empty()) {
      for (ConfigEntry& e : flatten_config(value, path)) out.push_back(std::move(e));
    } else {
      out.push_back({path, value});
    }
  }
  return out;
}

void apply_overrides(std::vector<ConfigEntry>& entries, const std::vector<ConfigEntry>& overrides) {
  for (const ConfigEntry& o : overrides) {
    bool replaced = false;
    for (ConfigEntry& e : entries)
      if (e.key == o.key) e.value = o.value, e.file = o.file, e.line = o.line, replaced = true;
    if (!replaced) entries.push_back(o);
  }
}

void resolve_interpolations(std::vector<ConfigEntry>& entries,
                            const std::map<std::string, std::string>& env) {
  // Chains resolve one link per pass; a loop stops changing.
  for (size_t pass = 0; pass < 16 && resolve_once(entries, env); ++pass) {
  }
}

Json load_config_tree(const std::string& path) { return load_tree(path, 0); }

LaunchConfig read_launch_config(const std::string& text, const std::string& file,
                                const std::map<std::string, std::string>& env, bool config_required) {
  LaunchConfig out;
  if (is_yaml(file)) {
    out.entries = flatten_config(with_defaults(parse_yaml(text, file), file, 0));
    out.config_file = file;
  } else {
    const std::vector<ConfigEntry> overrides = read_launch_overrides(text, file, env);
    const ConfigEntry* named = entry(overrides, "--config");
    if (named && !named->value.is_string()) throw Error("--config", "expected a file path");
    if (named) out.config_file = find_config(named->value.get<std::string>(), file);
    if (config_required && out.config_file.empty())
      throw Error("--config", named ? "'" + named->value.get<std::string>() + "' (named in " + file +
                                          ") is not found from the working directory or beside the script; "
                                          "run realign where the launch runs, or import the YAML file itself"
                                    : file + " names no YAML config (--config FILE) for the run's settings");
    if (!out.config_file.empty()) out.entries = flatten_config(load_config_tree(out.config_file));
    apply_overrides(out.entries, overrides);
  }
  resolve_interpolations(out.entries, env);
  return out;
}

}  // namespace realign::engines
