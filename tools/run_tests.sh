#!/usr/bin/env bash
# The whole test suite: C tests (release build), the same C tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, every standard build type
# with GCC and Clang, robustness (TSan, valgrind, fuzzing), then the Python
# tests. Warnings are errors in every build here (PTERUN_WERROR=ON).
#
# Usage: bash tools/run_tests.sh
#   PYTHON=/path/to/python  an interpreter with tools/requirements-export.txt;
#                           without it the script makes its own venv
#                           (.venv-tests) with exactly those packages.
#   JOBS=N                  parallel build jobs (default: nproc).
# System tools it needs are checked first; as root on Debian it installs the
# missing ones with apt-get, otherwise it names the packages and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${JOBS:-$(nproc)}"

step() { printf '\n==== %s ====\n' "$*"; }
die() {
  echo "run_tests.sh: $*" >&2
  exit 1
}

# ---- system tools -------------------------------------------------------------
# tool check -> Debian package. Every one is required (a missing tool is a
# failure, not a skip); ninja is optional (Makefiles otherwise).
need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
have cmake || need_pkgs+=(cmake)
have cc && have make || need_pkgs+=(build-essential)
have g++ || need_pkgs+=(g++)
have readelf || need_pkgs+=(binutils)
have pkg-config || need_pkgs+=(pkg-config)
# libpterun_textgen's tokenizer split regexes (docs/dependencies.md).
[ -f /usr/include/pcre2.h ] || need_pkgs+=(libpcre2-dev)
have valgrind || need_pkgs+=(valgrind)
have clang || need_pkgs+=(clang)
# Cross and emulated targets: bare-metal Cortex-M (newlib, QEMU's mps2/mps3
# boards) and Linux aarch64 under qemu-user.
have arm-none-eabi-gcc && [ -d /usr/lib/arm-none-eabi/newlib ] ||
  need_pkgs+=(gcc-arm-none-eabi libnewlib-arm-none-eabi)
have qemu-system-arm || need_pkgs+=(qemu-system-arm)
have aarch64-linux-gnu-gcc && [ -f /usr/aarch64-linux-gnu/include/stdio.h ] ||
  need_pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
have qemu-aarch64 || need_pkgs+=(qemu-user)
# compiler-rt: libFuzzer and clang's sanitizer runtimes (a program must link).
fuzz_links() {
  local exe
  exe="$(mktemp /tmp/pterun-rtcheck.XXXXXX)"
  echo 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { return 0; }' |
    clang -x c -fsanitize=fuzzer,address,undefined - -o "$exe" >/dev/null 2>&1
  local rc=$?
  rm -f "$exe"
  return $rc
}
have clang && fuzz_links || need_pkgs+=(libclang-rt-dev)
if [ -z "${PYTHON:-}" ]; then
  have python3 || need_pkgs+=(python3)
  have python3 && python3 -c 'import ensurepip, venv' 2>/dev/null || need_pkgs+=(python3-venv)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ] && have apt-get; then
    step "installing ${need_pkgs[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  else
    die "missing system tools; on Debian: sudo apt-get install ${need_pkgs[*]}"
  fi
fi

# ---- Python ---------------------------------------------------------------------
if [ -z "${PYTHON:-}" ]; then
  VENV="$PWD/.venv-tests"
  STAMP="$VENV/.requirements"
  if ! cat tools/requirements-export.txt tools/requirements-test.txt | cmp -s - "$STAMP" 2>/dev/null; then
    step "Python venv $VENV (tools/requirements-export.txt, tools/requirements-test.txt)"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -r tools/requirements-export.txt
    "$VENV/bin/python" -m pip install -q --upgrade -r tools/requirements-test.txt
    cat tools/requirements-export.txt tools/requirements-test.txt >"$STAMP"
  fi
  PYTHON="$VENV/bin/python"
fi

# ---- build directories: developer builds (warnings are errors) -------------------
. tools/build_dirs.sh
configure() { # build dir, cmake args...
  local dir="$1" g=()
  shift
  mapfile -t g < <(pt_gen_args "$dir")
  cmake -S . -B "$dir" "${g[@]}" -DPTERUN_WERROR=ON "$@" >/dev/null
}

step "build (RelWithDebInfo)"
configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$JOBS"

step "C tests"
ctest --test-dir build --output-on-failure -j "$JOBS"

