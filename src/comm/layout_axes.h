// The ranks along one axis of a Layout: the members of one of its data-, tensor- or pipeline-parallel
// groups (World::axis_groups builds the groups from them).
#pragma once

#include <vector>

#include "plan/layout.h"

namespace realign::comm {

// The three axes of a Layout: data, tensor and pipeline parallelism.
enum class LayoutAxis { kData, kTensor, kPipeline };

// Ranks of `layout` that share this rank's coordinates except along `axis`, in axis order.
std::vector<int> axis_ranks(const Layout& layout, int rank, LayoutAxis axis);

// Expert parallelism (plan/expert_parallel.h) folds each stage's dp x tp ranks into ep x edp: the ranks
// exchanging tokens with `rank` in an MoE layer (its ep group: ep consecutive local ranks, ordered by ep
// rank), and the ranks holding the same experts (its edp group, ordered by local rank).
std::vector<int> expert_ranks(const Layout& layout, int rank);
std::vector<int> expert_data_ranks(const Layout& layout, int rank);

}  // namespace realign::comm
