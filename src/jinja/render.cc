// Rendering a parsed chat template: scopes as Jinja's (a for loop's body has its own; `set` inside it does
// not leak out, hence namespace()), values and filters as @huggingface/jinja computes them.
#include <unicode/uchar.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "core/error.h"
#include "core/utf8.h"
#include "jinja/ast.h"
#include "jinja/template.h"

namespace realign::jinja {
namespace {

struct BreakSignal {};
struct ContinueSignal {};

struct Scope {
  std::map<std::string, Value> vars;
  const Scope* parent = nullptr;
  Value lookup(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->vars.find(name);
      if (it != s->vars.end()) return it->second;
    }
    return Value();
  }
};

bool is_uspace(uint32_t cp) { return u_isUWhiteSpace(UChar32(cp)) || cp == 0xFEFF; }

// JavaScript's trim/trimStart/trimEnd (Unicode White_Space and the BOM).
std::string trim(const std::string& s, bool left, bool right) {
  size_t b = 0, e = s.size();
  if (left)
    while (b < e) {
      size_t p = b;
      if (!is_uspace(next_code_point(s, p))) break;
      b = p;
    }
  if (right)
    while (e > b) {
      size_t start = e - 1;
      while (start > b && (uint8_t(s[start]) & 0xC0) == 0x80) --start;
      size_t p = start;
      if (!is_uspace(next_code_point(s, p))) break;
      e = start;
    }
  return s.substr(b, e - b);
}

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t p = 0; p < s.size();) out.push_back(next_code_point(s, p));
  return out;
}
std::string from_code_points(const std::vector<uint32_t>& cps, size_t b, size_t e) {
  std::string out;
  for (size_t k = b; k < e; ++k) append_utf8(out, cps[k]);
  return out;
}

std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) c = upper ? char(std::toupper(uint8_t(c))) : char(std::tolower(uint8_t(c)));
  return s;
}

std::string replace_str(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) return s;
  std::string out;
  size_t pos = 0;
  for (int64_t n = 0; count < 0 || n < count; ++n) {
    size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out += s.substr(pos, hit - pos) + to;
    pos = hit + from.size();
  }
  return out + s.substr(pos);
}

class Renderer {
 public:
  explicit Renderer(const std::string& where) : where_(where) {}

