// Where the model a launch script names is found: the config.json the user has for it (the path itself, or
// the Hugging Face cache's copy of a hub id), else a built-in shape of the same name, so that `realign
// import` prices the model the script trains and says which file gave its shape.
#pragma once

#include <string>
#include <vector>

#include "engines/engine.h"

namespace realign::engines {

// What a script's model path names for realign's `models.<role>`: `model` is a config.json path or a built-in
// shape's name ("" when neither is found); `read` the config.json read ("" for a built-in shape); `lineage`,
// for a fine-tuned checkpoint priced with its base's built-in shape, which base and the card that says so.
struct ModelSource {
  std::string model;
  std::string read;
  std::string lineage;
};

// In order: `path` as a local HF directory (its config.json) or a config.json; a hub id ("Qwen/Qwen3-8B")
// in the Hugging Face cache, `models--Qwen--Qwen3-8B/snapshots/<refs/main's commit, else the first>/
// config.json` under $HF_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub or
// ~/.cache/huggingface/hub (realign's own environment: where the cache is on this machine); a fine-tuned
// checkpoint of known lineage (the engines' example SFT and reward models, by their model cards:
// "sfairXC/FsfairX-LLaMA3-RM-v0.1" -> "llama3-8b"); a built-in shape whose name matches the path's last
// component once the usual suffixes are dropped ("Qwen/Qwen2.5-7B-Instruct" -> "qwen2.5-7b",
// "meta-llama/Llama-2-7b-chat-hf" -> "llama2-7b").
ModelSource find_model(const std::string& path);

// The places find_model looks for `path`'s config.json, for an error to name.
std::vector<std::string> model_config_places(const std::string& path);

// find_model's model, or `path` itself when nothing is found (for the config's error to name).
std::string model_for_path(const std::string& path);

// Sets `run`'s models.<role> from the script's `key` (whose value is `path`), its source, and a note naming
// the config.json read.
void read_model(ReadRun& run, const std::string& role, const std::string& key, const std::string& path);

}  // namespace realign::engines
