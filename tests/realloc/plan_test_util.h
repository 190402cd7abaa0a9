// Shared helpers for the realloc tests: small model specs and random layout pairs over a device budget.
#pragma once

#include <utility>
#include <vector>

#include "core/rng.h"
#include "graph/model_spec.h"
#include "plan/layout.h"

namespace realign::testing {

// A random layout of at most `max_devices` devices starting at or after device 0, with tp in `tps`.
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

// A GPT-2 shape with an odd vocabulary (uneven over any tp > 1) and 6 heads (tp 2 and 3 both cut it).
inline ModelSpec gpt2_odd() {
  ModelSpec s = builtin_model("gpt2-tiny");
  s.name = "gpt2-odd";
  s.vocab = 251;
  s.n_layers = 3;
  s.hidden = 48;
  s.n_heads = 6;
  s.n_kv_heads = 6;
  s.head_dim = 8;
  s.intermediate = 4 * 48;
  return s;
}

}  // namespace realign::testing
