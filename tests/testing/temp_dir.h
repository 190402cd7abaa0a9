// TempDir: a fresh directory under the build tree for one test, removed with its contents afterwards.
#pragma once

#include <string>

namespace realign::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& contents);

}  // namespace realign::testing
