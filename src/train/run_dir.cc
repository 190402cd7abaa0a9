#include "train/run_dir.h"

#include <ctime>
#include <filesystem>

#include "core/error.h"

namespace realign::train {
namespace fs = std::filesystem;

RunDir create_run_dir(const std::string& root) {
  std::error_code ec;
  fs::create_directories(fs::path(root) / "checkpoints", ec);
  if (ec) throw Error(root, "cannot create the run directory: " + ec.message());
  return RunDir{root};
}

RunDir open_run_dir(const std::string& root) {
  RunDir dir{root};
  if (!fs::is_regular_file(dir.config_file()))
    throw Error(root, "not a run directory (no config.yaml); --resume takes the directory a run wrote");
  std::error_code ec;
  fs::create_directories(dir.checkpoints(), ec);
  return dir;
}

std::string default_run_dir(const std::string& parent, const std::string& stem) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  std::string base = parent + "/" + stem + "-" + stamp;
  std::string path = base;
  for (int i = 2; fs::exists(path); ++i) path = base + "-" + std::to_string(i);
  return path;
}

}  // namespace realign::train
