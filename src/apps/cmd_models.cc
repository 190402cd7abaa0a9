// `realign models`: the built-in model shapes, or one HF config.json, with their parameter counts.
#include <cstdio>
#include <fstream>

#include "apps/commands.h"
#include "core/config_file.h"
#include "graph/model_spec.h"

namespace realign::apps {

void add_models_command(CLI::App& app) {
  auto* sub = app.add_subcommand("models", "List built-in model shapes (or describe an HF config.json)");
  auto config = std::make_shared<std::string>();
  sub->add_option("--config", *config, "An HF config.json to describe instead");
  on_run(sub, [config] {
    std::vector<ModelSpec> specs;
    if (!config->empty()) {
      specs.push_back(model_spec_from_hf_config(load_config_file(*config), *config));
    } else {
      for (const auto& name : builtin_model_names()) specs.push_back(builtin_model(name));
    }
    std::printf("%-16s %-8s %7s %7s %6s %6s %8s %14s\n", "model", "family", "layers", "hidden", "heads",
                "kv", "vocab", "parameters");
    for (const auto& s : specs)
      std::printf("%-16s %-8s %7lld %7lld %6lld %6lld %8lld %14lld\n", s.name.c_str(), to_string(s.family).c_str(),
                  (long long)s.n_layers, (long long)s.hidden, (long long)s.n_heads, (long long)s.n_kv_heads,
                  (long long)s.vocab, (long long)s.total_params());
    return 0;
  });
}

}  // namespace realign::apps
