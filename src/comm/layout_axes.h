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

}  // namespace realign::comm
