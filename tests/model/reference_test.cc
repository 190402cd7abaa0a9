// realign's per-token log-probs against an independent reference: tests/model/reference_forward.py run with
// Debian's python3-torch (/usr/bin/python3) on the same safetensors files, in float64.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/json.h"
#include "model/checkpoint.h"
#include "model/init.h"
#include "test_util.h"
#include "testing/temp_dir.h"

namespace realign::model {
namespace {

using realign::testing::TempDir;

bool python_has_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

// `logits_atol` > 0 also compares the fp32 logits with the reference's.
void check_against_reference(const ModelSpec& spec, double logits_atol = 0) {
  SCOPED_TRACE(spec.name);
  TempDir dir;
  InitOptions o;
  o.std = 0.1;
  o.random_norms_and_biases = true;
  auto full = init_full_params(spec, HeadKind::kLanguageModel, 77, o);
  save_hf_checkpoint(dir.path(), spec, HeadKind::kLanguageModel, full, tensorfile::DType::kF32);
  auto seqs = testing::random_sequences(spec.vocab, {23, 9, 16}, 8);
  Json tokens;
  tokens["sequences"] = seqs;
  std::ofstream(dir.file("tokens.json")) << tokens.dump();
  const std::string cmd = std::string("/usr/bin/python3 ") + REFERENCE_FORWARD_PY + " " + dir.path() + " " +
                          dir.file("tokens.json") + " " + dir.file("ref.json") + " 2>" + dir.file("err.txt");
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream err(dir.file("err.txt"));
    std::stringstream ss;
    ss << err.rdbuf();
    FAIL() << "reference failed: " << ss.str();
  }
  std::ifstream in(dir.file("ref.json"));
  Json ref = Json::parse(in);

  // realign side: the checkpoint loaded back, one padded batch.
  Transformer m(spec, HeadKind::kLanguageModel, {}, at::kFloat, at::kCPU);
  m.load_shards(load_hf_full(dir.path(), spec, HeadKind::kLanguageModel, at::kFloat));
  BuiltBatch b = pad_batch(seqs);
  Targets t = next_token_targets(b.batch);
  at::Tensor entropy;
  const at::Tensor hidden = m.forward(b.batch);
  at::Tensor logp = m.token_logprobs(hidden, t.targets, &entropy);
  const at::Tensor logits = logits_atol > 0 ? m.logits(hidden) : at::Tensor();
  for (size_t i = 0; i < seqs.size(); ++i) {
    SequencePlacement p = b.placements[i];
    if (logits_atol > 0) {
      std::vector<double> flat;
      for (const auto& row : ref["logits"][i]) {
        const auto v = row.get<std::vector<double>>();
        flat.insert(flat.end(), v.begin(), v.end());
      }
      const at::Tensor want = at::tensor(flat, at::kDouble).view({p.length, spec.vocab});
      EXPECT_EQ(testing::compare(logits[p.row].narrow(0, p.offset, p.length), want, logits_atol, 0), "")
          << "logits, sequence " << i;
    }
    at::Tensor want_ent = at::tensor(ref["entropy"][i].get<std::vector<double>>(), at::kDouble);
    EXPECT_EQ(testing::compare(gather_sequence(entropy, p), want_ent, 1e-4, 1e-5), "") << "entropy, sequence " << i;
    p.length -= 1;
    at::Tensor want = at::tensor(ref["logprobs"][i].get<std::vector<double>>(), at::kDouble);
    EXPECT_EQ(testing::compare(gather_sequence(logp, p), want, 1e-4, 1e-5), "") << "log-probs, sequence " << i;
  }
}

class Reference : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python_has_torch()) GTEST_SKIP() << "/usr/bin/python3 has no torch (apt-get install python3-torch)";
  }
};

TEST_F(Reference, LlamaGqaRopeLlama3Scaling) { check_against_reference(testing::llama_scaled_tiny()); }
TEST_F(Reference, Gpt2) { check_against_reference(builtin_model("gpt2-tiny")); }
TEST_F(Reference, Qwen2BiasTied) { check_against_reference(testing::qwen2_tiny()); }
TEST_F(Reference, MistralSlidingWindow) { check_against_reference(testing::mistral_tiny()); }

// Mixture-of-experts: HF's routing (softmax in fp32, top-k, renormalised as the family does), the experts'
// SwiGLUs, Qwen3's q/k norms, Qwen2-MoE's gated shared expert; logits within 1e-5 of the float64 reference.
TEST_F(Reference, MixtralTopTwoOfEight) { check_against_reference(testing::mixtral_tiny(), 1e-5); }
TEST_F(Reference, Qwen3MoeWithDenseLayerAndQkNorm) {
  check_against_reference(testing::qwen3_moe_tiny(), 1e-5);
}
TEST_F(Reference, Qwen2MoeSharedExpertUnnormalised) {
  check_against_reference(testing::qwen2_moe_tiny(), 1e-5);
}

}  // namespace
}  // namespace realign::model
