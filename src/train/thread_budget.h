// How many intra-op threads a training worker uses: its share of the node's cores. Workers of one node that
// together ask for more threads than the node has cores wait on each other (OpenMP spins, the scheduler
// swaps them): on 2 cores, 4 workers with 2 threads each ran PPO 11x slower than with 1 thread each.
#pragma once

#include <cstdint>
#include <string>

namespace realign::train {

struct ThreadBudget {
  int threads = 1;
  std::string warning;  // non-empty when an explicit count oversubscribes the node's cores
};

// `configured`: train.threads (0: automatic); `cores`: the node's cores; `local_workers`: worker processes on
// this node (LOCAL_WORLD_SIZE, as torchrun and `realign train` set it). Automatic gives
// max(1, cores / local_workers).
ThreadBudget thread_budget(int64_t configured, int cores, int local_workers);

// LOCAL_WORLD_SIZE when set (a positive number), else `fallback`.
int local_workers_from_env(int fallback);

}  // namespace realign::train
