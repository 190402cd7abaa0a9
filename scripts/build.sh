#!/usr/bin/env bash
# Configures and builds realign into build/ (Release-like -O2, Ninja, 2 parallel jobs by default).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${REALIGN_JOBS:-$(nproc)}"
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja "$@"
fi
ninja -C build -j "$jobs"
