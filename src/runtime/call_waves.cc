#include "runtime/detail/call_waves.h"

namespace realign::runtime {
namespace {

bool overlap(const Layout& a, const Layout& b) {
  return a.first_device < b.first_device + b.size() && b.first_device < a.first_device + a.size();
}

}  // namespace

std::vector<std::vector<size_t>> call_waves(const std::vector<CallWaveInput>& calls) {
  std::vector<std::vector<size_t>> waves;
  std::vector<Layout> copies;  // layouts holding a reallocated copy in the current wave
  for (size_t i = 0; i < calls.size(); ++i) {
    const CallWaveInput& c = calls[i];
    const bool moves = c.layout != c.home;
    bool clash = false;
    for (const Layout& held : copies) clash = clash || (moves && overlap(held, c.layout));
    if (waves.empty() || clash) {
      waves.emplace_back();
      copies.clear();
    }
    waves.back().push_back(i);
    if (moves) copies.push_back(c.layout);
  }
  return waves;
}

}  // namespace realign::runtime
