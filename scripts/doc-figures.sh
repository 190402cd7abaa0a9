#!/usr/bin/env bash
# The README's and docs/engines.md's deterministic figures: builds `realign` and the checker into build/
# (scripts/build.sh), runs the command each `<!-- figure: ... -->` marker names and prints every quoted figure
# beside what the command prints now (exit 1 where they differ). `doc-figures.sh --write` puts the printed
# figures into the files (into the marker and the text after it); a figure it cannot place is named and left.
# `doc-figures.sh [--write] FILE...` checks those files (paths from the repository's root).
# tests/e2e/doc_figures_test.cc runs the same check under ctest; tests/e2e/doc_figures.h says how a marker reads.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh realign realign_doc_figures >/dev/null
exec build/tests/e2e/realign_doc_figures "$@"
