#include "data/jsonl.h"

#include <cstdio>
#include <sstream>

#include "core/read_file.h"

namespace realign::data {

std::vector<JsonlRecord> parse_jsonl(const std::string& text, const std::string& source_name) {
  std::vector<JsonlRecord> out;
  std::istringstream in(text);
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = source_name + ":" + std::to_string(number);
    try {
      out.push_back({Json::parse(line), where});
    } catch (const Json::parse_error& e) {
      std::string reason = e.what();
      const auto colon = reason.find("syntax error");
      throw Error(where, "not valid JSON (" + (colon == std::string::npos ? reason : reason.substr(colon)) + ")");
    }
  }
  return out;
}

std::vector<JsonlRecord> read_jsonl(const std::string& path) { return parse_jsonl(read_file(path), path); }

JsonlWriter::JsonlWriter(const std::string& path, bool append) : path_(path) {
  file_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file_) throw Error(path, "cannot open for writing");
}

JsonlWriter::~JsonlWriter() {
  if (file_) std::fclose(file_);
}

void JsonlWriter::write(const Json& value) {
  const std::string line = value.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw Error(path_, "write failed");
}

}  // namespace realign::data
