// The engine releases realign writes for: each engine's current release and, where an earlier layout is still
// in wide use, that release too (`--engine verl@v0.7.0`). A release is named once here, with what its layout
// differs in; the engine's one writer reads these facts instead of a writer per release. The keys and flags
// each release accepts are kept as data in tests/engines/releases/ (scripts/release_keys.py made them), and
// the tests check every written key against them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json.h"

namespace realign::engines {

struct Release {
  std::string engine;  // "verl"
  std::string tag;     // "v0.9.0"
  std::string commit;  // the tag's commit
  std::string date;    // the tag's date
  std::string repo;    // where it was read ("verl-project/verl")
  // What the layout realign writes differs in from the current release's (empty for the current one).
  std::string differs;

  // OpenRLHF before v0.10.2: train_ppo_ray.py's flat flags for the current release's dotted ones
  // ({"--actor.num_nodes", "--actor_num_nodes"}); every flag realign writes is in it.
  std::map<std::string, std::string> flag_names;
  // veRL from v0.7.1: the reward model is served by the reward loop (reward.reward_model.*: a vLLM server on
  // the pool, asleep between its calls) instead of a Megatron or FSDP worker (reward_model.*).
  bool served_reward_model = false;
  // veRL: the fully_async recipe's module (a recipe before v0.8.0, verl.experimental from it on).
  std::string fully_async_module;
  // AReaL from v1.0.3: every engine names its backend and parallelism (actor.backend, rollout.backend, ...),
  // which it requires; allocation_mode remains for the launchers that still read it.
  bool per_engine_backend = false;

  // "veRL v0.9.0 (verl-project/verl 483b8a0, 2026-08-14)".
  std::string describe(const std::string& display_name) const;
  Json to_json() const;
};

// The releases realign writes for `engine` (verl, openrlhf, areal, nemo-rl), the current one first.
const std::vector<Release>& releases(const std::string& engine);

// `name` as `--engine` takes it: an engine, optionally with `@<tag>` (verl@v0.7.0); no tag is the current
// release. Throws Error(path) naming the valid engines, or the engine's releases for an unknown tag.
struct EngineName {
  std::string engine;
  const Release* release = nullptr;
};
EngineName parse_engine_name(const std::string& name, const std::string& path);

}  // namespace realign::engines
