// Rendering a parsed chat template: statements and expressions evaluated with scopes as Jinja's (a for loop's
// body has its own; `set` inside it does not leak out, hence namespace()). The built-ins it reaches by name
// (filters, tests, methods, global functions) are in builtins.h.
#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "core/utf8.h"
#include "jinja/ast.h"
#include "jinja/builtins.h"
#include "jinja/template.h"
#include "jinja/text.h"

namespace realign::jinja {

void RenderSite::fail(const std::string& what) const {
  throw Error(where + ":" + std::to_string(line), what);
}

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

class Renderer {
 public:
  explicit Renderer(const std::string& where) : site_{where} {}

  std::string run(const Node& root, const Dict& context) {
    Scope globals;
    for (const auto& [k, v] : global_functions(site_)) globals.vars[k] = v;
    Scope top;
    top.parent = &globals;
    for (const auto& [k, v] : context) top.vars[k] = v;
    std::string out;
    exec(root, top, out);
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { site_.fail(what); }

  void exec(const Node& n, Scope& scope, std::string& out) {
    site_.line = n.line;
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
        site_.line = n.line;
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

  Value eval(const Node& n, Scope& scope) {
    site_.line = n.line;
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
        return attribute(eval(*n.a, scope), n.text, site_);
      case Node::Kind::kIndex: {
        Value obj = eval(*n.a, scope);
        Value key = eval(*n.b, scope);
        site_.line = n.line;
        if (key.kind == Value::Kind::kString) return attribute(obj, key.s, site_);
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
        site_.line = n.line;
        if (fn.kind != Value::Kind::kFunction) {
          const std::string name = n.a->kind == Node::Kind::kName   ? n.a->text
                                   : n.a->kind == Node::Kind::kAttr ? n.a->text
                                                                    : "";
          fail("'" + name + "' is not a function this template renderer knows (" + fn.type_name() + ")");
        }
        return (*fn.fn)(args, kwargs);
      }
      case Node::Kind::kFilter: {
        Value v = eval(*n.a, scope);
        auto [args, kwargs] = args_of(n, scope);
        site_.line = n.line;
        return apply_filter(n.text, v, args, kwargs, site_);
      }
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
    site_.line = n.line;
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

  bool test(const Node& n, Scope& scope) {
    Value v = eval(*n.a, scope);
    auto [args, kwargs] = args_of(n, scope);
    site_.line = n.line;
    return apply_test(n.text, v, args, site_);
  }

  Value binary(const Node& n, Scope& scope) {
    Value l = eval(*n.a, scope);
    const std::string& op = n.text;
    if (op == "and") return l.truthy() ? eval(*n.b, scope) : l;
    if (op == "or") return l.truthy() ? l : eval(*n.b, scope);
    Value r = eval(*n.b, scope);
    site_.line = n.line;
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

  RenderSite site_;
};

}  // namespace

Template::Template(const std::string& source, const std::string& where)
    : where_(where), root_(parse_template(source, where)) {}
Template::~Template() = default;
Template::Template(Template&&) noexcept = default;

std::string Template::render(const Dict& context) const { return Renderer(where_).run(*root_, context); }

}  // namespace realign::jinja
