// A launch whose settings live in a YAML config file of the user's (AReaL: `python3 -m
// areal.launcher.local train.py --config my.yaml key=value ...`), or that YAML file itself: the settings as
// one list of dotted entries, the command line's overrides over the file's, OmegaConf's interpolations
// resolved, so an adapter reads them as it reads a script's overrides (LaunchSettings).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json.h"
#include "engines/engine.h"

namespace realign::engines {

// `child` over `base`: mappings merge key by key, anything else replaces; a child section with `_override_:
// true` (NeMo-RL's mark) replaces the base's whole section.
void merge_config(Json& base, Json child);

// Every leaf of a config tree as a dotted entry ("actor.mb_spec.n_mbs"), in the file's order; a list is one
// entry's value.
std::vector<ConfigEntry> flatten_config(const Json& tree, const std::string& prefix = "");

// A command line's overrides over a config's entries: a key the config has takes the override's value in
// place, a new one is added at the end.
void apply_overrides(std::vector<ConfigEntry>& entries, const std::vector<ConfigEntry>& overrides);

// OmegaConf's interpolations in the entries' string values: "${actor.path}" (another entry's value, with its
// type when the reference is the whole value) and "${oc.env:NAME}" / "${oc.env:NAME,default}" (the
// environment, `env`). A reference to no entry, or to an unset variable without a default, stays as written
// (LaunchSettings names the key if an adapter reads it).
void resolve_interpolations(std::vector<ConfigEntry>& entries, const std::map<std::string, std::string>& env);

// A launch's settings and the config file they were read from ("" when none was).
struct LaunchConfig {
  std::vector<ConfigEntry> entries;
  std::string config_file;
};

// A YAML config file as a tree, with the configs its `defaults` names (a path or a list of paths, relative to
// the file; NeMo-RL's inheritance) merged under it depth-first, a later one over an earlier one, a section
// marked `_override_: true` replacing its parents' whole. Errors name the file.
Json load_config_tree(const std::string& path);

// The settings a launch runs with. `file` ending in .yaml/.yml: `text` is the config itself. Otherwise `text`
// is a launch script: the overrides of its command line (read_launch_overrides) over the YAML its --config
// names (load_config_tree), looked for as given (from the working directory) and then beside the script.
// Without `config_required`, a config that is not found leaves the command line's overrides alone; with it,
// that and a command line naming no config throw Error naming --config.
LaunchConfig read_launch_config(const std::string& text, const std::string& file,
                                const std::map<std::string, std::string>& env, bool config_required);

}  // namespace realign::engines
