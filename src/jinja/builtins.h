// The built-ins a template reaches by name: filters (`x | name(...)`), tests (`x is name`), the attributes
// and methods of values (`s.strip()`, `d.items()`), and the global functions (range, namespace, strftime_now,
// raise_exception); each as @huggingface/jinja computes it. The evaluator (render.cc) calls them.
#pragma once

#include <string>
#include <vector>

#include "jinja/value.h"

namespace realign::jinja {

// Where a render error points: the template and the line being evaluated. The evaluator moves `line` as it
// goes; built-ins that fail later (a method called after its lookup) read it then.
struct RenderSite {
  std::string where;
  int line = 0;
  [[noreturn]] void fail(const std::string& what) const;
};

using Args = std::vector<Value>;

// The keyword argument `name`, or null.
const Value* kwarg(const Dict& kwargs, const char* name);

Value apply_filter(const std::string& name, const Value& v, const Args& args, const Dict& kwargs,
                   const RenderSite& site);
bool apply_test(const std::string& name, const Value& v, const Args& args, const RenderSite& site);

// obj.name: a dict's entry or method, a namespace's attribute, a string's method, a list's length or item;
// undefined otherwise. The methods returned refer to `site`, which must outlive them.
Value attribute(const Value& obj, const std::string& name, const RenderSite& site);
// A dict's method (get, items, keys, values) as a function value, undefined for another name.
Value dict_method(const Value& obj, const std::string& name);

// The names every template sees beside its context; the functions refer to `site`, which must outlive them.
Dict global_functions(const RenderSite& site);

}  // namespace realign::jinja
