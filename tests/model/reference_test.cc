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

void check_against_reference(const ModelSpec& spec) {
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
  at::Tensor logp = m.token_logprobs(m.forward(b.batch), t.targets, &entropy);
  for (size_t i = 0; i < seqs.size(); ++i) {
    SequencePlacement p = b.placements[i];
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

}  // namespace
}  // namespace realign::model
