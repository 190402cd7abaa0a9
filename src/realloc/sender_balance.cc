#include "realloc/sender_balance.h"

#include <algorithm>
#include <numeric>

#include "core/check.h"

namespace realign::realloc_detail {
namespace {

int64_t& load_of(std::vector<int64_t>& load, int rank) {
  if (size_t(rank) >= load.size()) load.resize(size_t(rank) + 1, 0);
  return load[size_t(rank)];
}

// Candidate order for a demand: least load first; ties broken by a rotation that depends on the destination,
// so that equal-load senders take turns across destinations.
std::vector<int> by_load(const Demand& d, std::vector<int64_t>& load) {
  std::vector<int> order = d.candidates;
  const size_t rot = size_t(d.dst) % order.size();
  std::rotate(order.begin(), order.begin() + long(rot), order.end());
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return load_of(load, a) < load_of(load, b); });
  return order;
}

}  // namespace

std::vector<Assignment> assign_senders(std::vector<Demand> demands, int64_t split_min_weight,
                                       std::vector<int64_t>& load) {
  std::vector<size_t> idx(demands.size());
  std::iota(idx.begin(), idx.end(), size_t(0));
  auto weight = [&](size_t i) { return demands[i].units.size() * demands[i].unit_weight; };
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return weight(a) > weight(b); });
  std::vector<Assignment> out;
  for (size_t i : idx) {
    const Demand& d = demands[i];
    if (d.units.size() <= 0) continue;
    REALIGN_CHECK(!d.candidates.empty()) << "no source holds units [" << d.units.begin << ", " << d.units.end
                                         << ") for rank " << d.dst;
    const std::vector<int> order = by_load(d, load);
    int parts = 1;
    if (weight(i) >= split_min_weight)
      parts = int(std::min<int64_t>(int64_t(order.size()), d.units.size()));
    for (int k = 0; k < parts; ++k) {
      const Range r = balanced_part(d.units.size(), k, parts);
      const Range units{d.units.begin + r.begin, d.units.begin + r.end};
      if (units.size() == 0) continue;
      const int src = order[size_t(k)];
      REALIGN_CHECK(src != d.dst) << "rank " << src << " would send to itself";
      load_of(load, src) += units.size() * d.unit_weight;
      out.push_back({d.tag, src, d.dst, units});
    }
  }
  return out;
}

}  // namespace realign::realloc_detail
