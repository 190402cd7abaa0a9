// Layout: where a model's shards live. A contiguous block of global devices [first_device, first_device +
// dp*tp*pp) and the (dp, tp, pp) grid over it. Rank order inside the block is pp-major, then dp, then tp
// (tp fastest, so a tensor-parallel group is adjacent devices, inside one node when tp fits in it). A
// mixture-of-experts model's experts are spread over `ep` ranks of each stage's dp x tp grid
// (plan/expert_parallel.h); ep does not change the grid or its size.
#pragma once

#include <string>

namespace realign {

struct Layout {
  int first_device = 0;
  int dp = 1;
  int tp = 1;
  int pp = 1;
  int ep = 1;

  struct Coord {
    int dp = 0;
    int tp = 0;
    int pp = 0;
    bool operator==(const Coord& o) const { return dp == o.dp && tp == o.tp && pp == o.pp; }
  };

  int size() const { return dp * tp * pp; }
  bool contains(int device) const { return device >= first_device && device < first_device + size(); }
  Coord coord_of(int device) const;  // device must be contained
  int device_of(const Coord& c) const;
  // The same without the range checks, for loops over a layout's own ranks (the cost model's, which run for
  // every device of a cluster): rank r is device first_device + r; dp is the fastest axis after tp.
  Coord coord_at(int r) const { return Coord{(r / tp) % dp, r % tp, r / (tp * dp)}; }
  int device_at(const Coord& c) const { return first_device + (c.pp * dp + c.dp) * tp + c.tp; }

  bool operator==(const Layout& o) const {
    return first_device == o.first_device && dp == o.dp && tp == o.tp && pp == o.pp && ep == o.ep;
  }
  bool operator!=(const Layout& o) const { return !(*this == o); }
};

// "d2t2p1" (dp, tp, pp in any order, each once; "e8" adds an expert-parallel degree), optionally "@4" for
// the first device. ReaLHF's spelling "d2p1m2" (m = tensor "model" parallel) is accepted too. Errors name
// `path`.
Layout parse_layout(const std::string& text, const std::string& path = "layout");
std::string to_string(const Layout& layout);  // "d2t2p1@4", "d4t2p1e8" (offset and ep only when not default)

}  // namespace realign
