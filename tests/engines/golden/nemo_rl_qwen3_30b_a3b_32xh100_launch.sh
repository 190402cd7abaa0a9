#!/usr/bin/env bash
# NeMo-RL GRPO run planned by realign (from the root of a NeMo-RL checkout; data and environment are the config's math ones: set data.* for yours)
# Written by `realign plan --engine` for NeMo-RL v0.7.0 (NVIDIA-NeMo/RL 81aa43d, 2026-07-29); see realign's docs/engines.md.
set -euo pipefail
: "${ACTOR_MODEL_PATH:?set ACTOR_MODEL_PATH (see docs/engines.md, placeholders)}"
uv run examples/run_grpo.py \
  --config examples/configs/grpo_math_1B_megatron.yaml \
  cluster.num_nodes=4 \
  cluster.gpus_per_node=8 \
  grpo.num_prompts_per_step=64 \
  grpo.num_generations_per_prompt=32 \
  policy.model_name="${ACTOR_MODEL_PATH}" \
  policy.max_total_sequence_length=3154 \
  policy.train_global_batch_size=512 \
  policy.train_micro_batch_size=1 \
  policy.logprob_batch_size=4 \
  policy.megatron_cfg.enabled=true \
  policy.megatron_cfg.tensor_model_parallel_size=1 \
  policy.megatron_cfg.pipeline_model_parallel_size=1 \
  policy.megatron_cfg.expert_model_parallel_size=8 \
  policy.megatron_cfg.expert_tensor_parallel_size=1 \
  policy.megatron_cfg.sequence_parallel=false \
  policy.megatron_cfg.activation_checkpointing=false \
  policy.megatron_cfg.optimizer.use_distributed_optimizer=true \
  loss_fn.reference_policy_kl_penalty=0.02 \
  policy.generation.max_new_tokens=2898 \
  policy.generation.vllm_cfg.tensor_parallel_size=2 \
  policy.generation.vllm_cfg.pipeline_parallel_size=1 \
  policy.generation.vllm_cfg.expert_parallel_size=1 \
  policy.generation.colocated.enabled=true
