// realign: plan, simulate and run RLHF training with per-call layouts.
#include <cstdio>
#include <exception>

#include "apps/commands.h"
#include "core/error.h"

namespace realign::apps {
namespace {
Action* chosen_action() {
  static Action action;
  return &action;
}
}  // namespace

void on_run(CLI::App* sub, Action action) {
  sub->callback([action] { *chosen_action() = action; });
}

}  // namespace realign::apps

int main(int argc, char** argv) {
  using namespace realign::apps;
  CLI::App app{"realign: RLHF training that plans its own layout over the cluster"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every subcommand");
  add_plan_command(app);
  add_simulate_command(app);
  add_import_command(app);
  add_models_command(app);
  add_report_command(app);
  add_tokenize_command(app);
#ifdef REALIGN_WITH_TORCH
  add_profile_command(app);
  add_realloc_check_command(app);
  add_model_commands(app);
  add_train_command(app);
  add_validate_command(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return (*chosen_action())();
  } catch (const realign::Error& e) {
    std::fprintf(stderr, "realign: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "realign: error: %s\n", e.what());
    return 1;
  }
}
