// Shared helpers for the realloc tests: small model specs and random layout pairs over a device budget.
#pragma once

#include <utility>
#include <vector>

#include "core/rng.h"
#include "graph/model_spec.h"
#include "plan/layout.h"
#include "testing/random_layout.h"

namespace realign::testing {

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

// A mixture-of-experts shape (Qwen3-MoE-like, 12 experts, a dense layer between MoE ones) whose experts
// split over ep 1, 2, 3, 4, 6 and whose inner size (36) does not divide by every tp.
inline ModelSpec moe_odd() {
  ModelSpec s = builtin_model("moe-tiny");
  s.name = "moe-odd";
  s.n_layers = 3;
  s.moe.num_experts = 12;
  s.moe.expert_intermediate = 36;
  s.moe.dense_layers = {1};
  return s;
}

// An ep for `layout` chosen at random among the degrees that divide both dp*tp and the expert count.
inline int random_ep(Rng& rng, const ModelSpec& spec, const Layout& layout) {
  std::vector<int> eps;
  for (int ep = 1; ep <= layout.dp * layout.tp; ++ep)
    if ((layout.dp * layout.tp) % ep == 0 && spec.moe.num_experts % ep == 0) eps.push_back(ep);
  return eps[size_t(rng.uniform_int(int64_t(eps.size())))];
}

}  // namespace realign::testing
