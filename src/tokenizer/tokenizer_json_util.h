// Small readers shared by the tokenizer.json pieces (normalizers, pre-tokenizers, decoders): the "type" of a
// piece, optional fields with defaults, and HF's {"String": ...} / {"Regex": ...} patterns.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/json.h"
#include "tokenizer/pcre2_regex.h"

namespace realign::tokenizer {

// The piece's "type" string; throws Error naming `path` when absent.
std::string json_piece_type(const nlohmann::json& j, const std::string& path);
bool json_bool_or(const nlohmann::json& j, const char* key, bool fallback);
// A string field; throws Error naming path.key when absent or not a string.
std::string json_required_string(const nlohmann::json& j, const char* key, const std::string& path);
// Calls f(item, path) for each item of the list j[key] (a Sequence's pieces); throws Error when it is no
// list.
void for_each_json_item(const nlohmann::json& j, const char* key, const std::string& path,
                        const std::function<void(const nlohmann::json&, const std::string&)>& f);
// {"String": "lit"} (quoted for PCRE2) or {"Regex": "re"}, compiled.
std::unique_ptr<Pcre2Regex> json_pattern(const nlohmann::json& j, const std::string& path);
// Replaces every match of `re` in `text` by `content`.
std::string replace_all(const Pcre2Regex& re, std::string_view text, const std::string& content);

}  // namespace realign::tokenizer
