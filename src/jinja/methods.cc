// The attributes and methods of values: a dict's entries and get/items/keys/values, a string's Python
// methods.
#include <cctype>

#include "jinja/builtins.h"
#include "jinja/text.h"

namespace realign::jinja {
namespace {

Value string_method(const Value& obj, const std::string& name, const RenderSite& site) {
  const std::string s = obj.s;
  auto fn = [](auto f) { return Value::function(f); };
  if (name == "strip" || name == "lstrip" || name == "rstrip")
    return fn([s, name](const std::vector<Value>& args, const Dict&) {
      if (!args.empty() && args[0].kind == Value::Kind::kString) {
        const std::string& chars = args[0].s;
        size_t b = 0, e = s.size();
        if (name != "rstrip")
          while (b < e && chars.find(s[b]) != std::string::npos) ++b;
        if (name != "lstrip")
          while (e > b && chars.find(s[e - 1]) != std::string::npos) --e;
        return Value::string(s.substr(b, e - b));
      }
      return Value::string(trim(s, name != "rstrip", name != "lstrip"));
    });
  if (name == "upper" || name == "lower")
    return fn([s, name](const std::vector<Value>&, const Dict&) {
      return Value::string(ascii_case(s, name == "upper"));
    });
  if (name == "startswith" || name == "endswith")
    return fn([&site, s, name](const std::vector<Value>& args, const Dict&) {
      if (args.empty()) site.fail(name + "() needs an argument");
      List options = args[0].kind == Value::Kind::kList ? *args[0].list : List{args[0]};
      for (const Value& o : options) {
        if (o.kind != Value::Kind::kString) site.fail(name + "() takes strings");
        const bool hit = name == "startswith" ? s.compare(0, o.s.size(), o.s) == 0
                                              : s.size() >= o.s.size() &&
                                                    s.compare(s.size() - o.s.size(), o.s.size(), o.s) == 0;
        if (hit) return Value::boolean(true);
      }
      return Value::boolean(false);
    });
  if (name == "split")
    return fn([&site, s](const std::vector<Value>& args, const Dict&) {
      List out;
      if (args.empty() || args[0].kind == Value::Kind::kNone) {
        size_t p = 0;
        while (p < s.size()) {
          while (p < s.size() && std::isspace(uint8_t(s[p]))) ++p;
          size_t b = p;
          while (p < s.size() && !std::isspace(uint8_t(s[p]))) ++p;
          if (p > b) out.push_back(Value::string(s.substr(b, p - b)));
        }
        return Value::make_list(std::move(out));
      }
      const std::string sep = args[0].s;
      if (sep.empty()) site.fail("split(): empty separator");
      int64_t max = args.size() > 1 ? args[1].i : -1;
      size_t p = 0;
      for (;;) {
        size_t hit = s.find(sep, p);
        if (hit == std::string::npos || (max >= 0 && int64_t(out.size()) >= max)) break;
        out.push_back(Value::string(s.substr(p, hit - p)));
        p = hit + sep.size();
      }
      out.push_back(Value::string(s.substr(p)));
      return Value::make_list(std::move(out));
    });
  if (name == "replace")
    return fn([&site, s](const std::vector<Value>& args, const Dict& kwargs) {
      if (args.size() < 2) site.fail("replace() needs two arguments");
      const Value* count = args.size() > 2 ? &args[2] : kwarg(kwargs, "count");
      return Value::string(
          replace_str(s, args[0].s, args[1].s, count && count->kind == Value::Kind::kInt ? count->i : -1));
    });
  if (name == "title" || name == "capitalize")
    return fn([s, name](const std::vector<Value>&, const Dict&) {
      return Value::string(title(s, name == "title"));
    });
  site.fail("string method '" + name + "' is not supported");
}

}  // namespace

Value attribute(const Value& obj, const std::string& name, const RenderSite& site) {
  if (obj.kind == Value::Kind::kDict || obj.kind == Value::Kind::kNamespace) {
    if (const Value* v = obj.find(name)) return *v;
    if (obj.kind == Value::Kind::kNamespace) return Value();
    return dict_method(obj, name);
  }
  if (obj.kind == Value::Kind::kString) return string_method(obj, name, site);
  if (obj.kind == Value::Kind::kList && name == "length") return Value::integer(int64_t(obj.list->size()));
  if (obj.kind == Value::Kind::kList && !name.empty() && std::isdigit(uint8_t(name[0]))) {
    const size_t k = std::stoul(name);
    return k < obj.list->size() ? (*obj.list)[k] : Value();
  }
  return Value();
}

Value dict_method(const Value& obj, const std::string& name) {
  if (name == "get")
    return Value::function([obj](const std::vector<Value>& args, const Dict&) {
      const Value* v = args.empty() ? nullptr : obj.find(args[0].s);
      return v ? *v : args.size() > 1 ? args[1] : Value::none();
    });
  if (name == "items" || name == "keys" || name == "values")
    return Value::function([obj, name](const std::vector<Value>&, const Dict&) {
      List out;
      for (const auto& [k, v] : *obj.dict) {
        if (name == "items")
          out.push_back(Value::make_list({Value::string(k), v}));
        else
          out.push_back(name == "keys" ? Value::string(k) : v);
      }
      return Value::make_list(std::move(out));
    });
  return Value();
}

}  // namespace realign::jinja
