// The hardware profiles realign ships (profiles/<device>.json, embedded at build time): (device name, JSON
// text) pairs.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace realign {

const std::vector<std::pair<std::string, std::string>>& shipped_profiles();

}  // namespace realign
