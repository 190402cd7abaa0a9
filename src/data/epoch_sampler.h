// Deterministic shuffled order over a dataset, epoch by epoch. Its whole state is (epoch, position), so a
// checkpoint stores two integers and a resumed run draws exactly the batches an uninterrupted one would.
#pragma once

#include <cstdint>
#include <vector>

namespace realign::data {

struct SamplerState {
  int64_t epoch = 0;
  int64_t position = 0;  // next index into the epoch's permutation
  bool operator==(const SamplerState& o) const { return epoch == o.epoch && position == o.position; }
};

class EpochSampler {
 public:
  EpochSampler(int64_t dataset_size, uint64_t seed, bool shuffle = true);
  // The next `n` record indices, wrapping into the next epoch (with a new permutation) as needed.
  std::vector<int64_t> next(int64_t n);
  const SamplerState& state() const { return state_; }
  void restore(const SamplerState& state);

 private:
  void build_permutation();
  int64_t size_;
  uint64_t seed_;
  bool shuffle_;
  SamplerState state_;
  std::vector<int64_t> permutation_;
};

}  // namespace realign::data
