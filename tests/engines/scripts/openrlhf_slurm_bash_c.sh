#!/bin/bash
# Excerpt of OpenRLHF/OpenRLHF 3c3be6234e0cb353e76bb8019947db9dfe99fca7
# examples/scripts/train_ppo_ray_slurm.sh (Apache-2.0): the launch is a command string given to
# `bash -c` under srun, its lines joined by `\` inside the double quotes.
#SBATCH -N 2                       # 64x8x4
IMAGE_NAME="nvcr.io/nvidia/pytorch:26.03-py3"
RAY_VERSION=2.12.0
JOBLOG="$(realpath .)/train_ppo_llama_ray-$SLURM_JOB_ID.log"

srun --overlap --nodes=1 --ntasks=1 -w "$node_1" --container-image="$IMAGE_NAME" bash -c \
"pip install ray[default]==$RAY_VERSION \
&& /root/.local/bin/ray job submit --address=http://localhost:8265 \
    --runtime-env-json='{\"working_dir\": \"/openrlhf\", \"pip\": \"/openrlhf/requirements.txt\"}' \
    -- python3 -m openrlhf.cli.train_ppo_ray \
    --ref.num_nodes 1 \
    --ref.num_gpus_per_node 4 \
    --reward.num_nodes 1 \
    --reward.num_gpus_per_node 4 \
    --critic.num_nodes 1 \
    --critic.num_gpus_per_node 4 \
    --actor.num_nodes 1 \
    --actor.num_gpus_per_node 4 \
    --vllm.num_engines 4 \
    --vllm.tensor_parallel_size 2 \
    --train.colocate_critic_reward \
    --train.colocate_actor_ref \
    --actor.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \
    --reward.model_name_or_path OpenRLHF/Llama-3-8b-rm-mixture \
    --train.micro_batch_size 8 \
    --train.batch_size 128 \
    --rollout.micro_batch_size 16 \
    --rollout.batch_size 1024 \
    --data.max_len 2048 \
    --ds.zero_stage 3 \
    --ds.param_dtype bf16 \
    --ds.adam_offload \
    --actor.gradient_checkpointing_enable" &>> ${JOBLOG}
