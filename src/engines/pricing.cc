#include "engines/pricing.h"

#include <algorithm>

#include "core/error.h"
#include "cost/call_cost.h"
#include "cost/comm_model.h"

namespace realign::engines {

double broadcast_sync_s(const DataflowGraph& graph, const Cluster& cluster, const HardwareProfile& profile,
                        Role model, const DeviceMesh& from, const DeviceMesh& to) {
  const ModelRole& role = graph.model(model);
  const std::vector<ParamInfo> params = model_params(role.spec, role.head);
  double bytes = 0;
  for (const ParamInfo& p : params) bytes += double(p.numel()) * 2.0;  // bf16
  // The broadcast spans nodes when any device of either mesh is on another node than the source's.
  const int node = cluster.node_of(from.first);
  const bool across = cluster.node_of(from.end() - 1) != node || cluster.node_of(to.first) != node ||
                      cluster.node_of(to.end() - 1) != node;
  const double bandwidth = across ? profile.inter_node_bandwidth.value : profile.intra_node_bandwidth.value;
  const double latency = across ? profile.inter_node_latency_s.value : profile.intra_node_latency_s.value;
  return bytes / bandwidth + double(params.size()) * (latency + profile.collective_overhead_s.value);
}

namespace {

// A misspelt engine in a profile's per-engine coefficients would otherwise be priced at the profile's own
// value without a word.
void check_engine_names(const std::map<std::string, Coefficient>& per_engine, const std::string& key) {
  const std::vector<std::string> engines = engine_names();
  for (const auto& [engine, c] : per_engine)
    if (std::find(engines.begin(), engines.end(), engine) == engines.end())
      throw Error("profile." + key + "." + engine,
                  "not an engine realign prices; one of verl, openrlhf, areal, nemo-rl");
}

}  // namespace

HardwareProfile generation_profile(const HardwareProfile& profile, const Pricing& pricing) {
  HardwareProfile p = profile;
  check_engine_names(profile.engine_decode_efficiency, "engine_decode_efficiency");
  const auto own = profile.engine_decode_efficiency.find(pricing.engine);
  if (own != profile.engine_decode_efficiency.end()) {
    Coefficient& rate = p.decode_bandwidth_efficiency;
    rate.value *= own->second.value;
    for (auto& point : rate.points) point.second *= own->second.value;
    rate.source = "engine " + pricing.engine + ": " + std::to_string(own->second.value).substr(0, 5) +
                  " of (" + rate.source + "): " + own->second.source;
  }
  if (pricing.cuda_graph_decoding) {
    p.layer_launch_overhead_s.value = 0;
    p.layer_launch_overhead_s.source = "engine: decoding replays a captured CUDA graph (" +
                                       pricing.cuda_graph_source + "): no per-layer launches";
    // The tensor-parallel all-reduces are captured in the same graph (vllm-project/vllm
    // vllm/distributed/device_communicators/custom_all_reduce.py registers the graph's buffers; SGLang's
    // custom all-reduce likewise), so no host issues them one by one: the link's latency and bandwidth stay,
    // the host's overhead per collective (fitted to ReaL's eager engine) goes.
    p.collective_overhead_s.value = 0;
    p.collective_overhead_s.source =
        "engine: the decoding step's collectives replay inside its CUDA graph (" + pricing.cuda_graph_source +
        ", vLLM's custom all-reduce): none issued by the host";
  }
  return p;
}

std::optional<HardwareProfile> pass_profile(const HardwareProfile& profile, const Pricing& pricing) {
  check_engine_names(profile.engine_pass_efficiency, "engine_pass_efficiency");
  const auto own = profile.engine_pass_efficiency.find(pricing.engine);
  if (own == profile.engine_pass_efficiency.end()) return std::nullopt;
  HardwareProfile p = profile;
  p.pass_efficiency = own->second;
  p.pass_efficiency.source = "engine " + pricing.engine + ": " + own->second.source;
  return p;
}

namespace {

double param_count(const ModelRole& m) {
  double n = 0;
  for (const ParamInfo& info : model_params(m.spec, m.head)) n += double(info.numel());
  return n;
}

// Whether ZeRO (or FSDP) over data parallelism shards this layout: DeepSpeed's dp-only layouts, FSDP2 over
// the dp ranks of each tensor-parallel shard (NeMo-RL's DTensor); no pipeline. With context parallelism over
// the dp x cp replicas: veRL's FSDP mesh is the whole pool, Ulysses's groups a second mesh over it.
bool zero_sharded(const Strategy& s) { return s.replicas() > 1 && s.pp == 1; }

// The dp ranks ZeRO (FSDP) shards model `role` over: all of them, or with HSDP (placement option
// "fsdp_size": veRL's actor_rollout_ref.actor.fsdp_config.fsdp_size below the pool, fsdp_workers.py
// create_device_mesh) groups of that size, replicated across the groups; it sets the mesh of the worker that
// holds the actor and the reference.
int shard_ranks(const Strategy& s, Role role, int fsdp_size) {
  const bool hybrid =
      fsdp_size > 0 && fsdp_size < s.replicas() && (role == Role::kActor || role == Role::kRef);
  return hybrid ? fsdp_size : s.replicas();
}

// Parameters one device holds of a model under `s` before ZeRO: a tensor-parallel shard.
double shard_params(const ModelRole& m, const Strategy& s) { return param_count(m) / double(s.tp); }

// Bytes per parameter that ZeRO stage `stage` shards beyond realign's ZeRO-1: stage 2 the (bf16) gradients of
// a trained model, stage 3 the weights too.
double zero_bytes_per_param(int stage, bool trained, bool offloaded) {
  double b = 0;
  if (stage >= 2 && trained) b += kGradBytesPerParam;
  if (stage >= 3 && !offloaded) b += kWeightBytesPerParam;
  return b;
}

// ZeRO-2/3 over the dp ranks of each model's home layout.
void apply_zero_stage(const DataflowGraph& g, const Cluster& cluster, const HardwareProfile& p,
                      const ExecutionPlan& plan, int stage, int fsdp_size, EngineEstimate& e) {
  e.device_peak_mem_bytes = e.simulation.device_peak_mem_bytes;
  e.device_saving_bytes.assign(e.device_peak_mem_bytes.size(), 0.0);
  if (stage < 2) return;
  // Generation's turns hold none of the homes ZeRO shards: a device whose peak is its turn keeps it.
  const std::vector<double>& turn = e.simulation.device_turn_peak_mem_bytes;
  auto lower = [&](int d, double saving) {
    double& peak = e.device_peak_mem_bytes[size_t(d)];
    const double in_turn = turn.empty() ? 0.0 : turn[size_t(d)];
    if (peak > in_turn) peak = std::max(in_turn, peak - saving);
    e.device_saving_bytes[size_t(d)] += saving;
  };
  for (const ModelRole& m : g.models) {
    const int home = g.home_call(m.role);
    if (home < 0) continue;
    const MfcAssignment& a = plan.assignments[size_t(home)];
    if (!zero_sharded(a.strategy)) continue;
    const bool offloaded = std::count(plan.offload.begin(), plan.offload.end(), m.role) > 0;
    const int ranks = shard_ranks(a.strategy, m.role, fsdp_size);
    double saving = shard_params(m, a.strategy) * zero_bytes_per_param(stage, m.trained, offloaded) *
                    (1.0 - 1.0 / double(ranks));
    // realign's ZeRO-1 shards the optimizer state over every dp rank; HSDP only over its group.
    if (m.trained && a.strategy.zero1 && ranks < a.strategy.replicas())
      saving -= shard_params(m, a.strategy) * kOptimizerBytesPerParam *
                (1.0 / double(ranks) - 1.0 / double(a.strategy.replicas()));
    for (int d = a.mesh.first; d < a.mesh.end(); ++d) lower(d, saving);
  }
  if (stage < 3) return;
  // ZeRO-3 gathers a layer's weights before using them: each micro-batch's forward (and, in training, its
  // backward and any recomputed forward) all-gathers the whole model once; realign's ZeRO-1 already pays
  // one all-gather of the updated weights per optimizer step.
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    const Mfc& mfc = g.mfcs[i];
    const MfcAssignment& a = plan.assignments[i];
    if (mfc.kind() == MfcKind::kGenerate || !zero_sharded(a.strategy)) continue;
    // HSDP gathers within a group of adjacent ranks: within a node where the group fits in one.
    const int ranks = shard_ranks(a.strategy, mfc.model, fsdp_size);
    const bool across = ranks < a.strategy.replicas() ? ranks * a.strategy.tp > cluster.devices_per_node
                                              : mesh_spans_nodes(a.mesh, cluster);
    const Link link = across ? inter_node_link(p) : intra_node_link(p);
    const double gather =
        ring_allreduce_s(shard_params(g.model(mfc.model), a.strategy) * kWeightBytesPerParam, ranks, link) /
        2.0;
    const double mb = double(a.strategy.micro_batches);
    if (mfc.kind() == MfcKind::kTrain)
      e.zero3_delta_s += double(mfc.train_steps()) * ((a.strategy.recompute ? 3.0 : 2.0) * mb - 1.0) * gather;
    else
      e.zero3_delta_s += mb * gather;
  }
}

// Engines that take turns on the same GPUs (a placement's "colocated": NeMo-RL's colocated generation,
// AReaL's colocated mode): the homes on generation's devices (Simulator::set_generation_turns), less what
// ZeRO-2/3 shards, go to host memory and come back each iteration, over the host link of the device that
// holds the most.
double turn_swap_s(const DataflowGraph& g, const HardwareProfile& p, const ExecutionPlan& plan,
                   const EngineEstimate& e) {
  const int gen = g.mfc_index("actor_gen");
  if (gen < 0 || e.simulation.device_home_bytes.empty()) return 0;
  const DeviceMesh& shared = plan.assignments[size_t(gen)].mesh;
  double most = 0;
  for (int d = shared.first; d < shared.end(); ++d)
    most = std::max(most, e.simulation.device_home_bytes[size_t(d)] - e.device_saving_bytes[size_t(d)]);
  return 2.0 * most / p.host_device_bandwidth.value;
}

// The serving engine's share of a device's memory (vLLM's gpu_memory_utilization, a placement's
// "generation_memory_fraction"): its weights, activations and KV cache must fit in it.
bool generation_fits_share(const DataflowGraph& g, Simulator& sim, const ExecutionPlan& plan, double share) {
  const double budget = share * sim.profile().memory_bytes.value;
  for (size_t i = 0; i < g.mfcs.size(); ++i)
    if (g.mfcs[i].kind() == MfcKind::kGenerate &&
        sim.call_estimate(int(i), plan.assignments[i]).memory.total() > budget)
      return false;
  return true;
}

}  // namespace

