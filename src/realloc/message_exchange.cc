#include "realloc/message_exchange.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <tuple>

#include "core/check.h"

namespace realign::realloc_detail {

void exchange_messages(comm::Group& group, std::vector<Message> messages, int64_t window_bytes,
                       ExchangeStats* stats, const std::function<void()>& meanwhile) {
  const int me = group.rank();
  auto key = [](const Message& m) { return std::make_tuple(m.round, m.src, m.dst, m.tag); };
  std::sort(messages.begin(), messages.end(),
            [&](const Message& a, const Message& b) { return key(a) < key(b); });
  struct InFlight {
    Message* message;
    at::Tensor tensor;
    std::unique_ptr<comm::PendingOp> op;
  };
  std::deque<InFlight> in_flight;
  int64_t outstanding = 0;
  bool meanwhile_done = !meanwhile;
  auto retire = [&] {
    if (!meanwhile_done) meanwhile_done = true, meanwhile();
    InFlight& f = in_flight.front();
    f.op->wait();
    if (f.message->dst == me && f.message->finish) f.message->finish(f.tensor);
    outstanding -= f.message->bytes;
    in_flight.pop_front();
  };
  for (Message& m : messages) {
    REALIGN_CHECK(m.src != m.dst && (m.src == me || m.dst == me))
        << "message " << m.src << " -> " << m.dst << " on rank " << me;
    while (!in_flight.empty() && outstanding + m.bytes > window_bytes) retire();
    at::Tensor t = m.prepare();
    REALIGN_CHECK(t.is_contiguous() && int64_t(t.nbytes()) == m.bytes)
        << "message of " << m.bytes << " bytes got a tensor of " << t.nbytes();
    std::unique_ptr<comm::PendingOp> op =
        m.src == me ? group.isend(t, m.dst, m.tag) : group.irecv(t, m.src, m.tag);
    if (stats) {
      (m.src == me ? stats->bytes_sent : stats->bytes_received) += m.bytes;
      ++stats->messages;
    }
    outstanding += m.bytes;
    in_flight.push_back({&m, std::move(t), std::move(op)});
  }
  while (!in_flight.empty()) retire();
  if (!meanwhile_done) meanwhile();
}

}  // namespace realign::realloc_detail
