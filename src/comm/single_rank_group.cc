#include <ATen/ATen.h>

#include "comm/group.h"
#include "core/check.h"

namespace realign::comm {
namespace {

class SingleRankGroup final : public Group {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce_sum(at::Tensor&) override {}
  at::Tensor all_gather_cat(const at::Tensor& tensor, int64_t) override { return tensor.clone(); }
  void broadcast(at::Tensor&, int root) override { REALIGN_CHECK(root == 0) << "root " << root; }
  void send(const at::Tensor&, int dst) override { REALIGN_CHECK(false) << "send to " << dst << " in a 1-rank group"; }
  void recv(at::Tensor&, int src) override { REALIGN_CHECK(false) << "recv from " << src << " in a 1-rank group"; }
  void barrier() override {}
};

}  // namespace

std::shared_ptr<Group> single_rank_group() { return std::make_shared<SingleRankGroup>(); }

}  // namespace realign::comm
