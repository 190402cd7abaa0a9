#include "train/thread_budget.h"

#include <algorithm>
#include <cstdlib>

namespace realign::train {

ThreadBudget thread_budget(int64_t configured, int cores, int local_workers) {
  cores = std::max(1, cores);
  local_workers = std::max(1, local_workers);
  ThreadBudget b;
  if (configured <= 0) {
    b.threads = std::max(1, cores / local_workers);
    return b;
  }
  b.threads = int(configured);
  if (int64_t(b.threads) * local_workers > cores)
    b.warning = "train.threads = " + std::to_string(b.threads) + " for each of " +
                std::to_string(local_workers) + " workers on this node asks for " +
                std::to_string(b.threads * local_workers) + " threads on " + std::to_string(cores) +
                " cores; the workers will wait on each other (leave " + "train.threads unset for " +
                std::to_string(std::max(1, cores / local_workers)) + " each)";
  return b;
}

int local_workers_from_env(int fallback) {
  const char* v = std::getenv("LOCAL_WORLD_SIZE");
  if (v == nullptr) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end != v && *end == '\0' && n > 0 ? int(n) : fallback;
}

}  // namespace realign::train
