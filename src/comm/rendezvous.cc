// The rendezvous of a worker: where the master is and which rank this is, from torchrun's environment
// variables (rendezvous_from_env, world_options_from_env), and the connection to the master's store.
#include "comm/detail/rendezvous.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "core/error.h"

namespace realign::comm {
namespace {

std::string getenv_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

int env_int(const char* name, std::optional<int> fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) {
    if (fallback) return *fallback;
    throw Error(name,
                "environment variable is not set (start workers with torchrun, srun + these variables, "
                "or realign's local launcher)");
  }
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi)
    throw Error(name, std::string("'") + v + "' is not an integer in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
  return static_cast<int>(x);
}

std::optional<std::chrono::milliseconds> env_seconds(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (*end != '\0' || !(s > 0) || s > 1e7)
    throw Error(name, std::string("'") + v + "' is not a positive number of seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

}  // namespace

Rendezvous rendezvous_from_env() {
  Rendezvous rv;
  rv.master_addr = getenv_or("MASTER_ADDR", "");
  if (rv.master_addr.empty()) throw Error("MASTER_ADDR", "environment variable is not set");
  rv.master_port = env_int("MASTER_PORT", std::nullopt, 1, 65535);
  rv.world_size = env_int("WORLD_SIZE", std::nullopt, 1, 1 << 20);
  rv.rank = env_int("RANK", std::nullopt, 0, rv.world_size - 1);
  rv.local_rank = env_int("LOCAL_RANK", rv.rank, 0, rv.world_size - 1);
  rv.external_store = getenv_or("TORCHELASTIC_USE_AGENT_STORE", "") == "True";
  return rv;
}

WorldOptions world_options_from_env() {
  WorldOptions o;
  if (auto t = env_seconds("REALIGN_COMM_TIMEOUT_S")) o.timeout = *t;
  if (auto t = env_seconds("REALIGN_HEARTBEAT_TIMEOUT_S")) o.heartbeat_timeout = *t;
  return o;
}

namespace detail {

// A UDP connect() only picks the route; nothing is sent.
std::string address_toward_master(const Rendezvous& rv) {
  std::string address;
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_DGRAM;
  if (::getaddrinfo(rv.master_addr.c_str(), std::to_string(rv.master_port).c_str(), &hints, &found) == 0) {
    const int fd = ::socket(found->ai_family, SOCK_DGRAM, 0);
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    char text[INET6_ADDRSTRLEN] = {0};
    if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        ::getnameinfo(reinterpret_cast<sockaddr*>(&local), len, text, sizeof text, nullptr, 0,
                      NI_NUMERICHOST) == 0)
      address = text;
    if (fd >= 0) ::close(fd);
    ::freeaddrinfo(found);
  }
  return address;
}

std::string host_label(const std::string& address) {
  char name[256] = {0};
  if (::gethostname(name, sizeof name - 1) != 0) std::snprintf(name, sizeof name, "?");
  return "host " + std::string(name) + " (" + (address.empty() ? "?" : address) + ")";
}

c10::intrusive_ptr<c10d::TCPStore> connect_store(const Rendezvous& rv, bool server,
                                                 std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(rv.master_port);
  o.isServer = server;
  o.numWorkers = c10::nullopt;
  o.waitWorkers = false;
  o.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(rv.master_addr, o);
}

}  // namespace detail
}  // namespace realign::comm
