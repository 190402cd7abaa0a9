#include "jinja/value.h"

#include <cmath>
#include <cstdio>

namespace realign::jinja {

Value Value::none() {
  Value v;
  v.kind = Kind::kNone;
  return v;
}
Value Value::boolean(bool x) {
  Value v;
  v.kind = Kind::kBool;
  v.b = x;
  return v;
}
Value Value::integer(int64_t x) {
  Value v;
  v.kind = Kind::kInt;
  v.i = x;
  return v;
}
Value Value::real(double x) {
  Value v;
  v.kind = Kind::kFloat;
  v.f = x;
  return v;
}
Value Value::string(std::string x) {
  Value v;
  v.kind = Kind::kString;
  v.s = std::move(x);
  return v;
}
Value Value::make_list(List x) {
  Value v;
  v.kind = Kind::kList;
  v.list = std::make_shared<List>(std::move(x));
  return v;
}
Value Value::make_dict(Dict x) {
  Value v;
  v.kind = Kind::kDict;
  v.dict = std::make_shared<Dict>(std::move(x));
  return v;
}
Value Value::function(Function f) {
  Value v;
  v.kind = Kind::kFunction;
  v.fn = std::make_shared<Function>(std::move(f));
  return v;
}

Value Value::from_json(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return none();
    case Json::value_t::boolean:
      return boolean(j.get<bool>());
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return integer(j.get<int64_t>());
    case Json::value_t::number_float:
      return real(j.get<double>());
    case Json::value_t::string:
      return string(j.get<std::string>());
    case Json::value_t::array: {
      List l;
      for (const auto& e : j) l.push_back(from_json(e));
      return make_list(std::move(l));
    }
    case Json::value_t::object: {
      Dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d.emplace_back(it.key(), from_json(it.value()));
      return make_dict(std::move(d));
    }
    default:
      return Value();
  }
}

bool Value::truthy() const {
  switch (kind) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return b;
    case Kind::kInt:
      return i != 0;
    case Kind::kFloat:
      return f != 0;
    case Kind::kString:
      return !s.empty();
    case Kind::kList:
      return !list->empty();
    case Kind::kDict:
      return !dict->empty();
    default:
      return true;
  }
}

double Value::number() const { return kind == Kind::kInt ? double(i) : kind == Kind::kBool ? double(b) : f; }

const Value* Value::find(const std::string& key) const {
  if (!dict) return nullptr;
  for (const auto& [k, v] : *dict)
    if (k == key) return &v;
  return nullptr;
}

void Value::set(const std::string& key, Value v) {
  for (auto& [k, old] : *dict)
    if (k == key) {
      old = std::move(v);
      return;
    }
  dict->emplace_back(key, std::move(v));
}

namespace {

std::string float_str(double f) {
  // JavaScript's number printing, with ".0" on integral values as Python prints floats.
  if (f == 0 && std::signbit(f)) return "-0.0";
  if (std::floor(f) == f && std::fabs(f) < 1e16) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", f);
    return buf;
  }
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, f);
    if (std::strtod(buf, nullptr) == f) break;
  }
  return buf;
}

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string to_json(const Value& v, int indent, int depth) {
  const std::string item_sep = indent > 0 ? "," : ", ";
  const std::string pad = indent > 0 ? "\n" + std::string(size_t(indent) * depth, ' ') : "";
  const std::string child_pad = indent > 0 ? pad + std::string(size_t(indent), ' ') : "";
  switch (v.kind) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone:
      return "null";
    case Value::Kind::kBool:
      return v.b ? "true" : "false";
    case Value::Kind::kInt:
      return std::to_string(v.i);
    case Value::Kind::kFloat: {
      // JSON.stringify: integral floats without ".0".
      if (std::floor(v.f) == v.f && std::fabs(v.f) < 1e16) return std::to_string(int64_t(v.f));
      return float_str(v.f);
    }
    case Value::Kind::kString:
      return json_string(v.s);
    case Value::Kind::kList: {
      if (v.list->empty()) return "[]";
      std::string out = "[";
      for (size_t k = 0; k < v.list->size(); ++k)
        out += (k ? item_sep : "") + child_pad + to_json((*v.list)[k], indent, depth + 1);
      return out + pad + "]";
    }
    case Value::Kind::kDict:
    case Value::Kind::kNamespace: {
      if (v.dict->empty()) return "{}";
      std::string out = "{";
      size_t k = 0;
      for (const auto& [key, val] : *v.dict)
        out += (k++ ? item_sep : "") + child_pad + json_string(key) + ": " + to_json(val, indent, depth + 1);
      return out + pad + "}";
    }
    case Value::Kind::kFunction:
      break;
  }
  return "null";
}

std::string Value::str() const {
  switch (kind) {
    case Kind::kUndefined:
    case Kind::kNone:
      return "";
    case Kind::kBool:
      return b ? "true" : "false";
    case Kind::kInt:
      return std::to_string(i);
    case Kind::kFloat:
      return float_str(f);
    case Kind::kString:
      return s;
    case Kind::kFunction:
      return "[function]";
    default:
      return to_json(*this);
  }
}

std::string Value::type_name() const {
  static const char* names[] = {"undefined", "none", "bool", "int",       "float",
                                "string",    "list", "dict", "namespace", "function"};
  return names[int(kind)];
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.number() == b.number();
  if (a.kind != b.kind) {
    // JavaScript's loose ==, as the reference: true == 1, and none == undefined.
    const bool nullish_a = a.kind == Value::Kind::kNone || a.is_undefined();
    const bool nullish_b = b.kind == Value::Kind::kNone || b.is_undefined();
    if (nullish_a || nullish_b) return nullish_a && nullish_b;
    if ((a.kind == Value::Kind::kBool || a.is_number()) && (b.kind == Value::Kind::kBool || b.is_number()))
      return a.number() == b.number();
    return false;
  }
  switch (a.kind) {
    case Value::Kind::kBool:
      return a.b == b.b;
    case Value::Kind::kString:
      return a.s == b.s;
    case Value::Kind::kList:
      return a.list == b.list;
    case Value::Kind::kDict:
    case Value::Kind::kNamespace:
      return a.dict == b.dict;
    default:
      return true;
  }
}

}  // namespace realign::jinja
