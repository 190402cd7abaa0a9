#include "train/move_order.h"

#include "core/check.h"

namespace realign::train {
namespace {

bool overlap(const Layout& a, const Layout& b) {
  return a.first_device < b.first_device + b.size() && b.first_device < a.first_device + a.size();
}

// Whether call `k` reads, directly or through the calls it reads, the outputs of call `producer`.
bool waits_for(const std::vector<StepCall>& calls, size_t k, size_t producer) {
  for (size_t r : calls[k].reads)
    if (r == producer || (r > producer && waits_for(calls, r, producer))) return true;
  return false;
}

}  // namespace

size_t move_position(const std::vector<StepCall>& calls, size_t producer, size_t reader) {
  REALIGN_CHECK(producer < reader && reader < calls.size())
      << "move from call " << producer << " to call " << reader << " of " << calls.size();
  bool receiver_has_work = false, sender_has_work = false;
  for (size_t k = producer + 1; k < calls.size(); ++k) {
    sender_has_work = sender_has_work || overlap(calls[k].devices, calls[producer].devices);
    if (k < reader && overlap(calls[k].devices, calls[reader].devices) && !waits_for(calls, k, producer))
      receiver_has_work = true;
  }
  return receiver_has_work && !sender_has_work ? reader : producer + 1;
}

}  // namespace realign::train
