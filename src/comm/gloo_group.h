// GlooGroup: comm::Group over one c10d::ProcessGroupGloo. Internal to comm (World builds them); it papers
// over what Gloo in libtorch 1.13 lacks (bf16/fp16/bool reductions, AVG, reduce_scatter, _allgather_base),
// and moves tensors on a GPU through host memory. Absent where the libtorch has no Gloo headers
// (core/torch_compat.h: REALIGN_TORCH_HAS_GLOO).
#pragma once

#include <memory>

#include "comm/group.h"
#include "core/torch_compat.h"

#if REALIGN_TORCH_HAS_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

namespace realign::comm {

std::shared_ptr<Group> make_gloo_group(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg);

}  // namespace realign::comm
#endif
