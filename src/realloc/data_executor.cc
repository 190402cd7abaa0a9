#include "realloc/data_executor.h"

#include <ATen/ATen.h>

#include <cstring>
#include <map>
#include <memory>

#include "core/check.h"
#include "core/error.h"
#include "realloc/message_exchange.h"

namespace realign {
namespace {

constexpr int64_t kWindow = int64_t(256) << 20;

// A message body: [meta][payload]. Meta is a sequence of int64 words (see pack_samples and unpack); the
// payload is the fields' data in the order the words name them.
struct Packed {
  std::vector<int64_t> meta;
  std::vector<at::Tensor> payload;  // contiguous, in order
  int64_t payload_bytes = 0;
};

// Appends the samples [samples.begin, samples.end) of `held` to a message: per sample its index and field
// count, then per field its name length, dtype, ndim, dims and name bytes (padded to 8) in the header words,
// its data in the payload.
void pack_samples(Packed& p, const SampleSet& held, const Range& samples, int me) {
  p.meta.push_back(samples.size());
  for (int64_t i = samples.begin; i < samples.end; ++i) {
    auto it = held.find(i);
    if (it == held.end())
      throw Error("data redistribution", "rank " + std::to_string(me) + " lacks sample " + std::to_string(i));
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

// A message body: [n parts][per part: its plan, then pack_samples' words]...[payloads in order]. Unpacks
// each part into its plan's SampleSet and adds its payload bytes to that plan's stats.
void unpack(const at::Tensor& body, int64_t meta_words, std::vector<SampleSet>& out,
            std::vector<DataMoveStats>* per_plan) {
  const auto* bytes = static_cast<const uint8_t*>(body.data_ptr());
  const auto* meta = reinterpret_cast<const int64_t*>(bytes);
  int64_t m = 0, pos = meta_words * 8;
  auto next = [&] {
    REALIGN_CHECK(m < meta_words) << "truncated data message header";
    return meta[m++];
  };
  const int64_t parts = next();
  for (int64_t part = 0; part < parts; ++part) {
    const int64_t k = next();
    REALIGN_CHECK(k >= 0 && k < int64_t(out.size())) << "data message for plan " << k;
    const int64_t n = next();
    const int64_t part_start = pos;
    for (int64_t s = 0; s < n; ++s) {
      Sample& sample = out[size_t(k)][next()];
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
    if (per_plan) {
      (*per_plan)[size_t(k)].bytes_received += pos - part_start;
      (*per_plan)[size_t(k)].samples_received += n;
    }
  }
  REALIGN_CHECK(pos == body.numel() && m == meta_words) << "data message size mismatch";
}

}  // namespace

std::vector<SampleSet> redistribute_samples(comm::Group& group, const std::vector<DataPlan>& plans,
                                            const std::vector<const SampleSet*>& held, DataMoveStats* stats,
                                            std::vector<DataMoveStats>* per_plan) {
  REALIGN_CHECK(held.size() == plans.size())
      << held.size() << " sample sets for " << plans.size() << " plans";
  const int me = group.rank();
  std::vector<SampleSet> out(plans.size());
  if (per_plan) per_plan->assign(plans.size(), DataMoveStats{});
  // What this rank sends to or receives from each peer, over every plan: one message per pair and round.
  std::map<std::pair<int, int>, std::vector<std::pair<size_t, Range>>> parts;
  for (size_t k = 0; k < plans.size(); ++k) {
    for (const SampleTransfer& c : plans[k].local_copies) {
      if (c.dst != me) continue;
      for (int64_t i = c.samples.begin; i < c.samples.end; ++i) {
        auto it = held[k]->find(i);
        if (it == held[k]->end())
          throw Error("data redistribution",
                      "rank " + std::to_string(me) + " lacks sample " + std::to_string(i));
        out[k][i] = it->second;  // shares the tensors: the batch is read-only downstream
      }
    }
    for (const SampleTransfer& t : plans[k].transfers)
      if (t.src == me || t.dst == me) parts[{t.src, t.dst}].push_back({k, t.samples});
  }
  // Phase 1: sizes (meta words, payload bytes) per pair. Phase 2: the bodies.
  struct Pair {
    int src = 0, dst = 0;
    Packed packed;      // when sending
    at::Tensor header;  // int64[2]
  };
  std::vector<Pair> pairs;
  for (const auto& [ends, list] : parts) {
    Pair p{ends.first, ends.second, {}, at::zeros({2}, at::kLong)};
    if (p.src == me) {
      p.packed.meta.push_back(int64_t(list.size()));
      for (const auto& [k, samples] : list) {
        p.packed.meta.push_back(int64_t(k));
        const int64_t before = p.packed.payload_bytes;
        pack_samples(p.packed, *held[k], samples, me);
        if (per_plan) {
          (*per_plan)[k].bytes_sent += p.packed.payload_bytes - before;
          (*per_plan)[k].samples_sent += samples.size();
        }
      }
      p.header[0] = int64_t(p.packed.meta.size());
      p.header[1] = p.packed.payload_bytes;
    }
    pairs.push_back(std::move(p));
  }
  realloc_detail::ExchangeStats ex;
  std::vector<realloc_detail::Message> headers;
  for (const Pair& p : pairs) {
    realloc_detail::Message m;
    m.src = p.src;
    m.dst = p.dst;
    m.tag = 0;
    m.bytes = 16;
    const at::Tensor h = p.header;
    m.prepare = [h] { return h; };
    headers.push_back(std::move(m));
  }
  realloc_detail::exchange_messages(group, std::move(headers), kWindow, &ex);
  std::vector<realloc_detail::Message> bodies;
  for (Pair& p : pairs) {
    realloc_detail::Message m;
    m.src = p.src;
    m.dst = p.dst;
    m.tag = 1;
    const int64_t meta_words = p.header[0].item<int64_t>();
    m.bytes = meta_words * 8 + p.header[1].item<int64_t>();
    if (p.src == me) {
      const Packed* packed = &p.packed;
      m.prepare = [packed] { return body_of(*packed); };
    } else {
      const int64_t bytes = m.bytes;
      m.prepare = [bytes] { return at::empty({bytes}, at::kByte); };
      m.finish = [meta_words, &out, per_plan](const at::Tensor& body) {
        unpack(body, meta_words, out, per_plan);
      };
    }
    bodies.push_back(std::move(m));
  }
  realloc_detail::exchange_messages(group, std::move(bodies), kWindow, &ex);
  if (stats) {
    stats->bytes_sent += ex.bytes_sent;
    stats->bytes_received += ex.bytes_received;
    stats->messages += ex.messages;
    for (const auto& [ends, list] : parts)
      for (const auto& [k, samples] : list)
        (ends.first == me ? stats->samples_sent : stats->samples_received) += samples.size();
  }
  return out;
}

SampleSet redistribute_samples(comm::Group& group, const DataPlan& plan, const SampleSet& held,
                               DataMoveStats* stats) {
  return std::move(redistribute_samples(group, {plan}, {&held}, stats)[0]);
}

}  // namespace realign
