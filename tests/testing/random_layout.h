// A random parallel layout for tests that check plans and prices over many layout pairs.
#pragma once

#include <vector>

#include "core/rng.h"
#include "plan/layout.h"

namespace realign::testing {

// A layout of at most `world` devices (dp, pp and a tp from `tps` drawn, then a first device that fits).
inline Layout random_layout(Rng& rng, int world, const std::vector<int>& tps, int max_pp) {
  for (;;) {
    Layout l;
    l.tp = tps[size_t(rng.uniform_int(int64_t(tps.size())))];
    l.pp = 1 + int(rng.uniform_int(max_pp));
    l.dp = 1 + int(rng.uniform_int(world));
    if (l.size() > world) continue;
    l.first_device = int(rng.uniform_int(world - l.size() + 1));
    return l;
  }
}

}  // namespace realign::testing
