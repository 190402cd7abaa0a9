// The engine's pricing over realign's cost model: a PlanEvaluator that prices generation as a serving engine
// with CUDA graphs runs it and, where the engine broadcasts the new weights to separate generation devices,
// that broadcast in place of realign's reallocation. Every other term is realign's own (engines.md says
// which).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/simulator.h"
#include "engines/engine.h"
#include "search/plan_evaluator.h"

namespace realign::engines {

// The broadcast of a model's bf16 weights from one training rank to the generation devices, tensor by tensor
// (NCCL, pipelined: the link's bandwidth per byte, its latency plus the engine's collective overhead per
// tensor), over the inter-node link when the two meshes are on different nodes.
double broadcast_sync_s(const DataflowGraph& graph, const Cluster& cluster, const HardwareProfile& profile,
                        Role model, const DeviceMesh& from, const DeviceMesh& to);

// `plan` as the engine runs it: pricing.host_resident added to plan.offload (those the graph has), and the
// micro-batches of pricing.micro_batch_size_from's followers set to their leader's size in sequences.
ExecutionPlan as_engine_runs(const ExecutionPlan& plan, const DataflowGraph& graph, const Pricing& pricing);

// The profile a serving engine's generation runs under: with CUDA graphs the decoding step replays one graph,
// so neither the per-layer launch overhead nor the per-collective host overhead of an eager engine is paid.
HardwareProfile generation_profile(const HardwareProfile& profile, const Pricing& pricing);

// The profile the engine's training and inference passes run under: its own pass efficiency on this device
// where the profile holds one (HardwareProfile::engine_pass_efficiency), else none (the profile's own).
std::optional<HardwareProfile> pass_profile(const HardwareProfile& profile, const Pricing& pricing);

struct EngineEstimate {
  SimulationResult simulation;  // realign's simulator (its own reallocation and generation pricing)
  // ZeRO stage 2/3 over data parallelism (a placement's "zero_stage": DeepSpeed's, or FSDP's full sharding
  // as stage 3): stage 2 also shards the gradients, stage 3 the weights, over the dp ranks of a model's home
  // layout (of each tensor-parallel shard; not with pipeline parallelism). Per device, the peak memory
  // after those savings (they hold all iteration, so they lower every moment alike), and whether it fits.
  std::vector<double> device_peak_mem_bytes;
  std::vector<double> device_saving_bytes;  // what ZeRO-2/3 saves on each device, all iteration
  bool fits = true;
  double zero3_delta_s = 0;  // ZeRO-3's weight all-gathers before each micro-batch's forward and backward
  // Engines taking turns on the same GPUs (placement option "colocated"): the training side's state
  // offloaded and reloaded around generation each iteration.
  double turn_swap_s = 0;
  // Engine generation minus realign's over the generate calls, each on its own: what the simulation (which
  // prices generation as the engine runs it) gains there; on the iteration only where on its critical path.
  double generation_delta_s = 0;
  double sync_s = 0;              // the engine's weight broadcast (0 when it reshards in place)
  double sync_delta_s = 0;        // the broadcast minus realign's reallocation before generation
  double iteration_time_s = 0;    // simulation + the sync, ZeRO-3 and swap terms (as if on the critical path)
};

class EngineEvaluator : public PlanEvaluator {
 public:
  // `engine_sync`: price the engine's weight broadcast and its host-resident models (an engine's plan); false
  // for realign's own plans, which move weights by reallocation and keep models where the plan says. Sets
  // `simulator`'s generation profile to the engine's (generation_profile): every evaluator of one simulator
  // must price generation alike.
  EngineEvaluator(Simulator& simulator, Pricing pricing, bool engine_sync);
  // The engine-wide switches of the placement being priced (Placement::options; "zero_stage", "colocated"),
  // and a script's ReadRun::pricing_options ("fsdp_size": FSDP's HSDP groups of the actor and reference).
  void set_placement_options(const Json& options) { options_ = options; }
  EngineEstimate estimate(const ExecutionPlan& plan);
  PlanScore evaluate(const ExecutionPlan& plan) override;
  PlanScore evaluate_call(int mfc, const MfcAssignment& assignment) override;

 private:
  // estimate(); `report`: also the terms only reported (generation_delta_s), which scoring skips.
  EngineEstimate price(const ExecutionPlan& plan, bool report);
  Simulator& sim_;
  Pricing pricing_;
  bool engine_sync_;
  double limit_;
  Json options_ = Json::object();
};

}  // namespace realign::engines