step "bare-metal Cortex-M4 and Cortex-M55 firmware under qemu-system-arm"
JOBS="$JOBS" bash tools/run_firmware.sh build "$PYTHON"

step "Linux aarch64: cross build, C tests under qemu-aarch64 -cpu max"
# Every ctest but the exhaustive GEMM/vector-math sweeps (minutes each under
# emulation; with no Arm SIMD variant yet they run the same portable code as
# the x86-64 runs with PTERUN_ISA_MASK=0): unit, golden, CLI and the fixture
# programs run by the aarch64 CLI (the cmake -P scripts honour the emulator).
# (No PCRE2 for the target here: libpterun_textgen without its regex tokenizers.)
configure build-aarch64 -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DPTERUN_INSTALL=OFF -DPTERUN_WITH_PCRE2=OFF
cmake --build build-aarch64 -j "$JOBS"
ctest --test-dir build-aarch64 --output-on-failure -j "$JOBS" --timeout 600 \
  -E '^(test_gemm_dispatch|test_gemm_dispatch_scalar|test_vmath|test_vmath_portable)$'

# ---- release checks (docs/packaging.md): the install tree, the CMake package
# on two CMake versions, pkg-config, loading, ownership. A missing tool fails.
step "release checks (install tree)"
"$PYTHON" tools/gen_component_docs.py --check
if [ -z "${PTERUN_RELEASE_CMAKES:-}" ]; then
  # Debian's cmake and the newest from PyPI (installed next to $PYTHON).
  PTERUN_RELEASE_CMAKES="/usr/bin/cmake $(dirname "$(command -v "$PYTHON")")/cmake"
fi
REL_ARGS=()
for c in $PTERUN_RELEASE_CMAKES; do REL_ARGS+=(--cmake "$c"); done
REL_PREFIX="$(mktemp -d /tmp/pterun-release-prefix.XXXXXX)"
cmake --install build --prefix "$REL_PREFIX" >/dev/null
"$PYTHON" tools/release_check.py --prefix "$REL_PREFIX" "${REL_ARGS[@]}"

step "examples built against the installed package (CMake and pkg-config)"
rm -rf build-examples
mapfile -t EX_GEN < <(pt_gen_args build-examples)
cmake -S examples -B build-examples "${EX_GEN[@]}" -DCMAKE_PREFIX_PATH="$REL_PREFIX" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build build-examples
build-examples/run_program examples/mlp.pte
PC_DIR="$(dirname "$(find "$REL_PREFIX" -name pterun-kernels-portable.pc | head -1)")"
LIB_DIR="$(PKG_CONFIG_PATH="$PC_DIR" pkg-config --variable=libdir pterun)"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror examples/run_program.c -o build-examples/run_program_pc \
  $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs pterun-kernels-portable) -Wl,-rpath,"$LIB_DIR"
build-examples/run_program_pc examples/mlp.pte
# Text generation from C against the package (CMake and pkg-config builds).
build-examples/generate_text tests/fixtures/llm_text/model.pte \
  tests/fixtures/tokenizers/spm_bpe.model "$(head -1 tests/fixtures/llm_text/prompt_text.txt)" 8
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror examples/generate_text.c -o build-examples/generate_text_pc \
  $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs pterun-kernels-portable \
    pterun-kernels-llm pterun-textgen) -Wl,-rpath,"$LIB_DIR"
build-examples/generate_text_pc tests/fixtures/llm_text/model.pte \
  tests/fixtures/tokenizers/hf_llama3.json "$(head -1 tests/fixtures/llm_text/prompt_text.txt)" 8
# The README's C snippet (as tests/CMakeLists.txt extracts it), linked with
# the README's own pkg-config line.
README_PC="$(sed -n 's/.*(`pkg-config --cflags --libs \([a-z -]*\)`).*/\1/p' README.md)"
[ -n "$README_PC" ] || die "README.md: no pkg-config line found"
mkdir -p build-examples/readme && cp examples/mlp.pte build-examples/readme/model.pte
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Wextra -Werror -Ibuild/tests/readme tests/release/readme_snippet.c \
  -o build-examples/readme/readme_snippet \
  $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs $README_PC) -Wl,-rpath,"$LIB_DIR"
(cd build-examples/readme && ./readme_snippet)

