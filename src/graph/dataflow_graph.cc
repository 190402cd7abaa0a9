#include "graph/dataflow_graph.h"

#include <algorithm>
#include <set>

#include "core/check.h"

namespace realign {

std::string to_string(MfcKind kind) {
  switch (kind) {
    case MfcKind::kGenerate:
      return "generate";
    case MfcKind::kInference:
      return "inference";
    case MfcKind::kTrain:
      return "train";
  }
  return "?";
}

std::string to_string(MfcOp op) {
  switch (op) {
    case MfcOp::kSample:
      return "sample";
    case MfcOp::kTokenLogProbs:
      return "token_logprobs";
    case MfcOp::kTokenValues:
      return "token_values";
    case MfcOp::kSequenceScores:
      return "sequence_scores";
    case MfcOp::kPairLogProbs:
      return "pair_logprobs";
    case MfcOp::kPolicyUpdate:
      return "policy_update";
    case MfcOp::kValueUpdate:
      return "value_update";
    case MfcOp::kSftUpdate:
      return "sft_update";
    case MfcOp::kPairScoreUpdate:
      return "pair_score_update";
    case MfcOp::kDpoUpdate:
      return "dpo_update";
  }
  return "?";
}

MfcKind kind_of(MfcOp op) {
  switch (op) {
    case MfcOp::kSample:
      return MfcKind::kGenerate;
    case MfcOp::kTokenLogProbs:
    case MfcOp::kTokenValues:
    case MfcOp::kSequenceScores:
    case MfcOp::kPairLogProbs:
      return MfcKind::kInference;
    case MfcOp::kPolicyUpdate:
    case MfcOp::kValueUpdate:
    case MfcOp::kSftUpdate:
    case MfcOp::kPairScoreUpdate:
    case MfcOp::kDpoUpdate:
      return MfcKind::kTrain;
  }
  return MfcKind::kInference;
}

bool is_pair_loss(MfcOp op) { return op == MfcOp::kPairScoreUpdate || op == MfcOp::kDpoUpdate; }

bool Mfc::operator==(const Mfc& o) const {
  return name == o.name && model == o.model && op == o.op && n_seqs == o.n_seqs &&
         prompt_len == o.prompt_len && gen_len == o.gen_len && mini_batches == o.mini_batches &&
         epochs == o.epochs && greedy == o.greedy && generation == o.generation && inputs == o.inputs && outputs == o.outputs;
}

int64_t Mfc::max_seqs_per_step() const {
  const int64_t m = kind() == MfcKind::kTrain ? std::max<int64_t>(1, mini_batches) : 1;
  return (n_seqs + m - 1) / m;
}

int64_t Mfc::min_seqs_per_step() const {
  return n_seqs / (kind() == MfcKind::kTrain ? std::max<int64_t>(1, mini_batches) : 1);
}

const ModelRole& DataflowGraph::model(Role role) const {
  for (const auto& m : models)
    if (m.role == role) return m;
  REALIGN_CHECK(false) << "no model " << role;
  std::abort();
}

bool DataflowGraph::has_model(Role role) const {
  for (const auto& m : models)
    if (m.role == role) return true;
  return false;
}

int DataflowGraph::mfc_index(const std::string& name) const {
  for (size_t i = 0; i < mfcs.size(); ++i)
    if (mfcs[i].name == name) return int(i);
  return -1;
}

const DataSpec& DataflowGraph::data_spec(const std::string& name) const {
  for (const auto& d : data)
    if (d.name == name) return d;
  REALIGN_CHECK(false) << "no data " << name;
  std::abort();
}

std::vector<int> DataflowGraph::parents(int mfc) const {
  std::vector<int> out;
  for (const auto& in : mfcs.at(mfc).inputs)
    for (int j = 0; j < mfc; ++j) {
      const auto& outs = mfcs[j].outputs;
      if (std::find(outs.begin(), outs.end(), in) != outs.end() &&
          std::find(out.begin(), out.end(), j) == out.end())
        out.push_back(j);
    }
  std::sort(out.begin(), out.end());
  return out;
}

int DataflowGraph::train_call(Role model) const {
  for (size_t i = 0; i < mfcs.size(); ++i)
    if (mfcs[i].model == model && mfcs[i].kind() == MfcKind::kTrain) return int(i);
  return -1;
}

int DataflowGraph::home_call(Role model) const {
  const int train = train_call(model);
  if (train >= 0) return train;
  for (size_t i = 0; i < mfcs.size(); ++i)
    if (mfcs[i].model == model) return int(i);
  return -1;
}

bool DataflowGraph::operator==(const DataflowGraph& o) const {
  return algorithm == o.algorithm && staleness == o.staleness && staleness_share == o.staleness_share &&
         models == o.models && mfcs == o.mfcs && data == o.data;
}

void validate_graph(const DataflowGraph& g) {
  std::set<Role> models;
  std::set<std::string> produced = {"prompts"}, data, names;
  for (const auto& m : g.models) REALIGN_CHECK(models.insert(m.role).second) << "model twice: " << m.role;
  for (const auto& d : g.data) REALIGN_CHECK(data.insert(d.name).second) << "data twice: " << d.name;
  for (const auto& m : g.mfcs) {
    REALIGN_CHECK(names.insert(m.name).second) << "call twice: " << m.name;
    REALIGN_CHECK(models.count(m.model)) << m.name << " runs unknown model " << m.model;
    REALIGN_CHECK(m.n_seqs > 0 && m.seq_len() > 0) << m.name;
    for (const auto& in : m.inputs) REALIGN_CHECK(produced.count(in)) << m.name << " consumes " << in;
    for (const auto& out : m.outputs) {
      REALIGN_CHECK(data.count(out)) << m.name << " produces undeclared " << out;
      produced.insert(out);
    }
  }
}

Json to_json(const DataflowGraph& g) {
  Json j;
  j["algorithm"] = to_string(g.algorithm);
  j["staleness"] = g.staleness;
  if (g.staleness_share < 1) j["staleness_share"] = g.staleness_share;
  for (const auto& m : g.models)
    j["models"].push_back({{"name", to_string(m.role)},
                           {"spec", m.spec.name},
                           {"params", m.spec.total_params()},
                           {"head", m.head == HeadKind::kValue ? "value" : "lm"},
                           {"trained", m.trained}});
  for (const auto& c : g.mfcs)
    j["mfcs"].push_back({{"name", c.name},
                         {"model", to_string(c.model)},
                         {"kind", to_string(c.kind())},
                         {"op", to_string(c.op)},
                         {"n_seqs", c.n_seqs},
                         {"prompt_len", c.prompt_len},
                         {"gen_len", c.gen_len},
                         {"mini_batches", c.mini_batches},
                         {"epochs", c.epochs},
                         {"pair_loss", c.pair_loss()},
                         {"inputs", c.inputs},
                         {"outputs", c.outputs}});
  return j;
}

}  // namespace realign
