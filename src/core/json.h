// JSON as the one in-memory form of configs, plans and profiles, plus a reader that tracks field paths.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"

namespace realign {

using Json = nlohmann::ordered_json;

// A short, human description of a JSON value's type ("a number", "an object").
std::string json_type_name(const Json& value);

// Reads one JSON object field by field. Every error names the full path ("ppo.gen_len"); finish() rejects
// keys nobody asked for, listing the valid ones, so a typo never passes silently.
class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string path);

  bool has(const std::string& key) const;
  // The path of a child field, for error messages and nested readers.
  std::string path_of(const std::string& key) const;
  const std::string& path() const { return path_; }

  // Raw access (marks the key as known). Throws when required and missing.
  const Json& at(const std::string& key);
  const Json* find(const std::string& key);

  std::string get_string(const std::string& key);
  std::string get_string(const std::string& key, const std::string& fallback);
  int64_t get_int(const std::string& key);
  int64_t get_int(const std::string& key, int64_t fallback);
  double get_double(const std::string& key);
  double get_double(const std::string& key, double fallback);
  bool get_bool(const std::string& key);
  bool get_bool(const std::string& key, bool fallback);

  // A positive integer (> 0), the commonest constraint on sizes and counts.
  int64_t get_positive(const std::string& key);
  int64_t get_positive(const std::string& key, int64_t fallback);
  // An integer in [lo, hi], or a number in [lo, hi] (NaN refused): a value the code downstream can hold.
  // Refused naming the field and the range.
  int64_t get_int_in(const std::string& key, int64_t lo, int64_t hi);
  int64_t get_int_in(const std::string& key, int64_t lo, int64_t hi, int64_t fallback);
  double get_double_in(const std::string& key, double lo, double hi, double fallback);

  // Declares a key as accepted without reading it (e.g. read elsewhere).
  void allow(const std::string& key);
  // Throws Error naming the first unknown key and the accepted ones.
  void finish() const;

 private:
  const Json& object_;
  std::string path_;
  std::set<std::string> known_;
};

// Typed checks usable on any value, with the path for the message.
int64_t json_to_int(const Json& value, const std::string& path);
double json_to_double(const Json& value, const std::string& path);
std::string json_to_string(const Json& value, const std::string& path);
bool json_to_bool(const Json& value, const std::string& path);

// "a.b" + "[3]" helpers so paths stay uniform.
std::string join_path(const std::string& parent, const std::string& key);
std::string index_path(const std::string& parent, size_t index);

}  // namespace realign
