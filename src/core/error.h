// realign::Error: the one exception type for bad user input; it names the config path of the offending field.
#pragma once

#include <stdexcept>
#include <string>

namespace realign {

class Error : public std::runtime_error {
 public:
  // path: where the bad value lives ("plan.mfcs[3].tp", "model.safetensors"); may be empty.
  Error(std::string path, const std::string& message)
      : std::runtime_error(path.empty() ? message : path + ": " + message), path_(std::move(path)) {}
  explicit Error(const std::string& message) : Error("", message) {}

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace realign
