#include "runtime/call_forward.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "core/check.h"
#include "core/error.h"
#include "runtime/pipeline.h"

namespace realign::runtime {
namespace {

// One micro-batch: rows [begin, end) of batch `index`, or a padding pass (index kPadding).
constexpr size_t kPadding = size_t(-1);
struct Micro {
  size_t index = 0;
  int64_t begin = 0, end = 0;
  SequenceBatch rows;
  bool padding() const { return index == kPadding; }
};

// An MoE layer's all-to-all is a collective of the call's ep group, whose ranks may belong to different dp
// ranks with different row counts (an uneven split, fewer rows than micro-batches). So every rank of the
// group runs as many passes as the busiest one: this returns how many passes a rank that needs `mine` must
// add. It is itself a collective of the group, so it is called before any pass.
int64_t ep_padding_passes(const CallContext& ctx, int64_t mine) {
  if (!ctx.ep || ctx.ep->size() == 1) return 0;
  at::Tensor most = at::tensor({mine}, at::kLong);
  ctx.ep->all_reduce(most, comm::ReduceOp::kMax);
  return most.item<int64_t>() - mine;
}

// What a padding pass runs: one row of one token. Its outputs are dropped and its loss is zero times its
// outputs, so it adds exact zeros to every gradient while taking part in the all-to-alls (forward and
// backward).
SequenceBatch padding_rows() { return make_sequence_batch({TokenIds{0}}, {TokenIds{}}); }

// The call's pp group must be the model's stages (a layout mismatch is the caller's error, named by the
// call).
void require_matching_stages(const CallContext& ctx, const model::Transformer& model) {
  const auto& par = model.parallel();
  if (ctx.pp->size() != par.n_stages || ctx.pp->rank() != par.stage)
    throw Error(ctx.name, "the call's pp group (rank " + std::to_string(ctx.pp->rank()) + " of " +
                              std::to_string(ctx.pp->size()) +
                              ") does not match the model's pipeline stage (" + std::to_string(par.stage) +
                              " of " + std::to_string(par.n_stages) +
                              "): build the model for the call's layout");
}

// The micro-batches of every batch, then the padding passes that bring this rank's count to its ep group's.
std::vector<Micro> split(const CallContext& ctx, const std::vector<const SequenceBatch*>& batches) {
  std::vector<Micro> out;
  for (size_t i = 0; i < batches.size(); ++i) {
    const int64_t B = batches[i]->size(), step = micro_batch_rows(ctx, B);
    for (int64_t b = 0; b < B; b += step) {
      const int64_t e = std::min(B, b + step);
      out.push_back(Micro{i, b, e, slice_rows(*batches[i], b, e)});
    }
  }
  const int64_t pad = ep_padding_passes(ctx, int64_t(out.size()));
  for (int64_t i = 0; i < pad; ++i) out.push_back(Micro{kPadding, 0, 0, padding_rows()});
  return out;
}

// The zero loss of a padding pass, connected to every output it computed.
at::Tensor padding_loss(const HeadOutputs& o) {
  at::Tensor sum;
  for (const at::Tensor* t : {&o.logprobs, &o.entropy, &o.values})
    if (t->defined()) sum = sum.defined() ? sum + t->sum() : t->sum();
  return sum * 0;
}

std::vector<model::TokenBatch> tokens_of(const std::vector<Micro>& micro) {
  std::vector<model::TokenBatch> out;
  for (const Micro& m : micro) out.push_back(m.rows.batch);
  return out;
}

// The head's (B, T) outputs come to the host, where the rows and the losses' other inputs live: on a GPU a
// small copy (autograd carries the loss's gradient back through it), on the CPU the tensors themselves.
HeadOutputs outputs_of(model::Transformer& model, const at::Tensor& hidden, const SequenceBatch& b,
                       WantedOutputs what) {
  HeadOutputs o;
  if (what == WantedOutputs::kValues) {
    o.values = model.values(hidden).to(at::kCPU);
  } else {
    at::Tensor ent;
    o.logprobs =
        model.token_logprobs(hidden, b.targets, what == WantedOutputs::kLogprobsEntropy ? &ent : nullptr)
            .to(at::kCPU);
    if (ent.defined()) o.entropy = ent.to(at::kCPU);
  }
  return o;
}

// The head outputs as one tensor (what pipeline_forward broadcasts), and back.
at::Tensor pack(const HeadOutputs& o, WantedOutputs what) {
  if (what == WantedOutputs::kValues) return o.values;
  if (what == WantedOutputs::kLogprobs) return o.logprobs;
  return at::stack({o.logprobs, o.entropy});
}

HeadOutputs unpack(const at::Tensor& t, WantedOutputs what) {
  HeadOutputs o;
  if (what == WantedOutputs::kValues) o.values = t;
  if (what == WantedOutputs::kLogprobs) o.logprobs = t;
  if (what == WantedOutputs::kLogprobsEntropy) o.logprobs = t[0], o.entropy = t[1];
  return o;
}

// The outputs of a batch of no rows (a rank of an ep group that has none while the others have some).
HeadOutputs no_rows(const SequenceBatch& batch, WantedOutputs what) {
  const at::Tensor none = at::zeros({0, batch.batch.tokens.size(1)}, at::kFloat);
  return unpack(what == WantedOutputs::kLogprobsEntropy ? at::stack({none, none}) : none, what);
}

at::Tensor cat_rows(const std::vector<at::Tensor>& parts) {
  return parts.size() == 1 ? parts[0] : at::cat(parts, 0);
}

// Per batch, the micro-batches' outputs put back together (pp > 1, no grad).
std::vector<HeadOutputs> pipelined_outputs(const CallContext& ctx, model::Transformer& model,
                                           const std::vector<const SequenceBatch*>& batches,
                                           const std::vector<Micro>& micro, WantedOutputs what) {
  const std::vector<at::Tensor> packed =
      pipeline_forward(ctx.pp_group(), model, tokens_of(micro), [&](const at::Tensor& hidden, int i) {
        return pack(outputs_of(model, hidden, micro[size_t(i)].rows, what), what);
      });
  std::vector<std::vector<at::Tensor>> lp(batches.size()), ent(batches.size()), val(batches.size());
  for (size_t i = 0; i < micro.size(); ++i) {
    if (micro[i].padding()) continue;
    HeadOutputs o = unpack(packed[i].to(at::kCPU), what);
    const size_t b = micro[i].index;
    if (o.logprobs.defined()) lp[b].push_back(o.logprobs);
    if (o.entropy.defined()) ent[b].push_back(o.entropy);
    if (o.values.defined()) val[b].push_back(o.values);
  }
  std::vector<HeadOutputs> out(batches.size());
  for (size_t b = 0; b < batches.size(); ++b) {
    if (batches[b]->size() == 0) out[b] = no_rows(*batches[b], what);
    if (!lp[b].empty()) out[b].logprobs = cat_rows(lp[b]);
    if (!ent[b].empty()) out[b].entropy = cat_rows(ent[b]);
    if (!val[b].empty()) out[b].values = cat_rows(val[b]);
  }
  return out;
}

}  // namespace

int64_t micro_batch_rows(const CallContext& ctx, int64_t rows) {
  if (ctx.micro_batches > 0) return std::max<int64_t>(1, (rows + ctx.micro_batches - 1) / ctx.micro_batches);
  const int64_t n = ctx.pp->size() > 1 ? 2 * int64_t(ctx.pp->size()) : 1;
  return std::max<int64_t>(1, (rows + n - 1) / n);
}

HeadOutputs forward_outputs(const CallContext& ctx, model::Transformer& model, const SequenceBatch& batch,
                            WantedOutputs what) {
  require_matching_stages(ctx, model);
  c10::NoGradGuard no_grad;
  const std::vector<Micro> micro = split(ctx, {&batch});
  if (ctx.pp->size() > 1) return pipelined_outputs(ctx, model, {&batch}, micro, what)[0];
  std::vector<at::Tensor> parts;
  for (const Micro& m : micro) {
    const at::Tensor out = pack(outputs_of(model, model.forward(m.rows.batch), m.rows, what), what);
    if (!m.padding()) parts.push_back(out);
  }
  if (parts.empty()) return no_rows(batch, what);
  return unpack(
      parts.size() == 1 ? parts[0] : at::cat(parts, what == WantedOutputs::kLogprobsEntropy ? 1 : 0), what);
}

LossSums backward_loss(const CallContext& ctx, model::Transformer& model,
                       const std::vector<const SequenceBatch*>& batches, WantedOutputs what, size_t n_stats,
                       const LossOfRows& loss_fn) {
  require_matching_stages(ctx, model);
  REALIGN_CHECK(!batches.empty());
  const int64_t B = batches[0]->size();
  for (const SequenceBatch* b : batches)
    REALIGN_CHECK(b->size() == B) << ctx.name << ": batches differ in rows";
  LossSums sums;
  sums.stats.assign(n_stats, 0.0);
  auto add = [&](const RowsLoss& r) {
    sums.loss += r.loss.detach().to(at::kDouble).item<double>();
    REALIGN_CHECK(r.stats.size() == n_stats)
        << ctx.name << ": " << r.stats.size() << " stats, not " << n_stats;
    for (size_t i = 0; i < r.stats.size(); ++i) sums.stats[i] += r.stats[i];
  };
  if (ctx.pp->size() == 1) {
    const int64_t step = micro_batch_rows(ctx, B);
    const int64_t pad = ep_padding_passes(ctx, (B + step - 1) / step);  // before any pass's all-to-alls
    for (int64_t b = 0; b < B; b += step) {
      const int64_t e = std::min(B, b + step);
      std::vector<SequenceBatch> rows;
      std::vector<HeadOutputs> outs;
      for (const SequenceBatch* batch : batches) {
        rows.push_back(slice_rows(*batch, b, e));
        outs.push_back(outputs_of(model, model.forward(rows.back().batch), rows.back(), what));
      }
      const RowsLoss r = loss_fn(outs, b, e);
      r.loss.backward();
      add(r);
    }
    // Padding passes as the real ones: a forward per batch, then one backward.
    for (int64_t i = 0; i < pad; ++i) {
      const SequenceBatch rows = padding_rows();
      at::Tensor loss;
      for (size_t k = 0; k < batches.size(); ++k) {
        const at::Tensor l = padding_loss(outputs_of(model, model.forward(rows.batch), rows, what));
        loss = loss.defined() ? loss + l : l;
      }
      loss.backward();
    }
    return sums;
  }
  const std::vector<Micro> micro = split(ctx, batches);
  if (batches.size() == 1) {
    // 1F1B with the loss of each micro-batch on the last stage; its sums reach the other stages after.
    pipeline_train_1f1b(ctx.pp_group(), model, tokens_of(micro), [&](const at::Tensor& hidden, int i) {
      const Micro& m = micro[size_t(i)];
      if (m.padding()) return padding_loss(outputs_of(model, hidden, m.rows, what));
      const RowsLoss r = loss_fn({outputs_of(model, hidden, m.rows, what)}, m.begin, m.end);
      add(r);
      return r.loss;
    });
    std::vector<double> packed{sums.loss};
    packed.insert(packed.end(), sums.stats.begin(), sums.stats.end());
    at::Tensor t = at::zeros({int64_t(packed.size())}, at::kDouble);
    const int last = ctx.pp->size() - 1;
    if (ctx.pp->rank() == last) t.copy_(at::tensor(packed, at::kDouble));
    ctx.pp->broadcast(t, last);
    sums.loss = t[0].item<double>();
    for (size_t i = 0; i < n_stats; ++i) sums.stats[i] = t[int64_t(i) + 1].item<double>();
    return sums;
  }
  // Pass 1: the outputs, then d loss / d outputs.
  std::vector<HeadOutputs> outs = pipelined_outputs(ctx, model, batches, micro, what);
  for (HeadOutputs& o : outs)
    for (at::Tensor* t : {&o.logprobs, &o.entropy, &o.values})
      if (t->defined()) *t = t->detach().requires_grad_(true);
  const RowsLoss r = loss_fn(outs, 0, B);
  r.loss.backward();
  add(r);
  auto grad_of = [](const at::Tensor& t) {
    if (!t.defined()) return at::Tensor();
    return t.grad().defined() ? t.grad() : at::zeros_like(t);
  };
  // Pass 2: 1F1B of sum(outputs * G) per micro-batch.
  pipeline_train_1f1b(ctx.pp_group(), model, tokens_of(micro), [&](const at::Tensor& hidden, int i) {
    const Micro& m = micro[size_t(i)];
    const HeadOutputs o = outputs_of(model, hidden, m.rows, what);
    if (m.padding()) return padding_loss(o);
    const HeadOutputs& full = outs[m.index];
    at::Tensor surrogate;
    auto add_term = [&](const at::Tensor& out, const at::Tensor& leaf) {
      if (!out.defined()) return;
      at::Tensor term = (out * grad_of(leaf).slice(0, m.begin, m.end)).sum();
      surrogate = surrogate.defined() ? surrogate + term : term;
    };
    add_term(o.logprobs, full.logprobs);
    add_term(o.entropy, full.entropy);
    add_term(o.values, full.values);
    REALIGN_CHECK(surrogate.defined());
    return surrogate;
  });
  return sums;
}

}  // namespace realign::runtime
