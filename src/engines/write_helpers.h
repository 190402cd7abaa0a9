// Pieces shared by the engines' config writers: model and data paths from the realign config (or named
// placeholders), shell quoting, and a YAML writer for dotted keys.
#pragma once

#include <string>
#include <vector>

#include "engines/engine.h"

namespace realign::engines {

// The placement a writer writes `plan` for: the searched one (in.placement) when given, checked against the
// plan, else the first of the engine's placements that runs it (several may share meshes and strategies, as
// ZeRO-2 and -3 do). Throws Error("plan") naming the rule when the engine cannot run the plan.
Placement written_placement(const Engine& engine, const WriteInput& in, const ExecutionPlan& plan);

// Whether `entries` set `key` to `value` (a launch script picks its base config from what was written).
bool writes(const std::vector<ConfigEntry>& entries, const std::string& key, const Json& value);

// The path of `role`'s model when the realign config names a file or directory (models.<role>), else the
// placeholder "${<ROLE>_MODEL_PATH}" that launch.sh asks for.
std::string model_path(const Json& raw_config, Role role);
// The KL coefficient to write for the plan: 0 where the graph has no reference call, else
// WriteInput::kl_coef, which must be above 0 (the engines build a reference model only for a KL term; a
// reference at 0 is refused naming train.ppo.kl_coef).
double written_kl_coef(const WriteInput& in);
// Sets the entries of `entries` that `workload` names to its values (WriteInput::workload).
void keep_workload(std::vector<ConfigEntry>& entries, const std::vector<ConfigEntry>& workload);
// The prompt data (data.prompts), else "${TRAIN_DATA}".
std::string train_data(const Json& raw_config);
// The placeholders (${NAME}) that occur in the entries' values, sorted, once each.
std::vector<std::string> placeholders(const std::vector<ConfigEntry>& entries);
// A value as the shell passes it: strings in double quotes (so ${NAME} expands), numbers and booleans as
// JSON writes them.
std::string shell_value(const Json& value);
// A bash launch script: a header naming what realign planned and the release it is written for, each
// placeholder required from the environment with what it stands for, then `command` with one argument per
// line.
std::string launch_script(const Engine& engine, const std::string& title,
                          const std::vector<ConfigEntry>& entries, const std::string& command,
                          const std::vector<std::string>& arguments);
// Nested YAML from dotted keys ("actor.path" -> actor: path: ...), in the entries' order of first appearance.
std::string nested_yaml(const std::vector<ConfigEntry>& entries);

}  // namespace realign::engines
