// Message exchange: runs a set of point-to-point messages between ranks with non-blocking isend/irecv, many
// in flight at once, deadlock-free and with bounded staging memory. The engine under both executors
// (parameter reallocation and data redistribution).
//
// Contract: every message appears on both ends with the same (round, src, dst) key and tag; each rank passes
// the messages it sends or receives. Each rank posts its messages in key order, keeping at most
// `window_bytes` in flight (always at least one), and waits for its oldest first. Deadlock-free: the
// globally smallest unfinished message is the oldest unfinished one on both its ranks, hence posted on both,
// hence it completes; by induction all do.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "comm/group.h"

namespace realign::realloc_detail {

struct Message {
  int64_t round = 0;  // e.g. the chunk's index within its pair: interleaves pairs so all links stay busy
  int src = 0;        // group ranks
  int dst = 0;
  int tag = 0;
  int64_t bytes = 0;
  // Send: the contiguous tensor to send (a view of the source, or a packed copy). Recv: the contiguous tensor
  // to receive into (a view of the destination, or a staging buffer). Called when the message is posted.
  std::function<at::Tensor()> prepare;
  // Recv only, optional: called with the filled tensor once it arrived (unpacks a staging buffer).
  std::function<void(const at::Tensor&)> finish;
};

struct ExchangeStats {
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  int64_t messages = 0;
};

// `meanwhile` (optional) runs once, after the first window of messages is posted and before waiting on any:
// local work (a rank's own copies) that overlaps with the transfers instead of delaying them.
void exchange_messages(comm::Group& group, std::vector<Message> messages, int64_t window_bytes,
                       ExchangeStats* stats = nullptr, const std::function<void()>& meanwhile = nullptr);

}  // namespace realign::realloc_detail
