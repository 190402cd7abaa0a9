// The generation check of pipeline_test_worker: every rank builds the unsharded model and generates all
// prompts with model::generate (the pp = 1 reference), then generates its data-parallel share of the prompts
// with pipeline_generate on its own stage/tp shard, and checks that its rows' tokens and lengths are equal
// and their log-probs close (fp32). Greedy, then sampled with per-row seeds (temperature and top-p); stop
// tokens taken from the reference's own output make rows stop at different lengths. Throws on a mismatch.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/world.h"
#include "graph/model_spec.h"
#include "plan/layout.h"

namespace realign {

struct GenerationScenario {
  ModelSpec spec;
  Layout layout;
  std::vector<int64_t> rows_per_micro;  // one generation per entry
};

void check_pipelined_generation(comm::World& world, const GenerationScenario& sc);

}  // namespace realign
