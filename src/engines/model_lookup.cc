#include "engines/model_lookup.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "core/read_file.h"
#include "graph/model_spec.h"

namespace realign::engines {
namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The hub caches huggingface_hub reads, most specific first (its constants.py: HF_HUB_CACHE, else
// HF_HOME/hub, HF_HOME defaulting to $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface).
std::vector<fs::path> hub_caches() {
  std::vector<fs::path> out;
  if (!env("HF_HUB_CACHE").empty()) out.push_back(env("HF_HUB_CACHE"));
  if (!env("HF_HOME").empty()) out.push_back(fs::path(env("HF_HOME")) / "hub");
  if (!env("XDG_CACHE_HOME").empty()) out.push_back(fs::path(env("XDG_CACHE_HOME")) / "huggingface" / "hub");
  if (!env("HOME").empty()) out.push_back(fs::path(env("HOME")) / ".cache" / "huggingface" / "hub");
  return out;
}

bool is_hub_id(const std::string& path) {
  static const std::regex id(R"(^[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*$)");
  return std::regex_match(path, id);
}

fs::path repo_dir(const fs::path& cache, const std::string& id) {
  return cache / ("models--" + id.substr(0, id.find('/')) + "--" + id.substr(id.find('/') + 1));
}

// The cached config.json of `id`: the snapshot refs/main names (what from_pretrained loads), else the first
// snapshot in name order (one downloaded at another revision).
std::string cached_config(const fs::path& cache, const std::string& id) {
  const fs::path repo = repo_dir(cache, id);
  if (is_file(repo / "refs" / "main")) {
    std::string commit = read_file((repo / "refs" / "main").string());
    while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
    if (is_file(repo / "snapshots" / commit / "config.json"))
      return (repo / "snapshots" / commit / "config.json").string();
  }
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto& snapshot : fs::directory_iterator(repo / "snapshots", ec))
    if (is_file(snapshot.path() / "config.json")) found.push_back(snapshot.path() / "config.json");
  std::sort(found.begin(), found.end());
  return found.empty() ? "" : found.front().string();
}

// A name compared without case, separators and the words that name a fine-tuned or converted checkpoint of
// the same shape, wherever they stand between dashes ("Qwen3-30B-A3B-Instruct-2507", "MiMo-7B-RL").
std::string squeeze(std::string name) {
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (name.rfind("meta-", 0) == 0) name = name.substr(5);
  static const char* const kVariants[] = {"instruct", "chat", "hf",       "base", "it",
                                          "sft",      "rl",   "thinking", "bf16"};
  std::string out, word;
  const auto flush = [&] {
    if (std::find(std::begin(kVariants), std::end(kVariants), word) == std::end(kVariants) || out.empty())
      for (char c : word)
        if (c != '_' && c != '.') out += c;
    word.clear();
  };
  for (char c : name) {
    if (c == '-')
      flush();
    else
      word += c;
  }
  flush();
  return out;
}

// The path's last component, squeezed: a hub id, a local directory and a copy under ~/models/ compare alike.
std::string squeezed_last(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  return squeeze(path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1));
}

std::string builtin_for(const std::string& path) {
  const std::string wanted = squeezed_last(path);
  for (const std::string& builtin : builtin_model_names())
    if (squeeze(builtin) == wanted) return builtin;
  return "";
}

// Fine-tuned checkpoints the engines' own example scripts train or score with, whose model cards name the
// base they were fine-tuned from: priced with that base's shape (a reward model's one-output head is the
// role's, not the shape's). Only what a card states; a checkpoint that changes the shape (a longer context,
// another rope) is not listed.
struct Lineage {
  const char* checkpoint;
  const char* builtin;
  const char* card;
};
constexpr Lineage kLineages[] = {
    {"OpenRLHF/Llama-3-8b-sft-mixture", "llama3-8b",
     "OpenRLHF's SFT of Llama3-8b, the base its reward models' model card names"},
    {"OpenRLHF/Llama-3-8b-rm-mixture", "llama3-8b",
     "its model card: a reward model based on Llama3-8b, trained on OpenLLMAI/preference_700K from "
     "OpenRLHF/Llama-3-8b-sft-mixture"},
    {"OpenRLHF/Llama-3-8b-rm-700k", "llama3-8b",
     "OpenRLHF's reward model of Llama-3-8b-sft-mixture trained on OpenLLMAI/preference_700K, the data and "
     "base its model card gives for Llama-3-8b-rm-mixture: based on Llama3-8b"},
    {"sfairXC/FsfairX-LLaMA3-RM-v0.1", "llama3-8b",
     "its model card: 'The base model is meta-llama/Meta-Llama-3-8B-Instruct'"},
    {"Skywork/Skywork-Reward-V2-Llama-3.2-3B", "llama3.2-3b",
     "Skywork-Reward-V2 (arXiv 2507.01352) names each reward model by its base: Llama-3.2-3B"},
    {"Skywork/Skywork-Reward-Llama-3.1-8B", "llama3.1-8b",
     "its model card: built on Meta-Llama-3.1-8B-Instruct (Skywork-Reward, arXiv 2410.18451)"},
    {"DeepSeek-V3-config-verl", "deepseek-v3",
     "veRL's run_deepseek671b_math_megatron_96gb.sh: DeepSeek-V3's config.json without its "
     "quantization_config and with num_nextn_predict_layers 0, the shape realign's deepseek-v3 is"},
};

const Lineage* lineage_of(const std::string& path) {
  const std::string wanted = squeezed_last(path);
  for (const Lineage& l : kLineages)
    if (squeezed_last(l.checkpoint) == wanted) return &l;
  return nullptr;
}

}  // namespace

ModelSource find_model(const std::string& path) {
  if (path.empty()) return {"", "", ""};
  if (is_file(fs::path(path) / "config.json")) return {path, (fs::path(path) / "config.json").string(), ""};
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0 && is_file(path))
    return {path, path, ""};
  if (is_hub_id(path))
    for (const fs::path& cache : hub_caches())
      if (const std::string file = cached_config(cache, path); !file.empty()) return {file, file, ""};
  if (const Lineage* l = lineage_of(path))
    return {l->builtin, "", std::string(l->checkpoint) + " priced as " + l->builtin + ", its base: " + l->card};
  return {builtin_for(path), "", ""};
}

std::vector<std::string> model_config_places(const std::string& path) {
  std::vector<std::string> out = {(fs::path(path) / "config.json").string()};
  if (is_hub_id(path))
    for (const fs::path& cache : hub_caches())
      out.push_back((repo_dir(cache, path) / "snapshots" / "*" / "config.json").string());
  return out;
}

std::string model_for_path(const std::string& path) {
  const ModelSource source = find_model(path);
  return source.model.empty() ? path : source.model;
}

void read_model(ReadRun& run, const std::string& role, const std::string& key, const std::string& path) {
  const ModelSource source = find_model(path);
  run.config["models"][role] = source.model.empty() ? path : source.model;
  run.sources["models." + role] = key;
  // Once per key: a role that defaults to another's model (OpenRLHF's critic from the reward model) reads it
  // again.
  const auto note = [&](const std::string& text) {
    if (std::find(run.notes.begin(), run.notes.end(), text) == run.notes.end()) run.notes.push_back(text);
  };
  if (!source.read.empty()) note(key + ": the model's shape read from " + source.read);
  if (!source.lineage.empty()) note(key + ": " + source.lineage);
}

}  // namespace realign::engines
