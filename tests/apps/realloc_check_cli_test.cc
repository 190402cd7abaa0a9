// `realign realloc-check` as a user runs it: JSON line, exactness, errors naming the field, HF directories.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/json.h"
#include "graph/model_spec.h"
#include "tensorfile/hf_config_file.h"
#include "tensorfile/tensor_file.h"

namespace realign {
namespace {

struct CliResult {
  int code = -1;
  std::string out;
};

CliResult realign(const std::string& args) {
  const std::string cmd = std::string(REALIGN_BINARY_DIR) + "/src/apps/realign " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  while (fgets(buf.data(), int(buf.size()), p)) r.out += buf.data();
  r.code = WEXITSTATUS(pclose(p));
  return r;
}

Json last_json(const std::string& out) {
  const auto pos = out.rfind("{\"ok\"");
  if (pos == std::string::npos) return Json();
  return Json::parse(out.substr(pos, out.find('\n', pos) - pos));
}

void expect_exact(const CliResult& r) {
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = last_json(r.out);
  EXPECT_TRUE(j.at("ok").get<bool>()) << r.out;
  EXPECT_EQ(j.at("bytes_moved"), j.at("bytes_minimum")) << r.out;
  EXPECT_EQ(j.at("bytes_moved"), j.at("cost_model_bytes")) << r.out;
  EXPECT_GT(j.at("shards_checked").get<int64_t>(), 0) << r.out;
  EXPECT_EQ(j.at("mismatching_shards").get<int64_t>(), 0) << r.out;
  EXPECT_TRUE(j.contains("seconds") && j.contains("gbps")) << r.out;
}

TEST(ReallocCheckCli, BuiltinModelsBetweenLayouts) {
  expect_exact(realign("realloc-check --model llama-tiny --from d1t2p2 --to d4t1p1"));
  expect_exact(realign("realloc-check --model gpt2-tiny --from d2t2p1 --to d1m4p1 --dtype bf16"));
}

TEST(ReallocCheckCli, BadInputNamesTheField) {
  CliResult r = realign("realloc-check --model llama-tiny --from d1t3p1 --to d4t1p1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--from: 'd1t3p1': tp 3 does not divide 4 attention heads of llama-tiny; valid tp: 1, 2"),
            std::string::npos)
      << r.out;
  r = realign("realloc-check --model llama-tiny --from d1t2p2 --to d4t1p1 --world 3");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--world: 3 processes cannot hold"), std::string::npos) << r.out;
  r = realign("realloc-check --model llama-tiny --from d1t2p2 --to d2q1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("--to: unexpected 'q'"), std::string::npos) << r.out;
  r = realign("realloc-check --model llama-tiny --from d1t1p3 --to d1t1p1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("valid pp: 1..2"), std::string::npos) << r.out;
  r = realign("realloc-check --help");
  EXPECT_NE(r.out.find("d<dp>t<tp>p<pp>[@<first device>]"), std::string::npos) << r.out;
}

TEST(ReallocCheckCli, HfDirectories) {
  const auto dir = std::filesystem::temp_directory_path() / ("realloc_cli_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "llama");
  std::filesystem::create_directories(dir / "gpt2");
  // LLaMA names.
  {
    const ModelSpec s = builtin_model("llama-tiny");
    tensorfile::TensorMap t;
    const int64_t H = s.hidden, q = s.n_heads * s.head_dim, kv = s.n_kv_heads * s.head_dim, I = s.intermediate;
    t["model.embed_tokens.weight"] = at::randn({s.vocab, H});
    t["model.norm.weight"] = at::randn({H});
    t["lm_head.weight"] = at::randn({s.vocab, H});
    for (int i = 0; i < s.n_layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      t[p + "input_layernorm.weight"] = at::randn({H});
      t[p + "post_attention_layernorm.weight"] = at::randn({H});
      t[p + "self_attn.q_proj.weight"] = at::randn({q, H});
      t[p + "self_attn.k_proj.weight"] = at::randn({kv, H});
      t[p + "self_attn.v_proj.weight"] = at::randn({kv, H});
      t[p + "self_attn.o_proj.weight"] = at::randn({H, q});
      t[p + "mlp.gate_proj.weight"] = at::randn({I, H});
      t[p + "mlp.up_proj.weight"] = at::randn({I, H});
      t[p + "mlp.down_proj.weight"] = at::randn({H, I});
    }
    tensorfile::save_tensors((dir / "llama" / "model.safetensors").string(), t, tensorfile::DType::kF32);
    tensorfile::write_hf_config((dir / "llama").string(), s);
  }
  // GPT-2 names: Conv1D weights stored (in, out), q/k/v fused.
  {
    const ModelSpec s = builtin_model("gpt2-tiny");
    tensorfile::TensorMap t;
    const int64_t H = s.hidden;
    t["wte.weight"] = at::randn({s.vocab, H});
    t["wpe.weight"] = at::randn({s.max_positions, H});
    t["ln_f.weight"] = at::randn({H});
    t["ln_f.bias"] = at::randn({H});
    for (int i = 0; i < s.n_layers; ++i) {
      const std::string p = "h." + std::to_string(i) + ".";
      for (const char* n : {"ln_1", "ln_2"}) {
        t[p + n + ".weight"] = at::randn({H});
        t[p + n + ".bias"] = at::randn({H});
      }
      t[p + "attn.c_attn.weight"] = at::randn({H, 3 * H});
      t[p + "attn.c_attn.bias"] = at::randn({3 * H});
      t[p + "attn.c_proj.weight"] = at::randn({H, H});
      t[p + "attn.c_proj.bias"] = at::randn({H});
      t[p + "mlp.c_fc.weight"] = at::randn({H, 4 * H});
      t[p + "mlp.c_fc.bias"] = at::randn({4 * H});
      t[p + "mlp.c_proj.weight"] = at::randn({4 * H, H});
      t[p + "mlp.c_proj.bias"] = at::randn({H});
    }
    tensorfile::save_tensors((dir / "gpt2" / "model.safetensors").string(), t, tensorfile::DType::kF32);
    tensorfile::write_hf_config((dir / "gpt2").string(), s);
  }
  expect_exact(realign("realloc-check --model " + (dir / "llama").string() + " --from d2t1p2 --to d1t2p1@2"));
  expect_exact(realign("realloc-check --model " + (dir / "gpt2").string() + " --from p2d1t2 --to d2t2p1 --dtype bf16"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace realign
