// A small, seedable, reproducible RNG (xoshiro256**); passed explicitly wherever randomness is used.
#pragma once

#include <cstdint>

namespace realign {

class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next_u64();
  double uniform();                   // [0, 1)
  int64_t uniform_int(int64_t n);     // [0, n), n > 0
  bool bernoulli(double p) { return uniform() < p; }

 private:
  uint64_t s_[4];
};

}  // namespace realign
