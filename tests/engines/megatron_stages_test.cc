#include "engines/megatron_stages.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace realign::engines {
namespace {

const MegatronStageKeys kKeys{"pp_key", "first_key", "last_key", "x.account_for_embedding_in_pipeline_split",
                              "x.account_for_loss_in_pipeline_split"};

std::string refused_key(int layers, int pp, MegatronStageSplit split) {
  try {
    megatron_stage_note(layers, pp, split, kKeys);
  } catch (const Error& e) {
    return e.path();
  }
  return "<priced>";
}

TEST(MegatronStages, EqualStagesNeedNoNote) {
  EXPECT_EQ(megatron_stage_note(64, 8, {std::nullopt, std::nullopt}, kKeys), "");
  EXPECT_EQ(refused_key(94, 8, {std::nullopt, std::nullopt}), "pp_key");  // Megatron cuts equal stages only
}

// NeMo-RL's published layouts: Qwen3-235B's 94 layers over pp 8 with ends of 11, DeepSeek-V3's 61 over pp 16
// with 3 and 2. Their largest stages (12, 4) are realign's balanced ones: priced, with a note.
TEST(MegatronStages, PublishedUnevenSplitsArePricedAsBalancedStages) {
  EXPECT_EQ(megatron_stage_note(94, 8, {11, 11}, kKeys),
            "Megatron's stages of 11, 6 x 12, 11 layers priced as 8 balanced stages of at most 12 (the same "
            "largest stage)");
  EXPECT_NE(megatron_stage_note(61, 16, {3, 2}, kKeys).find("3, 14 x 4, 2"), std::string::npos);
  EXPECT_NE(megatron_stage_note(61, 16, {std::nullopt, 1}, kKeys).find("15 x 4, 1"), std::string::npos);
  EXPECT_NE(megatron_stage_note(8, 2, {4, 4}, kKeys).find("4, 4"), std::string::npos);
}

TEST(MegatronStages, SplitsMegatronRefusesOrRealignWouldPriceFastAreRefusedNamingTheKey) {
  EXPECT_EQ(refused_key(94, 8, {10, 11}), "first_key");          // 73 middle layers over 6 stages
  EXPECT_EQ(refused_key(94, 8, {std::nullopt, 0}), "last_key");  // an end of no layers
  EXPECT_EQ(refused_key(94, 8, {22, 22}), "first_key");          // 22 layers in a stage, realign's hold 12
  EXPECT_EQ(refused_key(8, 2, {4, 3}), "first_key");             // 1 layer left for no middle stage
}

// Megatron counting the embedding and the loss as a layer each of the first and last stages (veRL's
// Qwen3-235B script: 94 layers and the two over pp 8 are stages of 11, 6 x 12, 11); the sum must divide by
// pp, and the flags do not combine with set ends.
TEST(MegatronStages, EmbeddingAndLossCountedInTheSplitAreRead) {
  EXPECT_EQ(megatron_stage_note(94, 8, {std::nullopt, std::nullopt, true, true}, kKeys),
            "Megatron's stages of 11, 6 x 12, 11 layers priced as 8 balanced stages of at most 12 (the same "
            "largest stage)");
  EXPECT_NE(megatron_stage_note(63, 8, {std::nullopt, std::nullopt, true, false}, kKeys).find("7, 6 x 8, 8"),
            std::string::npos);
  EXPECT_EQ(refused_key(94, 8, {std::nullopt, std::nullopt, true, false}), "pp_key");  // 95 over 8
  EXPECT_EQ(refused_key(94, 8, {11, 11, true, true}), "x.account_for_embedding_in_pipeline_split");
  // 6 layers and the two over pp 8: end stages of the embedding or the loss alone, named by the flag (not by
  // num_layers_in_first_pipeline_stage, which the script does not set).
  EXPECT_EQ(refused_key(6, 8, {std::nullopt, std::nullopt, true, true}),
            "x.account_for_embedding_in_pipeline_split");
}

}  // namespace
}  // namespace realign::engines
