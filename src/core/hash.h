// Content hashing for checksums (checkpoints, shards): 64-bit FNV-1a, streaming.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace realign {

class Fnv1a64 {
 public:
  void update(const void* data, size_t size);
  uint64_t digest() const { return h_; }
  std::string hex() const;

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

uint64_t fnv1a64(const void* data, size_t size);
std::string to_hex64(uint64_t value);

}  // namespace realign
