// broadcast_json: a JSON value from one rank to every rank of a group. Statistics of a call that runs on a
// subset of the ranks (a train call's losses and gradient norm) reach the ranks outside it this way, so the
// metrics and the progress bar on rank 0 are right wherever the call ran. Numbers travel as JSON text, which
// nlohmann writes with round-trip precision: every rank gets the root's doubles bit for bit.
#pragma once

#include "comm/group.h"
#include "core/json.h"

namespace realign::runtime {

// Collective over `group`; `value` matters on `root` only. Returns the root's value on every rank.
Json broadcast_json(comm::Group& group, const Json& value, int root);

}  // namespace realign::runtime
