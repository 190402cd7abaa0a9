// The slice of a parameter a device holds under a Layout: its pipeline stage must hold the parameter
// (graph/param_layout.h stage_holds) and its tp rank holds that parameter's tp shard (tp_shard_range), along
// slice_dim. The one copy of this rule for the cost of a reallocation (cost/transfer_cost.h) and its plan
// (realloc/transfer_plan.h). A routed-expert stack is cut by ep as well (plan/expert_parallel.h), which the
// cost handles apart.
#pragma once

#include <cstdint>

#include "graph/param_layout.h"
#include "plan/layout.h"

namespace realign {

// The dim slices run along: the parameter's split_dim, or 0 for a replicated parameter (held whole).
int slice_dim(const ParamInfo& param);

// The range along slice_dim(param) held at coordinate `at` of `layout`, in full-tensor coordinates; size 0
// when that coordinate's stage does not hold the parameter.
Range held_slice(const ParamInfo& param, int64_t n_layers, const Layout& layout, const Layout::Coord& at);
// The same at a device; size 0 outside the layout.
Range held_slice(const ParamInfo& param, int64_t n_layers, const Layout& layout, int device);

}  // namespace realign
