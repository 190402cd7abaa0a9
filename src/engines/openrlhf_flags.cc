#include "engines/openrlhf_flags.h"

#include "engines/releases.h"
#include "engines/script_reader.h"

namespace realign::engines {

namespace {

// The release whose table gives the flat name of each dotted flag (OpenRLHF's last flat release).
const std::map<std::string, std::string>& flat_names() {
  for (const Release& r : releases("openrlhf"))
    if (!r.flag_names.empty()) return r.flag_names;
  static const std::map<std::string, std::string> none;
  return none;
}

}  // namespace

ReaderFlags as_reader_flags(const std::vector<ConfigEntry>& entries) {
  ReaderFlags out;
  const auto& flat = flat_names();
  for (const ConfigEntry& e : entries) {
    const auto it = flat.find(e.key);
    if (it == flat.end()) {
      out.entries.push_back(e);
      continue;
    }
    out.entries.push_back({it->second, e.value});
    out.user_names[it->second] = e.key;
  }
  // A script in dotted flags hears of a flag it left out in dotted words too ("--vllm.num_engines: not set").
  if (!out.user_names.empty())
    for (const auto& [dotted, flat_name] : flat) out.user_names.emplace(flat_name, dotted);
  // v0.10 on: the total length and the response's cap, where v0.9 named the prompt's and the response's.
  const LaunchSettings s(out.entries);
  if (s.has("--max_len") || s.has("--max_new_tokens")) {
    const std::string total = out.user_names.count("--max_len") ? out.user_names["--max_len"] : "--max_len";
    const std::string response =
        out.user_names.count("--max_new_tokens") ? out.user_names["--max_new_tokens"] : "--max_new_tokens";
    // train_ppo_ray.py's default total is 2048; without a response cap vLLM generates up to the total, so the
    // prompts keep the reader's default cap of 1024.
    const int64_t max_len = s.integer("--max_len", 2048);
    const int64_t generate = s.integer("--max_new_tokens", max_len - 1024);
    std::vector<ConfigEntry> kept;
    for (ConfigEntry& e : out.entries)
      if (e.key != "--max_len" && e.key != "--max_new_tokens") kept.push_back(std::move(e));
    kept.push_back({"--prompt_max_len", max_len - generate});
    kept.push_back({"--generate_max_len", generate});
    out.entries = std::move(kept);
    out.user_names["--prompt_max_len"] = total + " - " + response;
    out.user_names["--generate_max_len"] = response;
    out.user_names.erase("--max_len");
    out.user_names.erase("--max_new_tokens");
  }
  return out;
}

}  // namespace realign::engines
