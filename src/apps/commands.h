// The realign CLI's subcommands. Each lives in its own cmd_<name>.cc and registers itself on the app;
// its callback throws realign::Error for bad input (main prints it and exits 1) or returns an exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace realign::apps {

// A subcommand's action, run after parsing. Its return value is the process's exit code.
using Action = std::function<int()>;

// Registers `action` to run when `sub` was chosen.
void on_run(CLI::App* sub, Action action);

void add_models_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_import_command(CLI::App& app);  // an engine's launch script, priced
void add_simulate_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
#ifdef REALIGN_WITH_TORCH
void add_profile_command(CLI::App& app);
void add_realloc_check_command(CLI::App& app);
void add_model_commands(CLI::App& app);  // logprobs, generate, init
void add_train_command(CLI::App& app);
void add_validate_command(CLI::App& app);
#endif

}  // namespace realign::apps
