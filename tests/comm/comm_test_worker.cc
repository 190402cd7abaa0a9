// Worker process for the comm tests: `comm_test_worker <scenario> [args]`, started N times by launch_local.
// Each scenario checks closed-form results itself and throws on a mismatch (run_worker turns that into an
// abort naming the rank and the check), printing "rank R: <scenario> ok" at the end.
#include <ATen/ATen.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "comm/world.h"

namespace rc = realign::comm;

namespace {

void expect_equal(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  if (got.scalar_type() != want.scalar_type() || !got.sizes().equals(want.sizes()) || !at::equal(got, want)) {
    std::ostringstream os;
    os << what << ": got " << got << " want " << want;
    throw std::runtime_error(os.str());
  }
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("check failed: " + what);
}

// 0 + 1 + ... + (n-1)
int64_t tri(int64_t n) { return n * (n - 1) / 2; }

void collectives(rc::Group& g, const std::string& name) {
  const int r = g.rank(), n = g.size();
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const auto i64 = at::TensorOptions().dtype(at::kLong);

  at::Tensor a = at::arange(6, f32).reshape({2, 3}) * (r + 1);
  g.all_reduce_sum(a);
  expect_equal(a, at::arange(6, f32).reshape({2, 3}) * float(n * (n + 1) / 2), name + " all_reduce fp32");

  // bf16: 1 + 1/256 * (rank+1) is exact in fp32 but not in bf16 partial sums; the result is the fp32 sum
  // rounded once.
  at::Tensor b = at::full({5}, 0.5f * (r + 1), f32).to(at::kBFloat16);
  g.all_reduce_sum(b);
  expect_equal(b, at::full({5}, 0.5f * n * (n + 1) / 2, f32).to(at::kBFloat16), name + " all_reduce bf16");
  at::Tensor b2 = at::full({3}, 1.0f / 256 * (r + 1), f32).to(at::kBFloat16);
  at::Tensor want_b2 = at::zeros({3}, f32);
  for (int k = 0; k < n; ++k)
    want_b2 += at::full({3}, 1.0f / 256 * (k + 1), f32).to(at::kBFloat16).to(at::kFloat);
  g.all_reduce_sum(b2);
  expect_equal(b2, want_b2.to(at::kBFloat16), name + " all_reduce bf16 through fp32");

  at::Tensor c = at::full({4}, int64_t(1) << 40, i64) * (r + 1) + r;
  g.all_reduce_sum(c);
  expect_equal(c, at::full({4}, (int64_t(1) << 40) * (n * (n + 1) / 2) + tri(n), i64),
               name + " all_reduce int64");

  at::Tensor avg = at::full({2}, float(r), f32);
  g.all_reduce(avg, rc::ReduceOp::kAvg);
  expect_equal(avg, at::full({2}, float(tri(n)) / n, f32), name + " all_reduce avg");
  at::Tensor mx = at::tensor({int64_t(r), int64_t(-r)});
  g.all_reduce(mx, rc::ReduceOp::kMax);
  expect_equal(mx, at::tensor({int64_t(n - 1), int64_t(0)}), name + " all_reduce max");
  at::Tensor mn = at::tensor({float(r) + 0.5f}).to(at::kBFloat16);
  g.all_reduce(mn, rc::ReduceOp::kMin);
  expect_equal(mn, at::tensor({0.5f}).to(at::kBFloat16), name + " all_reduce min bf16");
  at::Tensor any = at::tensor({int64_t(r == n - 1), int64_t(0), int64_t(1)}).to(at::kBool);
  g.all_reduce_sum(any);
  expect_equal(any, at::tensor({int64_t(1), int64_t(0), int64_t(1)}).to(at::kBool),
               name + " all_reduce bool");
  // Non-contiguous input is reduced in place through a copy.
  at::Tensor base = at::arange(6, f32).reshape({2, 3}) * (r + 1);
  at::Tensor view = base.t();
  g.all_reduce_sum(view);
  expect_equal(base, at::arange(6, f32).reshape({2, 3}) * float(n * (n + 1) / 2),
               name + " all_reduce strided");

  // all_gather_cat: rank-order concatenation along dim 0 and 1, any dtype.
  at::Tensor piece = at::full({2, 1}, float(r), f32);
  at::Tensor want0 = at::arange(n, f32).repeat_interleave(2).reshape({2 * n, 1});
  expect_equal(g.all_gather_cat(piece, 0), want0, name + " all_gather_cat dim 0");
  at::Tensor want1 = at::arange(n, f32).reshape({1, n}).expand({2, n}).contiguous();
  expect_equal(g.all_gather_cat(piece.to(at::kBFloat16), -1), want1.to(at::kBFloat16),
               name + " all_gather_cat bf16 dim -1");
  at::Tensor strided = at::arange(4, i64).reshape({2, 2}).t() + 10 * r;  // non-contiguous
  std::vector<at::Tensor> parts;
  for (int k = 0; k < n; ++k) parts.push_back(at::arange(4, i64).reshape({2, 2}).t() + 10 * k);
  expect_equal(g.all_gather_cat(strided, 1), at::cat(parts, 1), name + " all_gather_cat strided int64");

  at::Tensor rs = at::arange(2 * n, f32) * (r + 1);
  at::Tensor mine = g.reduce_scatter_sum(rs, 0);
  expect_equal(mine, at::arange(2 * r, 2 * r + 2, f32) * float(n * (n + 1) / 2),
               name + " reduce_scatter_sum");

  // broadcast from the last rank, bf16 and int64.
  at::Tensor bc = r == n - 1 ? at::tensor({1.5f, -2.0f}).to(at::kBFloat16) : at::zeros({2}, at::kBFloat16);
  g.broadcast(bc, n - 1);
  expect_equal(bc, at::tensor({1.5f, -2.0f}).to(at::kBFloat16), name + " broadcast bf16");
  at::Tensor bl = at::full({3}, int64_t(r == 0 ? 7 : -1), i64);
  g.broadcast(bl, 0);
  expect_equal(bl, at::full({3}, int64_t(7), i64), name + " broadcast int64");

  // send/recv around the ring (even ranks send first, so no rank waits on a peer that waits too).
  if (n > 1) {
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    at::Tensor out = at::full({4}, int64_t(100 + r), i64);
    at::Tensor in = at::zeros({4}, i64);
    if (r % 2 == 0) {
      g.send(out, next);
      g.recv(in, prev);
    } else {
      g.recv(in, prev);
      g.send(out, next);
    }
    expect_equal(in, at::full({4}, int64_t(100 + prev), i64), name + " send/recv ring");
  }
  g.barrier();
}

void subgroups(rc::World& w) {
  expect(w.size() == 4, "subgroups needs 4 ranks");
  const int r = w.rank();
  auto g31 = w.subgroup({3, 1});
  expect((g31 != nullptr) == (r == 3 || r == 1), "membership of {3,1}");
  auto g02 = w.subgroup({0, 2});
  expect((g02 != nullptr) == (r == 0 || r == 2), "membership of {0,2}");
  auto g210 = w.subgroup({2, 1, 0});
  expect((g210 != nullptr) == (r != 3), "membership of {2,1,0}");
  if (g31) {
    expect(g31->size() == 2 && g31->rank() == (r == 3 ? 0 : 1), "ranks of {3,1} follow the list order");
    expect(w.subgroup({3, 1}) == g31, "{3,1} is cached");
    at::Tensor t = at::full({2}, int64_t(r), at::kLong);
    g31->all_reduce_sum(t);
    expect_equal(t, at::full({2}, int64_t(4), at::kLong), "all_reduce in {3,1}");
    expect_equal(g31->all_gather_cat(at::full({1}, int64_t(r), at::kLong), 0),
                 at::tensor({int64_t(3), int64_t(1)}), "all_gather_cat in {3,1}");
  }
  if (g02) {
    at::Tensor t = at::full({1}, float(r + 1));
    g02->all_reduce_sum(t);
    expect_equal(t, at::full({1}, 4.0f), "all_reduce in {0,2}");
  }
  if (g210) {
    expect(g210->rank() == 2 - r, "ranks of {2,1,0}");
    at::Tensor t = r == 2 ? at::tensor({int64_t(42)}) : at::tensor({int64_t(0)});
    g210->broadcast(t, 0);  // group rank 0 is global rank 2
    expect_equal(t, at::tensor({int64_t(42)}), "broadcast from group rank 0 of {2,1,0}");
    collectives(*g210, "{2,1,0}");
  }
  expect(w.subgroup({r}) && w.subgroup({r})->size() == 1, "a one-rank subgroup");
  w.global()->barrier();
}

void layout(rc::World& w, const std::string& spec) {
  const realign::Layout l = realign::parse_layout(spec);
  auto a = w.axis_groups(l);
  expect(a.has_value() == l.contains(w.rank()), "axis_groups exists exactly for ranks inside " + spec);
  if (a) {
    expect(a->coord == l.coord_of(w.rank()), "coord");
    struct Axis {
      rc::LayoutAxis axis;
      const char* name;
      std::shared_ptr<rc::Group> group;
      int coord;
    };
    const Axis axes[] = {{rc::LayoutAxis::kData, "dp", a->dp, a->coord.dp},
                         {rc::LayoutAxis::kTensor, "tp", a->tp, a->coord.tp},
                         {rc::LayoutAxis::kPipeline, "pp", a->pp, a->coord.pp}};
    for (const auto& [axis, name, g, coord] : axes) {
      const std::vector<int> ranks = rc::axis_ranks(l, w.rank(), axis);
      const std::string what = spec + " axis " + name;
      expect(g->size() == static_cast<int>(ranks.size()) && g->rank() == coord, what + " size/rank");
      at::Tensor t = at::tensor({int64_t(w.rank())});
      g->all_reduce_sum(t);
      int64_t want = 0;
      for (int x : ranks) want += x;
      expect_equal(t, at::tensor({want}), what + " all_reduce of global ranks");
      at::Tensor all = g->all_gather_cat(at::tensor({int64_t(w.rank())}), 0);
      expect_equal(all, at::tensor(std::vector<int64_t>(ranks.begin(), ranks.end())), what + " gather order");
    }
  }
  w.global()->barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  const int victim = argc > 2 ? std::atoi(argv[2]) : -1;
  return rc::run_worker([&](rc::World& w) {
    if (scenario == "collectives") {
      collectives(*w.global(), "global");
    } else if (scenario == "subgroups") {
      subgroups(w);
    } else if (scenario == "layout") {
      for (int i = 2; i < argc; ++i) layout(w, argv[i]);  // later layouts reuse cached groups
    } else if (scenario == "throw" || scenario == "kill") {
      // One rank fails while the others are inside (or about to enter) an all-reduce with it.
      w.global()->barrier();
      if (w.rank() == victim) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        if (scenario == "kill") ::raise(SIGKILL);
        throw std::runtime_error("injected failure on rank " + std::to_string(victim));
      }
      for (int i = 0; i < 1000; ++i) {
        at::Tensor t = at::ones({16});
        w.global()->all_reduce_sum(t);
      }
    } else if (scenario == "silent-death") {
      // The victim dies while the others compute without talking to it: only the heartbeat can notice.
      w.global()->barrier();
      if (w.rank() == victim) ::raise(SIGKILL);
      std::this_thread::sleep_for(std::chrono::seconds(30));
    } else if (scenario == "stuck") {
      // The victim lives (heartbeats go on) but never joins the collective: the collective timeout ends it.
      w.global()->barrier();
      if (w.rank() == victim) std::this_thread::sleep_for(std::chrono::seconds(30));
      at::Tensor t = at::ones({4});
      w.global()->all_reduce_sum(t);
    } else {
      throw std::runtime_error("unknown scenario '" + scenario + "'");
    }
    std::printf("rank %d: %s ok\n", w.rank(), scenario.c_str());
    std::fflush(stdout);
  });
}
