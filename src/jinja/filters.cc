// Filters (`x | name(...)`) and the tests (`x is name`) that `is`, select and reject apply.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "jinja/builtins.h"
#include "jinja/text.h"

namespace realign::jinja {
namespace {

int64_t length(const Value& v, const RenderSite& site) {
  if (v.kind == Value::Kind::kString) return int64_t(code_points(v.s).size());
  if (v.kind == Value::Kind::kList) return int64_t(v.list->size());
  if (v.kind == Value::Kind::kDict) return int64_t(v.dict->size());
  site.fail("length of a " + v.type_name());
}

}  // namespace

const Value* kwarg(const Dict& kwargs, const char* name) {
  for (const auto& [k, v] : kwargs)
    if (k == name) return &v;
  return nullptr;
}

Value apply_filter(const std::string& f, const Value& v, const Args& args, const Dict& kwargs,
                   const RenderSite& site) {
  if (f == "safe" || (f == "string" && v.kind == Value::Kind::kString)) return v;
  if (f == "tojson") {
    const Value* indent = kwarg(kwargs, "indent");
    return Value::string(to_json(v, indent && indent->kind == Value::Kind::kInt ? int(indent->i) : 0));
  }
  if (f == "default" || f == "d") {
    const bool boolean = (args.size() > 1 && args[1].truthy()) ||
                         (kwarg(kwargs, "boolean") && kwarg(kwargs, "boolean")->truthy());
    if (v.is_undefined() || (boolean && !v.truthy())) return args.empty() ? Value::string("") : args[0];
    return v;
  }
  if (f == "length" || f == "count") return Value::integer(length(v, site));
  if (f == "string") return Value::string(v.str());
  if (f == "trim") {
    if (v.kind != Value::Kind::kString) site.fail("trim of a " + v.type_name());
    return Value::string(trim(v.s, true, true));
  }
  if (f == "upper" || f == "lower") {
    if (v.kind != Value::Kind::kString) site.fail(f + " of a " + v.type_name());
    return Value::string(ascii_case(v.s, f == "upper"));
  }
  if (f == "title" || f == "capitalize") {
    if (v.kind != Value::Kind::kString) site.fail(f + " of a " + v.type_name());
    return Value::string(title(v.s, f == "title"));
  }
  if (f == "first" || f == "last") {
    if (v.kind != Value::Kind::kList) site.fail(f + " of a " + v.type_name());
    if (v.list->empty()) return Value();
    return f == "first" ? v.list->front() : v.list->back();
  }
  if (f == "list") {
    if (v.kind == Value::Kind::kList) return v;
    site.fail("list of a " + v.type_name());
  }
  if (f == "reverse") {
    if (v.kind == Value::Kind::kList) {
      List l(v.list->rbegin(), v.list->rend());
      return Value::make_list(std::move(l));
    }
    site.fail("reverse of a " + v.type_name());
  }
  if (f == "join") {
    const std::string sep = !args.empty()                ? args[0].s
                            : kwarg(kwargs, "separator") ? kwarg(kwargs, "separator")->s
                                                         : "";
    std::string out;
    if (v.kind != Value::Kind::kList) site.fail("join of a " + v.type_name());
    for (size_t k = 0; k < v.list->size(); ++k) out += (k ? sep : "") + (*v.list)[k].str();
    return Value::string(out);
  }
  if (f == "items") {
    if (v.kind != Value::Kind::kDict) site.fail("items of a " + v.type_name());
    return (*dict_method(v, "items").fn)({}, {});
  }
  if (f == "int") {
    if (v.kind == Value::Kind::kString) {
      try {
        return Value::integer(std::stoll(v.s));
      } catch (...) {
        return args.empty() ? Value::integer(0) : args[0];
      }
    }
    if (v.kind == Value::Kind::kFloat) return Value::integer(int64_t(std::floor(v.f)));
    if (v.kind == Value::Kind::kInt || v.kind == Value::Kind::kBool)
      return Value::integer(int64_t(v.number()));
    site.fail("int of a " + v.type_name());
  }
  if (f == "abs" && v.is_number())
    return v.kind == Value::Kind::kInt ? Value::integer(std::llabs(v.i)) : Value::real(std::fabs(v.f));
  if (f == "selectattr" || f == "rejectattr") {
    if (v.kind != Value::Kind::kList || args.empty()) site.fail(f + " needs a list and an attribute name");
    List out;
    for (const Value& item : *v.list) {
      Value attr = attribute(item, args[0].s, site);
      bool keep;
      if (args.size() == 1)
        keep = attr.truthy();
      else
        keep = apply_test(args[1].s, attr, Args(args.begin() + 2, args.end()), site);
      if (keep == (f == "selectattr")) out.push_back(item);
    }
    return Value::make_list(std::move(out));
  }
  if (f == "select" || f == "reject") {
    if (v.kind != Value::Kind::kList) site.fail(f + " of a " + v.type_name());
    List out;
    for (const Value& item : *v.list) {
      const bool pass = args.empty() ? item.truthy()
                                     : apply_test(args[0].s, item, Args(args.begin() + 1, args.end()), site);
      if (pass == (f == "select")) out.push_back(item);
    }
    return Value::make_list(std::move(out));
  }
  if (f == "unique") {
    if (v.kind != Value::Kind::kList) site.fail("unique of a " + v.type_name());
    List out;
    for (const Value& item : *v.list)
      if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return equal(o, item); }))
        out.push_back(item);
    return Value::make_list(std::move(out));
  }
  if (f == "sort" || f == "dictsort") {
    List items;
    if (f == "dictsort") {
      if (v.kind != Value::Kind::kDict) site.fail("dictsort of a " + v.type_name());
      for (const auto& [k, x] : *v.dict) items.push_back(Value::make_list({Value::string(k), x}));
    } else {
      if (v.kind != Value::Kind::kList) site.fail("sort of a " + v.type_name());
      items = *v.list;
    }
    const Value* attr = kwarg(kwargs, "attribute");
    const Value* rev = kwarg(kwargs, "reverse");
    const bool reverse = (f == "sort" && !args.empty() && args[0].truthy()) || (rev && rev->truthy());
    auto key = [&](const Value& x) {
      if (f == "dictsort") return (*x.list)[0];
      return attr ? attribute(x, attr->s, site) : x;
    };
    // Strings compare case-insensitively, as Jinja's default.
    auto less = [&](const Value& a, const Value& b) {
      const Value ka = key(a), kb = key(b);
      if (ka.is_number() && kb.is_number()) return ka.number() < kb.number();
      if (ka.kind == Value::Kind::kString && kb.kind == Value::Kind::kString)
        return ascii_case(ka.s, false) < ascii_case(kb.s, false);
      site.fail("cannot sort a " + ka.type_name() + " against a " + kb.type_name());
    };
    std::stable_sort(items.begin(), items.end(),
                     [&](const Value& a, const Value& b) { return reverse ? less(b, a) : less(a, b); });
    return Value::make_list(std::move(items));
  }
  if (f == "map") {
    const Value* attr = kwarg(kwargs, "attribute");
    if (v.kind != Value::Kind::kList || !attr)
      site.fail("map is supported as map(attribute=...) over a list");
    List out;
    for (const Value& item : *v.list) {
      Value x = attribute(item, attr->s, site);
      const Value* dflt = kwarg(kwargs, "default");
      out.push_back(x.is_undefined() && dflt ? *dflt : x);
    }
    return Value::make_list(std::move(out));
  }
  if (f == "indent") {
    if (v.kind != Value::Kind::kString) site.fail("indent of a " + v.type_name());
    const int64_t width = args.empty() ? 4 : args[0].i;
    const Value* first = kwarg(kwargs, "first");
    const bool indent_first = (args.size() > 1 && args[1].truthy()) || (first && first->truthy());
    std::string out, line;
    size_t k = 0, p = 0;
    for (;;) {
      size_t nl = v.s.find('\n', p);
      line = v.s.substr(p, nl == std::string::npos ? std::string::npos : nl - p);
      if (!line.empty() && (k > 0 || indent_first)) out += std::string(size_t(width), ' ');
      out += line;
      if (nl == std::string::npos) break;
      out += '\n';
      p = nl + 1;
      ++k;
    }
    return Value::string(out);
  }
  if (f == "replace") {
    if (v.kind != Value::Kind::kString || args.size() < 2)
      site.fail("replace needs a string and two arguments");
    return Value::string(replace_str(v.s, args[0].s, args[1].s, args.size() > 2 ? args[2].i : -1));
  }
  site.fail("filter '" + f + "' is not supported");
}

