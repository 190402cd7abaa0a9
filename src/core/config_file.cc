#include "core/config_file.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <sstream>

#include "core/read_file.h"

namespace realign {
namespace {

Json scalar_to_json(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!") return s;  // quoted in the source: always a string
  if (s == "~" || s == "null" || s == "Null" || s == "NULL" || s.empty()) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  {
    std::istringstream in(s);
    long long i;
    if (in >> i && in.eof()) return static_cast<int64_t>(i);
  }
  {
    std::istringstream in(s);
    double d;
    if (in >> d && in.eof()) return d;
  }
  return s;
}

Json yaml_to_json(const YAML::Node& node, int depth) {
  if (depth > 64) throw Error("config nests deeper than 64 levels");
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Scalar: return scalar_to_json(node);
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& child : node) out.push_back(yaml_to_json(child, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) throw Error("config map keys must be plain strings");
        const std::string key = kv.first.Scalar();
        if (out.contains(key)) throw Error(key, "key appears twice");
        out[key] = yaml_to_json(kv.second, depth + 1);
      }
      return out;
    }
  }
  return nullptr;
}

}  // namespace

Json parse_yaml(const std::string& text, const std::string& source_name) {
  try {
    return yaml_to_json(YAML::Load(text), 0);
  } catch (const YAML::Exception& e) {
    throw Error(source_name, "line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const Error& e) {
    throw Error(source_name, e.what());
  }
}

Json load_config_file(const std::string& path) {
  Json config = parse_yaml(read_file(path), path);
  if (!config.is_object()) throw Error(path, "a config must be a mapping of keys to values");
  return config;
}

void apply_override(Json& config, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(assignment, "an override is written key.sub=value");
  const std::string key = assignment.substr(0, eq);
  Json value = parse_yaml(assignment.substr(eq + 1), key);

  Json* node = &config;
  std::string path;
  size_t pos = 0;
  while (pos < key.size()) {
    if (key[pos] == '[') {
      const auto close = key.find(']', pos);
      if (close == std::string::npos) throw Error(key, "unclosed '['");
      const std::string digits = key.substr(pos + 1, close - pos - 1);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
        throw Error(key, "list index must be a number");
      const size_t idx = std::stoul(digits);
      path = index_path(path, idx);
      if (!node->is_array() || idx >= node->size())
        throw Error(path, "no such list entry to override");
      node = &(*node)[idx];
      pos = close + 1;
      if (pos < key.size() && key[pos] == '.') ++pos;
      continue;
    }
    const auto end = key.find_first_of(".[", pos);
    const std::string part = key.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (part.empty()) throw Error(key, "empty key segment");
    path = join_path(path, part);
    if (node->is_null()) *node = Json::object();
    if (!node->is_object()) throw Error(path, "cannot set a field inside " + json_type_name(*node));
    node = &(*node)[part];
    pos = end == std::string::npos ? key.size() : end;
    if (pos < key.size() && key[pos] == '.') ++pos;
  }
  *node = std::move(value);
}

void apply_overrides(Json& config, const std::vector<std::string>& assignments) {
  for (const auto& a : assignments) apply_override(config, a);
}

}  // namespace realign
