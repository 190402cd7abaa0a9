// Keys that workers (World) and the local launcher share in the rendezvous TCPStore.
#pragma once

#include <string>

namespace realign::comm::keys {

inline const std::string kAbort = "realign/abort";             // "rank R failed: cause", first writer wins
inline const std::string kAbortCount = "realign/abort_count";  // add(1) == 1 elects that first writer
inline std::string heartbeat(int rank) { return "realign/heartbeat/" + std::to_string(rank); }
inline std::string done(int rank) { return "realign/done/" + std::to_string(rank); }
inline const std::string kDoneCount = "realign/done_count";
inline const std::string kLeftCount = "realign/left_count";  // ranks that left after a failure
// "host NAME (ADDRESS)" of a rank, written at rendezvous, so that a failure message names the machine.
inline std::string host(int rank) { return "realign/host/" + std::to_string(rank); }

}  // namespace realign::comm::keys
