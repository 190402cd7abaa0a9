#include "runtime/call_context.h"

#include <ATen/ATen.h>

namespace realign::runtime {

CallContext single_rank_context(const std::string& name) {
  return CallContext{name, comm::single_rank_group(), comm::single_rank_group(), comm::single_rank_group(),
                     0};
}

CallContext data_parallel_context(const std::string& name, std::shared_ptr<comm::Group> dp) {
  CallContext c = single_rank_context(name);
  c.dp = std::move(dp);
  return c;
}

std::vector<double> dp_mean(const CallContext& ctx, std::vector<double> values) {
  if (ctx.dp->size() == 1 || values.empty()) return values;
  at::Tensor t = at::tensor(values, at::kDouble);
  ctx.dp->all_reduce_sum(t);
  t.div_(double(ctx.dp->size()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = t[int64_t(i)].item<double>();
  return values;
}

double dp_weight(const CallContext& ctx, double count) {
  at::Tensor total = at::tensor({count}, at::kDouble);
  if (ctx.dp->size() > 1) ctx.dp->all_reduce_sum(total);
  const double all = total.item<double>();
  return all > 0 ? count * double(ctx.dp->size()) / all : 0.0;
}

}  // namespace realign::runtime
