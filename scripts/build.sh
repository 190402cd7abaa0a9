#!/usr/bin/env bash
# Configures and builds realign into build/ (-O2, Ninja, one job per core unless REALIGN_JOBS says otherwise).
# `build.sh` builds every target (the libraries, the `realign` binary, tests and benchmarks);
# `build.sh TARGET...` only those and what they need, e.g. `build.sh realign` for the binary alone.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${REALIGN_JOBS:-$(nproc)}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja
fi
ninja -C build -j "$jobs" "$@"