EngineEvaluator::EngineEvaluator(Simulator& simulator, Pricing pricing, bool engine_sync)
    : sim_(simulator),
      pricing_(std::move(pricing)),
      engine_sync_(engine_sync),
      limit_(simulator.profile().memory_bytes.value * simulator.profile().usable_memory_fraction.value) {
  // Generation inside the simulation, so that where iterations overlap (staleness) the engine's faster
  // generation shortens the iteration only as far as it is on the critical path.
  sim_.set_generation_profile(generation_profile(simulator.profile(), pricing_));
  if (auto own = pass_profile(simulator.profile(), pricing_)) sim_.set_pass_profile(*own);
}

ExecutionPlan as_engine_runs(const ExecutionPlan& plan, const DataflowGraph& graph, const Pricing& pricing) {
  ExecutionPlan out = plan;
  for (Role role : pricing.host_resident)
    if (graph.home_call(role) >= 0 && std::count(out.offload.begin(), out.offload.end(), role) == 0)
      out.offload.push_back(role);
  auto per_rank = [&](size_t i) { return graph.mfcs[i].seqs_per_pass() / out.assignments[i].strategy.dp; };
  for (const auto& [follower, leader] : pricing.micro_batch_size_from) {
    const int f = graph.mfc_index(follower), l = graph.mfc_index(leader);
    if (f < 0 || l < 0) continue;
    const int64_t size =
        std::max<int64_t>(1, per_rank(size_t(l)) / out.assignments[size_t(l)].strategy.micro_batches);
    int64_t n = std::max<int64_t>(1, per_rank(size_t(f)) / size);
    while (per_rank(size_t(f)) % n != 0) ++n;
    out.assignments[size_t(f)].strategy.micro_batches = int(n);
  }
  return out;
}

