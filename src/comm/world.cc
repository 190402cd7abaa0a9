// World: the rendezvous of a worker with the others, the process groups over its ranks (the global group,
// subgroups and a Layout's axis groups, each built once), and run_worker. The watchdog and abort half of
// World is watchdog.cc.
#include "comm/world.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "comm/detail/rendezvous.h"
#include "comm/detail/world_impl.h"
#include "comm/gloo_group.h"
#include "comm/store_keys.h"
#include "core/check.h"
#include "core/error.h"

namespace realign::comm {
namespace {

std::string join(const std::vector<int>& v) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  return os.str();
}

}  // namespace

std::shared_ptr<Group> World::Impl::build(const std::vector<int>& ranks, int group_rank) {
#if !REALIGN_TORCH_HAS_GLOO
  // A wheel's libtorch may come without gloo's headers (core/torch_compat.h), and realign builds no NCCL
  // groups yet: one rank runs (its groups are single_rank_group), several cannot talk.
  (void)group_rank;
  throw Error("cluster", "a group of " + std::to_string(ranks.size()) +
                             " ranks needs Gloo, and the libtorch realign was built against (" +
                             torch_compat::kVersion +
                             ") came without its headers: run one rank per job "
                             "(cluster.nodes=1 cluster.devices_per_node=1)");
#else
  auto prefix = c10::make_intrusive<c10d::PrefixStore>("realign/group/" + join(ranks), store);
  auto opts = c10d::ProcessGroupGloo::Options::create(options.timeout);
  opts->devices.push_back(device);
  opts->threads = 1;  // every collective here is blocking; more workers only add idle threads
  return make_gloo_group(
      c10::make_intrusive<c10d::ProcessGroupGloo>(prefix, group_rank, static_cast<int>(ranks.size()), opts));
#endif
}

World::World(const Rendezvous& rv, const WorldOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.rv = rv;
  m.options = options;
  const bool server = rv.rank == 0 && !rv.external_store;
  m.store = detail::connect_store(rv, server, options.timeout);
  if (options.watchdog) m.watchdog_store = detail::connect_store(rv, false, options.timeout);
  const std::string address = detail::address_toward_master(rv);
  // Gloo's own default binds to the address the hostname resolves to, which on many hosts is a loopback one
  // (Debian maps it to 127.0.1.1) that the other hosts cannot reach: without GLOO_SOCKET_IFNAME, ranks listen
  // on the address their route to the master leaves from.
#if REALIGN_TORCH_HAS_GLOO
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
    m.device = c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  else if (rv.master_addr == "127.0.0.1" || rv.master_addr == "localhost")
    m.device = c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  else if (!address.empty())
    m.device = c10d::ProcessGroupGloo::createDeviceForHostname(address);
  else
    m.device = c10d::ProcessGroupGloo::createDefaultDevice();
#endif
  m.label = detail::host_label(address);
  m.store->set(keys::host(rv.rank), detail::bytes(m.label));
  m.store_ok_ms = Impl::now_ms();
  if (options.watchdog) {
    m.watchdog = std::thread([&m] { m.watchdog_loop(); });
    m.store_monitor = std::thread([&m] { m.store_monitor_loop(); });
  }
  std::vector<int> all(rv.world_size);
  for (int r = 0; r < rv.world_size; ++r) all[r] = r;
  try {
    m.global = rv.world_size == 1 ? single_rank_group() : m.build(all, rv.rank);
  } catch (...) {
    m.stop_threads();  // a joinable thread must not be destroyed by the unwinding
    throw;
  }
  m.heartbeat_armed = true;
  m.groups[all] = m.global;
}

World::~World() {
  Impl& m = *impl_;
  // Say "done" while the watchdog still runs: rank 0 stops expecting heartbeats from a done rank, and a rank
  // still waiting below is still woken by an abort.
  if (!m.aborting) {
    try {
      m.store->set(keys::done(m.rv.rank), detail::bytes("1"));
      m.store->add(keys::kDoneCount, 1);
      // The rank hosting the store keeps it up until everyone is done with it.
      if (m.rv.rank == 0 && !m.rv.external_store) {
        const auto deadline = std::chrono::steady_clock::now() + m.options.timeout;
        while (m.store->add(keys::kDoneCount, 0) < m.rv.world_size &&
               std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    } catch (const std::exception&) {
      // Shutting down: a store already gone changes nothing.
    }
  }
  m.stop_threads();
  m.groups.clear();
  m.global.reset();
}

int World::rank() const { return impl_->rv.rank; }
int World::size() const { return impl_->rv.world_size; }
int World::local_rank() const { return impl_->rv.local_rank; }
const WorldOptions& World::options() const { return impl_->options; }
std::shared_ptr<Group> World::global() { return impl_->global; }

std::shared_ptr<Group> World::subgroup(const std::vector<int>& ranks) {
  Impl& m = *impl_;
  REALIGN_CHECK(!ranks.empty()) << "subgroup of no ranks";
  std::vector<bool> seen(m.rv.world_size, false);
  int me = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    REALIGN_CHECK(ranks[i] >= 0 && ranks[i] < m.rv.world_size)
        << "subgroup [" << join(ranks) << "]: rank " << ranks[i] << " outside a world of " << m.rv.world_size;
    REALIGN_CHECK(!seen[ranks[i]]) << "subgroup [" << join(ranks) << "]: rank " << ranks[i] << " twice";
    seen[ranks[i]] = true;
    if (ranks[i] == m.rv.rank) me = static_cast<int>(i);
  }
  if (me < 0) return nullptr;
  auto it = m.groups.find(ranks);
  if (it != m.groups.end()) return it->second;
  auto g = ranks.size() == 1 ? single_rank_group() : m.build(ranks, me);
  m.groups.emplace(ranks, g);
  return g;
}

std::optional<AxisGroups> World::axis_groups(const Layout& layout) {
  REALIGN_CHECK(layout.first_device >= 0 && layout.first_device + layout.size() <= size())
      << "layout " << to_string(layout) << " does not fit a world of " << size();
  if (!layout.contains(rank())) return std::nullopt;
  AxisGroups a;
  a.coord = layout.coord_of(rank());
  a.tp = subgroup(axis_ranks(layout, rank(), LayoutAxis::kTensor));
  a.dp = subgroup(axis_ranks(layout, rank(), LayoutAxis::kData));
  a.pp = subgroup(axis_ranks(layout, rank(), LayoutAxis::kPipeline));
  if (layout.ep > 1) {
    REALIGN_CHECK((layout.dp * layout.tp) % layout.ep == 0) << "layout " << to_string(layout);
    a.ep = subgroup(expert_ranks(layout, rank()));
    a.edp = subgroup(expert_data_ranks(layout, rank()));
  }
  return a;
}

int run_worker(const std::function<void(World&)>& body) {
  std::unique_ptr<World> world;
  std::string cause;
  try {
    world = World::from_env();
    body(*world);
  } catch (const std::exception& e) {
    cause = detail::describe(e);
  } catch (...) {
    cause = "unknown exception";
  }
  if (!cause.empty()) {
    if (cause.size() > 2000) cause = cause.substr(0, 2000) + "...";
    int code = 1;
    if (world) {
      world->leave_after_abort(world->abort(cause) ? 1 : kPeerAbortExitCode);
    } else {
      const char* rank_env = std::getenv("RANK");
      const std::string rank_label = rank_env && *rank_env ? rank_env : "?";
      std::fprintf(stderr, "realign: rank %s failed: %s\n", rank_label.c_str(), cause.c_str());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  world.reset();
  return 0;
}

}  // namespace realign::comm
