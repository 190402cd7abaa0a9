// Reading a user's own launch script for an engine (the bash file that runs `python3 -m
// verl.trainer.main_ppo key=value ...`): the Hydra overrides it passes, as config entries, so an adapter can
// rebuild the workload and the layout the script runs (Engine::read_run) and realign can price it before
// launch. Bash is read as far as such scripts use it: line continuations, quoting, comments, and variables
// assigned earlier in the script (`NNODES=${NNODES:-2}`, `export TP=4`).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engines/engine.h"
#include "engines/model_lookup.h"

namespace realign::engines {

// The overrides of the script's command line: the line that passes the most `dotted.key=value` arguments.
// Each entry's value is a JSON scalar (integers, numbers, true/false/True/False, null/None; anything else a
// string, unquoted). Hydra's `+`/`++` prefixes are dropped. What names the config and the program becomes an
// entry too: Hydra's `--config-name NAME` and `--config-path DIR` (or -cn, -cp), NeMo-RL's and AReaL's
// `--config FILE`, the module of `-m MODULE` as {"-m", MODULE} and the first `FILE.py` as {"--program",
// FILE.py} (Hydra finds a relative config path from the program's directory). A later override
// of the same key replaces the earlier one, in place. A variable the script does not assign stays in the
// value as written (`${NNODES}`), for the adapter to name. Throws Error(file) when no line passes such
// overrides. `env`: variables as if exported before the script ran.
std::vector<ConfigEntry> read_launch_overrides(const std::string& script, const std::string& file,
                                               const std::map<std::string, std::string>& env = {});

// The flags of the script's command line (argparse style, as OpenRLHF's `train_ppo_ray` takes them): the
// line passing the most `--flag` arguments, from after `-m MODULE` or a lone `--` when it has them. `--flag
// value` and `--flag=value` give the value as read_launch_overrides types it, a flag followed by another
// flag (or by nothing) is a switch: true. Keys keep their dashes ("--zero_stage").
std::vector<ConfigEntry> read_launch_flags(const std::string& script, const std::string& file,
                                           const std::map<std::string, std::string>& env = {});

// What the readers note where a launch turns the serving engine's CUDA graphs off: the engine's pricing has
// them, so the estimate's generation is faster than the run's.
inline constexpr const char* kEagerDecodingNote =
    "eager decoding (no CUDA graphs): priced with CUDA-graph decoding, the engine's default, so generation "
    "will run slower than estimated";

// Typed reads of a script's entries; a key the script leaves out (or sets to null) reads as the engine's
// default, given by the caller. Errors name the key: a value of another type, or a variable the script does
// not set.
class LaunchSettings {
 public:
  explicit LaunchSettings(std::vector<ConfigEntry> entries) : entries_(std::move(entries)) {}
  bool has(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t fallback) const;
  double number(const std::string& key, double fallback) const;
  bool flag(const std::string& key, bool fallback) const;
  std::string text(const std::string& key, const std::string& fallback) const;

 private:
  const Json* find(const std::string& key) const;
  std::vector<ConfigEntry> entries_;
};

}  // namespace realign::engines