# ---- static libraries (BUILD_SHARED_LIBS=OFF; docs/packaging.md) -------------------
step "static build: every component as lib*.a, C tests"
configure build-static -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_SHARED_LIBS=OFF
cmake --build build-static -j "$JOBS"
ctest --test-dir build-static --output-on-failure -j "$JOBS"
step "release checks (static install tree; reference: the shared install)"
STATIC_PREFIX="$(mktemp -d /tmp/pterun-static-prefix.XXXXXX)"
cmake --install build-static --prefix "$STATIC_PREFIX" >/dev/null
"$PYTHON" tools/release_check.py --static --prefix "$STATIC_PREFIX" --reference-prefix "$REL_PREFIX" \
  "${REL_ARGS[@]}"
rm -rf "$REL_PREFIX" "$STATIC_PREFIX"

step "build with ASan + UBSan"
configure build-asan -DCMAKE_BUILD_TYPE=Debug "-DPTERUN_SANITIZE=address;undefined"
cmake --build build-asan -j "$JOBS"

step "C tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS"

# ---- every standard build type, GCC and Clang, warnings as errors -----------------
# Libraries and CLI only (no tests, no examples). GCC RelWithDebInfo and Debug
# are the two builds above.
for cfg in gcc:Release gcc:MinSizeRel clang:Debug clang:Release clang:RelWithDebInfo clang:MinSizeRel; do
  compiler="${cfg%%:*}" type="${cfg#*:}"
  dir="build-types/$compiler-$type"
  step "build $type with $compiler (-Werror)"
  CC="$compiler" configure "$dir" -DCMAKE_BUILD_TYPE="$type" -DPTERUN_BUILD_TESTS=OFF \
    -DPTERUN_BUILD_EXAMPLES=OFF -DPTERUN_INSTALL=OFF
  cmake --build "$dir" -j "$JOBS"
done

# ---- robustness (docs/robustness.md) ----------------------------------------------
step "threaded tests under ThreadSanitizer"
configure build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTERUN_SANITIZE=thread
cmake --build build-tsan -j "$JOBS" --target test_threads test_threadpool test_threaded_models
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir build-tsan -L threads --output-on-failure

step "core and robustness tests and the example under valgrind"
VG=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1)
for t in test_corpus test_malformed test_method test_registry test_bad_inputs test_oom test_file_change test_threads; do
  echo "valgrind $t"
  "${VG[@]}" "build/bin/$t" >/dev/null
done
echo "valgrind run_program"
"${VG[@]}" build/bin/run_program examples/mlp.pte >/dev/null
SEEDS=(tests/fixtures tests/cli/data tests/corpus)
# Every target the build made (a new target is replayed without editing this).
for exe in build/bin/fuzz_replay_*; do
  t="${exe##*/fuzz_replay_}"
  dirs=("${SEEDS[@]}")
  for d in "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t"; do [ -d "$d" ] && dirs+=("$d"); done
  echo "valgrind fuzz_replay_$t"
  "${VG[@]}" "$exe" "${dirs[@]}" >/dev/null
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
# The manylinux tag installers accept (auditwheel); everything below uses that wheel.
BUILT=("$WHEEL_WORK"/dist/pterun-*.whl)
"$PYTHON" tools/check_wheel.py "${BUILT[0]}" "$WHEEL_WORK/wheelhouse"
WHEEL=("$WHEEL_WORK"/wheelhouse/pterun-*-manylinux_*.whl)
"$PYTHON" -m venv "$WHEEL_WORK/venv"
"$WHEEL_WORK/venv/bin/python" -m pip install -q "${WHEEL[0]}" pytest
"$WHEEL_WORK/venv/bin/python" -m pytest -q -p no:cacheprovider -m "not torch" tests/python/test_api*.py

step "release checks (installed wheel)"
WHEEL_SITE="$("$WHEEL_WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$PYTHON" tools/release_check.py --wheel-site "$WHEEL_SITE" --python "$WHEEL_WORK/venv/bin/python" "${REL_ARGS[@]}"
"$PYTHON" -m pip install -q --no-deps --target "$WHEEL_WORK/target" "${WHEEL[0]}"
PYTHONPATH="$WHEEL_WORK/target" "$PYTHON" -m pytest -q -p no:cacheprovider -m torch tests/python/test_api*.py

step "all tests passed"
