// CallContext: the process groups one model function call runs over (its own dp/tp/pp layout), so every call
// can be given its own layout by the plan executor. Calls take (context, model, batch) and return outputs;
// they never reach for a global group.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/group.h"

namespace realign::runtime {

struct CallContext {
  std::string name;                         // the call's name in the dataflow graph ("actor_train")
  std::shared_ptr<comm::Group> dp, tp, pp;  // never null (single_rank_group() for an axis of size 1)
  int64_t micro_batches = 0;  // forward passes this rank's rows are cut into (the plan's); 0: the default
  // Expert parallelism (plan/expert_parallel.h, ep > 1 only; null otherwise): the ranks this one exchanges
  // tokens with in an MoE layer, and those holding the same experts, over which the experts' gradients are
  // summed. The all-to-alls need every rank of an ep group to run the same number of forward passes:
  // runtime/call_forward.cc brings a rank with fewer rows up to the group's count with padding passes.
  std::shared_ptr<comm::Group> ep = nullptr, edp = nullptr;

  comm::Group& dp_group() const { return *dp; }
  comm::Group& tp_group() const { return *tp; }
  comm::Group& pp_group() const { return *pp; }
};

// Every axis of size one.
CallContext single_rank_context(const std::string& name);
// dp over `dp` (e.g. the world's global group), tp = pp = 1: the co-located layout.
CallContext data_parallel_context(const std::string& name, std::shared_ptr<comm::Group> dp);

// Mean of each value over the dp group (metrics of a batch split over data-parallel ranks).
std::vector<double> dp_mean(const CallContext& ctx, std::vector<double> values);
// This rank's weight in a mean over the items (tokens, pairs) of its whole dp group: count * dp / (the
// group's total count); 0 when the group has none. A per-rank mean times its weight, averaged over dp as
// gradients and dp_mean are, is the mean over every item, so an update does not depend on how many ranks
// split the batch.
double dp_weight(const CallContext& ctx, double count);

}  // namespace realign::runtime
