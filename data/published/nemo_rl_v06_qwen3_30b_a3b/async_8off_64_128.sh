# NeMo-RL v0.6's published Qwen3-30B-A3B GRPO run (async_8off_64_128), as the launch line realign import reads:
# degrees, batch and lengths from data/published/async_calibration.json (docs/about/performance-summary.md,
# recipes under examples/configs/recipes/llm/performance/); the 256-token prompt is assumed (only the
# sequences' cap, 4,096, and their average, 3,203, are published). realign import FILE --engine nemo-rl batch.gen_len=2947
uv run examples/run_grpo.py --config examples/configs/grpo_math_1B_megatron.yaml \
  policy.model_name=Qwen/Qwen3-30B-A3B cluster.num_nodes=24 cluster.gpus_per_node=8 \
  grpo.num_prompts_per_step=64 grpo.num_generations_per_prompt=32 \
  policy.max_total_sequence_length=4096 policy.generation.max_new_tokens=3840 \
  policy.train_global_batch_size=512 policy.train_micro_batch_size=1 policy.logprob_batch_size=4 \
  policy.megatron_cfg.tensor_model_parallel_size=1 policy.megatron_cfg.expert_model_parallel_size=8 \
  policy.megatron_cfg.pipeline_model_parallel_size=1 policy.generation.vllm_cfg.tensor_parallel_size=2 \
  policy.generation.colocated.enabled=false policy.generation.colocated.resources.num_nodes=8 grpo.async_grpo.enabled=true grpo.async_grpo.max_trajectory_age_steps=8 policy.generation.vllm_cfg.async_engine=true \
  policy.generation.vllm_cfg.gpu_memory_utilization=0.8
