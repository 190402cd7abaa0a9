#include <ATen/ATen.h>

#include "comm/group.h"
#include "core/check.h"

namespace realign::comm {
namespace {

class SingleRankGroup final : public Group {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce_sum(at::Tensor& t) override { check_collective_args(*this, "all_reduce_sum", t, false); }
  void all_reduce(at::Tensor& t, ReduceOp) override { check_collective_args(*this, "all_reduce", t, false); }
  at::Tensor all_gather_cat(const at::Tensor& tensor, int64_t) override {
    check_collective_args(*this, "all_gather_cat", tensor, false);
    return tensor.clone();
  }
  at::Tensor reduce_scatter_sum(const at::Tensor& input, int64_t) override {
    check_collective_args(*this, "reduce_scatter_sum", input, false);
    return input.clone();
  }
  void broadcast(at::Tensor& t, int root) override {
    check_collective_args(*this, "broadcast", t, false);
    check_peer(*this, "broadcast", root);
  }
  void send(const at::Tensor&, int dst) override {
    REALIGN_CHECK(false) << "send to " << dst << " in a 1-rank group";
  }
  void recv(at::Tensor&, int src) override {
    REALIGN_CHECK(false) << "recv from " << src << " in a 1-rank group";
  }
  void barrier() override {}
};

}  // namespace

std::shared_ptr<Group> single_rank_group() { return std::make_shared<SingleRankGroup>(); }

}  // namespace realign::comm
