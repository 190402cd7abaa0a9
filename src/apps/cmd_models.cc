// `realign models`: the built-in model shapes, or one HF config.json, with their parameter counts: total and,
// for a mixture-of-experts model, active (per token) beside its experts and router.
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
    std::printf("%-29s %-11s %6s %6s %5s %4s %7s %14s %14s  %s\n", "model", "family", "layers", "hidden",
                "heads", "kv", "vocab", "parameters", "active", "experts");
    for (const auto& s : specs) {
      std::string experts = "-";
      if (s.is_moe())
        experts = std::to_string(s.moe.moe_layers_in(0, s.n_layers)) +
                  " MoE layers: " + describe_router(s.moe) +
                  (s.moe.shared_experts > 0 ? ", " + std::to_string(s.moe.shared_experts) + " shared" : "") +
                  (s.mla.enabled() ? "; latent attention" : "");
      if (s.sliding_window > 0) {  // the layers whose attention and KV cache the window bounds
        int64_t local = 0;
        for (int64_t l = 0; l < s.n_layers; ++l) local += s.sliding_layer(l) ? 1 : 0;
        experts = (experts == "-" ? "" : experts + "; ") + std::to_string(local) + " of " +
                  std::to_string(s.n_layers) + " layers within " + std::to_string(s.sliding_window) +
                  " tokens";
      }
      std::printf("%-29s %-11s %6lld %6lld %5lld %4lld %7lld %14lld %14lld  %s\n", s.name.c_str(),
                  to_string(s.family).c_str(), (long long)s.n_layers, (long long)s.hidden,
                  (long long)s.n_heads, (long long)s.n_kv_heads, (long long)s.vocab,
                  (long long)s.total_params(), (long long)s.active_params(), experts.c_str());
    }
    return 0;
  });
}

}  // namespace realign::apps
