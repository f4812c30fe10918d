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

# ---- release checks (docs/packaging.md): the install tree, the CMake package
# on two CMake versions, pkg-config, loading, ownership. A missing tool fails.
step "release checks (install tree)"
"$PYTHON" tools/gen_component_docs.py --check
if [ -z "${PTERUN_RELEASE_CMAKES:-}" ]; then
  # Debian's cmake and the newest from PyPI (.ci/run installs it next to $PYTHON).
  PTERUN_RELEASE_CMAKES="/usr/bin/cmake $(dirname "$(command -v "$PYTHON")")/cmake"
fi
REL_ARGS=()
for c in $PTERUN_RELEASE_CMAKES; do REL_ARGS+=(--cmake "$c"); done
REL_PREFIX="$(mktemp -d /tmp/pterun-release-prefix.XXXXXX)"
cmake --install build --prefix "$REL_PREFIX" >/dev/null
"$PYTHON" tools/release_check.py --prefix "$REL_PREFIX" "${REL_ARGS[@]}"

step "examples built against the installed package (CMake and pkg-config)"
rm -rf build-examples
cmake -S examples -B build-examples "${GEN[@]}" -DCMAKE_PREFIX_PATH="$REL_PREFIX" >/dev/null
cmake --build build-examples
build-examples/run_program examples/mlp.pte
PC_DIR="$(dirname "$(find "$REL_PREFIX" -name pterun-kernels-portable.pc | head -1)")"
LIB_DIR="$(PKG_CONFIG_PATH="$PC_DIR" pkg-config --variable=libdir pterun)"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror examples/run_program.c -o build-examples/run_program_pc \
  $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs pterun-kernels-portable) -Wl,-rpath,"$LIB_DIR"
build-examples/run_program_pc examples/mlp.pte
rm -rf "$REL_PREFIX"

step "build with ASan + UBSan"
cmake -S . -B build-asan "${GEN[@]}" -DCMAKE_BUILD_TYPE=Debug "-DPTERUN_SANITIZE=address;undefined" >/dev/null
cmake --build build-asan -j "$JOBS"

step "C tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS"

# ---- robustness (docs/robustness.md): a missing tool is a failure ----------
for tool in clang valgrind; do
  command -v "$tool" >/dev/null || { echo "run_tests.sh: $tool is required (see .ci/run)" >&2; exit 1; }
done

step "threaded tests under ThreadSanitizer"
cmake -S . -B build-tsan "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTERUN_SANITIZE=thread >/dev/null
cmake --build build-tsan -j "$JOBS" --target test_threads test_threadpool test_threaded_models
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir build-tsan -L threads --output-on-failure

step "core and robustness tests under valgrind"
VG=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1)
for t in test_corpus test_malformed test_method test_registry test_bad_inputs test_oom test_file_change test_threads; do
  echo "valgrind $t"
  "${VG[@]}" "build/bin/$t" >/dev/null
done
SEEDS=(tests/fixtures tests/cli/data)
[ -d ../shared/corpus ] && SEEDS+=(../shared/corpus)
for t in program method execute npy ptd; do
  echo "valgrind fuzz_replay_$t"
  "${VG[@]}" "build/bin/fuzz_replay_$t" "${SEEDS[@]}" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" >/dev/null
done

step "short fuzz run of every target (libFuzzer, ASan + UBSan)"
# A fixed seed and a fixed number of runs make this step reproducible: what
# passes here passes in CI. Longer campaigns: tools/fuzz.sh SECONDS.
FUZZ_FLAGS="-seed=1 -runs=${FUZZ_RUNS:-20000}" PAR="${JOBS}" bash tools/fuzz.sh 300

step "Python tests"
# (tests/python/test_api*.py need the installed wheel: the next step runs them.)
PTERUN_CLI="$PWD/build/bin/pterun" "$PYTHON" -m pytest -q tests/python \
  --ignore-glob='tests/python/test_api*.py'

step "Python API tests against the installed wheel"
# The wheel (pip wheel . = scikit-build-core + cmake --install), installed into
# a fresh venv with only pip's numpy and pytest; the torch-marked tests then
# run with $PYTHON (which has torch) and the same wheel installed with --target.
WHEEL_WORK="$PWD/build-wheel"
rm -rf "$WHEEL_WORK" && mkdir -p "$WHEEL_WORK/dist"
"$PYTHON" -m pip wheel . --no-deps -w "$WHEEL_WORK/dist"
WHEEL=("$WHEEL_WORK"/dist/pterun-*.whl)
"$PYTHON" -m venv "$WHEEL_WORK/venv"
"$WHEEL_WORK/venv/bin/python" -m pip install -q "${WHEEL[0]}" pytest
"$WHEEL_WORK/venv/bin/python" -m pytest -q -p no:cacheprovider -m "not torch" tests/python/test_api*.py

step "release checks (installed wheel)"
WHEEL_SITE="$("$WHEEL_WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$PYTHON" tools/release_check.py --wheel-site "$WHEEL_SITE" --python "$WHEEL_WORK/venv/bin/python" "${REL_ARGS[@]}"
"$PYTHON" -m pip install -q --no-deps --target "$WHEEL_WORK/target" "${WHEEL[0]}"
PYTHONPATH="$WHEEL_WORK/target" "$PYTHON" -m pytest -q -p no:cacheprovider -m torch tests/python/test_api*.py
