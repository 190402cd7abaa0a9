#include "runtime/row_exchange.h"

#include <ATen/ATen.h>

#include "core/check.h"
#include "core/error.h"

namespace realign::runtime {

at::Tensor stack_padded(const std::vector<at::Tensor>& rows) {
  REALIGN_CHECK(!rows.empty());
  std::vector<int64_t> shape(rows[0].sizes().begin(), rows[0].sizes().end());
  for (const auto& r : rows) {
    REALIGN_CHECK(r.dim() == int64_t(shape.size())) << "rows of one field differ in rank";
    for (size_t d = 0; d < shape.size(); ++d) shape[d] = std::max(shape[d], r.size(int64_t(d)));
  }
  shape.insert(shape.begin(), int64_t(rows.size()));
  at::Tensor out = at::zeros(shape, rows[0].options());
  for (size_t i = 0; i < rows.size(); ++i) {
    at::Tensor dst = out[int64_t(i)];
    for (int64_t d = 0; d < rows[i].dim(); ++d) dst = dst.narrow(d, 0, rows[i].size(d));
    dst.copy_(rows[i]);
  }
  return out;
}

Rows exchange_rows(comm::Group& global, int64_t n_samples, const Layout& from, const Layout& to,
                   const Rows& mine, DataMoveStats* stats, int64_t to_segments) {
  if (from == to && to_segments == 1) return mine;
  const int rank = global.rank();
  SampleSet held;
  const Range have = samples_of(n_samples, from, rank);
  for (const auto& [field, tensor] : mine) {
    if (tensor.size(0) != have.size())
      throw Error("rows." + field, std::to_string(tensor.size(0)) + " rows where this rank holds " +
                                       std::to_string(have.size()) + " samples");
    for (int64_t i = 0; i < have.size(); ++i) held[have.begin + i][field] = tensor[i].contiguous();
  }
  const DataPlan plan = plan_data_redistribution(n_samples, from, to, to_segments);
  const SampleSet got = redistribute_samples(global, plan, held, stats);
  Rows out;
  if (got.empty()) return out;
  for (const auto& [field, ignored] : got.begin()->second) {
    (void)ignored;
    std::vector<at::Tensor> rows;
    for (const auto& [index, sample] : got) rows.push_back(sample.at(field));
    out[field] = stack_padded(rows);
  }
  return out;
}

}  // namespace realign::runtime
