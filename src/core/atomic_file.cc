#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace realign {

namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw Error(path, what + ": " + std::strerror(err));
}

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(const ChunkWriter& write)>& produce) {
  std::string tmpl = path + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) fail(path, "cannot create a temporary file beside it", errno);
  const std::string tmp(name.data());
  auto cleanup = [&] {
    ::close(fd);
    ::unlink(tmp.c_str());
  };
  try {
    produce([&](const void* data, size_t bytes) {
      const char* p = static_cast<const char*>(data);
      while (bytes > 0) {
        ssize_t n = ::write(fd, p, bytes);
        if (n < 0) {
          if (errno == EINTR) continue;
          fail(path, "write failed", errno);
        }
        p += n;
        bytes -= static_cast<size_t>(n);
      }
    });
  } catch (...) {
    cleanup();
    throw;
  }
  // mkstemp creates 0600; give the file the usual permissions (subject to the umask).
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0 || ::fsync(fd) != 0) {
    int err = errno;
    cleanup();
    fail(path, "cannot fsync", err);
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot close", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot rename the temporary file over it", err);
  }
  // Persist the rename itself.
  int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_text_file(const std::string& path, std::string_view text) {
  write_file_atomically(path, [&](const ChunkWriter& write) { write(text.data(), text.size()); });
}

}  // namespace realign
