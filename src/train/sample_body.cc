// The sampling call's body: responses to the iteration's prompts, sampled with the seed of the iteration's
// step (one stream per row, so the samples do not depend on the layout); without a reward model they are
// scored by the task's rule on the call's ranks and the score travels with them.
#include <ATen/ATen.h>

#include "train/detail/step_helpers.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {

Trainer::Call Trainer::sample_body(const BodyInput& b) {
  const Mfc& m = b.m;
  Iteration& it = b.it;
  SamplingOptions so;
  so.max_new_tokens = m.max_new_tokens();
  so.greedy = m.greedy;
  so.temperature = train_config_.sampling.temperature;
  so.top_p = train_config_.sampling.top_p;
  so.top_k = train_config_.sampling.top_k;
  so.stop_tokens = codec_.stop_tokens();
  so.pad_id = codec_.pad_id();
  so.seed = mix_seed(train_config_.seed, uint64_t(it.seed_step), 0);
  // The sampling's own log-probs, when the graph has the generation give the behaviour policy's.
  const bool keep = std::find(m.outputs.begin(), m.outputs.end(), "logprobs") != m.outputs.end();
  const bool rule_scored = !trains(Role::kReward);
  Produced& out = it.produced.at(m.name);
  return {
      m.name, m.model,
      [this, &m, &it, &out, so, keep, rule_scored](const runtime::CallContext& ctx,
                                                   model::Transformer& model) {
        const Range r = contiguous_rows(m.name, m.model, it.rows.n);
        SamplingOptions o = so;
        for (int64_t i = r.begin; i < r.end; ++i) o.row_seeds.push_back(mix_seed(so.seed, uint64_t(i), 1));
        const std::vector<runtime::TokenIds> p = prompts_of(it.rows, range_indices(r));
        at::Tensor logprobs;
        // A rank without prompts gets no rows (with ep > 1 it still steps along with its ep group).
        out.rows = token_rows("response", generate_call(ctx, model, p, o, keep ? &logprobs : nullptr));
        if (keep) out.rows["old_logprobs"] = p.empty() ? at::zeros({0, 0}, at::kFloat) : logprobs;
        if (!rule_scored) return;
        // Scored once per row, by the first tp and pp rank of each dp group, then sent to the group's
        // other ranks (every rank of a dp group holds its rows).
        at::Tensor score = at::zeros({r.size()}, at::kFloat);
        if (r.size() > 0 && ctx.tp->rank() == 0 && ctx.pp->rank() == 0) {
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
        if (r.size() > 0) {
          ctx.tp->broadcast(score, 0);
          ctx.pp->broadcast(score, 0);
        }
        out.rows[m.greedy ? "base_score" : "score"] = score;
      }};
}

}  // namespace realign::train