  std::string run(const Node& root, const Dict& context) {
    Scope globals;
    globals.vars["raise_exception"] =
        Value::function([this](const std::vector<Value>& args, const Dict&) -> Value {
          fail("raise_exception: " + (args.empty() ? std::string() : args[0].str()));
        });
    globals.vars["range"] = Value::function([this](const std::vector<Value>& args, const Dict&) {
      int64_t start = 0, stop = 0, step = 1;
      for (const Value& a : args)
        if (a.kind != Value::Kind::kInt) fail("range() takes integers, got " + a.type_name());
      if (args.size() == 1)
        stop = args[0].i;
      else if (args.size() >= 2)
        start = args[0].i, stop = args[1].i;
      if (args.size() == 3) step = args[2].i;
      if (args.empty() || args.size() > 3 || step == 0) fail("range() takes 1 to 3 integers, step not 0");
      List out;
      for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) out.push_back(Value::integer(k));
      return Value::make_list(std::move(out));
    });
    // Python's datetime.now().strftime, as transformers passes it (LLaMA-3.2's template prints the date).
    globals.vars["strftime_now"] = Value::function([this](const std::vector<Value>& args, const Dict&) {
      if (args.size() != 1 || args[0].kind != Value::Kind::kString)
        fail("strftime_now() takes one format string");
      const std::time_t now = std::time(nullptr);
      std::tm local{};
      localtime_r(&now, &local);
      char buf[256];
      const size_t n = std::strftime(buf, sizeof buf, args[0].s.c_str(), &local);
      return Value::string(std::string(buf, n));
    });
    globals.vars["namespace"] = Value::function([](const std::vector<Value>& args, const Dict& kwargs) {
      Value ns = Value::make_dict();
      ns.kind = Value::Kind::kNamespace;
      if (!args.empty() && args[0].dict)
        for (const auto& [k, v] : *args[0].dict) ns.set(k, v);
      for (const auto& [k, v] : kwargs) ns.set(k, v);
      return ns;
    });
    Scope top;
    top.parent = &globals;
    for (const auto& [k, v] : context) top.vars[k] = v;
    std::string out;
    exec(root, top, out);
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_ + ":" + std::to_string(line_), what);
  }

  void exec(const Node& n, Scope& scope, std::string& out) {
    line_ = n.line;
    switch (n.kind) {
      case Node::Kind::kBlock:
        for (const NodePtr& c : n.children) exec(*c, scope, out);
        return;
      case Node::Kind::kText:
        out += n.text;
        return;
      case Node::Kind::kOutput:
        out += eval(*n.a, scope).str();
        return;
      case Node::Kind::kIf:
        if (eval(*n.a, scope).truthy())
          exec(*n.children[0], scope, out);
        else if (n.children[1])
          exec(*n.children[1], scope, out);
        return;
      case Node::Kind::kFor:
        exec_for(n, scope, out);
        return;
      case Node::Kind::kSet: {
        Value v;
        if (n.b) {
          v = eval(*n.b, scope);
        } else {
          std::string body;
          exec(*n.children[0], scope, body);
          v = Value::string(body);
        }
        line_ = n.line;
        if (n.a) {
          Value target = eval(*n.a->a, scope);
          if (target.kind != Value::Kind::kNamespace)
            fail("cannot set attribute '" + n.a->text + "' of a " + target.type_name() +
                 " (only of a namespace)");
          target.set(n.a->text, v);
        } else if (n.names.size() == 1) {
          scope.vars[n.names[0]] = v;
        } else {
          if (v.kind != Value::Kind::kList || v.list->size() != n.names.size())
            fail("cannot unpack a " + v.type_name() + " into " + std::to_string(n.names.size()) + " names");
          for (size_t k = 0; k < n.names.size(); ++k) scope.vars[n.names[k]] = (*v.list)[k];
        }
        return;
      }
      case Node::Kind::kBreak:
        throw BreakSignal{};
      case Node::Kind::kContinue:
        throw ContinueSignal{};
      default:
        out += eval(n, scope).str();
    }
  }

  void bind(const Node& n, Scope& s, const Value& item) {
    if (n.names.size() == 1) {
      s.vars[n.names[0]] = item;
      return;
    }
    if (item.kind != Value::Kind::kList || item.list->size() != n.names.size())
      fail("cannot unpack a " + item.type_name() + " into " + std::to_string(n.names.size()) +
           " loop variables");
    for (size_t k = 0; k < n.names.size(); ++k) s.vars[n.names[k]] = (*item.list)[k];
  }

  void exec_for(const Node& n, Scope& scope, std::string& out) {
    Scope loop_scope;
    loop_scope.parent = &scope;
    Value iterable = eval(*n.a, loop_scope);
    List source;
    if (iterable.kind == Value::Kind::kList)
      source = *iterable.list;
    else if (iterable.kind == Value::Kind::kDict)
      for (const auto& kv : *iterable.dict) source.push_back(Value::string(kv.first));
    else if (iterable.kind == Value::Kind::kString)
      for (uint32_t cp : code_points(iterable.s))
        source.push_back(Value::string(from_code_points({cp}, 0, 1)));
    else
      fail("cannot loop over a " + iterable.type_name());
    List items;
    for (const Value& item : source) {
      if (n.b) {
        Scope test_scope;
        test_scope.parent = &loop_scope;
        bind(n, test_scope, item);
        if (!eval(*n.b, test_scope).truthy()) continue;
      }
      items.push_back(item);
    }
    bool iterated = false;
    const int64_t len = int64_t(items.size());
    for (int64_t k = 0; k < len; ++k) {
      Value loop = Value::make_dict({{"index", Value::integer(k + 1)},
                                     {"index0", Value::integer(k)},
                                     {"revindex", Value::integer(len - k)},
                                     {"revindex0", Value::integer(len - k - 1)},
                                     {"first", Value::boolean(k == 0)},
                                     {"last", Value::boolean(k == len - 1)},
                                     {"length", Value::integer(len)},
                                     {"previtem", k > 0 ? items[k - 1] : Value()},
                                     {"nextitem", k + 1 < len ? items[k + 1] : Value()}});
      loop_scope.vars["loop"] = loop;
      bind(n, loop_scope, items[k]);
      try {
        exec(*n.children[0], loop_scope, out);
      } catch (const ContinueSignal&) {
        continue;
      } catch (const BreakSignal&) {
        break;
      }
      iterated = true;
    }
    if (!iterated && n.children[1]) exec(*n.children[1], loop_scope, out);
  }

  std::pair<std::vector<Value>, Dict> args_of(const Node& n, Scope& scope) {
    std::vector<Value> args;
    Dict kwargs;
    for (size_t k = 0; k < n.children.size(); ++k) {
      Value v = eval(*n.children[k], scope);
      if (n.names[k].empty())
        args.push_back(v);
      else
        kwargs.emplace_back(n.names[k], v);
    }
    return {args, kwargs};
  }
  static const Value* kwarg(const Dict& kwargs, const char* name) {
    for (const auto& [k, v] : kwargs)
      if (k == name) return &v;
    return nullptr;
  }

  Value eval(const Node& n, Scope& scope) {
    line_ = n.line;
    switch (n.kind) {
      case Node::Kind::kLiteral:
        return n.value;
      case Node::Kind::kName:
        return scope.lookup(n.text);
      case Node::Kind::kList:
      case Node::Kind::kTuple: {
        List l;
        for (const NodePtr& c : n.children) l.push_back(eval(*c, scope));
        return Value::make_list(std::move(l));
      }
      case Node::Kind::kDict: {
        Value d = Value::make_dict();
        for (size_t k = 0; k + 1 < n.children.size(); k += 2) {
          Value key = eval(*n.children[k], scope);
          if (key.kind != Value::Kind::kString) fail("dict keys must be strings, got " + key.type_name());
          d.set(key.s, eval(*n.children[k + 1], scope));
        }
        return d;
      }
      case Node::Kind::kAttr:
        return attribute(eval(*n.a, scope), n.text);
      case Node::Kind::kIndex: {
        Value obj = eval(*n.a, scope);
        Value key = eval(*n.b, scope);
        line_ = n.line;
        if (key.kind == Value::Kind::kString) return attribute(obj, key.s);
        if (key.kind == Value::Kind::kInt &&
            (obj.kind == Value::Kind::kList || obj.kind == Value::Kind::kString)) {
          if (obj.kind == Value::Kind::kList) {
            int64_t k = key.i < 0 ? key.i + int64_t(obj.list->size()) : key.i;
            return k >= 0 && k < int64_t(obj.list->size()) ? (*obj.list)[size_t(k)] : Value();
          }
          std::vector<uint32_t> cps = code_points(obj.s);
          int64_t k = key.i < 0 ? key.i + int64_t(cps.size()) : key.i;
          return k >= 0 && k < int64_t(cps.size())
                     ? Value::string(from_code_points(cps, size_t(k), size_t(k) + 1))
                     : Value();
        }
        if (obj.is_undefined()) return Value();
        fail("cannot index a " + obj.type_name() + " with a " + key.type_name());
      }
      case Node::Kind::kSlice:
        return slice(n, scope);
      case Node::Kind::kCall: {
        Value fn = eval(*n.a, scope);
        auto [args, kwargs] = args_of(n, scope);
        line_ = n.line;
        if (fn.kind != Value::Kind::kFunction) {
          const std::string name = n.a->kind == Node::Kind::kName   ? n.a->text
                                   : n.a->kind == Node::Kind::kAttr ? n.a->text
                                                                    : "";
          fail("'" + name + "' is not a function this template renderer knows (" + fn.type_name() + ")");
        }
        return (*fn.fn)(args, kwargs);
      }
      case Node::Kind::kFilter:
        return filter(n, scope);
      case Node::Kind::kTest: {
        const bool r = test(n, scope);
        return Value::boolean(n.negate ? !r : r);
      }
      case Node::Kind::kUnary: {
        Value v = eval(*n.a, scope);
        if (n.text == "not") return Value::boolean(!v.truthy());
        if (v.kind == Value::Kind::kInt) return Value::integer(n.text == "-" ? -v.i : v.i);
        if (v.kind == Value::Kind::kFloat) return Value::real(n.text == "-" ? -v.f : v.f);
        fail("unary " + n.text + " on a " + v.type_name());
      }
      case Node::Kind::kBinary:
        return binary(n, scope);
      case Node::Kind::kConditional:
        if (eval(*n.a, scope).truthy()) return eval(*n.b, scope);
        return n.children[0] ? eval(*n.children[0], scope) : Value();
      default:
        fail("statement used as an expression");
    }
  }

  Value slice(const Node& n, Scope& scope) {
    Value obj = eval(*n.a, scope);
    int64_t bound[3] = {0, 0, 1};
    bool given[3] = {false, false, false};
    for (int k = 0; k < 3; ++k)
      if (n.children[k]) {
        Value v = eval(*n.children[k], scope);
        if (v.kind == Value::Kind::kNone) continue;
        if (v.kind != Value::Kind::kInt) fail("slice bounds must be integers");
        bound[k] = v.i;
        given[k] = true;
      }
    line_ = n.line;
    const bool is_string = obj.kind == Value::Kind::kString;
    if (!is_string && obj.kind != Value::Kind::kList) fail("cannot slice a " + obj.type_name());
    std::vector<uint32_t> cps = is_string ? code_points(obj.s) : std::vector<uint32_t>();
    const int64_t len = is_string ? int64_t(cps.size()) : int64_t(obj.list->size());
    const int64_t step = bound[2];
    if (step == 0) fail("slice step cannot be zero");
    auto clamp = [&](int64_t v, bool is_given, int64_t fallback) {
      if (!is_given) return fallback;
      if (v < 0) v += len;
      return step > 0 ? std::clamp<int64_t>(v, 0, len) : std::clamp<int64_t>(v, -1, len - 1);
    };
    const int64_t start = clamp(bound[0], given[0], step > 0 ? 0 : len - 1);
    const int64_t stop = clamp(bound[1], given[1], step > 0 ? len : -1);
    List items;
    std::string s;
    for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
      if (is_string)
        append_utf8(s, cps[size_t(k)]);
      else
        items.push_back((*obj.list)[size_t(k)]);
    }
    return is_string ? Value::string(s) : Value::make_list(std::move(items));
  }

  Value attribute(const Value& obj, const std::string& name) {
    if (obj.kind == Value::Kind::kDict || obj.kind == Value::Kind::kNamespace) {
      if (const Value* v = obj.find(name)) return *v;
      if (obj.kind == Value::Kind::kNamespace) return Value();
      return dict_method(obj, name);
    }
    if (obj.kind == Value::Kind::kString) return string_method(obj, name);
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

  Value string_method(const Value& obj, const std::string& name) {
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
      return fn([this, s, name](const std::vector<Value>& args, const Dict&) {
        if (args.empty()) fail(name + "() needs an argument");
        List options = args[0].kind == Value::Kind::kList ? *args[0].list : List{args[0]};
        for (const Value& o : options) {
          if (o.kind != Value::Kind::kString) fail(name + "() takes strings");
          const bool hit = name == "startswith" ? s.compare(0, o.s.size(), o.s) == 0
                                                : s.size() >= o.s.size() &&
                                                      s.compare(s.size() - o.s.size(), o.s.size(), o.s) == 0;
          if (hit) return Value::boolean(true);
        }
        return Value::boolean(false);
      });
    if (name == "split")
      return fn([this, s](const std::vector<Value>& args, const Dict&) {
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
        if (sep.empty()) fail("split(): empty separator");
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
      return fn([this, s](const std::vector<Value>& args, const Dict& kwargs) {
        if (args.size() < 2) fail("replace() needs two arguments");
        const Value* count = args.size() > 2 ? &args[2] : kwarg(kwargs, "count");
        return Value::string(
            replace_str(s, args[0].s, args[1].s, count && count->kind == Value::Kind::kInt ? count->i : -1));
      });
    if (name == "title" || name == "capitalize")
      return fn([s, name](const std::vector<Value>&, const Dict&) {
        return Value::string(title(s, name == "title"));
      });
    fail("string method '" + name + "' is not supported");
  }

  static std::string title(const std::string& s, bool every_word) {
    std::string out = every_word ? s : ascii_case(s, false);
    bool start = true;
    for (char& c : out) {
      if (start && std::isalpha(uint8_t(c)))
        c = char(std::toupper(uint8_t(c)));
      else if (every_word && std::isalpha(uint8_t(c)))
        c = char(std::tolower(uint8_t(c)));
      start = every_word ? !std::isalpha(uint8_t(c)) : false;
    }
    if (!every_word && !s.empty()) out = std::string(1, char(std::toupper(uint8_t(s[0])))) + s.substr(1);
    return out;
  }

  int64_t length(const Value& v) {
    if (v.kind == Value::Kind::kString) return int64_t(code_points(v.s).size());
    if (v.kind == Value::Kind::kList) return int64_t(v.list->size());
    if (v.kind == Value::Kind::kDict) return int64_t(v.dict->size());
    fail("length of a " + v.type_name());
  }

  Value filter(const Node& n, Scope& scope) {
    Value v = eval(*n.a, scope);
    auto [args, kwargs] = args_of(n, scope);
    line_ = n.line;
    const std::string& f = n.text;
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
    if (f == "length" || f == "count") return Value::integer(length(v));
    if (f == "string") return Value::string(v.str());
    if (f == "trim") {
      if (v.kind != Value::Kind::kString) fail("trim of a " + v.type_name());
      return Value::string(trim(v.s, true, true));
    }
    if (f == "upper" || f == "lower") {
      if (v.kind != Value::Kind::kString) fail(f + " of a " + v.type_name());
      return Value::string(ascii_case(v.s, f == "upper"));
    }
    if (f == "title" || f == "capitalize") {
      if (v.kind != Value::Kind::kString) fail(f + " of a " + v.type_name());
      return Value::string(title(v.s, f == "title"));
    }
    if (f == "first" || f == "last") {
      if (v.kind != Value::Kind::kList) fail(f + " of a " + v.type_name());
      if (v.list->empty()) return Value();
      return f == "first" ? v.list->front() : v.list->back();
    }
    if (f == "list") {
      if (v.kind == Value::Kind::kList) return v;
      fail("list of a " + v.type_name());
    }
    if (f == "reverse") {
      if (v.kind == Value::Kind::kList) {
        List l(v.list->rbegin(), v.list->rend());
        return Value::make_list(std::move(l));
      }
      fail("reverse of a " + v.type_name());
    }
    if (f == "join") {
      const std::string sep = !args.empty()                ? args[0].s
                              : kwarg(kwargs, "separator") ? kwarg(kwargs, "separator")->s
                                                           : "";
      std::string out;
      if (v.kind != Value::Kind::kList) fail("join of a " + v.type_name());
      for (size_t k = 0; k < v.list->size(); ++k) out += (k ? sep : "") + (*v.list)[k].str();
      return Value::string(out);
    }
    if (f == "items") {
      if (v.kind != Value::Kind::kDict) fail("items of a " + v.type_name());
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
      fail("int of a " + v.type_name());
    }
    if (f == "abs" && v.is_number())
      return v.kind == Value::Kind::kInt ? Value::integer(std::llabs(v.i)) : Value::real(std::fabs(v.f));
    if (f == "selectattr" || f == "rejectattr") {
      if (v.kind != Value::Kind::kList || args.empty()) fail(f + " needs a list and an attribute name");
      List out;
      for (const Value& item : *v.list) {
        Value attr = attribute(item, args[0].s);
        bool keep;
        if (args.size() == 1)
          keep = attr.truthy();
        else
          keep = run_test(args[1].s, attr, std::vector<Value>(args.begin() + 2, args.end()));
        if (keep == (f == "selectattr")) out.push_back(item);
      }
      return Value::make_list(std::move(out));
    }
    if (f == "select" || f == "reject") {
      if (v.kind != Value::Kind::kList) fail(f + " of a " + v.type_name());
      List out;
      for (const Value& item : *v.list) {
        const bool pass = args.empty()
                              ? item.truthy()
                              : run_test(args[0].s, item, std::vector<Value>(args.begin() + 1, args.end()));
        if (pass == (f == "select")) out.push_back(item);
      }
      return Value::make_list(std::move(out));
    }
    if (f == "unique") {
      if (v.kind != Value::Kind::kList) fail("unique of a " + v.type_name());
      List out;
      for (const Value& item : *v.list)
        if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return equal(o, item); }))
          out.push_back(item);
      return Value::make_list(std::move(out));
    }
    if (f == "sort" || f == "dictsort") {
      List items;
      if (f == "dictsort") {
        if (v.kind != Value::Kind::kDict) fail("dictsort of a " + v.type_name());
        for (const auto& [k, x] : *v.dict) items.push_back(Value::make_list({Value::string(k), x}));
      } else {
        if (v.kind != Value::Kind::kList) fail("sort of a " + v.type_name());
        items = *v.list;
      }
      const Value* attr = kwarg(kwargs, "attribute");
      const Value* rev = kwarg(kwargs, "reverse");
      const bool reverse = (f == "sort" && !args.empty() && args[0].truthy()) || (rev && rev->truthy());
      auto key = [&](const Value& x) {
        if (f == "dictsort") return (*x.list)[0];
        return attr ? attribute(x, attr->s) : x;
      };
      // Strings compare case-insensitively, as Jinja's default.
      auto less = [&](const Value& a, const Value& b) {
        const Value ka = key(a), kb = key(b);
        if (ka.is_number() && kb.is_number()) return ka.number() < kb.number();
        if (ka.kind == Value::Kind::kString && kb.kind == Value::Kind::kString)
          return ascii_case(ka.s, false) < ascii_case(kb.s, false);
        fail("cannot sort a " + ka.type_name() + " against a " + kb.type_name());
      };
      std::stable_sort(items.begin(), items.end(),
                       [&](const Value& a, const Value& b) { return reverse ? less(b, a) : less(a, b); });
      return Value::make_list(std::move(items));
    }
    if (f == "map") {
      const Value* attr = kwarg(kwargs, "attribute");
      if (v.kind != Value::Kind::kList || !attr) fail("map is supported as map(attribute=...) over a list");
      List out;
      for (const Value& item : *v.list) {
        Value x = attribute(item, attr->s);
        const Value* dflt = kwarg(kwargs, "default");
        out.push_back(x.is_undefined() && dflt ? *dflt : x);
      }
      return Value::make_list(std::move(out));
    }
    if (f == "indent") {
      if (v.kind != Value::Kind::kString) fail("indent of a " + v.type_name());
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
      if (v.kind != Value::Kind::kString || args.size() < 2) fail("replace needs a string and two arguments");
      return Value::string(replace_str(v.s, args[0].s, args[1].s, args.size() > 2 ? args[2].i : -1));
    }
    fail("filter '" + f + "' is not supported");
  }

  bool run_test(const std::string& t, const Value& v, const std::vector<Value>& args) {
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
      if (v.kind != Value::Kind::kInt) fail(t + " test of a " + v.type_name());
      return (v.i % 2 != 0) == (t == "odd");
    }
    if (t == "equalto" || t == "eq" || t == "sameas") return !args.empty() && equal(v, args[0]);
    fail("test '" + t + "' is not supported");
  }

  bool test(const Node& n, Scope& scope) {
    Value v = eval(*n.a, scope);
    auto [args, kwargs] = args_of(n, scope);
    line_ = n.line;
    return run_test(n.text, v, args);
  }

  Value binary(const Node& n, Scope& scope) {
    Value l = eval(*n.a, scope);
    const std::string& op = n.text;
    if (op == "and") return l.truthy() ? eval(*n.b, scope) : l;
    if (op == "or") return l.truthy() ? l : eval(*n.b, scope);
    Value r = eval(*n.b, scope);
    line_ = n.line;
    if (op == "==") return Value::boolean(equal(l, r));
    if (op == "!=") return Value::boolean(!equal(l, r));
    if (op == "in" || op == "not in") {
      bool hit = false;
      if (r.is_undefined())
        hit = false;
      else if (r.kind == Value::Kind::kList)
        hit = std::any_of(r.list->begin(), r.list->end(), [&](const Value& x) { return equal(x, l); });
      else if (r.kind == Value::Kind::kString && l.kind == Value::Kind::kString)
        hit = r.s.find(l.s) != std::string::npos;
      else if (r.kind == Value::Kind::kDict && l.kind == Value::Kind::kString)
        hit = r.find(l.s) != nullptr;
      else
        fail("'" + op + "' between a " + l.type_name() + " and a " + r.type_name());
      return Value::boolean(hit == (op == "in"));
    }
    if (l.is_undefined() || r.is_undefined()) fail("'" + op + "' on an undefined value");
    if (op == "~") return Value::string(l.str() + r.str());
    const bool numeric =
        (l.is_number() || l.kind == Value::Kind::kBool) && (r.is_number() || r.kind == Value::Kind::kBool);
    if (numeric) {
      const bool is_int = l.kind != Value::Kind::kFloat && r.kind != Value::Kind::kFloat;
      const double a = l.number(), b = r.number();
      auto num = [&](double x) { return is_int ? Value::integer(int64_t(x)) : Value::real(x); };
      if (op == "+") return num(a + b);
      if (op == "-") return num(a - b);
      if (op == "*") return num(a * b);
      if (op == "/") return Value::real(a / b);
      if (op == "//") return num(std::floor(a / b));
      if (op == "%") return is_int ? Value::integer(int64_t(a) % int64_t(b)) : Value::real(std::fmod(a, b));
      if (op == "**") return num(std::pow(a, b));
      if (op == "<") return Value::boolean(a < b);
      if (op == ">") return Value::boolean(a > b);
      if (op == "<=") return Value::boolean(a <= b);
      if (op == ">=") return Value::boolean(a >= b);
    }
    if (op == "+" && l.kind == Value::Kind::kList && r.kind == Value::Kind::kList) {
      List out = *l.list;
      out.insert(out.end(), r.list->begin(), r.list->end());
      return Value::make_list(std::move(out));
    }
    if (op == "+" && (l.kind == Value::Kind::kString || r.kind == Value::Kind::kString))
      return Value::string(l.str() + r.str());
    if (l.kind == Value::Kind::kString && r.kind == Value::Kind::kString) {
      if (op == "<") return Value::boolean(l.s < r.s);
      if (op == ">") return Value::boolean(l.s > r.s);
      if (op == "<=") return Value::boolean(l.s <= r.s);
      if (op == ">=") return Value::boolean(l.s >= r.s);
    }
    if (op == "*" && l.kind == Value::Kind::kString && r.kind == Value::Kind::kInt) {
      std::string out;
      for (int64_t k = 0; k < r.i; ++k) out += l.s;
      return Value::string(out);
    }
    fail("'" + op + "' between a " + l.type_name() + " and a " + r.type_name() + " is not supported");
  }

  std::string where_;
  int line_ = 0;
};

}  // namespace

Template::Template(const std::string& source, const std::string& where)
    : where_(where), root_(parse_template(source, where)) {}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;

std::string Template::render(const Dict& context) const { return Renderer(where_).run(*root_, context); }

}  // namespace realign::jinja
