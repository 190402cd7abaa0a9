#include "core/hash.h"

#include <cstdio>

namespace realign {

void Fnv1a64::update(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = h_;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  h_ = h;
}

std::string Fnv1a64::hex() const { return to_hex64(h_); }

uint64_t fnv1a64(const void* data, size_t size) {
  Fnv1a64 h;
  h.update(data, size);
  return h.digest();
}

std::string to_hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace realign