EngineEstimate EngineEvaluator::estimate(const ExecutionPlan& given) { return price(given, true); }

EngineEstimate EngineEvaluator::price(const ExecutionPlan& given, bool report) {
  // The engine holds its models its way; realign's own plans as they say.
  const ExecutionPlan plan = engine_sync_ ? as_engine_runs(given, sim_.graph(), pricing_) : given;
  EngineEstimate e;
  const bool colocated = options_.value("colocated", false);
  sim_.set_generation_turns(colocated);
  e.simulation = sim_.run(plan);
  const DataflowGraph& g = sim_.graph();
  for (size_t i = 0; i < g.mfcs.size(); ++i) {
    if (g.mfcs[i].kind() != MfcKind::kGenerate) continue;
    const MfcAssignment& a = plan.assignments[i];
    // Reported, not added (the simulation prices generation so), so not on the search's path: both without
    // contention, as on accelerators each device computes on its own.
    if (report)
      e.generation_delta_s += sim_.call_estimate(int(i), a).time_s -
                              estimate_call(g, sim_.cluster(), sim_.profile(), int(i), a).time_s;
    const int train = g.train_call(g.mfcs[i].model);
    // On the training devices themselves the engine reshards in place: realign's reallocation prices that.
    if (engine_sync_ && pricing_.broadcast_weight_sync && train >= 0 &&
        !a.mesh.overlaps(plan.assignments[size_t(train)].mesh)) {
      const double sync = broadcast_sync_s(g, sim_.cluster(), sim_.profile(), g.mfcs[i].model,
                                           plan.assignments[size_t(train)].mesh, a.mesh);
      e.sync_s += sync;
      e.sync_delta_s += sync - e.simulation.calls[i].realloc_s;
    }
  }
  const int fsdp_size = options_.value("fsdp_size", 0);
  apply_zero_stage(g, sim_.cluster(), sim_.profile(), plan, options_.value("zero_stage", 0), fsdp_size, e);
  e.fits = std::all_of(e.device_peak_mem_bytes.begin(), e.device_peak_mem_bytes.end(),
                       [&](double peak) { return peak <= limit_; });
  if (options_.contains("generation_memory_fraction"))
    e.fits =
        e.fits && generation_fits_share(g, sim_, plan, options_["generation_memory_fraction"].get<double>());
  if (colocated) e.turn_swap_s = turn_swap_s(g, sim_.profile(), plan, e);
  e.iteration_time_s = e.simulation.iteration_time_s + e.sync_delta_s + e.zero3_delta_s + e.turn_swap_s;
  return e;
}

PlanScore EngineEvaluator::evaluate(const ExecutionPlan& plan) {
  const EngineEstimate e = price(plan, false);
  PlanScore score;
  score.time_s = e.iteration_time_s;
  for (double peak : e.device_peak_mem_bytes) score.memory_bytes = std::max(score.memory_bytes, peak);
  score.overflow_bytes = std::max(0.0, score.memory_bytes - limit_);
  return score;
}

PlanScore EngineEvaluator::evaluate_call(int call, const MfcAssignment& assignment) {
  const CallEstimate& base = sim_.call_estimate(call, assignment);
  const double time = base.time_s;
  double memory = base.memory.total();
  const Mfc& mfc = sim_.graph().mfcs[size_t(call)];
  if (zero_sharded(assignment.strategy) && mfc.kind() != MfcKind::kGenerate) {
    const ModelRole& m = sim_.graph().model(mfc.model);
    memory -= shard_params(m, assignment.strategy) *
              zero_bytes_per_param(options_.value("zero_stage", 0), m.trained, false) *
              (1.0 - 1.0 / double(shard_ranks(assignment.strategy, m.role, options_.value("fsdp_size", 0))));
  }
  return PlanScore{time, std::max(0.0, memory - limit_), memory};
}

}  // namespace realign::engines
