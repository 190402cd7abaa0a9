#include "realloc/realloc_check.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/check.h"
#include "core/error.h"
#include "core/hash.h"

namespace realign {
namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// outer x extent x inner view of a parameter around its slice dim.
struct Geometry {
  int64_t outer = 1, extent = 1, inner = 1;
};
Geometry geometry(const ParamInfo& p) {
  Geometry g;
  const int dim = slice_dim(p);
  for (int i = 0; i < int(p.shape.size()); ++i) {
    if (i < dim) g.outer *= p.shape[size_t(i)];
    if (i == dim) g.extent = p.shape[size_t(i)];
    if (i > dim) g.inner *= p.shape[size_t(i)];
  }
  return g;
}

std::vector<int64_t> slice_shape(const ParamInfo& p, const Range& r) {
  std::vector<int64_t> s = p.shape;
  s[size_t(slice_dim(p))] = r.size();
  return s;
}

uint64_t checksum(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return fnv1a64(c.data_ptr(), c.nbytes());
}

std::string shape_str(at::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

SliceSource synthetic_params(uint64_t seed) {
  return [seed](const ParamInfo& p, const Range& r, at::ScalarType dtype) {
    const uint64_t base = splitmix(seed ^ fnv1a64(p.name.data(), p.name.size()));
    const Geometry g = geometry(p);
    at::Tensor out = at::empty(slice_shape(p, r), at::kFloat);
    float* v = out.data_ptr<float>();
    int64_t k = 0;
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t j = r.begin; j < r.end; ++j) {
        const int64_t row = (o * g.extent + j) * g.inner;
        for (int64_t i = 0; i < g.inner; ++i) {
          // 16 random bits scaled by a power of two: exact in fp32, a deterministic rounding in bf16/fp16.
          const uint64_t h = splitmix(base + uint64_t(row + i));
          v[k++] = float(int64_t(h >> 48) - 32768) / 4096.0f;
        }
      }
    return dtype == at::kFloat ? out : out.to(dtype);
  };
}

SliceSource full_params(std::map<std::string, at::Tensor> tensors) {
  auto shared = std::make_shared<std::map<std::string, at::Tensor>>(std::move(tensors));
  return [shared](const ParamInfo& p, const Range& r, at::ScalarType dtype) {
    auto it = shared->find(p.name);
    if (it == shared->end()) throw Error("model", "parameter '" + p.name + "' not found in the checkpoint");
    if (it->second.sizes() != at::IntArrayRef(p.shape))
      throw Error("model", "parameter '" + p.name + "' is " + shape_str(it->second.sizes()) + ", the config implies " +
                               shape_str(p.shape));
    return it->second.narrow(slice_dim(p), r.begin, r.size()).to(dtype).contiguous();
  };
}

namespace {

// What `device` holds of `p` in `layout` (undefined when nothing): its slice along slice_dim, or with ep > 1
// an expert stack's whole experts.
at::Tensor held_tensor(const ParamInfo& p, int64_t n_layers, const Layout& layout, int device,
                       const SliceSource& source, at::ScalarType dtype) {
  if (!holds(p, n_layers, layout, device)) return at::Tensor();
  if (!p.expert || layout.ep == 1) return source(p, held_slice(p, n_layers, layout, device), dtype);
  const Range experts = held_experts(p, n_layers, layout, device);
  return source(p, Range{0, p.shape.at(size_t(slice_dim(p)))}, dtype)
      .narrow(0, experts.begin, experts.size())
      .contiguous();
}

}  // namespace

ShardMap make_shards(const std::vector<ParamInfo>& params, int64_t n_layers, const Layout& layout, int device,
                     const SliceSource& source, at::ScalarType dtype) {
  ShardMap out;
  for (const ParamInfo& p : params) {
    at::Tensor t = held_tensor(p, n_layers, layout, device, source, dtype);
    if (t.defined()) out[p.name] = t;
  }
  return out;
}

std::vector<std::string> verify_shards(const std::vector<ParamInfo>& params, int64_t n_layers,
                                       const Layout& layout, int device, const ShardMap& shards,
                                       const SliceSource& source, at::ScalarType dtype) {
  std::vector<std::string> bad;
  const std::string where = "rank " + std::to_string(device) + " (" + to_string(layout) + "): ";
  size_t expected_count = 0;
  for (const ParamInfo& p : params) {
    const at::Tensor want = held_tensor(p, n_layers, layout, device, source, dtype);
    if (!want.defined()) continue;
    ++expected_count;
    auto it = shards.find(p.name);
    if (it == shards.end()) {
      bad.push_back(where + p.name + ": missing");
      continue;
    }
    const at::Tensor& got = it->second;
    if (got.sizes() != want.sizes() || got.scalar_type() != dtype) {
      bad.push_back(where + p.name + ": shape " + shape_str(got.sizes()) + " " + c10::toString(got.scalar_type()) +
                    ", expected " + shape_str(want.sizes()) + " " + c10::toString(dtype));
      continue;
    }
    const uint64_t a = checksum(got), b = checksum(want);
    if (a == b) continue;
    const at::Tensor gb = got.contiguous().reshape({-1}).view(at::kByte), wb = want.reshape({-1}).view(at::kByte);
    const int64_t first = gb.ne(wb).nonzero().min().item<int64_t>() / int64_t(at::elementSize(dtype));
    bad.push_back(where + p.name + ": checksum " + to_hex64(a) + ", expected " + to_hex64(b) +
                  "; first differing element (flat index in the shard) " + std::to_string(first));
  }
  if (shards.size() != expected_count)
    bad.push_back(where + std::to_string(shards.size()) + " shards, expected " + std::to_string(expected_count));
  return bad;
}

CheckResult run_realloc_check(comm::Group& group, const std::vector<ParamInfo>& params, int64_t n_layers,
                              const Layout& from, const Layout& to, const SliceSource& source,
                              at::ScalarType dtype, const ReallocOptions& options) {
  const int me = group.rank();
  const TransferPlan plan = plan_reallocation(params, n_layers, from, to);
  const ShardMap src = make_shards(params, n_layers, from, me, source, dtype);
  ReallocOptions o = options;
  o.dtype = dtype;
  ReallocStats stats;
  group.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  ShardMap dst = execute_reallocation(group, plan, params, n_layers, src, o, &stats);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<std::string> bad = verify_shards(params, n_layers, to, me, dst, source, dtype);
  for (const auto& line : bad) std::fprintf(stderr, "realloc-check mismatch: %s\n", line.c_str());
  int64_t checked = 0;
  for (const ParamInfo& p : params) checked += holds(p, n_layers, to, me);
  at::Tensor sums = at::tensor({stats.bytes_received, stats.bytes_copied, stats.messages, checked,
                                int64_t(bad.size())}, at::kLong);
  group.all_reduce_sum(sums);
  at::Tensor slowest = at::tensor({secs}, at::kDouble);
  group.all_reduce(slowest, comm::ReduceOp::kMax);
  const int64_t elem = int64_t(at::elementSize(dtype));
  CheckResult r;
  r.bytes_moved = plan.bytes_moved(elem);
  r.bytes_minimum = plan.bytes_minimum(elem);
  r.bytes_received = sums[0].item<int64_t>();
  r.bytes_copied = sums[1].item<int64_t>();
  r.messages = sums[2].item<int64_t>();
  r.shards_checked = sums[3].item<int64_t>();
  r.mismatches = sums[4].item<int64_t>();
  r.seconds = slowest.item<double>();
  r.ok = r.mismatches == 0 && r.bytes_received == r.bytes_moved && r.bytes_moved == r.bytes_minimum;
  return r;
}

}  // namespace realign
