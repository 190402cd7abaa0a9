// `bench_paper_workloads --fit`: the profile's engine factors fitted to the published figure.
#pragma once

#include <string>
#include <vector>

#include "paper_workloads/workloads.h"

namespace realign::paper_workloads {

// Prints ReaL's decoding floor, both plan classes' fits and every point under the better one.
void fit(const std::vector<Point>& points, const std::string& root);

}  // namespace realign::paper_workloads
