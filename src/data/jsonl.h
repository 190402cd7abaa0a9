// JSON Lines files: one JSON value per line. Errors name the file and the 1-based line.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace realign::data {

struct JsonlRecord {
  Json value;
  std::string where;  // "prompts.jsonl:12", for error messages about this record's fields
};

// Blank lines are skipped; anything else that is not valid JSON is an Error at "file:line".
std::vector<JsonlRecord> read_jsonl(const std::string& path);
std::vector<JsonlRecord> parse_jsonl(const std::string& text, const std::string& source_name);

// Appends one compact JSON line and flushes (metrics are read while a run goes on).
class JsonlWriter {
 public:
  explicit JsonlWriter(const std::string& path, bool append = true);
  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  void write(const Json& value);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace realign::data
