// REALIGN_CHECK: an internal invariant. A failure is a bug (not a user error): print file:line and abort.
#pragma once

#include <sstream>
#include <string>

namespace realign::detail {

[[noreturn]] void check_failed(const char* file, int line, const char* condition, const std::string& message);

// Collects `<<` arguments after a failed condition, then aborts in its destructor.
class CheckMessage {
 public:
  CheckMessage(const char* file, int line, const char* condition)
      : file_(file), line_(line), condition_(condition) {}
  [[noreturn]] ~CheckMessage() { check_failed(file_, line_, condition_, stream_.str()); }
  template <class T>
  CheckMessage& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  const char* file_;
  int line_;
  const char* condition_;
  std::ostringstream stream_;
};

}  // namespace realign::detail

#define REALIGN_CHECK(cond) \
  if (cond) {               \
  } else                    \
    ::realign::detail::CheckMessage(__FILE__, __LINE__, #cond)
