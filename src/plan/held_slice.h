// The slice of a parameter a device holds under a Layout: its pipeline stage must hold the parameter
// (graph/param_layout.h stage_holds) and its tp rank holds that parameter's tp shard (tp_shard_range), along
// slice_dim. The one copy of this rule for the cost of a reallocation (cost/transfer_cost.h) and its plan
// (realloc/transfer_plan.h). A routed-expert stack is cut by ep as well (plan/expert_parallel.h): the
// held_expert* functions below say what a device holds of it, expert by expert (the cost handles it apart).
#pragma once

#include <cstdint>
#include <vector>

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

// The experts (a dim-0 range) a device holds of an expert stack: every one with ep = 1 (cut by tp), the
// ep_shard_range of its ep rank with ep > 1; empty outside the layout or the stage holding the layer.
Range held_experts(const ParamInfo& param, int64_t n_layers, const Layout& layout, int device);
// The range of expert `expert` along slice_dim(param) a device holds: its tp shard with ep = 1, the whole
// extent with ep > 1 when it holds the expert; empty otherwise.
Range held_expert_slice(const ParamInfo& param, int64_t expert, int64_t n_layers, const Layout& layout,
                        int device);
// Whether a device holds any of `param`, and the shape of what it holds (an expert stack with ep > 1: its
// experts whole; anything else: its tp shard).
bool holds(const ParamInfo& param, int64_t n_layers, const Layout& layout, int device);
std::vector<int64_t> held_shape(const ParamInfo& param, const Layout& layout, int device);

}  // namespace realign
