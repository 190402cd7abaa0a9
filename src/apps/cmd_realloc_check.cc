// `realign realloc-check`: moves a model's shards from one layout to another on N local worker processes
// (this binary re-executed, selected by REALIGN_REALLOC_CHECK_WORKER), verifies every destination shard
// bit-for-bit against a direct slice of the full parameters and prints one JSON line.
#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include "apps/commands.h"
#include "comm/launcher.h"
#include "comm/world.h"
#include "core/json.h"
#include "cost/transfer_cost.h"
#include "realloc/realloc_check.h"
#include "tensorfile/hf_config_file.h"
#include "tensorfile/tensor_file.h"

namespace realign::apps {
namespace {

constexpr const char* kWorkerEnv = "REALIGN_REALLOC_CHECK_WORKER";
constexpr const char* kResultTag = "REALLOC_CHECK_RESULT ";

struct Args {
  std::string model;
  std::string from, to;
  int world = 0;
  std::string dtype = "fp32";
  uint64_t seed = 1;
};

// HF parameter names to realign's canonical ones (graph/param_layout.h). A checkpoint already in canonical
// names passes through. GPT-2's Conv1D weights are stored transposed and its q/k/v fused: they are split
// and transposed here.
tensorfile::TensorMap to_canonical(const ModelSpec& spec, tensorfile::TensorMap hf) {
  if (hf.count("embed.weight")) return hf;
  tensorfile::TensorMap out;
  const bool gpt2 = spec.family == ModelFamily::kGpt2;
  for (auto& [raw, t] : hf) {
    std::string name = raw;
    if (gpt2 && name.rfind("transformer.", 0) == 0) name = name.substr(12);
    std::smatch m;
    if (!gpt2) {
      static const std::regex layer(R"(model\.layers\.(\d+)\.(.+))");
      if (name == "model.embed_tokens.weight") out["embed.weight"] = t;
      else if (name == "model.norm.weight") out["final_norm.weight"] = t;
      else if (name == "lm_head.weight") out["lm_head.weight"] = t;
      else if (std::regex_match(name, m, layer)) {
        static const std::map<std::string, std::string> rename = {
            {"input_layernorm.weight", "attn_norm.weight"}, {"post_attention_layernorm.weight", "mlp_norm.weight"},
            {"self_attn.q_proj.weight", "attn.q.weight"},   {"self_attn.q_proj.bias", "attn.q.bias"},
            {"self_attn.k_proj.weight", "attn.k.weight"},   {"self_attn.k_proj.bias", "attn.k.bias"},
            {"self_attn.v_proj.weight", "attn.v.weight"},   {"self_attn.v_proj.bias", "attn.v.bias"},
            {"self_attn.o_proj.weight", "attn.o.weight"},   {"mlp.gate_proj.weight", "mlp.gate.weight"},
            {"mlp.up_proj.weight", "mlp.up.weight"},        {"mlp.down_proj.weight", "mlp.down.weight"}};
        auto it = rename.find(m[2].str());
        if (it != rename.end()) out["layers." + m[1].str() + "." + it->second] = t;
      }
      continue;
    }
    static const std::regex block(R"(h\.(\d+)\.(.+))");
    if (name == "wte.weight") out["embed.weight"] = t;
    else if (name == "wpe.weight") out["pos_embed.weight"] = t;
    else if (name == "ln_f.weight") out["final_norm.weight"] = t;
    else if (name == "ln_f.bias") out["final_norm.bias"] = t;
    else if (std::regex_match(name, m, block)) {
      const std::string p = "layers." + m[1].str() + ".", rest = m[2].str();
      if (rest == "ln_1.weight") out[p + "attn_norm.weight"] = t;
      else if (rest == "ln_1.bias") out[p + "attn_norm.bias"] = t;
      else if (rest == "ln_2.weight") out[p + "mlp_norm.weight"] = t;
      else if (rest == "ln_2.bias") out[p + "mlp_norm.bias"] = t;
      else if (rest == "attn.c_attn.weight" || rest == "attn.c_attn.bias") {
        const bool w = rest.back() == 't';  // "weight" (H, 3H) or "bias" (3H)
        const auto parts = t.chunk(3, w ? 1 : 0);
        const char* qkv[] = {"q", "k", "v"};
        for (int j = 0; j < 3; ++j)
          out[p + "attn." + qkv[j] + (w ? ".weight" : ".bias")] = w ? parts[j].t().contiguous() : parts[j];
      } else if (rest == "attn.c_proj.weight") out[p + "attn.o.weight"] = t.t().contiguous();
      else if (rest == "attn.c_proj.bias") out[p + "attn.o.bias"] = t;
      else if (rest == "mlp.c_fc.weight") out[p + "mlp.up.weight"] = t.t().contiguous();
      else if (rest == "mlp.c_fc.bias") out[p + "mlp.up.bias"] = t;
      else if (rest == "mlp.c_proj.weight") out[p + "mlp.down.weight"] = t.t().contiguous();
      else if (rest == "mlp.c_proj.bias") out[p + "mlp.down.bias"] = t;
    }
  }
  return out;
}

bool is_path(const std::string& model) { return std::filesystem::exists(model); }

ModelSpec model_spec(const Args& a) {
  if (is_path(a.model)) return tensorfile::read_hf_config(a.model);
  return builtin_model(a.model, "--model");  // its error lists the built-in names and mentions HF configs
}

Layout checked_layout(const std::string& text, const std::string& path, const ModelSpec& spec) {
  const Layout l = parse_layout(text, path);
  const std::string why = tp_incompatibility(spec, l.tp);
  if (!why.empty()) {
    std::string valid;
    for (int t = 1; t <= spec.n_heads; ++t)
      if (tp_incompatibility(spec, t).empty()) valid += (valid.empty() ? "" : ", ") + std::to_string(t);
    throw Error(path, "'" + text + "': " + why + " of " + spec.name + "; valid tp: " + valid);
  }
  if (l.pp > spec.n_layers)
    throw Error(path, "'" + text + "': pp " + std::to_string(l.pp) + " exceeds the " + std::to_string(spec.n_layers) +
                          " layers of " + spec.name + "; valid pp: 1.." + std::to_string(spec.n_layers));
  return l;
}

int needed_world(const Layout& a, const Layout& b) {
  return std::max(a.first_device + a.size(), b.first_device + b.size());
}

at::ScalarType dtype_of(const std::string& d) { return d == "bf16" ? at::kBFloat16 : at::kFloat; }

int run_worker_side(const Args& a) {
  return comm::run_worker([&](comm::World& world) {
    const ModelSpec spec = model_spec(a);
    const Layout from = checked_layout(a.from, "--from", spec), to = checked_layout(a.to, "--to", spec);
    const auto params = model_params(spec, HeadKind::kLanguageModel);
    const SliceSource source = is_path(a.model)
                                   ? full_params(to_canonical(spec, tensorfile::load_tensors(a.model)))
                                   : synthetic_params(a.seed);
    const at::ScalarType dtype = dtype_of(a.dtype);
    const CheckResult r = run_realloc_check(*world.global(), params, spec.n_layers, from, to, source, dtype);
    if (world.rank() != 0) return;
    const auto inbound = realloc_inbound_bytes(params, spec.n_layers, from, to);
    double cost_bytes = 0;
    for (double b : inbound) cost_bytes += b;
    Json j;
    j["ok"] = r.ok;
    j["bytes_moved"] = r.bytes_moved;
    j["bytes_minimum"] = r.bytes_minimum;
    j["seconds"] = r.seconds;
    j["gbps"] = r.gbps();
    j["bytes_received"] = r.bytes_received;
    j["bytes_copied_locally"] = r.bytes_copied;
    j["cost_model_bytes"] = int64_t(cost_bytes / 2) * int64_t(at::elementSize(dtype));  // its bf16 count, rescaled
    j["messages"] = r.messages / 2;
    j["shards_checked"] = r.shards_checked;
    j["mismatching_shards"] = r.mismatches;
    j["model"] = spec.name;
    j["from"] = to_string(from);
    j["to"] = to_string(to);
    j["world"] = world.size();
    j["dtype"] = a.dtype;
    std::printf("%s%s\n", kResultTag, j.dump().c_str());
    std::fflush(stdout);
  });
}

int run_launcher_side(const Args& a) {
  const ModelSpec spec = model_spec(a);
  const Layout from = checked_layout(a.from, "--from", spec), to = checked_layout(a.to, "--to", spec);
  const int need = needed_world(from, to);
  const int world = a.world > 0 ? a.world : need;
  if (world < need)
    throw Error("--world", std::to_string(world) + " processes cannot hold " + to_string(from) + " and " +
                               to_string(to) + ": they span devices 0.." + std::to_string(need - 1) +
                               "; use --world " + std::to_string(need) + " or more");
  comm::LaunchOptions o;
  o.nprocs = world;
  o.argv = {comm::current_executable(), "realloc-check", "--model", a.model, "--from", a.from, "--to", a.to,
            "--world", std::to_string(world), "--dtype", a.dtype, "--seed", std::to_string(a.seed)};
  o.env = {{kWorkerEnv, "1"}};
  o.forward_output = false;
  o.capture_output = true;
  const comm::LaunchResult r = comm::launch_local(o);
  std::string json;
  if (!r.output.empty()) {
    std::istringstream lines(r.output[0]);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind(kResultTag, 0) == 0) json = line.substr(std::string(kResultTag).size());
  }
  if (r.exit_code != 0 || json.empty()) {
    std::fprintf(stderr, "realign: error: realloc-check workers failed: %s\n%s", r.failure.c_str(),
                 r.output_text().c_str());
    return 1;
  }
  std::printf("%s\n", json.c_str());
  if (!Json::parse(json).at("ok").get<bool>()) {
    std::fprintf(stderr, "realign: error: reallocation %s -> %s is not exact:\n%s", to_string(from).c_str(),
                 to_string(to).c_str(), r.output_text().c_str());
    return 2;
  }
  return 0;
}

}  // namespace

