// `realign logprobs`, `realign generate`, `realign init`: run or create an HF-format model directory on one
// process (CPU or one GPU).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <c10/core/GradMode.h>
#include <cstdio>
#include <fstream>
#include <thread>

#include "apps/commands.h"
#include "core/error.h"
#include "core/json.h"
#include "graph/model_spec.h"
#include "model/checkpoint.h"
#include "model/generate.h"
#include "model/init.h"
#include "tensorfile/hf_config_file.h"
#include "tokenizer/tokenizer.h"

namespace realign::apps {
namespace {

at::ScalarType parse_dtype(const std::string& s, const std::string& flag) {
  if (s == "fp32") return at::kFloat;
  if (s == "bf16") return at::kBFloat16;
  if (s == "fp16") return at::kHalf;
  throw Error(flag, "'" + s + "' is not a dtype (fp32, bf16, fp16)");
}

at::Device parse_device(const std::string& s) {
  if (s == "cpu") return at::kCPU;
  if (s == "cuda") {
    if (!at::hasCUDA()) throw Error("--device", "cuda was asked for but this build or machine has no GPU");
    return at::Device(at::kCUDA, 0);
  }
  throw Error("--device", "'" + s + "' is not a device (cpu, cuda)");
}

struct LoadedModel {
  std::unique_ptr<model::Transformer> model;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;  // null when the directory has none and none was needed
};

LoadedModel load_model(const std::string& dir, const std::string& dtype, const std::string& device,
                       bool need_tokenizer) {
  at::set_num_threads(int(std::max(1u, std::thread::hardware_concurrency())));
  ModelSpec spec = tensorfile::read_hf_config(dir);
  LoadedModel out;
  out.model = std::make_unique<model::Transformer>(spec, HeadKind::kLanguageModel, model::ParallelContext{},
                                                   parse_dtype(dtype, "--dtype"), parse_device(device));
  out.model->load_shards(model::load_hf_full(dir, spec, HeadKind::kLanguageModel, at::kFloat));
  if (need_tokenizer) out.tokenizer = tokenizer::load_tokenizer(dir);
  return out;
}

std::vector<int64_t> checked_tokens(const Json& j, int64_t vocab, const std::string& where) {
  if (!j.is_array() || j.empty()) throw Error(where, "\"tokens\" must be a non-empty array of token ids");
  std::vector<int64_t> out;
  for (const Json& t : j) {
    if (!t.is_number_integer()) throw Error(where, "\"tokens\" must hold integers");
    const int64_t id = t.get<int64_t>();
    if (id < 0 || id >= vocab)
      throw Error(where, "token " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(vocab) + ")");
    out.push_back(id);
  }
  return out;
}

void add_logprobs(CLI::App& app) {
  auto* sub = app.add_subcommand("logprobs",
                                 "Per-token log-probabilities of texts or token lists (JSONL in and out)");
  struct Args {
    std::string model, input, out, dtype = "fp32", device = "cpu";
    int batch = 8;
    bool no_special = false;
  };
  auto a = std::make_shared<Args>();
  sub->add_option("--model", a->model, "HF model directory (config.json, safetensors, tokenizer)")
      ->required();
  sub->add_option("--input", a->input, "JSONL: {\"text\": ...} or {\"tokens\": [...]} per line")->required();
  sub->add_option("--out", a->out, "JSONL: {\"tokens\": [...], \"logprobs\": [...]} per line")->required();
  sub->add_option("--dtype", a->dtype, "fp32, bf16 or fp16")->capture_default_str();
  sub->add_option("--device", a->device, "cpu or cuda")->capture_default_str();
  sub->add_option("--batch-size", a->batch, "Lines per forward pass")->capture_default_str();
  sub->add_flag("--no-special-tokens", a->no_special,
                "Encode \"text\" without the special tokens (BOS/EOS) that transformers adds for the model");
  sub->footer(
      "logprobs[i] is log p(tokens[i+1] | tokens[..i]); a line's output has one fewer than its tokens.");
  on_run(sub, [a] {
    std::ifstream in(a->input);
    if (!in) throw Error(a->input, "cannot open");
    std::vector<std::vector<int64_t>> seqs;
    bool need_tokenizer = false;
    std::vector<Json> lines;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Json j = Json::parse(line, nullptr, false);
      const std::string where = a->input + ":" + std::to_string(n);
      if (j.is_discarded() || !j.is_object()) throw Error(where, "not a JSON object");
      if (!j.contains("text") && !j.contains("tokens")) throw Error(where, "needs \"text\" or \"tokens\"");
      need_tokenizer |= !j.contains("tokens");
      j["__where"] = where;
      lines.push_back(j);
    }
    LoadedModel m = load_model(a->model, a->dtype, a->device, need_tokenizer);
    const int64_t vocab = m.model->spec().vocab;
    for (const Json& j : lines) {
      const std::string where = j["__where"];
      if (j.contains("tokens")) {
        seqs.push_back(checked_tokens(j["tokens"], vocab, where));
      } else {
        if (!j["text"].is_string()) throw Error(where, "\"text\" must be a string");
        tokenizer::EncodeOptions o;
        o.add_special_tokens = !a->no_special;
        auto ids = m.tokenizer->encode(j["text"].get<std::string>(), o);
        if (ids.empty()) throw Error(where, "\"text\" encodes to no tokens");
        seqs.emplace_back(ids.begin(), ids.end());
        checked_tokens(Json(seqs.back()), vocab, where);
      }
    }
    if (a->batch < 1) throw Error("--batch-size", "must be positive");
    std::string out;
    c10::NoGradGuard no_grad;
    for (size_t s = 0; s < seqs.size(); s += size_t(a->batch)) {
      std::vector<std::vector<int64_t>> chunk(seqs.begin() + s,
                                              seqs.begin() + std::min(seqs.size(), s + a->batch));
      model::BuiltBatch b = model::pad_batch(chunk);
      model::Targets t = model::next_token_targets(b.batch);
      at::Tensor logp =
          m.model->token_logprobs(m.model->forward(b.batch), t.targets).to(at::kCPU).to(at::kDouble);
      for (size_t i = 0; i < chunk.size(); ++i) {
        model::SequencePlacement p = b.placements[i];
        p.length -= 1;
        at::Tensor v = model::gather_sequence(logp, p).contiguous();
        Json o;
        o["tokens"] = chunk[i];
        o["logprobs"] = std::vector<double>(v.data_ptr<double>(), v.data_ptr<double>() + v.numel());
        out += o.dump() + "\n";
      }
    }
    std::ofstream f(a->out);
    if (!f) throw Error(a->out, "cannot write");
    f << out;
    std::fprintf(stderr, "realign logprobs: %zu sequences -> %s\n", seqs.size(), a->out.c_str());
    return 0;
  });
}

void add_generate(CLI::App& app) {
  auto* sub =
      app.add_subcommand("generate", "Continue a prompt with a model directory's model and tokenizer");
  struct Args {
    std::string model, prompt, dtype = "fp32", device = "cpu";
    model::GenerateOptions o;
    bool json = false, no_eos_stop = false, no_special = false;
  };
  auto a = std::make_shared<Args>();
  a->o.max_new_tokens = 32;
  a->o.greedy = false;
  sub->add_option("--model", a->model, "HF model directory (config.json, safetensors, tokenizer)")
      ->required();
  sub->add_option("--prompt", a->prompt, "Prompt text")->required();
  sub->add_option("--max-new-tokens", a->o.max_new_tokens, "At most this many new tokens")
      ->capture_default_str();
  sub->add_option("--temperature", a->o.temperature, "Sampling temperature (> 0)")->capture_default_str();
  sub->add_option("--top-k", a->o.top_k, "Sample from the k most likely tokens (0: off)")
      ->capture_default_str();
  sub->add_option("--top-p", a->o.top_p, "Nucleus sampling threshold (1: off)")->capture_default_str();
  sub->add_flag("--greedy", a->o.greedy, "Always take the most likely token");
  sub->add_option("--seed", a->o.seed, "Sampling seed")->capture_default_str();
  sub->add_option("--dtype", a->dtype, "fp32, bf16 or fp16")->capture_default_str();
  sub->add_option("--device", a->device, "cpu or cuda")->capture_default_str();
  sub->add_flag("--json", a->json, "Print {\"tokens\", \"logprobs\", \"text\"} instead of the text");
  sub->add_flag("--no-eos-stop", a->no_eos_stop, "Do not stop at the tokenizer's end-of-sequence token");
  sub->add_flag("--no-special-tokens", a->no_special, "Encode the prompt without the BOS transformers adds");
  on_run(sub, [a] {
    LoadedModel m = load_model(a->model, a->dtype, a->device, true);
    // Only the leading special tokens: an EOS after the prompt would end what is to be continued.
    std::vector<int32_t> ids = a->no_special ? std::vector<int32_t>() : m.tokenizer->special_prefix();
    for (int32_t id : m.tokenizer->encode(a->prompt)) ids.push_back(id);
    if (ids.empty()) throw Error("--prompt", "encodes to no tokens");
    model::GenerateOptions o = a->o;
    if (!a->no_eos_stop && m.tokenizer->special_ids().eos)
      o.stop_tokens.push_back(*m.tokenizer->special_ids().eos);
    model::GenerateResult r = model::generate(*m.model, {std::vector<int64_t>(ids.begin(), ids.end())}, o);
    const int64_t n = r.lengths[0].item<int64_t>();
    at::Tensor toks = r.tokens[0].narrow(0, 0, n).to(at::kCPU).contiguous();
    std::vector<int32_t> out(toks.data_ptr<int64_t>(), toks.data_ptr<int64_t>() + n);
    const std::string text = m.tokenizer->decode(out);
    if (a->json) {
      at::Tensor lp = r.logprobs[0].narrow(0, 0, n).to(at::kCPU).to(at::kDouble).contiguous();
      Json j;
      j["tokens"] = out;
      j["logprobs"] = std::vector<double>(lp.data_ptr<double>(), lp.data_ptr<double>() + n);
      j["text"] = text;
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("%s%s\n", a->prompt.c_str(), text.c_str());
    }
    return 0;
  });
}

void add_init(CLI::App& app) {
  auto* sub = app.add_subcommand("init", "Write a randomly initialised model in HF format");
  struct Args {
    std::string config, spec, out, dtype = "fp32";
    uint64_t seed = 0;
  };
  auto a = std::make_shared<Args>();
  auto* cfg = sub->add_option("--config", a->config, "An HF config.json (or a directory holding one)");
  auto* spec = sub->add_option("--model-spec", a->spec, "A built-in model name (see `realign models`)");
  cfg->excludes(spec);
  sub->add_option("--out", a->out, "Directory to write")->required();
  sub->add_option("--seed", a->seed, "Initialisation seed")->capture_default_str();
  sub->add_option("--dtype", a->dtype, "On-disk dtype: fp32, bf16 or fp16")->capture_default_str();
  on_run(sub, [a] {
    if (a->config.empty() == a->spec.empty()) throw Error("init", "give one of --config or --model-spec");
    ModelSpec s =
        a->config.empty() ? builtin_model(a->spec, "--model-spec") : tensorfile::read_hf_config(a->config);
    // A checkpoint is written in HF names the runtime knows: a family it does not build (Gemma, DeepSeek's
    // latent attention) is refused before any parameter is made.
    if (const std::string why = runtime_model_problem(s); !why.empty())
      throw Error(a->config.empty() ? "--model-spec" : "--config", why);
    const at::ScalarType dt = parse_dtype(a->dtype, "--dtype");
    const tensorfile::DType disk = dt == at::kBFloat16 ? tensorfile::DType::kBF16
                                   : dt == at::kHalf   ? tensorfile::DType::kF16
                                                       : tensorfile::DType::kF32;
    model::save_hf_checkpoint(a->out, s, HeadKind::kLanguageModel,
                              model::init_full_params(s, HeadKind::kLanguageModel, a->seed), disk);
    std::fprintf(stderr, "realign init: %s (%lld parameters, seed %llu) -> %s\n", s.name.c_str(),
                 (long long)s.total_params(), (unsigned long long)a->seed, a->out.c_str());
    return 0;
  });
}

}  // namespace

void add_model_commands(CLI::App& app) {
  add_logprobs(app);
  add_generate(app);
  add_init(app);
}

}  // namespace realign::apps
