#!/usr/bin/env bash
# Prepares, here, what scripts/gpu-check.sh needs on a lent GPU machine, which has no package registry: the
# Debian packages the build needs beside torch (the PyTorch wheel there brings libtorch), downloaded as .debs
# into .gpu-deps/ (ignored by git; the device tool's `carry` takes it along). gpu-check.sh unpacks them with
# dpkg-deb -x into a prefix of its own, never over /.
# Left out on purpose: libtorch-dev and libopenblas (the wheel has its own), and libgloo-dev: Debian's gloo
# headers are older than the ones PyTorch 2.x's ProcessGroupGloo.hpp is written against, so the build must see
# only the wheel's own (core/torch_compat.h).
# usage: bash scripts/gpu-prepare.sh [--list]   (--list: print the packages and exit)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.gpu-deps

# Headers and CMake configs (the -dev packages), the shared libraries they link (the machine's own may have
# other sonames: Ubuntu 24.04 has ICU 74, not 72), and pkg-config for src/tokenizer's and src/jinja's
# pkg_check_modules.
packages=(
  nlohmann-json3-dev
  libyaml-cpp-dev libyaml-cpp0.7
  libgtest-dev libgmock-dev googletest
  libcli11-dev
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3
  libicu-dev libicu72
  libsentencepiece-dev libsentencepiece0
  pkgconf pkgconf-bin libpkgconf3
)
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi
[ $# -eq 0 ] || { echo "usage: $0 [--list]" >&2; exit 1; }
command -v apt-get >/dev/null || { echo "gpu-prepare: needs apt-get (Debian 12, as the project's machines)" >&2; exit 1; }
grep -qx '/.gpu-deps/' .gitignore || { echo "gpu-prepare: .gitignore must list /.gpu-deps/" >&2; exit 1; }

mkdir -p "$dest"
# apt-get download writes into the current directory; versions already there are kept.
(cd "$dest" && apt-get download "${packages[@]}")
for p in "${packages[@]}"; do
  ls "$dest/${p}"_*.deb >/dev/null 2>&1 || { echo "gpu-prepare: $p was not downloaded" >&2; exit 1; }
done
# One version of each: an older download beside a newer one would unpack twice.
for p in "${packages[@]}"; do
  mapfile -t versions < <(ls -1 "$dest/${p}"_*.deb | sort -V)
  [ "${#versions[@]}" -le 1 ] || rm -f "${versions[@]:0:${#versions[@]}-1}"
done
echo "gpu-prepare: $(ls "$dest"/*.deb | wc -l) packages, $(du -sh "$dest" | cut -f1) in $dest/"
echo "next, on the lent machine: carry [\"$dest\"], command: bash scripts/gpu-check.sh \$OUT"
