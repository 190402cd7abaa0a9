#include "plan/expert_parallel.h"

#include "core/check.h"

namespace realign {

std::string expert_parallel_problem(const ModelSpec& spec, int dp, int tp, int ep) {
  if (ep < 1) return "ep " + std::to_string(ep) + " must be positive";
  if (ep == 1) return "";
  if (!spec.is_moe())
    return "ep " + std::to_string(ep) + " applies to mixture-of-experts models only; " + spec.name +
           " has no experts";
  if (spec.moe.num_experts % ep != 0)
    return "ep " + std::to_string(ep) + " does not divide the " + std::to_string(spec.moe.num_experts) +
           " experts of " + spec.name;
  if ((dp * tp) % ep != 0)
    return "ep " + std::to_string(ep) + " does not divide dp*tp = " + std::to_string(dp * tp) +
           ": expert-parallel groups are carved out of each pipeline stage's dp x tp ranks";
  return "";
}

int expert_data_parallel(int dp, int tp, int ep) {
  REALIGN_CHECK(ep >= 1 && (dp * tp) % ep == 0) << dp << "x" << tp << " ep " << ep;
  return experts_cut_by_tp(ep) ? dp : dp * tp / ep;
}

int ep_rank_of(int dp_rank, int tp_rank, int tp, int ep) { return (dp_rank * tp + tp_rank) % ep; }

}  // namespace realign
