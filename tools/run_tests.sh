#!/usr/bin/env bash
# The whole test suite: C tests (release build), the same C tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, then the Python tests.
# Usage: bash tools/run_tests.sh          (PYTHON=... to pick the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
JOBS="${JOBS:-$(nproc)}"
GEN=()
command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)

step() { printf '\n==== %s ====\n' "$*"; }

step "build (RelWithDebInfo)"
cmake -S . -B build "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS"

step "C tests"
ctest --test-dir build --output-on-failure -j "$JOBS"

step "build with ASan + UBSan"
cmake -S . -B build-asan "${GEN[@]}" -DCMAKE_BUILD_TYPE=Debug "-DPTERUN_SANITIZE=address;undefined" >/dev/null
cmake --build build-asan -j "$JOBS"

step "C tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS"

step "Python tests"
PTERUN_CLI="$PWD/build/bin/pterun" "$PYTHON" -m pytest -q tests/python
