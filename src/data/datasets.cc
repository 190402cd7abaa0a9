#include "data/datasets.h"

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

std::vector<PromptRecord> load_prompts(const std::string& path) {
  return load<PromptRecord>(path, [](ObjectReader& r) {
    return PromptRecord{r.get_string("prompt"), r.get_string("answer", "")};
  });
}

std::vector<SftRecord> load_sft_pairs(const std::string& path) {
  return load<SftRecord>(path, [](ObjectReader& r) {
    return SftRecord{r.get_string("prompt"), r.get_string("response")};
  });
}

std::vector<PreferenceRecord> load_preference_pairs(const std::string& path) {
  return load<PreferenceRecord>(path, [](ObjectReader& r) {
    return PreferenceRecord{r.get_string("prompt"), r.get_string("chosen"), r.get_string("rejected")};
  });
}

}  // namespace realign::data
