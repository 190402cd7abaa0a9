#include "tokenizer/tokenizer_json_util.h"

#include "core/error.h"

namespace realign::tokenizer {

std::string json_piece_type(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw Error(path, "expected an object with a \"type\" string");
  return j["type"].get<std::string>();
}

bool json_bool_or(const nlohmann::json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it == j.end() || !it->is_boolean() ? fallback : it->get<bool>();
}

std::string json_required_string(const nlohmann::json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) throw Error(path + "." + key, "must be a string");
  return it->get<std::string>();
}

void for_each_json_item(const nlohmann::json& j, const char* key, const std::string& path,
                        const std::function<void(const nlohmann::json&, const std::string&)>& f) {
  const std::string list_path = path + "." + key;
  if (!j.contains(key) || !j[key].is_array()) throw Error(list_path, "must be a list");
  size_t k = 0;
  for (const nlohmann::json& item : j[key]) f(item, index_path(list_path, k++));
}

std::unique_ptr<Pcre2Regex> json_pattern(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) throw Error(path, "expected {\"Regex\": ...} or {\"String\": ...}");
  if (j.contains("Regex") && j["Regex"].is_string())
    return std::make_unique<Pcre2Regex>(j["Regex"].get<std::string>(), path);
  if (j.contains("String") && j["String"].is_string()) {
    const std::string lit = j["String"].get<std::string>();
    if (lit.find("\\E") != std::string::npos) throw Error(path + ".String", "may not contain \\E");
    return std::make_unique<Pcre2Regex>("\\Q" + lit + "\\E", path);
  }
  throw Error(path, "expected {\"Regex\": ...} or {\"String\": ...}");
}

std::string replace_all(const Pcre2Regex& re, std::string_view text, const std::string& content) {
  std::string out;
  size_t cursor = 0;
  for (auto [b, e] : re.find_all(text)) {
    out.append(text.substr(cursor, b - cursor));
    out += content;
    cursor = e;
  }
  out.append(text.substr(cursor));
  return out;
}

}  // namespace realign::tokenizer
