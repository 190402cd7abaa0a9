#!/usr/bin/env bash
# OpenRLHF run planned by realign (start a Ray cluster first)
# Written by `realign plan --engine`; see realign's docs/engines.md.
set -euo pipefail
: "${ACTOR_MODEL_PATH:?set ACTOR_MODEL_PATH (see docs/engines.md, placeholders)}"
: "${CRITIC_MODEL_PATH:?set CRITIC_MODEL_PATH (see docs/engines.md, placeholders)}"
: "${REWARD_MODEL_PATH:?set REWARD_MODEL_PATH (see docs/engines.md, placeholders)}"
: "${TRAIN_DATA:?set TRAIN_DATA (see docs/engines.md, placeholders)}"
python3 -m openrlhf.cli.train_ppo_ray \
  --pretrain "${ACTOR_MODEL_PATH}" \
  --critic_pretrain "${CRITIC_MODEL_PATH}" \
  --reward_pretrain "${REWARD_MODEL_PATH}" \
  --prompt_data "${TRAIN_DATA}" \
  --advantage_estimator "gae" \
  --n_samples_per_prompt 1 \
  --rollout_batch_size 512 \
  --train_batch_size 128 \
  --max_epochs 1 \
  --prompt_max_len 256 \
  --generate_max_len 768 \
  --micro_train_batch_size 4 \
  --micro_rollout_batch_size 32 \
  --zero_stage 2 \
  --bf16 \
  --actor_num_nodes 1 \
  --actor_num_gpus_per_node 4 \
  --ref_num_nodes 1 \
  --ref_num_gpus_per_node 4 \
  --critic_num_nodes 1 \
  --critic_num_gpus_per_node 4 \
  --reward_num_nodes 1 \
  --reward_num_gpus_per_node 4 \
  --colocate_actor_ref \
  --colocate_critic_reward \
  --vllm_num_engines 4 \
  --vllm_tensor_parallel_size 2
