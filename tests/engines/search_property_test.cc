// Over random clusters, models and algorithms: every plan the engine-constrained search proposes is one the
// engine can express (checked here independently of can_run, rule by rule), it uses every GPU of the
// cluster, every degree divides what it must, and the engine's config adds up to the same GPUs.
#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "core/rng.h"
#include "engines/engine_fixtures.h"

namespace realign {
namespace {

using testing::h100;

const MfcAssignment& at(const DataflowGraph& g, const ExecutionPlan& p, const std::string& call) {
  return p.assignments[size_t(g.mfc_index(call))];
}

int entry_int(const std::vector<engines::ConfigEntry>& entries, const std::string& key, int fallback = -1) {
  for (const auto& e : entries)
    if (e.key == key) return e.value.get<int>();
  return fallback;
}

// The engine's own words for its GPUs add up to the cluster.
void expect_config_adds_up(const std::string& engine, const DataflowGraph& g, const Cluster& c,
                           const ExecutionPlan& plan, const std::vector<engines::ConfigEntry>& cfg) {
  const int n = c.n_devices();
  if (engine == "verl") {
    const int trainer = entry_int(cfg, "trainer.nnodes") * entry_int(cfg, "trainer.n_gpus_per_node");
    const int rollout =
        g.staleness > 0 ? entry_int(cfg, "rollout.nnodes") * entry_int(cfg, "rollout.n_gpus_per_node") : 0;
    EXPECT_EQ(trainer + rollout, n);
    if (g.staleness == 0) {
      EXPECT_EQ(trainer % entry_int(cfg, "actor_rollout_ref.rollout.tensor_model_parallel_size"), 0);
    }
    // veRL splits a mini-batch (prompts x n) over the actor's dp ranks, then into micro-batches per GPU.
    const int mini = entry_int(cfg, "actor_rollout_ref.actor.ppo_mini_batch_size") *
                     entry_int(cfg, "actor_rollout_ref.rollout.n");
    const int dp = at(g, plan, "actor_train").strategy.dp;
    EXPECT_EQ(mini % dp, 0);
    EXPECT_EQ((mini / dp) % entry_int(cfg, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"), 0);
  } else if (engine == "openrlhf") {
    std::set<int> firsts;
    int total = 0;
    auto role = [&](const std::string& r, const std::string& call) {
      const int gpus =
          entry_int(cfg, "--" + r + ".num_nodes") * entry_int(cfg, "--" + r + ".num_gpus_per_node");
      EXPECT_EQ(gpus, at(g, plan, call).mesh.size) << r;
      if (firsts.insert(at(g, plan, call).mesh.first).second) total += gpus;
    };
    role("actor", "actor_train");
    role("ref", "ref_inf");
    if (g.mfc_index("critic_train") >= 0) role("critic", "critic_train");
    if (g.mfc_index("reward_inf") >= 0) role("reward", "reward_inf");
    const int vllm = entry_int(cfg, "--vllm.num_engines") * entry_int(cfg, "--vllm.tensor_parallel_size");
    if (firsts.insert(at(g, plan, "actor_gen").mesh.first).second) total += vllm;
    EXPECT_EQ(vllm, at(g, plan, "actor_gen").mesh.size);
    EXPECT_EQ(total, n);
    // train_ppo_ray.py asserts: sample batches >= the actor's processes.
    EXPECT_GE(entry_int(cfg, "--rollout.n_samples_per_prompt") * entry_int(cfg, "--rollout.batch_size") /
                  entry_int(cfg, "--rollout.micro_batch_size"),
              at(g, plan, "actor_train").mesh.size);
    EXPECT_EQ(entry_int(cfg, "--train.batch_size") %
                  (at(g, plan, "actor_train").strategy.dp * entry_int(cfg, "--train.micro_batch_size")),
              0);
  } else if (engine == "nemo-rl") {
    const int gen = at(g, plan, "actor_gen").mesh.size;
    EXPECT_EQ(entry_int(cfg, "cluster.num_nodes") * entry_int(cfg, "cluster.gpus_per_node"), n);
    bool colocated = true;
    for (const auto& e : cfg)
      if (e.key == "policy.generation.colocated.enabled") colocated = e.value.get<bool>();
    if (!colocated) {
      // grpo.py: generation apart takes part of the only node, or whole nodes.
      const int nodes = entry_int(cfg, "policy.generation.colocated.resources.num_nodes");
      const int per_node = entry_int(cfg, "policy.generation.colocated.resources.gpus_per_node");
      EXPECT_EQ(nodes * per_node, gen);
      EXPECT_TRUE(c.n_nodes == 1 ? nodes == 1 : per_node == c.devices_per_node);
      EXPECT_EQ(at(g, plan, "actor_train").mesh.size, n - gen);
    } else {
      EXPECT_EQ(gen, n);
    }
    EXPECT_EQ(gen % entry_int(cfg, "policy.generation.vllm_cfg.tensor_parallel_size"), 0);
    // The training GPUs are pp x dp x tp (DTensor: dp x tp); the global batch splits over dp into
    // micro-batches.
    const Strategy& s = at(g, plan, "actor_train").strategy;
    const int tp = entry_int(cfg, "policy.dtensor_cfg.tensor_parallel_size",
                             entry_int(cfg, "policy.megatron_cfg.tensor_model_parallel_size"));
    const int pp = entry_int(cfg, "policy.megatron_cfg.pipeline_model_parallel_size", 1);
    EXPECT_EQ(tp * pp * s.dp, at(g, plan, "actor_train").mesh.size);
    EXPECT_EQ(entry_int(cfg, "policy.train_global_batch_size") %
                  (s.dp * entry_int(cfg, "policy.train_micro_batch_size")),
              0);
  } else {
    // allocation_mode "sglang:dApBtC+megatron:dXpYtZ" (apart: the GPUs add up) or
    // "sglang[rollout]:dApBtC|fsdp[actor]:dXpYtZ" (colocated: each takes them all).
    std::string alloc;
    for (const auto& e : cfg)
      if (e.key == "allocation_mode") alloc = e.value.get<std::string>();
    const bool colocated = alloc.find('|') != std::string::npos;
    int total = 0;
    for (size_t at_ = alloc.find(':'); at_ != std::string::npos; at_ = alloc.find(':', at_ + 1)) {
      int d = 0, p = 0, t = 0;
      ASSERT_EQ(std::sscanf(alloc.c_str() + at_ + 1, "d%dp%dt%d", &d, &p, &t), 3) << alloc;
      if (colocated) {
        EXPECT_EQ(d * p * t, n) << alloc;
      }
      total += d * p * t;
    }
    EXPECT_EQ(total, colocated ? 2 * n : n) << alloc;
  }
}

// GRPO with a 7B policy on one node of 8 H100, 2,048 samples of ~3k tokens: the whole batch's KV cache does
// not fit beside veRL's Megatron policy state, so it generates in waves, as vLLM bounds its running sequences
// by its cache; the memory share written is one wave's. NeMo-RL either does so on Megatron or trains with
// DTensor, whose FSDP2 sharding leaves room for the whole batch.
TEST(EngineSearchProperty, GenerationTakesWavesWhereTheWholeBatchsCacheDoesNotFit) {
  AlgorithmConfig a = testing::algorithm_from_yaml(R"(
algorithm: grpo
models: {actor: qwen2.5-7b}
batch: {prompts: 64, samples_per_prompt: 32, prompt_len: 256, gen_len: 2898, mini_batches: 4}
)");
  a.reward_model = false;
  const DataflowGraph g = build_graph(a);
  const Cluster c = h100(1);
  for (const std::string name : {"verl", "nemo-rl"}) {
    SCOPED_TRACE(name);
    const auto engine = engines::make_engine(name);
    const testing::EnginePlan r = testing::search(*engine, g, c, 2000);
    ASSERT_TRUE(r.search.plan);
    EXPECT_TRUE(r.estimate.fits);
    EXPECT_EQ(engines::can_run(*engine, g, c, *r.search.plan), "");
    const Strategy& gen = at(g, *r.search.plan, "actor_gen").strategy;
    EXPECT_EQ(gen.pp, 1);
    if (r.search.placement.options.value("zero_stage", 0) != 3) {
      EXPECT_GT(gen.micro_batches, 1);
    }
  }
}

TEST(EngineSearchProperty, ProposesOnlyWhatTheEngineCanExpressOnRandomClustersAndModels) {
  Rng rng(27);
  const std::vector<std::string> models = {"llama-small", "qwen2.5-0.5b", "qwen2.5-1.5b", "llama2-7b",
                                           "moe-tiny"};
  const std::vector<int> per_node = {2, 4, 8};
  int checked = 0, moe_checked = 0;
  for (int trial = 0; trial < 18; ++trial) {
    const std::string model = models[size_t(rng.uniform_int(int64_t(models.size())))];
    const int nodes = 1 + int(rng.uniform_int(3));
    const Cluster c = h100(nodes, per_node[size_t(rng.uniform_int(3))]);
    AlgorithmConfig a = testing::algorithm_from_yaml("algorithm: " + std::string(trial % 2 ? "grpo" : "ppo") +
                                                     "\nmodels: {actor: " + model +
                                                     "}\nbatch: {prompts: 64, "
                                                     "prompt_len: 128, gen_len: 128, mini_batches: 2}\n");
    if (a.algorithm == Algorithm::kGrpo) a.batch.samples_per_prompt = 4;
    a.reward_model = trial % 3 != 0;
    a.staleness = trial % 4 == 1 ? 1 : 0;
    const DataflowGraph g = build_graph(a);
    for (const auto& name : engines::engine_names()) {
      const auto engine = engines::make_engine(name);
      try {
        engine->check_graph(g, c);
      } catch (const Error&) {
        continue;  // refused with a clear error: nothing proposed
      }
      const testing::EnginePlan r = testing::search(*engine, g, c, 200);
      if (!r.search.plan) continue;
      const ExecutionPlan& plan = *r.search.plan;
      SCOPED_TRACE(name + " " + model + " on " + std::to_string(nodes) + "x" +
                   std::to_string(c.devices_per_node));
      ++checked;
      moe_checked += g.model(Role::kActor).spec.is_moe();
      // Valid on the cluster for a serving engine's generation: meshes aligned, dp*tp*pp = mesh, tp inside a
      // node (generation's: or over whole nodes) dividing the heads.
      ExecutionPlan copy = plan;
      EXPECT_NO_THROW(validate_plan(g, c, copy, "plan", true));
      // Every GPU serves some call.
      std::vector<bool> used(size_t(c.n_devices()), false);
      for (const auto& x : plan.assignments)
        for (int d = x.mesh.first; d < x.mesh.end(); ++d) used[size_t(d)] = true;
      for (bool u : used) EXPECT_TRUE(u);
      const MfcAssignment& gen = at(g, plan, "actor_gen");
      const MfcAssignment& actor = at(g, plan, "actor_train");
      EXPECT_EQ(gen.strategy.pp, 1);  // no engine here generates pipelined
      // One worker spreads the experts one way: every call but generation takes the actor's ep.
      for (const auto& x : plan.assignments) {
        if (x.mfc == "actor_gen") continue;
        EXPECT_EQ(x.strategy.ep, actor.strategy.ep) << x.mfc;
      }
      if (name == "verl") {
        for (const auto& x : plan.assignments) {
          EXPECT_EQ(x.mesh.size, g.staleness > 0 ? x.mesh.size : c.n_devices());
          if (x.mfc == "actor_gen") continue;
          EXPECT_EQ(x.mesh, actor.mesh);
          EXPECT_EQ(x.strategy.tp, actor.strategy.tp);
          EXPECT_EQ(x.strategy.pp, actor.strategy.pp);
          EXPECT_EQ(g.model(g.mfcs[size_t(g.mfc_index(x.mfc))].model).spec.n_layers % x.strategy.pp, 0);
        }
        EXPECT_EQ(gen.mesh.size % gen.strategy.tp, 0);
        EXPECT_TRUE(gen.strategy.ep == 1 || gen.strategy.ep % gen.strategy.tp == 0);  // one vLLM server
      } else if (name == "openrlhf") {
        EXPECT_TRUE(plan.offload.empty());
        for (const auto& x : plan.assignments) {
          if (x.mfc == "actor_gen") continue;
          EXPECT_EQ(x.strategy.tp, 1);
          EXPECT_EQ(x.strategy.pp, 1);
        }
        for (const auto& x : plan.assignments) EXPECT_EQ(x.strategy.ep, 1) << x.mfc;  // no EP in OpenRLHF
        EXPECT_EQ(at(g, plan, "ref_inf").mesh, actor.mesh);
      } else if (name == "nemo-rl") {
        // One Megatron layout for the policy's calls; generation colocated on every GPU or apart.
        for (const auto& x : plan.assignments) {
          if (x.mfc == "actor_gen") continue;
          EXPECT_EQ(x.mesh, actor.mesh);
          EXPECT_EQ(x.strategy.tp, actor.strategy.tp);
          EXPECT_EQ(x.strategy.pp, actor.strategy.pp);
        }
        EXPECT_TRUE(gen.mesh == actor.mesh || !gen.mesh.overlaps(actor.mesh));
        if (g.staleness > 0) {
          EXPECT_FALSE(gen.mesh.overlaps(actor.mesh));
        }
        EXPECT_TRUE(gen.strategy.ep == 1 || gen.strategy.ep == gen.strategy.tp);
      } else {
        // Megatron without the distributed optimizer, or FSDP sharding it with the rest.
        const bool fsdp = r.search.placement.options["backend"] == "fsdp";
        if (r.search.placement.options.value("colocated", false)) {
          // Taking turns on one node's GPUs: FSDP, on-policy.
          EXPECT_EQ(gen.mesh, actor.mesh);
          EXPECT_EQ(c.n_nodes, 1);
          EXPECT_EQ(g.staleness, 0);
          EXPECT_TRUE(fsdp);
        } else {
          EXPECT_FALSE(gen.mesh.overlaps(actor.mesh));
        }
        EXPECT_EQ(gen.strategy.ep, 1);  // the allocation has no e for SGLang
        for (const auto& x : plan.assignments) {
          if (x.mfc == "actor_gen") continue;
          EXPECT_EQ(x.mesh, actor.mesh);
          EXPECT_EQ(x.strategy.dp, actor.strategy.dp);
          const bool trained = x.mfc == "actor_train" || x.mfc == "critic_train";
          EXPECT_EQ(x.strategy.zero1, fsdp && trained && x.strategy.dp > 1) << x.mfc;
          if (fsdp) {
            EXPECT_EQ(x.strategy.pp, 1);
          }
        }
      }
      engines::WriteInput in;
      in.kl_coef = 0.02;  // train.ppo.kl_coef's default: the reference call is a KL term
      in.graph = &g;
      in.cluster = &c;
      in.batch = a.batch;
      in.placement = r.search.placement;
      const auto cfg = engine->write_config(in, plan);
      expect_config_adds_up(name, g, c, plan, cfg);
      if (name == "verl") {
        // Megatron's expert keys exactly for a mixture of experts, with the plan's ep.
        EXPECT_EQ(entry_int(cfg, "actor_rollout_ref.actor.megatron.expert_model_parallel_size"),
                  g.model(Role::kActor).spec.is_moe() ? actor.strategy.ep : -1);
      }
      // The switches written are the searched placement's (ZeRO-2 and -3 placements share meshes).
      if (name == "openrlhf") {
        EXPECT_EQ(entry_int(cfg, "--ds.zero_stage"), r.search.placement.options["zero_stage"].get<int>());
      }
    }
  }
  EXPECT_GT(checked, 12);
  EXPECT_GT(moe_checked, 2);  // the mixture of experts was drawn and planned
}

}  // namespace
}  // namespace realign
