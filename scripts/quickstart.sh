#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root): installs what the main job needs, builds the `realign` binary alone
# (tests and benchmarks come with scripts/test.sh), and runs the main job on its defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --main
bash scripts/build.sh realign
./build/src/apps/realign train examples/addition_ppo.yaml
