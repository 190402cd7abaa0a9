// What World (world.cc) needs of the rendezvous (rendezvous.cc): the connection to the master's TCPStore and
// how this process names its host in messages. Internal to comm/.
#pragma once

#include <chrono>
#include <string>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "comm/world.h"

namespace realign::comm::detail {

// A client of the master's TCPStore, or the store itself when `server` (rank 0 without an external store).
c10::intrusive_ptr<c10d::TCPStore> connect_store(const Rendezvous& rv, bool server,
                                                 std::chrono::milliseconds timeout);

// The address this process reaches the master from ("" if there is no route).
std::string address_toward_master(const Rendezvous& rv);

// "host NAME (ADDRESS)", so a message about a rank on another machine says which machine (hosts in network
// namespaces share a hostname, not an address).
std::string host_label(const std::string& address);

}  // namespace realign::comm::detail
