#include "train/detail/step_helpers.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

namespace realign::train {

runtime::Rows token_rows(const std::string& name, const std::vector<runtime::TokenIds>& lists) {
  std::vector<int64_t> lengths;
  int64_t longest = 0;
  for (const runtime::TokenIds& l : lists) {
    lengths.push_back(int64_t(l.size()));
    longest = std::max<int64_t>(longest, int64_t(l.size()));
  }
  at::Tensor tokens = at::zeros({int64_t(lists.size()), longest}, at::kLong);
  for (size_t i = 0; i < lists.size(); ++i)
    if (!lists[i].empty())
      tokens[int64_t(i)].narrow(0, 0, int64_t(lists[i].size())).copy_(at::tensor(lists[i], at::kLong));
  return runtime::Rows{{name, tokens}, {name + "_len", at::tensor(lengths, at::kLong)}};
}

std::vector<runtime::TokenIds> token_lists(const runtime::Rows& rows, const std::string& name) {
  std::vector<runtime::TokenIds> out;
  auto it = rows.find(name);
  if (it == rows.end()) return out;
  const at::Tensor tokens = it->second.contiguous(), lengths = rows.at(name + "_len").contiguous();
  for (int64_t i = 0; i < tokens.size(0); ++i) {
    const int64_t n = lengths[i].item<int64_t>();
    const int64_t* row = tokens[i].data_ptr<int64_t>();
    out.emplace_back(row, row + n);
  }
  return out;
}

at::Tensor fit_columns(const at::Tensor& x, int64_t T) {
  if (x.dim() < 2 || x.size(1) == T) return x;
  if (x.size(1) > T) return x.narrow(1, 0, T).contiguous();
  return at::constant_pad_nd(x, {0, T - x.size(1)}, 0);
}

std::vector<int64_t> range_indices(const Range& r) {
  std::vector<int64_t> out;
  for (int64_t i = r.begin; i < r.end; ++i) out.push_back(i);
  return out;
}

at::Tensor gather_rows(comm::Group& group, const at::Tensor& mine, const std::vector<int64_t>& index,
                       int64_t n) {
  at::Tensor all = at::zeros({n}, at::kDouble);
  if (!index.empty()) all.index_copy_(0, at::tensor(index, at::kLong), mine.to(at::kDouble));
  group.all_reduce_sum(all);
  return all.to(mine.scalar_type());
}

at::Tensor global_masked_whiten(comm::Group& group, const at::Tensor& x, const at::Tensor& mask) {
  at::Tensor sums = at::stack({(x * mask).sum(), (x * x * mask).sum(), mask.sum()}).to(at::kDouble);
  group.all_reduce_sum(sums);
  const double n = std::max(1.0, sums[2].item<double>()), mean = sums[0].item<double>() / n;
  const double var = std::max(0.0, sums[1].item<double>() / n - mean * mean) * n / std::max(1.0, n - 1);
  return (x - mean) / std::sqrt(var + 1e-8);
}

}  // namespace realign::train
