// Alpha-beta of a link: ping-pong between two ranks of a group over a range of message sizes, and the
// least-squares fit time = alpha + bytes / beta.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "comm/group.h"

namespace realign::profile {

struct LinkFit {
  double latency_s = 0;   // alpha
  double bandwidth = 0;   // beta, bytes/s
  std::vector<std::pair<double, double>> samples;  // (bytes, one-way seconds)
};

// Least squares over (bytes, seconds); the latency is clamped at >= 0. Needs two distinct sizes.
LinkFit fit_alpha_beta(const std::vector<std::pair<double, double>>& samples);

// Ranks 0 and 1 of `group` bounce messages of each size; every other rank waits. Returns the fit on rank 0
// (other ranks get an empty fit; a fitted latency of zero is replaced by the smallest message's time). All
// ranks of the group must call it.
LinkFit measure_link(comm::Group& group, const std::vector<int64_t>& sizes_bytes, int repeats);

}  // namespace realign::profile