bool apply_test(const std::string& t, const Value& v, const Args& args, const RenderSite& site) {
  if (t == "defined") return !v.is_undefined();
  if (t == "undefined") return v.is_undefined();
  if (t == "none") return v.kind == Value::Kind::kNone;
  if (t == "string") return v.kind == Value::Kind::kString;
  if (t == "number") return v.is_number();
  if (t == "integer") return v.kind == Value::Kind::kInt;
  if (t == "boolean") return v.kind == Value::Kind::kBool;
  if (t == "true") return v.kind == Value::Kind::kBool && v.b;
  if (t == "false") return v.kind == Value::Kind::kBool && !v.b;
  if (t == "mapping") return v.kind == Value::Kind::kDict;
  if (t == "iterable") return v.kind == Value::Kind::kList || v.kind == Value::Kind::kString;
  if (t == "sequence")
    return v.kind == Value::Kind::kList || v.kind == Value::Kind::kDict || v.kind == Value::Kind::kString;
  if (t == "callable") return v.kind == Value::Kind::kFunction;
  if (t == "odd" || t == "even") {
    if (v.kind != Value::Kind::kInt) site.fail(t + " test of a " + v.type_name());
    return (v.i % 2 != 0) == (t == "odd");
  }
  if (t == "equalto" || t == "eq" || t == "sameas") return !args.empty() && equal(v, args[0]);
  site.fail("test '" + t + "' is not supported");
}

}  // namespace realign::jinja
