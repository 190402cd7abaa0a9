// The registry of call bodies, one per MfcOp, and what each call reads: the row fields that carry the graph's
// data from the calls of its iteration that produced them.
#include <algorithm>
#include <map>

#include "core/check.h"
#include "train/detail/trainer_impl.h"

namespace realign::train {
namespace {

// The row fields that carry a graph data item from a call with op `producer` to a train call (`to_update`)
// or another call. Rule rewards are scored on the generation's ranks and travel with its responses ("seq";
// ReMax's greedy baseline with "greedy_seq"); an inference call reads only the responses. A preference
// pair's summed log-probs are two fields, one per response.
std::vector<std::string> row_fields(const std::string& data, MfcOp producer, bool to_update) {
  if (producer == MfcOp::kPairLogProbs) return {data + "/chosen", data + "/rejected"};
  if (data == "seq") {
    if (to_update) return {"response", "response_len", "score"};
    return {"response", "response_len"};
  }
  if (data == "greedy_seq") return {"base_score"};
  if (data == "logprobs") return {"old_logprobs"};
  if (data == "rewards") return {"score"};
  if (data == "greedy_rewards") return {"base_score"};
  return {data};  // ref_logprobs, prox_logprobs, values
}

}  // namespace

std::vector<std::string> Trainer::output_fields(const Mfc& m) {
  REALIGN_CHECK(m.outputs.size() == 1) << m.name << " has " << m.outputs.size() << " outputs";
  return row_fields(m.outputs[0], m.op, true);
}

const Trainer::RegisteredBody& Trainer::body_of(MfcOp op) {
  static const std::map<MfcOp, RegisteredBody> bodies = {
      {MfcOp::kSample, {&Trainer::sample_body, false}},
      {MfcOp::kTokenLogProbs, {&Trainer::token_logprobs_body, false}},
      {MfcOp::kTokenValues, {&Trainer::token_values_body, false}},
      {MfcOp::kSequenceScores, {&Trainer::sequence_scores_body, false}},
      {MfcOp::kPairLogProbs, {&Trainer::pair_logprobs_body, false}},
      {MfcOp::kPolicyUpdate, {&Trainer::policy_update_body, true}},
      {MfcOp::kValueUpdate, {&Trainer::value_update_body, true}},
      {MfcOp::kSftUpdate, {&Trainer::sft_update_body, false}},
      {MfcOp::kPairScoreUpdate, {&Trainer::pair_score_update_body, false}},
      {MfcOp::kDpoUpdate, {&Trainer::dpo_update_body, false}},
  };
  auto it = bodies.find(op);
  REALIGN_CHECK(it != bodies.end()) << "no body registered for " << to_string(op);
  return it->second;
}

Trainer::Consumer Trainer::consumer_of(const DataflowGraph& graph, const CallInstance& c,
                                       const std::function<bool(const CallInstance&)>& from) const {
  const Mfc& m = graph.mfcs[size_t(c.call)];
  const Iteration& it = iterations_.at(c.iteration);
  Consumer out{
      m.name, m.model, {}, body_of(m.op).segmented ? mini_batch_count(it.rows.n, m.mini_batches) : 1};
  for (int p : graph.parents(c.call)) {
    if (!from(CallInstance{p, c.iteration})) continue;
    const Mfc& producer = graph.mfcs[size_t(p)];
    Input in{&it.produced.at(producer.name), {}};
    for (const std::string& d : producer.outputs)
      if (std::find(m.inputs.begin(), m.inputs.end(), d) != m.inputs.end())
        for (const std::string& f : row_fields(d, producer.op, m.kind() == MfcKind::kTrain))
          in.fields.push_back(f);
    out.inputs.push_back(in);
  }
  return out;
}

}  // namespace realign::train
