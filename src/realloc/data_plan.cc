#include "realloc/data_plan.h"

#include <algorithm>
#include <tuple>

#include "core/check.h"
#include "realloc/sender_balance.h"

namespace realign {

Range samples_of(int64_t n_samples, const Layout& layout, int device) {
  if (!layout.contains(device)) return Range{0, 0};
  return balanced_part(n_samples, layout.coord_of(device).dp, layout.dp);
}

std::vector<Range> segment_shares(int64_t n_samples, int64_t segments, int part, int parts) {
  REALIGN_CHECK(segments >= 1 && part >= 0 && part < parts) << segments << " " << part << " " << parts;
  std::vector<Range> out;
  for (int64_t j = 0; j < segments; ++j) {
    const Range segment = balanced_part(n_samples, int(j), int(segments));
    const Range share = balanced_part(segment.size(), part, parts);
    out.push_back({segment.begin + share.begin, segment.begin + share.end});
  }
  return out;
}

std::vector<Range> segment_shares(int64_t n_samples, const Layout& layout, int device, int64_t segments) {
  if (!layout.contains(device)) return {};
  return segment_shares(n_samples, segments, layout.coord_of(device).dp, layout.dp);
}

DataPlan plan_data_redistribution(int64_t n_samples, const Layout& producer, const Layout& consumer,
                                  int64_t consumer_segments, int64_t split_min_samples) {
  REALIGN_CHECK(n_samples >= 0 && producer.size() > 0 && consumer.size() > 0);
  DataPlan plan;
  plan.n_samples = n_samples;
  plan.producer = producer;
  plan.consumer = consumer;
  plan.consumer_segments = consumer_segments;
  // Holders of each producer dp group's share: all its tp and pp ranks.
  std::vector<std::vector<int>> holders(size_t(producer.dp));
  for (int r = 0; r < producer.dp; ++r)
    for (int s = 0; s < producer.pp; ++s)
      for (int t = 0; t < producer.tp; ++t) holders[size_t(r)].push_back(producer.device_of({r, t, s}));
  std::vector<realloc_detail::Demand> demands;
  for (int d = consumer.first_device; d < consumer.first_device + consumer.size(); ++d) {
    const Range held = samples_of(n_samples, producer, d);
    for (const Range& need : segment_shares(n_samples, consumer, d, consumer_segments)) {
      if (need.size() == 0) continue;
      const Range have = intersect(need, held);
      if (have.size() > 0) plan.local_copies.push_back({d, d, have});
      const Range missing[2] = {have.size() > 0 ? Range{need.begin, have.begin} : need,
                                have.size() > 0 ? Range{have.end, need.end} : Range{0, 0}};
      for (const Range& piece : missing) {
        if (piece.size() <= 0) continue;
        plan.samples_minimum += piece.size();
        for (int r = 0; r < producer.dp; ++r) {
          const Range part = intersect(piece, balanced_part(n_samples, r, producer.dp));
          if (part.size() > 0) demands.push_back({d, part, 1, holders[size_t(r)], r});
        }
      }
    }
  }
  std::vector<int64_t> load;
  for (const auto& a : realloc_detail::assign_senders(std::move(demands), split_min_samples, load)) {
    plan.transfers.push_back({a.src, a.dst, a.units});
    plan.samples_moved += a.units.size();
  }
  auto key = [](const SampleTransfer& t) { return std::make_tuple(t.src, t.dst, t.samples.begin); };
  std::sort(plan.transfers.begin(), plan.transfers.end(),
            [&](const SampleTransfer& a, const SampleTransfer& b) { return key(a) < key(b); });
  return plan;
}

}  // namespace realign
