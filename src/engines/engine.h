// An external RLHF engine (veRL, OpenRLHF, AReaL, NeMo-RL) as realign plans for it: the placements and
// strategies it can run (each rule with the document it comes from), how it prices what it runs differently
// from realign's runtime, and its config writer. The search obeys the rules as a filter on its proposals, so
// the engine's plan and realign's own come from the same search and the same cost model.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "engines/releases.h"
#include "graph/algorithms.h"
#include "graph/dataflow_graph.h"
#include "plan/execution_plan.h"

namespace realign::engines {

// One placement rule and where it is documented ("repo path": a file of the engine's repository).
struct Rule {
  std::string text;
  std::string source;
};

// A family of plans with the meshes fixed (one per call, in graph order) and a name in the engine's words
// ("hybrid engine", "separate vLLM engines, colocate actor+ref") and the engine-wide switches it fixes
// (`options`, e.g. {"gradient_checkpointing": true}); the search picks the strategies.
struct Placement {
  std::string name;
  std::vector<DeviceMesh> meshes;
  Json options = Json::object();
};

// One setting of the engine's config: a Hydra override path, a command-line flag or a YAML key, with its
// value (a JSON scalar; true for a switch) and where the script wrote it.
struct ConfigEntry {
  ConfigEntry() = default;
  ConfigEntry(std::string key_, Json value_, std::string file_ = {}, int line_ = 0)
      : key(std::move(key_)), value(std::move(value_)), file(std::move(file_)), line(line_) {}
  std::string key;
  Json value;
  // Where a launch script sets it (script_reader.h): the file (the script, or a file it sources) and the
  // line of the word; empty and 0 for a key of a config file or one a reader makes.
  std::string file;
  int line = 0;
};

// How the engine runs what realign's runtime runs otherwise (pricing.h applies it).
struct Pricing {
  // The engine's name (Engine::name()): its own coefficients in a hardware profile are found by it
  // (HardwareProfile::engine_pass_efficiency).
  std::string engine;
  // Generation on a serving engine with CUDA graphs (vLLM, SGLang): no per-layer kernel launches while
  // decoding.
  bool cuda_graph_decoding = true;
  std::string cuda_graph_source;
  // The new weights reach the generation devices by an NCCL broadcast from one training rank, tensor by
  // tensor (separate generation devices), instead of realign's reallocation (each device receives only the
  // slices it lacks, from many sources at once). False: realign's reallocation prices the move (resharding
  // on the same devices).
  bool broadcast_weight_sync = false;
  std::string weight_sync_source;
  // Models the engine keeps in host memory between their calls whatever the plan says (NeMo-RL's reference
  // policy): priced as offloaded (plan.offload), their weights copied in for each call.
  std::vector<Role> host_resident;
  std::string host_resident_source;
  // Calls the engine runs with another call's micro-batch size in sequences ({follower, leader}: AReaL's
  // actor computes log-probs under its training mb_spec): priced with the leader's size whatever the plan
  // says.
  std::vector<std::pair<std::string, std::string>> micro_batch_size_from;
  std::string micro_batch_size_source;
};

// What the writers need beyond the plan: the model paths and data the realign config names.
struct WriteInput {
  const DataflowGraph* graph = nullptr;
  const Cluster* cluster = nullptr;
  BatchShape batch;  // prompts per iteration, group size, lengths
  // Per call, the memory it needs on its worst device on its own (weights, KV cache, activations): what a
  // serving engine's memory share must hold.
  std::vector<double> call_memory_bytes;
  // The placement the search chose (its engine-wide switches: ZeRO stage, checkpointing, colocation); when
  // unset, the writer takes the first of the engine's placements that runs the plan.
  std::optional<Placement> placement;
  Json raw_config;  // the merged realign config
  // The KL term to the reference (train.ppo.kl_coef, kl_mode: loss or reward), where the graph has a
  // reference call: engines that build the reference only for a KL term (veRL) are told to build it so.
  double kl_coef = 0;
  bool kl_in_loss = false;
  // A user's script whose workload realign's graph stands in for (an estimator priced as GRPO's dataflow, one
  // sample a prompt priced as pairs): the script's own settings under the engine's keys, which the written
  // config keeps (ReadRun::workload).
  std::vector<ConfigEntry> workload;
};

// A user's own launch script for the engine, as realign reads it (Engine::read_run): the realign config of
// its workload (algorithm, models, batch, cluster, reward, train.staleness; the cluster's device is not in
// such scripts and stays to the user), a function giving the layout it runs once that config's graph is
// built, and what the script sets that realign prices otherwise (`notes`, each naming the key).
struct ReadRun {
  Json config;
  std::function<ExecutionPlan(const DataflowGraph&, const Cluster&, std::vector<std::string>& notes)> plan;
  std::vector<std::string> notes;
  std::map<std::string, std::string> sources;  // realign config key -> the script's key it was read from
  // The engine-wide switches the script sets, as the engine's placements name them in `options` ({"backend":
  // "megatron"}, {"zero_stage": 2, ...}): which of the placements that run the plan the script runs.
  Json options = Json::object();
  // Settings of the script's that the engine's pricing takes beside the placement's options, where they are
  // no switch between placements ({"fsdp_size": 2}: veRL's HSDP groups, EngineEvaluator).
  Json pricing_options = Json::object();
  // The script's workload settings that realign's config stands in for, under the keys the engine's writer
  // writes (its current release's): the config written for the same workload keeps them (WriteInput).
  std::vector<ConfigEntry> workload;
};

// A file a user launches as it is (launch.sh, config.yaml).
struct LaunchFile {
  std::string name;
  std::string text;
  bool executable = false;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;          // "verl"
  virtual std::string display_name() const = 0;  // "veRL"
  // The release it writes for (releases.h): its config tree or flags, and what the rules were read from.
  virtual const Release& release() const = 0;
  // Every rule the adapter applies, with its source (docs/engines.md lists the same).
  virtual std::vector<Rule> rules() const = 0;
  // Throws Error (naming the config field) when the engine cannot run this graph at all: an algorithm it does
  // not have, a reward model it has no role for, a model its backend cannot shard on this cluster.
  virtual void check_graph(const DataflowGraph& graph, const Cluster& cluster) const = 0;
  // The placements it can run on the cluster, a mesh per call.
  virtual std::vector<Placement> placements(const DataflowGraph& graph, const Cluster& cluster) const = 0;
  // Empty when the engine can run call `call` with `s` on a mesh of `mesh_size` devices in `placement`, else
  // the rule.
  virtual std::string strategy_problem(const DataflowGraph& graph, const Placement& placement, size_t call,
                                       int mesh_size, const Strategy& s) const = 0;
  // Whether it can keep never-trained models (reference, reward) in host memory between their calls.
  virtual bool can_offload() const = 0;
  // Calls that must share one layout (one worker runs them): the first leads.
  virtual std::vector<std::vector<std::string>> tied(const DataflowGraph& graph) const = 0;
  virtual Pricing pricing(const DataflowGraph& graph) const = 0;
  // The engine's settings for the plan, in its own words, in a fixed order.
  virtual std::vector<ConfigEntry> write_config(const WriteInput& in, const ExecutionPlan& plan) const = 0;
  // What a user launches (a launch script, a YAML config), from write_config's entries.
  virtual std::vector<LaunchFile> launch_files(const WriteInput& in, const ExecutionPlan& plan) const = 0;
  // The devices a plan gives each of the engine's roles, in its words ("rollout (vLLM): 16 GPUs, tp 2").
  virtual std::vector<std::string> describe(const DataflowGraph& graph, const ExecutionPlan& plan) const = 0;
  // The run a user's launch script describes (`script`: the file's text; `env`: variables it takes from the
  // environment), read in the engine's own syntax (script_reader.h): the inverse of write_config for the keys
  // it writes, with the engine's defaults for those the script leaves out. Throws Error naming the key
  // realign cannot price.
  virtual ReadRun read_run(const std::string& script, const std::string& file,
                           const std::map<std::string, std::string>& env) const = 0;
};

std::vector<std::string> engine_names();  // verl, openrlhf, areal, nemo-rl
// `name` is an engine, or an engine at one of its releases (verl@v0.7.0; releases.h); without one, the
// current release. Error naming `path` for an unknown engine or release, with the valid ones.
std::unique_ptr<Engine> make_engine(const std::string& name, const std::string& path = "--engine");

// Empty when `engine` can run `plan` (its meshes are one of its placements, every strategy allowed there,
// tied calls in one layout, offloading only where it can), else the first rule it breaks. `placement`
// receives the placement it matches. `script_options`: settings a launch script adds to every placement's
// options (ReadRun::pricing_options, e.g. kPipelineStageEnds), which the engine's rules may read.
std::string can_run(const Engine& engine, const DataflowGraph& graph, const Cluster& cluster,
                    const ExecutionPlan& plan, Placement* placement = nullptr,
                    const Json& script_options = Json::object());

// Every placement of the engine that runs `plan`, in the engine's order: several where placements differ only
// in engine-wide switches (a training backend, a ZeRO stage). Empty when none does (can_run says why).
std::vector<Placement> placements_running(const Engine& engine, const DataflowGraph& graph,
                                          const Cluster& cluster, const ExecutionPlan& plan,
                                          const Json& script_options = Json::object());

}  // namespace realign::engines
