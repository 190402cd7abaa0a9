#include "graph/algorithms.h"

#include <algorithm>
#include <cmath>

#include "core/config_file.h"
#include "core/read_file.h"

namespace realign {
namespace {

Mfc call(std::string name, Role model, MfcOp op, int64_t n, int64_t prompt_len, int64_t gen_len,
         std::vector<std::string> in, std::vector<std::string> out) {
  Mfc m;
  m.name = std::move(name);
  m.model = model;
  m.op = op;
  m.n_seqs = n;
  m.prompt_len = prompt_len;
  m.gen_len = gen_len;
  m.inputs = std::move(in);
  m.outputs = std::move(out);
  return m;
}

// Token counts beyond this are refused: sums and products of them stay far inside int64 and double's exact
// integers downstream (a 16M-token sequence is past any model's positions anyway).
constexpr int64_t kMaxTokens = int64_t(1) << 24;

// Sequences per iteration (prompts x samples_per_prompt) beyond this are refused: a pair algorithm's calls
// take twice as many, which stays an int, and the simulator's cache keys hold a call's sequences in 32 bits.
constexpr int64_t kMaxSequences = int64_t(1) << 30;
// The simulator keys a data move on the segments its rows arrive in (a train call's mini-batches) in 15 bits.
constexpr int64_t kMaxMiniBatches = int64_t(1) << 14;
// Passes over the batch: far past any recipe's few, and small enough that a call's time stays finite.
constexpr int64_t kMaxEpochs = int64_t(1) << 16;

int64_t at_most(ObjectReader& r, const std::string& key, int64_t value) {
  if (value > kMaxTokens)
    throw Error(r.path_of(key), std::to_string(value) + " tokens is beyond any model's positions; at most " +
                                    std::to_string(kMaxTokens));
  return value;
}

// batch.gen_len (the mean), gen_len_max (the cap) and the shape of the lengths under it: observed lengths
// (gen_lengths: a JSONL file or a run directory), given quantiles (gen_len_quantiles), or the lognormal
// family (gen_len_sigma) when the cap exceeds the mean; fixed lengths otherwise, today's workload exactly.
void read_gen_lengths(ObjectReader& batch, bool rl, BatchShape& b) {
  const bool observed = batch.has("gen_lengths"), quantiles = batch.has("gen_len_quantiles");
  if (observed && quantiles)
    throw Error(batch.path_of("gen_len_quantiles"), "give the lengths once: gen_lengths or gen_len_quantiles");
  const bool mean_given = batch.has("gen_len");
  if (rl && !observed && !quantiles) b.gen_len = batch.get_positive("gen_len");
  else b.gen_len = batch.get_int("gen_len", 0);
  if (b.gen_len < 0) throw Error(batch.path_of("gen_len"), "must not be negative");
  at_most(batch, "gen_len", b.gen_len);
  std::vector<int64_t> lengths;
  if (observed) lengths = read_length_file(batch.get_string("gen_lengths"), batch.path_of("gen_lengths"));
  // The cap: given; else the mean's config value (the runtime's max_new_tokens so far); else the longest
  // observed.
  int64_t cap = b.gen_len;
  if (!mean_given && observed) cap = *std::max_element(lengths.begin(), lengths.end());
  b.gen_len_max = at_most(batch, "gen_len_max", batch.get_int("gen_len_max", cap));
  if (quantiles && !batch.has("gen_len_max"))
    throw Error(batch.path_of("gen_len_max"), "gen_len_quantiles needs the cap the lengths are cut at");
  if (b.gen_len_max < b.gen_len)
    throw Error(batch.path_of("gen_len_max"), "the cap " + std::to_string(b.gen_len_max) +
                                                  " is below the mean gen_len " + std::to_string(b.gen_len));
  if (rl && b.gen_len_max < 1) throw Error(batch.path_of("gen_len_max"), "must be positive");
  const bool lognormal = !observed && !quantiles && b.gen_len_max > b.gen_len && b.gen_len > 0;
  if (!lognormal && batch.has("gen_len_sigma"))
    throw Error(batch.path_of("gen_len_sigma"),
                "shapes the lognormal lengths under a cap above the mean; here the lengths are " +
                    std::string(observed ? "observed (gen_lengths)" : quantiles ? "given (gen_len_quantiles)"
                                                                                : "fixed (no gen_len_max above gen_len)"));
  if (observed) {
    b.gen_lengths = observed_lengths(lengths, b.gen_len_max, batch.get_string("gen_lengths"));
  } else if (quantiles) {
    std::vector<std::pair<double, double>> points;
    const std::string path = batch.path_of("gen_len_quantiles");
    const Json& q = batch.at("gen_len_quantiles");
    if (!q.is_array()) throw Error(path, "a list of [probability, length] pairs");
    for (size_t i = 0; i < q.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      if (!q[i].is_array() || q[i].size() != 2) throw Error(at, "a [probability, length] pair");
      points.push_back({json_to_double(q[i][0], at), json_to_double(q[i][1], at)});
    }
    b.gen_lengths = quantile_lengths(points, b.gen_len_max, path);
  } else if (lognormal) {
    b.gen_lengths = lognormal_lengths(double(b.gen_len), b.gen_len_max,
                                      batch.get_double("gen_len_sigma", kDefaultLengthSigma),
                                      batch.path_of("gen_len_sigma"));
  } else {
    b.gen_lengths = fixed_lengths(b.gen_len);
  }
  if (observed || quantiles) b.gen_len = std::max<int64_t>(rl ? 1 : 0, std::llround(b.gen_lengths.mean));
}

}  // namespace

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (Algorithm a : all_algorithms()) names.push_back(to_string(a));
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<Role> algorithm_roles(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kPpo:
      return {Role::kActor, Role::kCritic, Role::kRef, Role::kReward};
    case Algorithm::kGrpo:
    case Algorithm::kRemax:
      return {Role::kActor, Role::kRef, Role::kReward};
    case Algorithm::kDpo:
      return {Role::kActor, Role::kRef};
    case Algorithm::kSft:
      return {Role::kActor};
    case Algorithm::kRm:
      return {Role::kReward};
  }
  return {};
}

