// The body of each kind of RL call (generation, inference, update), built from the call's node of the
// dataflow graph, and what each reads: the row fields that carry the graph's data from the calls of its
// iteration that produced them.
#include <ATen/ATen.h>

#include "core/check.h"
#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"
#include "train/inference_calls.h"

namespace realign::train {
namespace {

// The row fields that carry a graph data item between calls. Rule rewards are scored on the generation's
// ranks and travel with its responses ("seq"; ReMax's greedy baseline with "greedy_seq"); an inference call
// reads only the responses.
std::vector<std::string> row_fields(const std::string& data, MfcKind consumer) {
  if (data == "seq") {
    if (consumer == MfcKind::kTrain) return {"response", "response_len", "score"};
    return {"response", "response_len"};
  }
  if (data == "greedy_seq") return {"base_score"};
  if (data == "logprobs") return {"old_logprobs"};
  if (data == "rewards") return {"score"};
  if (data == "greedy_rewards") return {"base_score"};
  return {data};  // ref_logprobs, prox_logprobs, values
}

// The row field an inference call writes its output as.
std::string output_field(const Mfc& m) {
  REALIGN_CHECK(m.outputs.size() == 1) << m.name << " has " << m.outputs.size() << " outputs";
  return row_fields(m.outputs[0], MfcKind::kTrain)[0];
}

}  // namespace

Trainer::Consumer Trainer::rl_consumer(const CallInstance& c,
                                       const std::function<bool(const CallInstance&)>& from) const {
  const Mfc& m = graph_.mfcs[size_t(c.call)];
  const RlIteration& it = iterations_.at(c.iteration);
  Consumer out{
      m.name, m.model, {}, m.kind == MfcKind::kTrain ? mini_batch_count(it.rows.n, m.mini_batches) : 1};
  for (int p : graph_.parents(c.call)) {
    if (!from(CallInstance{p, c.iteration})) continue;
    const Mfc& producer = graph_.mfcs[size_t(p)];
    Input in{&it.produced.at(producer.name), {}};
    for (const std::string& d : producer.outputs)
      if (std::find(m.inputs.begin(), m.inputs.end(), d) != m.inputs.end())
        for (const std::string& f : row_fields(d, m.kind)) in.fields.push_back(f);
    out.inputs.push_back(in);
  }
  return out;
}

Trainer::Call Trainer::generation_call(const Mfc& m, RlIteration& it, int64_t step) {
  SamplingOptions so;
  so.max_new_tokens = m.gen_len;
  so.greedy = m.greedy;
  so.temperature = train_config_.sampling.temperature;
  so.top_p = train_config_.sampling.top_p;
  so.top_k = train_config_.sampling.top_k;
  so.stop_tokens = codec_.stop_tokens();
  so.pad_id = codec_.pad_id();
  so.seed = mix_seed(train_config_.seed, uint64_t(step), 0);
  // The sampling's own log-probs, when the graph has the generation give the behaviour policy's.
  const bool keep = std::find(m.outputs.begin(), m.outputs.end(), "logprobs") != m.outputs.end();
  Produced& out = it.produced.at(m.name);
  return {m.name, m.model,
          [this, &m, &it, &out, so, keep](const runtime::CallContext& ctx, model::Transformer& model) {
            const Range r = contiguous_rows(m.name, m.model, it.rows.n);
            SamplingOptions o = so;
            for (int64_t i = r.begin; i < r.end; ++i)
              o.row_seeds.push_back(mix_seed(so.seed, uint64_t(i), 1));
            const std::vector<runtime::TokenIds> p = prompts_of(it.rows, range_indices(r));
            at::Tensor logprobs;
            out.rows = token_rows("response",
                                  p.empty() ? std::vector<runtime::TokenIds>{}
                                            : generate_call(ctx, model, p, o, keep ? &logprobs : nullptr));
            if (keep) out.rows["old_logprobs"] = p.empty() ? at::zeros({0, 0}, at::kFloat) : logprobs;
          }};
}

void Trainer::score_rule_rewards(const Mfc& m, RlIteration& it) {
  // Scored where the responses are: once per row, by the first tp and pp rank of each of the generation's dp
  // groups, then sent to the group's other ranks (every rank of a dp group holds its rows).
  Produced& out = it.produced.at(m.name);
  const std::optional<runtime::CallContext> ctx = place_->context(m.name, out.layout);
  if (!ctx) return;
  const Range r = contiguous_rows(m.name, m.model, it.rows.n);
  at::Tensor score = at::zeros({r.size()}, at::kFloat);
  if (r.size() > 0) {
    if (ctx->tp->rank() == 0 && ctx->pp->rank() == 0) {
      const std::vector<runtime::TokenIds> responses = token_lists(out.rows, "response");
      std::vector<data::PromptRecord> records;
      std::vector<std::string> texts;
      for (int64_t i = r.begin; i < r.end; ++i) {
        records.push_back(record_of(it.rows, i));
        texts.push_back(codec_.decode(responses[size_t(i - r.begin)]));
      }
      score = stop_penalised(
          at::tensor(rule_rewards(input_.sections.reward, records, texts), at::kDouble).to(at::kFloat),
          responses);
    }
    ctx->tp->broadcast(score, 0);
    ctx->pp->broadcast(score, 0);
  }
  out.rows[m.greedy ? "base_score" : "score"] = score;
}

Trainer::Call Trainer::inference_call(const Mfc& m, RlIteration& it, const runtime::Rows& in) {
  const std::string field = output_field(m);
  Produced& out = it.produced.at(m.name);
  return {m.name, m.model,
          [this, &m, &it, &in, &out, field](const runtime::CallContext& ctx, model::Transformer& model) {
            const std::vector<runtime::TokenIds> r = token_lists(in, "response");
            if (r.empty()) return;
            const runtime::SequenceBatch b = runtime::make_sequence_batch(
                prompts_of(it.rows, range_indices(contiguous_rows(m.name, m.model, it.rows.n))), r,
                codec_.pad_id());
            if (m.model == "reward") {
              out.rows[field] = stop_penalised(scores_call(ctx, model, b), r);
            } else if (m.model == "critic") {
              out.rows[field] = values_call(ctx, model, b);
            } else {
              out.rows[field] = logprobs_call(ctx, model, b);
            }
          }};
}

Trainer::Call Trainer::update_call(const Mfc& m, RlIteration& it, const runtime::Rows& in, Json* stats) {
  const BatchShape& bs = input_.algorithm.batch;
  const PpoConfig& ppo = train_config_.ppo;
  const double kl_coef = kl_ctl_->coef();
  const int64_t segments = mini_batch_count(it.rows.n, bs.mini_batches);
  if (m.model == "critic")
    return {
        m.name, m.model,
        [this, &m, &it, &in, stats, kl_coef, segments](const runtime::CallContext& ctx, model::Transformer&) {
          const PpoBatch batch = rl_batch(
              ctx, it.rows, in, segmented_rows(m.name, m.model, it.rows.n, segments), kl_coef, nullptr);
          const BatchShape& b = input_.algorithm.batch;
          const CriticStats cs =
              critic_train_call(ctx, *critic_, batch, train_config_.ppo.value_clip, b.epochs, b.mini_batches);
          *stats = Json{{"loss/value", cs.value_loss}, {"grad_norm/critic", cs.grad_norm}};
        }};
  ActorOptions ao;
  ao.clip_eps = ppo.clip_eps;
  ao.kl_loss_coef = ppo.kl_mode == "reward" ? 0.0 : kl_coef;
  ao.kl_estimator = algo::kl_estimator_from_string(ppo.kl_estimator, "train.ppo.kl_estimator");
  ao.entropy_coef = ppo.entropy_coef;
  ao.early_stop_kl = ppo.early_stop_kl;
  ao.epochs = bs.epochs;
  ao.mini_batches = bs.mini_batches;
  return {m.name, m.model,
          [this, &m, &it, &in, stats, kl_coef, segments, ao](const runtime::CallContext& ctx,
                                                             model::Transformer&) {
            Json batch_stats;
            const PpoBatch batch =
                rl_batch(ctx, it.rows, in, segmented_rows(m.name, m.model, it.rows.n, segments), kl_coef,
                         &batch_stats);
            const ActorStats as = actor_train_call(ctx, *actor_, batch, ao);
            *stats = Json{{"loss/policy", as.policy_loss},
                          {"entropy", as.entropy},
                          {"clip_fraction", as.clip_fraction},
                          {"approx_kl", as.approx_kl},
                          {"grad_norm/actor", as.grad_norm},
                          {"lr", as.lr},
                          {"updates", as.updates}};
            if (ao.kl_loss_coef > 0) (*stats)["loss/kl"] = as.kl_loss;
            if (as.early_stopped) (*stats)["early_stopped"] = true;
            stats->update(batch_stats);
          }};
}

}  // namespace realign::train
