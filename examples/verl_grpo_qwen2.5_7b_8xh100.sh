#!/usr/bin/env bash
# A veRL launch script as its users write them (the layout picked by hand): GRPO on Qwen2.5-7B-Instruct, one
# node of 8 GPUs, Megatron training at tp 4, a vLLM rollout at tp 2, 256 prompts x 5 samples per step.
# realign prices it before launch and searches the best layout veRL can run for the same workload:
#   realign import examples/verl_grpo_qwen2.5_7b_8xh100.sh --engine verl [cluster.device=a100-80gb] [--out DIR]
# (It is read, not run: the data paths below need not exist.)
set -x
NNODES=${NNODES:-1}
TP=4
train_files="['$HOME/data/gsm8k/train.parquet']"

python3 -m verl.trainer.main_ppo --config-path=config \
    --config-name='ppo_megatron_trainer.yaml' \
    algorithm.adv_estimator=grpo \
    data.train_files="$train_files" \
    data.val_files="$train_files" \
    data.train_batch_size=256 \
    data.max_prompt_length=1024 \
    data.max_response_length=1024 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=$TP \
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=1 \
    actor_rollout_ref.actor.use_kl_loss=True \
    actor_rollout_ref.actor.kl_loss_coef=0.001 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
    actor_rollout_ref.rollout.n=5 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8 \
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size=$TP \
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8 \
    trainer.logger=['console'] \
    trainer.n_gpus_per_node=8 \
    trainer.nnodes=$NNODES \
    trainer.total_epochs=15 "$@"
