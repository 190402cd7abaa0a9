// HF checkpoints: save/load round trips (fp32, bf16, sharded), per-rank loading, and clear errors on bad input.
#include "model/checkpoint.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "model/init.h"
#include "model/shard.h"
#include "tensorfile/hf_config_file.h"
#include "tensorfile/tensor_file.h"
#include "testing/temp_dir.h"

namespace realign::model {
namespace {

using realign::testing::TempDir;

TEST(Checkpoint, RoundTripFp32EveryFamily) {
  ModelSpec qwen = builtin_model("llama-tiny");
  qwen.family = ModelFamily::kQwen2;
  qwen.qkv_bias = true;
  qwen.tied_embeddings = true;
  for (const ModelSpec& spec : {builtin_model("llama-tiny"), builtin_model("gpt2-tiny"), qwen}) {
    SCOPED_TRACE(spec.name);
    TempDir dir;
    auto full = init_full_params(spec, HeadKind::kLanguageModel, 21, InitOptions{0.02, true});
    save_hf_checkpoint(dir.path(), spec, HeadKind::kLanguageModel, full, tensorfile::DType::kF32);
    ModelSpec read = tensorfile::read_hf_config(dir.path());
    read.name = spec.name;
    EXPECT_EQ(read, spec);
    auto loaded = load_hf_full(dir.path(), read, HeadKind::kLanguageModel, at::kFloat);
    ASSERT_EQ(loaded.size(), full.size());
    for (const auto& [name, t] : full) EXPECT_TRUE(at::equal(loaded.at(name), t)) << name;
  }
}

TEST(Checkpoint, Bf16OnDiskAndShardedIndex) {
  const ModelSpec spec = builtin_model("llama-tiny");
  TempDir dir;
  auto full = init_full_params(spec, HeadKind::kLanguageModel, 22);
  save_hf_checkpoint(dir.path(), spec, HeadKind::kLanguageModel, full, tensorfile::DType::kBF16, 40000);
  EXPECT_TRUE(std::filesystem::exists(dir.file("model.safetensors.index.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("model.safetensors")));
  auto raw = tensorfile::load_tensors(dir.path());
  EXPECT_EQ(raw.at("model.layers.0.self_attn.q_proj.weight").scalar_type(), at::kBFloat16);
  auto loaded = load_hf_full(dir.path(), spec, HeadKind::kLanguageModel, at::kFloat);
  for (const auto& [name, t] : full) EXPECT_TRUE(at::equal(loaded.at(name), t.to(at::kBFloat16).to(at::kFloat))) << name;
}

TEST(Checkpoint, LoadsOnlyTheRanksShards) {
  const ModelSpec spec = builtin_model("gpt2-tiny");  // tied: the last stage holds embed.weight too
  TempDir dir;
  auto full = init_full_params(spec, HeadKind::kLanguageModel, 23);
  save_hf_checkpoint(dir.path(), spec, HeadKind::kLanguageModel, full, tensorfile::DType::kF32);
  for (int stage = 0; stage < 2; ++stage) {
    auto mine = load_hf_shards(dir.path(), spec, HeadKind::kLanguageModel, RankSlice{1, 2, stage, 2}, at::kFloat);
    for (const ParamInfo& p : model_params(spec, HeadKind::kLanguageModel)) {
      ASSERT_EQ(mine.count(p.name) == 1, stage_holds(p, stage, 2, spec.n_layers)) << p.name;
      if (mine.count(p.name)) {
        EXPECT_TRUE(at::equal(mine.at(p.name), shard_of(full.at(p.name), p, 1, 2))) << p.name;
      }
    }
    EXPECT_EQ(mine.count("embed.weight"), 1u);
  }
}

TEST(Checkpoint, CriticFromLanguageModelGetsAFreshValueHead) {
  const ModelSpec spec = builtin_model("llama-tiny");
  TempDir dir;
  save_hf_checkpoint(dir.path(), spec, HeadKind::kLanguageModel,
                     init_full_params(spec, HeadKind::kLanguageModel, 1), tensorfile::DType::kF32);
  auto critic = load_hf_full(dir.path(), spec, HeadKind::kValue, at::kFloat);
  EXPECT_EQ(critic.at("value_head.weight").sizes().vec(), (std::vector<int64_t>{1, 64}));
  LoadOptions strict;
  strict.init_missing_value_head = false;
  EXPECT_THROW(load_hf_full(dir.path(), spec, HeadKind::kValue, at::kFloat, strict), Error);
}

TEST(Checkpoint, ClearErrorsOnBadInput) {
  const ModelSpec spec = builtin_model("llama-tiny");
  TempDir dir;
  auto full = init_full_params(spec, HeadKind::kLanguageModel, 2);
  save_hf_checkpoint(dir.path(), spec, HeadKind::kLanguageModel, full, tensorfile::DType::kF32);
  // A config whose shapes disagree with the tensors.
  ModelSpec wider = spec;
  wider.intermediate = 200;
  try {
    load_hf_full(dir.path(), wider, HeadKind::kLanguageModel, at::kFloat);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mlp.gate_proj.weight"), std::string::npos) << e.what();
  }
  // A missing tensor.
  auto hf = tensorfile::load_tensors(dir.path());
  hf.erase("model.norm.weight");
  TempDir other;
  tensorfile::save_tensors(other.file("model.safetensors"), hf, tensorfile::DType::kF32);
  EXPECT_THROW(load_hf_full(other.path(), spec, HeadKind::kLanguageModel, at::kFloat), Error);
  // A truncated file.
  const std::string file = dir.file("model.safetensors");
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 100);
  EXPECT_THROW(load_hf_full(dir.path(), spec, HeadKind::kLanguageModel, at::kFloat), Error);
  // Missing parameters to save.
  full.erase("layers.1.mlp.up.weight");
  EXPECT_THROW(
      save_hf_checkpoint(other.path(), spec, HeadKind::kLanguageModel, full, tensorfile::DType::kF32), Error);
}

}  // namespace
}  // namespace realign::model
