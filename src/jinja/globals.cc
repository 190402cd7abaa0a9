// The global functions a template may call: range, namespace, strftime_now and raise_exception.
#include <ctime>

#include "jinja/builtins.h"

namespace realign::jinja {
namespace {

Value raise_exception(const RenderSite& site) {
  return Value::function([&site](const Args& args, const Dict&) -> Value {
    site.fail("raise_exception: " + (args.empty() ? std::string() : args[0].str()));
  });
}

Value range(const RenderSite& site) {
  return Value::function([&site](const Args& args, const Dict&) {
    int64_t start = 0, stop = 0, step = 1;
    for (const Value& a : args)
      if (a.kind != Value::Kind::kInt) site.fail("range() takes integers, got " + a.type_name());
    if (args.size() == 1)
      stop = args[0].i;
    else if (args.size() >= 2)
      start = args[0].i, stop = args[1].i;
    if (args.size() == 3) step = args[2].i;
    if (args.empty() || args.size() > 3 || step == 0) site.fail("range() takes 1 to 3 integers, step not 0");
    List out;
    for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) out.push_back(Value::integer(k));
    return Value::make_list(std::move(out));
  });
}

// Python's datetime.now().strftime, as transformers passes it (LLaMA-3.2's template prints the date).
Value strftime_now(const RenderSite& site) {
  return Value::function([&site](const Args& args, const Dict&) {
    if (args.size() != 1 || args[0].kind != Value::Kind::kString)
      site.fail("strftime_now() takes one format string");
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char buf[256];
    const size_t n = std::strftime(buf, sizeof buf, args[0].s.c_str(), &local);
    return Value::string(std::string(buf, n));
  });
}

Value make_namespace() {
  return Value::function([](const Args& args, const Dict& kwargs) {
    Value ns = Value::make_dict();
    ns.kind = Value::Kind::kNamespace;
    if (!args.empty() && args[0].dict)
      for (const auto& [k, v] : *args[0].dict) ns.set(k, v);
    for (const auto& [k, v] : kwargs) ns.set(k, v);
    return ns;
  });
}

}  // namespace

Dict global_functions(const RenderSite& site) {
  return {{"raise_exception", raise_exception(site)},
          {"range", range(site)},
          {"strftime_now", strftime_now(site)},
          {"namespace", make_namespace()}};
}

}  // namespace realign::jinja
