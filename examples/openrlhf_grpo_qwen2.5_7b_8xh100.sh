#!/usr/bin/env bash
# An OpenRLHF launch script as its users write them (the layout picked by hand): GRPO-style training
# (group_norm advantages, a remote reward function) of Qwen2.5-7B-Instruct with every model and 4 vLLM engines
# of tp 2 colocated on one node of 8 GPUs, ZeRO-3. realign prices it before launch and searches the best
# layout OpenRLHF can run for the same workload:
#   realign import examples/openrlhf_grpo_qwen2.5_7b_8xh100.sh --engine openrlhf [--out DIR]
# (It is read, not run: the reward URL and data below need not exist.)
set -x
ray job submit --address="http://127.0.0.1:8265" \
   --runtime-env-json='{"working_dir": "/openrlhf"}' \
   -- python3 -m openrlhf.cli.train_ppo_ray \
   --ref_num_nodes 1 \
   --ref_num_gpus_per_node 8 \
   --actor_num_nodes 1 \
   --actor_num_gpus_per_node 8 \
   --vllm_num_engines 4 \
   --vllm_tensor_parallel_size 2 \
   --colocate_all_models \
   --vllm_enable_sleep \
   --vllm_gpu_memory_utilization 0.5 \
   --pretrain Qwen/Qwen2.5-7B-Instruct \
   --remote_rm_url http://localhost:5000/get_reward \
   --prompt_data OpenRLHF/prompt-collection-v0.1 \
   --micro_train_batch_size 4 \
   --train_batch_size 128 \
   --micro_rollout_batch_size 16 \
   --rollout_batch_size 64 \
   --n_samples_per_prompt 8 \
   --max_epochs 1 \
   --prompt_max_len 1024 \
   --generate_max_len 2048 \
   --advantage_estimator group_norm \
   --zero_stage 3 \
   --bf16 \
   --gradient_checkpointing \
   --init_kl_coef 1e-3 \
   --use_kl_loss \
   --packing_samples
