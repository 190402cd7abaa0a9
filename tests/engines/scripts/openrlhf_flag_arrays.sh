#!/bin/bash
# Excerpt of OpenRLHF/OpenRLHF 3c3be6234e0cb353e76bb8019947db9dfe99fca7
# examples/scripts/train_reinforce_baseline_hybrid_engine.sh (Apache-2.0): flags gathered in arrays, with
# comments between them, passed as ${ARRAY[@]} after `ray job submit ... --`.
SCRIPT_DIR="$(dirname "$0")"
WORK_DIR=$(cd "$SCRIPT_DIR/../.." && pwd)

MODEL_PATH="Qwen/Qwen3-4B-Thinking-2507"
SAVE_PATH="${WORK_DIR}/exp/Qwen3-4B-Thinking"

CKPT_ARGS=(
   --actor.model_name_or_path ${MODEL_PATH}
   # --reward.model_name_or_path ${REWARD_MODEL}
   --ckpt.output_dir ${SAVE_PATH}
   --ckpt.path "${SAVE_PATH}/ckpt"
)

ENGINE_ARGS=(
   --actor.num_gpus_per_node 4
   --vllm.num_engines 2
   --vllm.tensor_parallel_size 2
   --train.colocate_all
   --ds.zero_stage 3
)

ray job submit --address="http://127.0.0.1:8265" \
   -- python3 -m openrlhf.cli.train_ppo_ray \
   ${CKPT_ARGS[@]} \
   ${ENGINE_ARGS[@]}
