#!/usr/bin/env bash
# Builds realign and runs the whole test suite (ctest). Installs missing system packages first when root.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! bash scripts/install-deps.sh --check; then
  bash scripts/install-deps.sh
fi
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "${REALIGN_JOBS:-$(nproc)}"
