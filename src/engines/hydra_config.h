// A Hydra launch (veRL: `python3 -m verl.trainer.main_ppo --config-path=DIR --config-name=NAME key=value
// ...`): the settings of the config it names, with the configs its defaults list names, under the command
// line's overrides, as one list of dotted entries an adapter reads as it reads a script's overrides.
//
// The engine's own configs (veRL's ppo_trainer, ppo_megatron_trainer) are never read from disk: the adapter
// knows their defaults. A user's recipe that builds on one of them (`defaults: [ppo_trainer, _self_]`) is
// read and the engine config it names is reported as its base.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engines/engine.h"

namespace realign::engines {

struct HydraLaunch {
  std::vector<ConfigEntry> entries;  // the recipe's settings (none without one) under the overrides
  std::string config_name;           // --config-name without ".yaml", or the engine's default config
  std::string config_file;           // the recipe read; "" when the name is the engine's own or not found
  std::string base;                  // the engine config the settings build on
  std::vector<std::string> notes;    // what was not read, each naming its key
};

// `engine_configs`: the engine's own config names, the first its default (what a launch without
// --config-name runs). A relative --config-path ("config" when the line gives none, as veRL's programs
// declare) is looked for as Hydra does, from the directory of the program the line runs (`-m a.b.main` ->
// a/b/, or the FILE.py it names), then from the working directory and beside the script; an absolute one,
// or one starting with $(pwd) or $PWD, as written. A recipe not found is noted, and its settings beyond the
// command line read as the engine's defaults. Errors name the file: a recipe that is not a mapping, a
// defaults entry naming a config not found, defaults in a loop.
HydraLaunch read_hydra_launch(const std::string& text, const std::string& file,
                              const std::map<std::string, std::string>& env,
                              const std::vector<std::string>& engine_configs);

}  // namespace realign::engines