ModelSpec resolve_model_spec(const std::string& source, const std::string& path) {
  const bool looks_like_path = source.find('/') != std::string::npos ||
                               (source.size() > 5 && source.substr(source.size() - 5) == ".json");
  if (!looks_like_path) return builtin_model(source, path);
  const std::string file = is_directory(source) ? source + "/config.json" : source;
  ModelSpec spec = model_spec_from_hf_config(load_config_file(file), file);
  spec.name = source;
  return spec;
}

namespace {

// `models.<role>`: a built-in name or config.json path, or {"model": ..., "override_config": {HF keys}} for a
// checkpoint whose config the run overrides (veRL's actor_rollout_ref.model.override_config, as HF's
// from_pretrained applies it: the keys over the config's, the shape read again).
ModelSpec model_from_json(const Json& value, const std::string& path) {
  if (value.is_string()) return resolve_model_spec(value.get<std::string>(), path);
  if (!value.is_object() || !value.contains("model") || !value["model"].is_string())
    throw Error(path,
                "must be a built-in model's name, the path of an HF config.json, or {\"model\": NAME, "
                "\"override_config\": {...}}");
  for (const auto& [key, v] : value.items())
    if (key != "model" && key != "override_config")
      throw Error(path + "." + key, "unknown key; a model takes \"model\" and \"override_config\"");
  const ModelSpec base = resolve_model_spec(value["model"].get<std::string>(), path + ".model");
  if (!value.contains("override_config")) return base;
  if (!value["override_config"].is_object())
    throw Error(path + ".override_config", "must be an object of HF config keys");
  Json hf = model_spec_to_hf_config(base);
  for (const auto& [key, v] : value["override_config"].items()) hf[key] = v;
  ModelSpec spec = model_spec_from_hf_config(hf, path + ".override_config");
  spec.name = base.name;
  return spec;
}

}  // namespace

