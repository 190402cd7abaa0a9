#include "realloc/data_executor.h"

#include <ATen/ATen.h>

#include <cstring>
#include <memory>

#include "core/check.h"
#include "core/error.h"
#include "realloc/message_exchange.h"

namespace realign {
namespace {

constexpr int64_t kWindow = int64_t(256) << 20;

// A message body: [meta][payload]. Meta is a sequence of int64: n_samples, then per sample its index and
// field count, then per field: name length, dtype, ndim, dims..., and the name's bytes padded to 8.
struct Packed {
  std::vector<int64_t> meta;
  std::vector<at::Tensor> payload;  // contiguous, in order
  int64_t payload_bytes = 0;
};

Packed pack(const SampleSet& held, const Range& samples, int me) {
  Packed p;
  p.meta.push_back(samples.size());
  for (int64_t i = samples.begin; i < samples.end; ++i) {
    auto it = held.find(i);
    if (it == held.end()) throw Error("data redistribution", "rank " + std::to_string(me) + " lacks sample " + std::to_string(i));
    p.meta.push_back(i);
    p.meta.push_back(int64_t(it->second.size()));
    for (const auto& [name, t] : it->second) {
      p.meta.push_back(int64_t(name.size()));
      p.meta.push_back(int64_t(t.scalar_type()));
      p.meta.push_back(t.dim());
      for (int64_t d : t.sizes()) p.meta.push_back(d);
      std::vector<int64_t> words((name.size() + 7) / 8, 0);
      std::memcpy(words.data(), name.data(), name.size());
      p.meta.insert(p.meta.end(), words.begin(), words.end());
      at::Tensor c = t.contiguous();
      p.payload_bytes += int64_t(c.nbytes());
      p.payload.push_back(std::move(c));
    }
  }
  return p;
}

at::Tensor body_of(const Packed& p) {
  const int64_t meta_bytes = int64_t(p.meta.size() * sizeof(int64_t));
  at::Tensor body = at::empty({meta_bytes + p.payload_bytes}, at::kByte);
  auto* out = static_cast<uint8_t*>(body.data_ptr());
  std::memcpy(out, p.meta.data(), size_t(meta_bytes));
  int64_t pos = meta_bytes;
  for (const at::Tensor& t : p.payload) {
    std::memcpy(out + pos, t.data_ptr(), t.nbytes());
    pos += int64_t(t.nbytes());
  }
  return body;
}

void unpack(const at::Tensor& body, int64_t meta_words, SampleSet& out) {
  const auto* bytes = static_cast<const uint8_t*>(body.data_ptr());
  const auto* meta = reinterpret_cast<const int64_t*>(bytes);
  int64_t m = 0, pos = meta_words * 8;
  auto next = [&] {
    REALIGN_CHECK(m < meta_words) << "truncated data message header";
    return meta[m++];
  };
  const int64_t n = next();
  for (int64_t s = 0; s < n; ++s) {
    Sample& sample = out[next()];
    const int64_t fields = next();
    for (int64_t f = 0; f < fields; ++f) {
      const int64_t name_len = next();
      const auto dtype = static_cast<at::ScalarType>(next());
      std::vector<int64_t> dims(static_cast<size_t>(next()));
      for (auto& d : dims) d = next();
      REALIGN_CHECK(m + (name_len + 7) / 8 <= meta_words) << "truncated data message header";
      std::string name(reinterpret_cast<const char*>(meta + m), size_t(name_len));
      m += (name_len + 7) / 8;
      at::Tensor t = at::empty(dims, at::TensorOptions().dtype(dtype));
      REALIGN_CHECK(pos + int64_t(t.nbytes()) <= body.numel()) << "truncated data message payload";
      std::memcpy(t.data_ptr(), bytes + pos, t.nbytes());
      pos += int64_t(t.nbytes());
      sample[name] = std::move(t);
    }
  }
  REALIGN_CHECK(pos == body.numel() && m == meta_words) << "data message size mismatch";
}

}  // namespace

SampleSet redistribute_samples(comm::Group& group, const DataPlan& plan, const SampleSet& held,
                               DataMoveStats* stats) {
  const int me = group.rank();
  SampleSet out;
  for (const SampleTransfer& c : plan.local_copies) {
    if (c.dst != me) continue;
    for (int64_t i = c.samples.begin; i < c.samples.end; ++i) {
      auto it = held.find(i);
      if (it == held.end()) throw Error("data redistribution", "rank " + std::to_string(me) + " lacks sample " + std::to_string(i));
      out[i] = it->second;  // shares the tensors: the batch is read-only downstream
    }
  }
  // Phase 1: sizes (meta words, payload bytes) per pair. Phase 2: the bodies.
  struct Pair {
    const SampleTransfer* t;
    Packed packed;           // when sending
    at::Tensor header;       // int64[2]
  };
  std::vector<Pair> pairs;
  for (const SampleTransfer& t : plan.transfers) {
    if (t.src != me && t.dst != me) continue;
    Pair p{&t, {}, at::zeros({2}, at::kLong)};
    if (t.src == me) {
      p.packed = pack(held, t.samples, me);
      p.header[0] = int64_t(p.packed.meta.size());
      p.header[1] = p.packed.payload_bytes;
    }
    pairs.push_back(std::move(p));
  }
  realloc_detail::ExchangeStats ex;
  std::vector<realloc_detail::Message> headers;
  for (size_t k = 0; k < pairs.size(); ++k) {
    realloc_detail::Message m;
    m.round = 0;
    m.src = pairs[k].t->src;
    m.dst = pairs[k].t->dst;
    m.tag = int(pairs[k].t->samples.begin % (int64_t(1) << 30)) * 2;
    m.bytes = 16;
    const at::Tensor h = pairs[k].header;
    m.prepare = [h] { return h; };
    headers.push_back(std::move(m));
  }
  realloc_detail::exchange_messages(group, std::move(headers), kWindow, &ex);
  std::vector<realloc_detail::Message> bodies;
  for (Pair& p : pairs) {
    realloc_detail::Message m;
    m.round = 0;
    m.src = p.t->src;
    m.dst = p.t->dst;
    m.tag = int(p.t->samples.begin % (int64_t(1) << 30)) * 2 + 1;
    const int64_t meta_words = p.header[0].item<int64_t>();
    m.bytes = meta_words * 8 + p.header[1].item<int64_t>();
    if (p.t->src == me) {
      const Packed* packed = &p.packed;
      m.prepare = [packed] { return body_of(*packed); };
      if (stats) stats->samples_sent += p.t->samples.size();
    } else {
      const int64_t bytes = m.bytes;
      m.prepare = [bytes] { return at::empty({bytes}, at::kByte); };
      m.finish = [meta_words, &out](const at::Tensor& body) { unpack(body, meta_words, out); };
      if (stats) stats->samples_received += p.t->samples.size();
    }
    bodies.push_back(std::move(m));
  }
  realloc_detail::exchange_messages(group, std::move(bodies), kWindow, &ex);
  if (stats) {
    stats->bytes_sent = ex.bytes_sent;
    stats->bytes_received = ex.bytes_received;
  }
  return out;
}

}  // namespace realign
