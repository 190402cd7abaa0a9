// Minimal leveled logging to stderr; the level comes from REALIGN_LOG (error, warn, info, debug).
#pragma once

#include <sstream>
#include <string>

namespace realign {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

LogLevel log_level();
void set_log_level(LogLevel level);
void log_line(LogLevel level, const std::string& message);

namespace detail {
class LogMessage {
 public:
  explicit LogMessage(LogLevel level) : level_(level) {}
  ~LogMessage() { log_line(level_, stream_.str()); }
  template <class T>
  LogMessage& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};
}  // namespace detail

}  // namespace realign

#define REALIGN_LOG(level)                                                       \
  if (::realign::LogLevel::level > ::realign::log_level()) {                     \
  } else                                                                         \
    ::realign::detail::LogMessage(::realign::LogLevel::level)
