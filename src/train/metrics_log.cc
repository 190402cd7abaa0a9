#include "train/metrics_log.h"

#include <filesystem>

#include "core/atomic_file.h"
#include "data/jsonl.h"

namespace realign::train {

std::vector<Json> read_metrics(const std::string& path) {
  std::vector<Json> out;
  if (!std::filesystem::exists(path)) return out;
  for (auto& record : data::read_jsonl(path)) out.push_back(std::move(record.value));
  return out;
}

void truncate_metrics_after(const std::string& path, int64_t step) {
  if (!std::filesystem::exists(path)) return;
  std::string kept;
  for (const Json& line : read_metrics(path)) {
    if (line.contains("step") && line["step"].is_number_integer() && line["step"].get<int64_t>() > step)
      continue;
    kept += line.dump() + "\n";
  }
  write_text_file(path, kept);
}

}  // namespace realign::train
