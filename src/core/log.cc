#include "core/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace realign {
namespace {

LogLevel level_from_env() {
  const char* env = std::getenv("REALIGN_LOG");
  if (!env) return LogLevel::kWarn;
  if (!std::strcmp(env, "error")) return LogLevel::kError;
  if (!std::strcmp(env, "info")) return LogLevel::kInfo;
  if (!std::strcmp(env, "debug")) return LogLevel::kDebug;
  return LogLevel::kWarn;
}

LogLevel& current_level() {
  static LogLevel level = level_from_env();
  return level;
}

}  // namespace

LogLevel log_level() { return current_level(); }
void set_log_level(LogLevel level) { current_level() = level; }

void log_line(LogLevel level, const std::string& message) {
  static std::mutex mu;
  static const char* names[] = {"error", "warning", "info", "debug"};
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "realign %s: %s\n", names[static_cast<int>(level)], message.c_str());
}

}  // namespace realign
