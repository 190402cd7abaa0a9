// Byte and time units, and their human-readable forms.
#pragma once

#include <cstdint>
#include <string>

namespace realign {

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * kKiB;
constexpr double kGiB = 1024.0 * kMiB;
constexpr double kGB = 1e9;
constexpr double kTFLOP = 1e12;

std::string format_bytes(double bytes);      // "13.5 GiB"
std::string format_seconds(double seconds);  // "812 ms", "3.41 s", "2 min 05 s"

}  // namespace realign
