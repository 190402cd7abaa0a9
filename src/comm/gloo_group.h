// GlooGroup: comm::Group over one c10d::ProcessGroupGloo. Internal to comm (World builds them); it papers
// over what Gloo in libtorch 1.13 lacks (bf16/fp16/bool reductions, AVG, reduce_scatter, _allgather_base).
#pragma once

#include <memory>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "comm/group.h"

namespace realign::comm {

std::shared_ptr<Group> make_gloo_group(c10::intrusive_ptr<c10d::ProcessGroupGloo> pg);

}  // namespace realign::comm
