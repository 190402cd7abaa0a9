// The engine adapters realign ships (verl.cc, openrlhf.cc, areal.cc, nemo_rl.cc) and the script readers
// (one for each).
#pragma once

#include <memory>

#include "engines/engine.h"
#include "engines/hydra_config.h"
#include "engines/launch_config.h"

namespace realign::engines {

// Each at one of its releases (releases.h).
std::unique_ptr<Engine> make_verl(const Release& release);
std::unique_ptr<Engine> make_openrlhf(const Release& release);
std::unique_ptr<Engine> make_areal(const Release& release);
std::unique_ptr<Engine> make_nemo_rl(const Release& release);

// veRL's Engine::read_run (verl_reader.cc): a launch's workload and layout (hybrid engine, fully_async),
// from its overrides and the recipe config it names (hydra_config.h).
ReadRun read_verl_run(const HydraLaunch& launch);
// veRL's own configs (the first its default), whose defaults the reader knows.
inline const std::vector<std::string> kVerlConfigs = {"ppo_trainer", "ppo_megatron_trainer"};
// OpenRLHF's (openrlhf_reader.cc): a train_ppo_ray script's workload and layout.
ReadRun read_openrlhf_run(const std::vector<ConfigEntry>& entries);
// NeMo-RL's (nemo_rl_reader.cc): a run_grpo.py launch's workload and layout.
ReadRun read_nemo_rl_run(const LaunchConfig& launch);
// AReaL's (areal_reader.cc): a YAML config's (launch_config.h) workload and layout.
ReadRun read_areal_run(const std::vector<ConfigEntry>& entries);

}  // namespace realign::engines
