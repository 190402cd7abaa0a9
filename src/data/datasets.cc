#include "data/datasets.h"

#include "core/error.h"
#include "data/jsonl.h"

namespace realign::data {
namespace {

template <class Record, class Fill>
std::vector<Record> load(const std::string& path, Fill fill) {
  std::vector<Record> out;
  for (const auto& rec : read_jsonl(path)) {
    ObjectReader r(rec.value, rec.where);
    out.push_back(fill(r));
    r.finish();
  }
  if (out.empty()) throw Error(path, "holds no records");
  return out;
}

}  // namespace

std::vector<PromptRecord> load_prompts(const std::string& path, const RenderConversation& render) {
  return load<PromptRecord>(path, [&](ObjectReader& r) {
    if (r.has("messages") && !r.has("prompt"))
      return PromptRecord{conversation_prompt(r.at("messages"), render, r.path()),
                          r.get_string("answer", "")};
    return PromptRecord{r.get_string("prompt"), r.get_string("answer", "")};
  });
}

std::vector<SftRecord> load_sft_pairs(const std::string& path, const RenderConversation& render) {
  return load<SftRecord>(path, [&](ObjectReader& r) {
    if (r.has("messages") && !r.has("prompt")) {
      const Json& messages = r.at("messages");
      if (!messages.is_array() || messages.empty() || !messages.back().is_object() ||
          messages.back().value("role", "") != "assistant" || !messages.back().contains("content") ||
          !messages.back()["content"].is_string())
        throw Error(r.path() + ": messages",
                    "an SFT conversation ends with the response: a last turn with "
                    "\"role\": \"assistant\" and a \"content\" string");
      Json before(messages.begin(), messages.end() - 1);
      auto [prompt, response] =
          conversation_answer(before, messages.back()["content"].get<std::string>(), render, r.path());
      return SftRecord{prompt, response};
    }
    return SftRecord{r.get_string("prompt"), r.get_string("response")};
  });
}

std::vector<PreferenceRecord> load_preference_pairs(const std::string& path,
                                                    const RenderConversation& render) {
  return load<PreferenceRecord>(path, [&](ObjectReader& r) {
    if (r.has("messages") && !r.has("prompt")) {
      const Json& messages = r.at("messages");
      auto chosen = conversation_answer(messages, r.get_string("chosen"), render, r.path());
      auto rejected = conversation_answer(messages, r.get_string("rejected"), render, r.path());
      return PreferenceRecord{chosen.first, chosen.second, rejected.second};
    }
    return PreferenceRecord{r.get_string("prompt"), r.get_string("chosen"), r.get_string("rejected")};
  });
}

}  // namespace realign::data
