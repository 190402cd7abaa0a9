// jinja::Value: the values a chat template computes with (undefined, none, bool, int, float, string, list,
// dict with insertion order, namespace, function), printed and compared as @huggingface/jinja (the renderer
// transformers.js uses, which follows Python's Jinja for what chat templates do) does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"

namespace realign::jinja {

struct Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;  // insertion order, as Python's dict
using Function = std::function<Value(const std::vector<Value>& args, const Dict& kwargs)>;

struct Value {
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kFunction };
  Kind kind = Kind::kUndefined;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::shared_ptr<List> list;  // shared: a namespace or dict changed through one name is changed for all
  std::shared_ptr<Dict> dict;  // kDict and kNamespace
  std::shared_ptr<Function> fn;

  static Value none();
  static Value boolean(bool v);
  static Value integer(int64_t v);
  static Value real(double v);
  static Value string(std::string v);
  static Value make_list(List v = {});
  static Value make_dict(Dict v = {});
  static Value function(Function f);
  static Value from_json(const Json& j);  // ordered: dicts keep the file's key order

  bool is_undefined() const { return kind == Kind::kUndefined; }
  bool is_number() const { return kind == Kind::kInt || kind == Kind::kFloat; }
  bool truthy() const;
  double number() const;  // int, float or bool as a double
  // The dict entry or nullptr.
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value v);
  // As {{ value }} prints it (undefined and none print nothing).
  std::string str() const;
  std::string type_name() const;
};

bool equal(const Value& a, const Value& b);
// tojson: Python's json.dumps style (", " and ": "), `indent` > 0 pretty-prints.
std::string to_json(const Value& v, int indent = 0, int depth = 0);

}  // namespace realign::jinja
