#!/usr/bin/env bash
# OpenRLHF run planned by realign (start a Ray cluster first)
# Written by `realign plan --engine` for OpenRLHF v0.11.0 (OpenRLHF/OpenRLHF 3c3be62, 2026-08-13); see realign's docs/engines.md.
set -euo pipefail
: "${ACTOR_MODEL_PATH:?set ACTOR_MODEL_PATH (see docs/engines.md, placeholders)}"
: "${CRITIC_MODEL_PATH:?set CRITIC_MODEL_PATH (see docs/engines.md, placeholders)}"
: "${REWARD_MODEL_PATH:?set REWARD_MODEL_PATH (see docs/engines.md, placeholders)}"
: "${TRAIN_DATA:?set TRAIN_DATA (see docs/engines.md, placeholders)}"
python3 -m openrlhf.cli.train_ppo_ray \
  --actor.model_name_or_path "${ACTOR_MODEL_PATH}" \
  --critic.model_name_or_path "${CRITIC_MODEL_PATH}" \
  --reward.model_name_or_path "${REWARD_MODEL_PATH}" \
  --data.prompt_dataset "${TRAIN_DATA}" \
  --algo.advantage.estimator "gae" \
  --rollout.n_samples_per_prompt 1 \
  --rollout.batch_size 512 \
  --train.batch_size 128 \
  --train.max_epochs 1 \
  --data.max_len 1024 \
  --rollout.max_new_tokens 768 \
  --train.micro_batch_size 4 \
  --rollout.micro_batch_size 32 \
  --ds.zero_stage 2 \
  --ds.param_dtype "bf16" \
  --actor.num_nodes 1 \
  --actor.num_gpus_per_node 4 \
  --algo.kl.init_coef 0.02 \
  --ref.num_nodes 1 \
  --ref.num_gpus_per_node 4 \
  --critic.num_nodes 1 \
  --critic.num_gpus_per_node 4 \
  --reward.num_nodes 1 \
  --reward.num_gpus_per_node 4 \
  --train.colocate_actor_ref \
  --train.colocate_critic_reward \
  --vllm.num_engines 4 \
  --vllm.tensor_parallel_size 2
