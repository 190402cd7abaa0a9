#!/usr/bin/env bash
# veRL hybrid engine run planned by realign
# Written by `realign plan --engine` for veRL v0.9.0 (verl-project/verl 483b8a0, 2026-08-14); see realign's docs/engines.md.
set -euo pipefail
: "${CRITIC_MODEL_PATH:?set CRITIC_MODEL_PATH (see docs/engines.md, placeholders)}"
: "${REWARD_MODEL_PATH:?set REWARD_MODEL_PATH (see docs/engines.md, placeholders)}"
: "${TRAIN_DATA:?set TRAIN_DATA (see docs/engines.md, placeholders)}"
python3 -m verl.trainer.main_ppo \
  --config-name=ppo_megatron_trainer \
  algorithm.adv_estimator="gae" \
  data.train_files="${TRAIN_DATA}" \
  data.val_files="${TRAIN_DATA}" \
  data.train_batch_size=512 \
  data.max_prompt_length=256 \
  data.max_response_length=768 \
  actor_rollout_ref.model.path="/ckpt/llama2-7b-sft" \
  actor_rollout_ref.hybrid_engine=true \
  actor_rollout_ref.actor.strategy="megatron" \
  actor_rollout_ref.actor.ppo_mini_batch_size=128 \
  actor_rollout_ref.actor.ppo_epochs=1 \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 \
  actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4 \
  actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=1 \
  actor_rollout_ref.actor.megatron.use_distributed_optimizer=true \
  actor_rollout_ref.rollout.name="vllm" \
  actor_rollout_ref.rollout.n=1 \
  actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=32 \
  actor_rollout_ref.actor.use_kl_loss=false \
  algorithm.use_kl_in_reward=true \
  algorithm.kl_ctrl.kl_coef=0.02 \
  actor_rollout_ref.ref.strategy="megatron" \
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=32 \
  actor_rollout_ref.ref.megatron.tensor_model_parallel_size=4 \
  actor_rollout_ref.ref.megatron.pipeline_model_parallel_size=1 \
  actor_rollout_ref.ref.megatron.param_offload=true \
  critic.strategy="megatron" \
  critic.model.path="${CRITIC_MODEL_PATH}" \
  critic.ppo_micro_batch_size_per_gpu=8 \
  critic.megatron.tensor_model_parallel_size=4 \
  critic.megatron.pipeline_model_parallel_size=1 \
  critic.megatron.use_distributed_optimizer=true \
  critic.megatron.override_transformer_config.recompute_granularity="full" \
  critic.megatron.override_transformer_config.recompute_method="uniform" \
  critic.megatron.override_transformer_config.recompute_num_layers=1 \
  reward.reward_model.enable=true \
  reward.reward_model.model_path="${REWARD_MODEL_PATH}" \
  reward.reward_model.rollout.name="vllm" \
  reward.reward_model.rollout.tensor_model_parallel_size=4 \
  reward.reward_model.rollout.max_num_batched_tokens=32768 \
  trainer.nnodes=2 \
  trainer.n_gpus_per_node=8 \
  trainer.logger="[\"console\"]"