void add_realloc_check_command(CLI::App& app) {
  auto* sub = app.add_subcommand("realloc-check",
                                 "Move a model's parameters between two layouts on local processes and verify them");
  auto args = std::make_shared<Args>();
  sub->add_option("--model", args->model, "A HF model directory (config.json + safetensors) or a built-in model name")
      ->required();
  sub->add_option("--from", args->from, "Source LAYOUT")->required();
  sub->add_option("--to", args->to, "Destination LAYOUT")->required();
  sub->add_option("--world", args->world, "Local worker processes (default: the devices both layouts span)");
  sub->add_option("--dtype", args->dtype, "Shard dtype: fp32 or bf16")->check(CLI::IsMember({"fp32", "bf16"}))
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "Seed of the synthetic parameters of a built-in model")->capture_default_str();
  sub->footer(
      "LAYOUT grammar: d<dp>t<tp>p<pp>[@<first device>], the three axes in any order, each once, e.g. d2t2p1,\n"
      "p2d1t2@4. ReaLHF's spelling with m for tensor parallel (d2p1m2) works too. The layout occupies devices\n"
      "[first, first + dp*tp*pp), ranked pp-major, then dp, then tp. tp must divide the model's attention and KV\n"
      "heads; pp at most its layer count. Any two layouts may be paired (tp sizes need not divide each other).\n"
      "Devices are local processes 0..world-1 talking over Gloo.\n"
      "Output: one JSON line {ok, bytes_moved, bytes_minimum, seconds, gbps (GB/s, 1e9 bytes), bytes_received,\n"
      "bytes_copied_locally, cost_model_bytes, messages, shards_checked, mismatching_shards, ...}. Exit code 0 when\n"
      "every destination shard matches a direct slice of the full parameters bit for bit and bytes_moved ==\n"
      "bytes_minimum; 2 when not (the mismatches are printed); 1 on bad input or a failed worker.");
  on_run(sub, [args] { return std::getenv(kWorkerEnv) ? run_worker_side(*args) : run_launcher_side(*args); });
}

}  // namespace realign::apps