AlgorithmConfig algorithm_config_from_json(ObjectReader& root) {
  AlgorithmConfig c;
  const std::string name = root.get_string("algorithm");
  const std::optional<Algorithm> algorithm = algorithm_from_string(name);
  if (!algorithm) {
    std::string known;
    for (const auto& n : algorithm_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error(root.path_of("algorithm"), "unknown algorithm '" + name + "'; choose one of " + known);
  }
  c.algorithm = *algorithm;
  const auto roles = algorithm_roles(c.algorithm);

  ObjectReader models(root.at("models"), root.path_of("models"));
  for (Role role : roles) {
    const std::string key = to_string(role);
    if (!models.has(key)) continue;
    const Json& value = models.at(key);
    if (role == Role::kRef && value.is_string() && value.get<std::string>() == kNoReference) {
      if (!is_rl(c.algorithm))
        throw Error(models.path_of(key), name +
                                             "'s loss compares the policy with the reference's log-probs: "
                                             "name the reference model (none is for RL without a KL term)");
      c.reference = false;
      continue;
    }
    c.models[role] = model_from_json(value, models.path_of(key));
  }
  auto fallback = [&](Role role, std::initializer_list<Role> from) {
    if (c.models.count(role) || std::find(roles.begin(), roles.end(), role) == roles.end()) return;
    for (Role f : from)
      if (c.models.count(f)) {
        c.models[role] = c.models[f];
        return;
      }
    throw Error(models.path_of(to_string(role)),
                "the " + name + " algorithm needs a '" + to_string(role) + "' model");
  };
  fallback(Role::kActor, {});
  fallback(Role::kReward, {Role::kCritic, Role::kActor});
  fallback(Role::kCritic, {Role::kActor, Role::kReward});
  if (c.reference) fallback(Role::kRef, {Role::kActor});
  models.finish();

  ObjectReader batch(root.at("batch"), root.path_of("batch"));
  c.batch.prompts = batch.get_int_in("prompts", 1, kMaxSequences);
  c.batch.prompt_len = at_most(batch, "prompt_len", batch.get_positive("prompt_len"));
  read_gen_lengths(batch, is_rl(c.algorithm), c.batch);
  c.batch.samples_per_prompt =
      batch.get_positive("samples_per_prompt", c.algorithm == Algorithm::kGrpo ? 8 : 1);
  if (c.batch.samples_per_prompt > kMaxSequences / c.batch.prompts && !batch.has("samples_per_prompt"))
    throw Error(batch.path_of("prompts"),
                "prompts x samples_per_prompt (" + std::to_string(c.batch.samples_per_prompt) +
                    " by default) must be at most " + std::to_string(kMaxSequences) +
                    " sequences: prompts is in [1, " +
                    std::to_string(kMaxSequences / c.batch.samples_per_prompt) + "]");
  if (c.batch.samples_per_prompt > kMaxSequences / c.batch.prompts)
    throw Error(batch.path_of("samples_per_prompt"),
                "prompts x samples_per_prompt must be at most " + std::to_string(kMaxSequences) +
                    " sequences; at " + std::to_string(c.batch.prompts) +
                    " prompts, samples_per_prompt is in [1, " +
                    std::to_string(kMaxSequences / c.batch.prompts) + "]");
  if (c.algorithm == Algorithm::kGrpo && c.batch.samples_per_prompt < 2)
    throw Error(batch.path_of("samples_per_prompt"),
                "GRPO compares samples within a group: needs at least 2");
  c.batch.mini_batches = batch.get_int_in("mini_batches", 1, kMaxMiniBatches, 1);
  c.batch.epochs = batch.get_int_in("epochs", 1, kMaxEpochs, 1);
  const int64_t n = c.batch.prompts * c.batch.samples_per_prompt;
  if (c.batch.mini_batches > n)
    throw Error(batch.path_of("mini_batches"), std::to_string(c.batch.mini_batches) +
                                                   " mini-batches cannot split " + std::to_string(n) +
                                                   " sequences");
  batch.finish();

  for (const auto& [role, spec] : c.models) {
    const int64_t len = c.batch.prompt_len + c.batch.gen_len_max;
    if (len > spec.max_positions)
      throw Error(root.path_of("batch"), "prompt_len + gen_len_max = " + std::to_string(len) + " exceeds " +
                                             to_string(role) + "'s " + std::to_string(spec.max_positions) +
                                             " positions");
  }
  return c;
}

DataflowGraph build_graph(const AlgorithmConfig& c) {
  DataflowGraph g;
  g.algorithm = c.algorithm;
  g.staleness = c.staleness;
  g.staleness_share = c.staleness_share;
  const auto& b = c.batch;
  const int64_t P = b.prompt_len, G = b.gen_len, S = P + G;
  const int64_t n = b.prompts * b.samples_per_prompt;
  auto role = [&](Role r, HeadKind head, bool trained) {
    g.models.push_back(ModelRole{r, c.models.at(r), head, trained});
  };
  auto data = [&](const std::string& name, double bytes) { g.data.push_back(DataSpec{name, bytes}); };
  const double tok = 8.0, f32 = 4.0;  // token ids are int64; per-token floats are fp32

  if (is_rl(c.algorithm)) {
    const bool ppo = c.algorithm == Algorithm::kPpo, remax = c.algorithm == Algorithm::kRemax;
    const bool stale = c.staleness > 0;
    std::vector<std::string> generated = {"seq"};
    if (!c.recompute_logprobs || stale) generated.push_back("logprobs");
    role(Role::kActor, HeadKind::kLanguageModel, true);
    if (ppo) role(Role::kCritic, HeadKind::kValue, true);
    if (c.reference) role(Role::kRef, HeadKind::kLanguageModel, false);
    if (c.reward_model) role(Role::kReward, HeadKind::kValue, false);
    data("seq", S * tok);
    data("logprobs", S * f32);
    if (c.reference) data("ref_logprobs", S * f32);
    if (c.reward_model) data("rewards", f32);
    const bool streaming = c.partial_rollout && stale;
    GenerationRun run{b.gen_lengths, c.batching, streaming, streaming ? int(c.staleness) : 1};
    g.mfcs.push_back(call("actor_gen", Role::kActor, MfcOp::kSample, n, P, G, {"prompts"}, generated));
    g.mfcs.back().generation = run;
    if (remax) {
      data("greedy_seq", S * tok);
      if (c.reward_model) data("greedy_rewards", f32);
      Mfc greedy = call("actor_greedy_gen", Role::kActor, MfcOp::kSample, b.prompts, P, G, {"prompts"},
                        {"greedy_seq"});
      greedy.greedy = true;
      greedy.generation = run;
      g.mfcs.push_back(greedy);
    }
    if (c.reference)
      g.mfcs.push_back(
          call("ref_inf", Role::kRef, MfcOp::kTokenLogProbs, n, P, G, {"seq"}, {"ref_logprobs"}));
    if (c.reward_model) {
      g.mfcs.push_back(
          call("reward_inf", Role::kReward, MfcOp::kSequenceScores, n, P, G, {"seq"}, {"rewards"}));
      if (remax)
        g.mfcs.push_back(call("reward_greedy_inf", Role::kReward, MfcOp::kSequenceScores, b.prompts, P, G,
                              {"greedy_seq"}, {"greedy_rewards"}));
    }
    // By default the behaviour policy's log-probs are recomputed by a forward pass (as veRL does) rather than
    // taken from sampling: they then match the train call's forward exactly, whatever the generation layout.
    // Asynchronously, actor_inf gives the proximal policy's log-probs (the weights the update starts from),
    // the behaviour policy's come from the (older) sampling.
    if (stale) {
      data("prox_logprobs", S * f32);
      g.mfcs.push_back(
          call("actor_inf", Role::kActor, MfcOp::kTokenLogProbs, n, P, G, {"seq"}, {"prox_logprobs"}));
    } else if (c.recompute_logprobs) {
      g.mfcs.push_back(
          call("actor_inf", Role::kActor, MfcOp::kTokenLogProbs, n, P, G, {"seq"}, {"logprobs"}));
    }
    // Rule rewards are scored on the generation's ranks and travel with its responses (one float per
    // sequence, beside the tokens "seq" prices), not as data of their own.
    std::vector<std::string> actor_in = {"seq", "logprobs"};
    if (c.reference) actor_in.push_back("ref_logprobs");
    if (stale) actor_in.push_back("prox_logprobs");
    if (c.reward_model) actor_in.push_back("rewards");
    if (ppo) {
      data("values", S * f32);
      g.mfcs.push_back(call("critic_inf", Role::kCritic, MfcOp::kTokenValues, n, P, G, {"seq"}, {"values"}));
      actor_in.push_back("values");
    }
    // ReMax's baseline: the reward model's score of the greedy response, or its rule score, which travels
    // with the greedy response from its generation's ranks.
    if (remax) actor_in.push_back(c.reward_model ? "greedy_rewards" : "greedy_seq");
    Mfc actor_train = call("actor_train", Role::kActor, MfcOp::kPolicyUpdate, n, P, G, actor_in, {});
    actor_train.mini_batches = b.mini_batches;
    actor_train.epochs = b.epochs;
    g.mfcs.push_back(actor_train);
    if (ppo) {
      Mfc critic_train = call("critic_train", Role::kCritic, MfcOp::kValueUpdate, n, P, G, actor_in, {});
      critic_train.mini_batches = b.mini_batches;
      critic_train.epochs = b.epochs;
      g.mfcs.push_back(critic_train);
    }
  } else if (c.algorithm == Algorithm::kDpo) {
    // Each preference pair is two sequences (chosen, rejected).
    role(Role::kActor, HeadKind::kLanguageModel, true);
    role(Role::kRef, HeadKind::kLanguageModel, false);
    data("ref_logprobs", S * f32);
    g.mfcs.push_back(
        call("ref_inf", Role::kRef, MfcOp::kPairLogProbs, 2 * n, P, G, {"prompts"}, {"ref_logprobs"}));
    Mfc train =
        call("actor_train", Role::kActor, MfcOp::kDpoUpdate, 2 * n, P, G, {"prompts", "ref_logprobs"}, {});
    train.mini_batches = b.mini_batches;
    train.epochs = b.epochs;
    g.mfcs.push_back(train);
  } else if (c.algorithm == Algorithm::kSft) {
    role(Role::kActor, HeadKind::kLanguageModel, true);
    Mfc train = call("actor_train", Role::kActor, MfcOp::kSftUpdate, n, P, G, {"prompts"}, {});
    train.mini_batches = b.mini_batches;
    train.epochs = b.epochs;
    g.mfcs.push_back(train);
  } else if (c.algorithm == Algorithm::kRm) {
    role(Role::kReward, HeadKind::kValue, true);
    Mfc train = call("reward_train", Role::kReward, MfcOp::kPairScoreUpdate, 2 * n, P, G, {"prompts"}, {});
    train.mini_batches = b.mini_batches;
    train.epochs = b.epochs;
    g.mfcs.push_back(train);
  }
  data("prompts", P * tok);
  validate_graph(g);
  return g;
}

}  // namespace realign
