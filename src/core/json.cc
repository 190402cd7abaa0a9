#include "core/json.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace realign {

std::string json_type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "a list";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string index_path(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

int64_t json_to_int(const Json& value, const std::string& path) {
  if (value.is_number_integer() || value.is_number_unsigned()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      throw Error(path, "integer out of range");
    return value.get<int64_t>();
  }
  if (value.is_number_float()) {
    double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  throw Error(path, "expected an integer, got " + json_type_name(value) +
                        (value.is_primitive() ? " (" + value.dump() + ")" : ""));
}

double json_to_double(const Json& value, const std::string& path) {
  if (value.is_number()) {
    double d = value.get<double>();
    if (!std::isfinite(d)) throw Error(path, "expected a finite number");
    return d;
  }
  throw Error(path, "expected a number, got " + json_type_name(value));
}

std::string json_to_string(const Json& value, const std::string& path) {
  if (value.is_string()) return value.get<std::string>();
  throw Error(path, "expected a string, got " + json_type_name(value));
}

bool json_to_bool(const Json& value, const std::string& path) {
  if (value.is_boolean()) return value.get<bool>();
  throw Error(path, "expected true or false, got " + json_type_name(value));
}

ObjectReader::ObjectReader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
  if (!object_.is_object())
    throw Error(path_.empty() ? "<root>" : path_, "expected an object, got " + json_type_name(object_));
}

bool ObjectReader::has(const std::string& key) const { return object_.contains(key); }

std::string ObjectReader::path_of(const std::string& key) const { return join_path(path_, key); }

const Json* ObjectReader::find(const std::string& key) {
  known_.insert(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

const Json& ObjectReader::at(const std::string& key) {
  const Json* v = find(key);
  if (!v) throw Error(path_of(key), "required field is missing");
  return *v;
}

std::string ObjectReader::get_string(const std::string& key) { return json_to_string(at(key), path_of(key)); }
std::string ObjectReader::get_string(const std::string& key, const std::string& fallback) {
  const Json* v = find(key);
  return v ? json_to_string(*v, path_of(key)) : fallback;
}
int64_t ObjectReader::get_int(const std::string& key) { return json_to_int(at(key), path_of(key)); }
int64_t ObjectReader::get_int(const std::string& key, int64_t fallback) {
  const Json* v = find(key);
  return v ? json_to_int(*v, path_of(key)) : fallback;
}
double ObjectReader::get_double(const std::string& key) { return json_to_double(at(key), path_of(key)); }
double ObjectReader::get_double(const std::string& key, double fallback) {
  const Json* v = find(key);
  return v ? json_to_double(*v, path_of(key)) : fallback;
}
bool ObjectReader::get_bool(const std::string& key) { return json_to_bool(at(key), path_of(key)); }
bool ObjectReader::get_bool(const std::string& key, bool fallback) {
  const Json* v = find(key);
  return v ? json_to_bool(*v, path_of(key)) : fallback;
}

int64_t ObjectReader::get_positive(const std::string& key) {
  int64_t v = get_int(key);
  if (v <= 0) throw Error(path_of(key), "must be a positive integer, got " + std::to_string(v));
  return v;
}
int64_t ObjectReader::get_positive(const std::string& key, int64_t fallback) {
  int64_t v = get_int(key, fallback);
  if (v <= 0) throw Error(path_of(key), "must be a positive integer, got " + std::to_string(v));
  return v;
}

namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

int64_t ObjectReader::get_int_in(const std::string& key, int64_t lo, int64_t hi) {
  const int64_t v = get_int(key);
  if (v < lo || v > hi)
    throw Error(path_of(key), "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                                  std::to_string(v));
  return v;
}
int64_t ObjectReader::get_int_in(const std::string& key, int64_t lo, int64_t hi, int64_t fallback) {
  if (has(key)) return get_int_in(key, lo, hi);
  allow(key);
  return fallback;
}
double ObjectReader::get_double_in(const std::string& key, double lo, double hi, double fallback) {
  const double v = get_double(key, fallback);
  if (!(v >= lo && v <= hi))
    throw Error(path_of(key), "must be in [" + number_text(lo) + ", " + number_text(hi) + "], got " +
                                  number_text(v));
  return v;
}

void ObjectReader::allow(const std::string& key) { known_.insert(key); }

void ObjectReader::finish() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (known_.count(it.key())) continue;
    std::string valid;
    for (const auto& k : known_) valid += (valid.empty() ? "" : ", ") + k;
    throw Error(path_of(it.key()), "unknown key; valid keys here are: " + valid);
  }
}

}  // namespace realign
