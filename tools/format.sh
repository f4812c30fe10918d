#!/usr/bin/env bash
# Applies the tree's C dialect (.clang-format) to every tracked C source, or
# with --check fails listing the files that differ. Needs the pinned
# clang-format from tools/requirements-dev.txt (CLANG_FORMAT=... to pick one).
set -euo pipefail
cd "$(dirname "$0")/.."
CF="${CLANG_FORMAT:-clang-format}"
command -v "$CF" >/dev/null || { echo "format.sh: $CF not found (pip install -r tools/requirements-dev.txt)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.inc' '*.cpp' | grep -v '^tests/fuzz/corpus/')
if [ "${1:-}" = "--check" ]; then
  "$CF" --dry-run --Werror "${files[@]}"
  echo "format.sh: ${#files[@]} files follow .clang-format"
else
  "$CF" -i "${files[@]}"
fi
