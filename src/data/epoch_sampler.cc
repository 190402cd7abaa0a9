#include "data/epoch_sampler.h"

#include <numeric>

#include "core/check.h"
#include "core/rng.h"

namespace realign::data {

EpochSampler::EpochSampler(int64_t dataset_size, uint64_t seed, bool shuffle)
    : size_(dataset_size), seed_(seed), shuffle_(shuffle) {
  REALIGN_CHECK(size_ > 0);
  build_permutation();
}

void EpochSampler::build_permutation() {
  permutation_.resize(size_t(size_));
  std::iota(permutation_.begin(), permutation_.end(), 0);
  if (!shuffle_) return;
  // Fisher-Yates with an RNG seeded by (seed, epoch): any epoch's order can be rebuilt on its own.
  Rng rng(seed_ * 0x9e3779b97f4a7c15ULL + uint64_t(state_.epoch));
  for (int64_t i = size_ - 1; i > 0; --i) std::swap(permutation_[size_t(i)], permutation_[size_t(rng.uniform_int(i + 1))]);
}

std::vector<int64_t> EpochSampler::next(int64_t n) {
  std::vector<int64_t> out;
  out.reserve(size_t(n));
  while (int64_t(out.size()) < n) {
    if (state_.position == size_) {
      ++state_.epoch;
      state_.position = 0;
      build_permutation();
    }
    out.push_back(permutation_[size_t(state_.position++)]);
  }
  return out;
}

void EpochSampler::restore(const SamplerState& state) {
  REALIGN_CHECK(state.position >= 0 && state.position <= size_ && state.epoch >= 0);
  state_ = state;
  build_permutation();
}

}  // namespace realign::data
