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

namespace {

bool stays(const RowMove& m) { return m.from == m.to && m.to_segments == 1; }

// This rank's rows of `m` by sample index.
SampleSet held_samples(const RowMove& m, int rank) {
  SampleSet held;
  if (!m.mine) return held;
  const Range have = samples_of(m.n_samples, m.from, rank);
  for (const auto& [field, tensor] : *m.mine) {
    if (tensor.size(0) != have.size())
      throw Error("rows." + field, std::to_string(tensor.size(0)) + " rows where this rank holds " +
                                       std::to_string(have.size()) + " samples");
    for (int64_t i = 0; i < have.size(); ++i) held[have.begin + i][field] = tensor[i].contiguous();
  }
  return held;
}

Rows stacked(const SampleSet& got) {
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

}  // namespace

std::vector<Rows> exchange_rows(comm::Group& global, const std::vector<RowMove>& moves, DataMoveStats* stats,
                                std::vector<DataMoveStats>* per_move) {
  std::vector<Rows> out(moves.size());
  if (per_move) per_move->assign(moves.size(), DataMoveStats{});
  std::vector<size_t> moved;
  std::vector<DataPlan> plans;
  std::vector<SampleSet> held;
  for (size_t k = 0; k < moves.size(); ++k) {
    const RowMove& m = moves[k];
    if (stays(m)) {
      if (m.mine) out[k] = *m.mine;
      continue;
    }
    moved.push_back(k);
    plans.push_back(plan_data_redistribution(m.n_samples, m.from, m.to, m.to_segments));
    held.push_back(held_samples(m, global.rank()));
  }
  if (moved.empty()) return out;
  std::vector<const SampleSet*> held_ptrs;
  for (const SampleSet& h : held) held_ptrs.push_back(&h);
  std::vector<DataMoveStats> per_plan;
  const std::vector<SampleSet> got = redistribute_samples(global, plans, held_ptrs, stats, &per_plan);
  for (size_t j = 0; j < moved.size(); ++j) {
    out[moved[j]] = stacked(got[j]);
    if (per_move) (*per_move)[moved[j]] = per_plan[j];
  }
  return out;
}

Rows exchange_rows(comm::Group& global, int64_t n_samples, const Layout& from, const Layout& to,
                   const Rows& mine, DataMoveStats* stats, int64_t to_segments) {
  return std::move(exchange_rows(global, {RowMove{n_samples, from, to, &mine, to_segments}}, stats)[0]);
}

}  // namespace realign::runtime
