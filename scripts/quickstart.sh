#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root): installs everything, builds, and runs the main job on its defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/src/apps/realign train examples/addition_ppo.yaml
