#!/usr/bin/env bash
# The whole test suite: C tests (release build), the same C tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, every standard build type
# with GCC and Clang (each one runs the C tests too, and all give the same
# output bits), robustness (TSan, valgrind, fuzzing), then the Python tests. Warnings are errors in every
# build here (PTERUN_WERROR=ON).
#
# Every stage runs even when an earlier one failed; the end prints a table
# (stage, result, test counts, time) and, alone on the last line,
# "N passed, M failed" (stages). Exit status 0 only when every stage passed.
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
have qemu-aarch64 && have qemu-x86_64 || need_pkgs+=(qemu-user)
# The aarch64 manylinux wheel is unpacked to run its CLI (st_manylinux).
have unzip || need_pkgs+=(unzip)
# SIMDe's portable intrinsics: the AVX-512 microkernels, emulated (st_variants).
[ -f /usr/include/simde/x86/avx512.h ] || need_pkgs+=(libsimde-dev)
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

# ---- stages -------------------------------------------------------------------------
# stage TITLE COMMAND [ARGS...]: runs COMMAND (a function below or any
# program) in a subshell with errexit, output shown and kept in a log; a
# failure is recorded, not fatal. Adding a stage is one `stage` line.
STAGE_LOGS="$(mktemp -d /tmp/pterun-stages.XXXXXX)"
ST_NAMES=() ST_RESULTS=() ST_COUNTS=() ST_TIMES=()
# The ctest and pytest totals a stage's log reports (summed over its runs),
# and tools/compare_builds.py's closing line.
stage_counts() { # log file
  awk '
    / tests passed(, [0-9]+ tests? failed)? out of [0-9]+/ {
      for (i = 1; i <= NF; ++i) if ($i == "out") ct += $(i + 2)
      for (i = 1; i <= NF; ++i) if ($i ~ /^failed$/) { cf += $(i - 2); break }
      nc++
    }
    /^(=+ )?[0-9]+ (passed|failed|errors?|skipped)[ ,].* in [0-9.]+s/ {
      line = $0; gsub(/=/, "", line)
      n = split(line, w, /[ ,]+/)
      for (i = 1; i < n; ++i) {
        if (w[i + 1] == "passed") pp += w[i]
        else if (w[i + 1] == "failed") pf += w[i]
        else if (w[i + 1] == "skipped") ps += w[i]
        else if (w[i + 1] ~ /^errors?$/) pe += w[i]
      }
      np++
    }
    /^[0-9]+ programs x [0-9]+ modes x [0-9]+ builds: / { cb = $0 } # tools/compare_builds.py
    /^difftest: [0-9]+ programs, / { cb = $0 } # tools/difftest
    END {
      out = cb
      if (nc) out = out (out ? "; " : "") sprintf("ctest %d passed, %d failed", ct - cf, cf)
      if (np) out = out (out ? "; " : "") sprintf("pytest %d passed, %d failed%s%s", pp, pf,
                                                   ps ? sprintf(", %d skipped", ps) : "",
                                                   pe ? sprintf(", %d errors", pe) : "")
      print out
    }' "$1"
}
stage() {
  local title="$1" n=${#ST_NAMES[@]} t0=$SECONDS rc
  shift
  local log="$STAGE_LOGS/$n.log"
  step "$title"
  set +e
  (
    set -euo pipefail
    "$@"
  ) 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  ST_NAMES+=("$title")
  ST_RESULTS+=("$([ "$rc" = 0 ] && echo passed || echo "FAILED ($rc)")")
  ST_COUNTS+=("$(stage_counts "$log")")
  ST_TIMES+=("$((SECONDS - t0))")
  [ "$rc" = 0 ] || echo "run_tests.sh: stage '$title' failed (exit $rc); continuing" >&2
}
summary() {
  local i pass=0 fail=0
  step "summary"
  printf '%-72s %-12s %-40s %6s\n' stage result "tests" time
  for i in "${!ST_NAMES[@]}"; do
    printf '%-72s %-12s %-40s %5ss\n' "${ST_NAMES[$i]}" "${ST_RESULTS[$i]}" "${ST_COUNTS[$i]}" \
      "${ST_TIMES[$i]}"
    if [ "${ST_RESULTS[$i]}" = passed ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  done
  printf 'total %ss\n' "$SECONDS"
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
}

# ---- build directories: developer builds (warnings are errors) -------------------
. tools/build_dirs.sh
configure() { # build dir, cmake args...
  local dir="$1" g=()
  shift
  mapfile -t g < <(pt_gen_args "$dir")
  cmake -S . -B "$dir" "${g[@]}" -DPTERUN_WERROR=ON "$@" >/dev/null
}
# The C tests of one build directory (extra ctest arguments after it); a
# directory without tests (its build failed) fails too.
c_tests() {
  local dir="$1"
  shift
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$JOBS" "$@"
}
# Shared between stages (each stage is a subshell): fixed paths, removed at exit.
REL_PREFIX="$STAGE_LOGS/prefix-shared"
STATIC_PREFIX="$STAGE_LOGS/prefix-static"
WHEEL_WORK="$PWD/build-wheel"
trap 'rm -rf "$STAGE_LOGS"' EXIT
if [ -z "${PTERUN_RELEASE_CMAKES:-}" ]; then
  # Debian's cmake and the newest from PyPI (installed next to $PYTHON).
  PTERUN_RELEASE_CMAKES="/usr/bin/cmake $(dirname "$(command -v "$PYTHON")")/cmake"
fi
REL_ARGS=()
for c in $PTERUN_RELEASE_CMAKES; do REL_ARGS+=(--cmake "$c"); done

st_build_main() {
  configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cmake --build build -j "$JOBS"
}

st_aarch64() {
  # Every ctest but the exhaustive GEMM/vector-math sweeps (minutes each under
  # emulation; with no Arm SIMD variant yet they run the same portable code as
  # the x86-64 runs with PTERUN_ISA_MASK=0): unit, golden, CLI and the fixture
  # programs run by the aarch64 CLI (the cmake -P scripts honour the emulator).
  # No PCRE2 for the target here: libpterun_textgen without its regex tokenizers.
  configure build-aarch64 -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DPTERUN_INSTALL=OFF -DPTERUN_WITH_PCRE2=OFF
  cmake --build build-aarch64 -j "$JOBS"
  c_tests build-aarch64 --timeout 600 \
    -E '^(test_gemm_dispatch|test_gemm_dispatch_scalar|test_vmath|test_vmath_portable)$'
}
# Every SIMD variant executed (docs/robustness.md): the kernel tests record
# each variant they executed and checked (PTERUN_VARIANT_LOG,
# tests/harness/pt_variants.h) in three runs: this CPU (build), a second tree
# whose AVX-512 microkernels are compiled against SIMDe and reported present
# (build-emu: the compute library, the kernel tests and the CLI for the
# fixture programs, nothing else), and qemu-aarch64 (build-aarch64, from the
# aarch64 stage). tools/variant_table.py prints variant | ran natively | ran
# emulated | not run, and fails on "not run" and on emulated bits that differ
# from the native run's; on an AVX-512 CPU, tools/compare_builds.py also
# compares every fixture program's bytes between the two x86 trees.
st_variants() {
  local kt='test_gemm_dispatch|test_vmath|test_dwconv|test_qgemm|test_compute_lowbit|test_conv2d|test_conv_nhwc|test_qconv_nhwc|test_qdwconv|test_minmax|test_qb4w'
  local logs="$PWD/build-emu/variant-logs" rc=0 evex
  rm -rf "$logs" && mkdir -p "$logs"
  # A failing run fails the stage, after the table (which shows what it left unrun).
  PTERUN_VARIANT_LOG="$logs/native.log" c_tests build -R "^($kt)(_scalar|_portable)?\$" || rc=1
  configure build-emu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTERUN_EMULATE_ISA=avx512f,avx512bw,avx512vnni \
    -DPTERUN_BUILD_EXAMPLES=OFF -DPTERUN_INSTALL=OFF
  # shellcheck disable=SC2086
  cmake --build build-emu -j "$JOBS" --target ${kt//|/ } pterun_cli npycmp
  # What ran there is the emulation: no AVX-512 instruction (zmm, opmask,
  # EVEX-only registers) in any of its libraries.
  objdump -d build-emu/lib/*.so >"$logs/disasm.txt"
  evex="$(grep -cE 'zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])' "$logs/disasm.txt" || true)"
  rm -f "$logs/disasm.txt"
  [ "$evex" = 0 ] || die "build-emu: $evex AVX-512 instructions in the emulated tree's libraries"
  PTERUN_VARIANT_LOG="$logs/emulated.log" c_tests build-emu \
    -R "^($kt)(_scalar|_portable)?\$|^(fixture|xnnpack)\." || rc=1
  # Where this CPU has the emulated ISAs natively, every fixture program must
  # give the native build's bytes in every mode: the emulation computes what
  # the hardware does. Elsewhere there is no native AVX-512 to compare with.
  local f
  f=" $(build/bin/pterun --version | sed -n 's/^cpu features in use: //p') "
  if [[ $f == *" avx512f "* && $f == *" avx512bw "* && $f == *" avx512vnni "* ]]; then
    "$PYTHON" tools/compare_builds.py build build-emu --jobs "$JOBS" || rc=1
  else
    echo "st_variants: no native AVX-512F/BW/VNNI here: emulated programs not compared with native bits"
  fi
  # The same tree on a CPU without AVX-512 (QEMU's Haswell model: AVX2 and
  # FMA; TCG executes no AVX-512): the case the emulation is for, whatever CPU
  # CI has. The fast kernel tests only (vector math and GEMM sweeps: minutes).
  local t
  for t in test_qgemm test_compute_lowbit test_dwconv test_conv2d test_conv_nhwc test_qconv_nhwc test_qdwconv test_minmax test_qb4w; do
    echo "qemu-x86_64 -cpu Haswell build-emu/bin/$t"
    PTERUN_VARIANT_LOG="$logs/haswell.log" qemu-x86_64 -cpu Haswell "build-emu/bin/$t" \
      >"$logs/haswell-$t.txt" 2>&1 || { cat "$logs/haswell-$t.txt"; rc=1; }
  done
  # The aarch64 sweeps of the GEMM and vector math are scalar there (minutes under qemu).
  PTERUN_VARIANT_LOG="$logs/qemu.log" c_tests build-aarch64 --timeout 600 \
    -R '^(test_compute_lowbit|test_dwconv|test_qgemm|test_conv2d|test_conv_nhwc|test_qconv_nhwc|test_qdwconv|test_minmax|test_qb4w)$' || rc=1
  # A run with no record (it failed): its variants show as "not run".
  touch "$logs/native.log" "$logs/emulated.log" "$logs/haswell.log" "$logs/qemu.log"
  "$PYTHON" tools/variant_table.py --native "$logs/native.log" --emulated "$logs/emulated.log" \
    --emulated-haswell "$logs/haswell.log" --emulated-isa build-emu/emulated_isa.txt \
    --qemu "$logs/qemu.log" || rc=1
  return "$rc"
}

# ---- release checks (docs/packaging.md): the install tree, the CMake package
# on two CMake versions, pkg-config, loading, ownership. A missing tool fails.
st_release_install() {
  "$PYTHON" tools/gen_component_docs.py --check
  rm -rf "$REL_PREFIX" && mkdir -p "$REL_PREFIX"
  cmake --install build --prefix "$REL_PREFIX" >/dev/null
  "$PYTHON" tools/release_check.py --prefix "$REL_PREFIX" "${REL_ARGS[@]}"
}

st_examples() {
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
    $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs pterun-kernels-portable pterun-optimize) -Wl,-rpath,"$LIB_DIR"
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
}

# ---- static libraries (BUILD_SHARED_LIBS=OFF; docs/packaging.md) -------------------
st_static() {
  configure build-static -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_SHARED_LIBS=OFF
  cmake --build build-static -j "$JOBS"
  c_tests build-static
}
st_release_static() {
  rm -rf "$STATIC_PREFIX" && mkdir -p "$STATIC_PREFIX"
  cmake --install build-static --prefix "$STATIC_PREFIX" >/dev/null
  "$PYTHON" tools/release_check.py --static --prefix "$STATIC_PREFIX" --reference-prefix "$REL_PREFIX" \
    "${REL_ARGS[@]}"
}

st_asan() {
  configure build-asan -DCMAKE_BUILD_TYPE=Debug "-DPTERUN_SANITIZE=address;undefined"
  cmake --build build-asan -j "$JOBS"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 c_tests build-asan
}

# ---- every standard build type, GCC and Clang, warnings as errors -----------------
# Libraries, CLI and the C tests, which run: the bit-identity checks between
# ISA variants (docs/kernel-authors.md, "Bit-exactness") hold in every one.
# GCC RelWithDebInfo and Debug are the main and the ASan build.
st_build_type() { # compiler build-type
  local dir="build-types/$1-$2"
  CC="$1" configure "$dir" -DCMAKE_BUILD_TYPE="$2" -DPTERUN_BUILD_EXAMPLES=OFF -DPTERUN_INSTALL=OFF
  cmake --build "$dir" -j "$JOBS"
  c_tests "$dir"
}

# The same output bytes from every compiler and build type (the ASan build
# is GCC -O0), and for 1 and 3 threads: every fixture program, dispatched and
# scalar kernels (the policy: docs/performance.md, "Bit-exactness").
st_same_bits() {
  "$PYTHON" tools/compare_builds.py build build-static build-asan build-types/* --jobs "$JOBS"
}

# ---- robustness (docs/robustness.md) ----------------------------------------------
st_tsan() {
  configure build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTERUN_SANITIZE=thread
  cmake --build build-tsan -j "$JOBS" --target test_threads test_threadpool test_threaded_models
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir build-tsan -L threads \
    --output-on-failure --no-tests=error
}

st_valgrind() {
  local VG=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1)
  local t exe d dirs SEEDS=(tests/fixtures tests/cli/data tests/corpus)
  for t in test_corpus test_malformed test_method test_registry test_bad_inputs test_oom test_file_change test_threads; do
    echo "valgrind $t"
    "${VG[@]}" "build/bin/$t" >/dev/null
  done
  echo "valgrind run_program"
  "${VG[@]}" build/bin/run_program examples/mlp.pte >/dev/null
  # Every target the build made (a new target is replayed without editing this).
  for exe in build/bin/fuzz_replay_*; do
    t="${exe##*/fuzz_replay_}"
    dirs=("${SEEDS[@]}")
    for d in "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t"; do [ -d "$d" ] && dirs+=("$d"); done
    echo "valgrind fuzz_replay_$t"
    "${VG[@]}" "$exe" "${dirs[@]}" >/dev/null
  done
}

st_fuzz() {
  # A fixed seed and a fixed number of runs make this step reproducible: what
  # passes here passes in CI. Longer campaigns: tools/fuzz.sh SECONDS.
  FUZZ_FLAGS="-seed=1 -runs=${FUZZ_RUNS:-20000}" PAR="${JOBS}" bash tools/fuzz.sh 300
}

st_python() {
  # (tests/python/test_api*.py need the installed wheel: the next stage runs them.)
  PTERUN_CLI="$PWD/build/bin/pterun" "$PYTHON" -m pytest -q tests/python \
    --ignore-glob='tests/python/test_api*.py'
}

# The Python API tests but the torch-marked ones, against a wheel installed
# into a fresh venv with only pip's numpy and pytest.
wheel_api_tests() { # wheel venv
  rm -rf "$2"
  "$PYTHON" -m venv "$2"
  "$2/bin/python" -m pip install -q "$1" pytest
  "$2/bin/python" -m pytest -q -p no:cacheprovider -m "not torch" tests/python/test_api*.py
}
st_wheel() {
  # The wheel (pip wheel . = scikit-build-core + cmake --install), installed into
  # a fresh venv with only pip's numpy and pytest; the torch-marked tests then
  # run with $PYTHON (which has torch) and the same wheel installed with --target.
  rm -rf "$WHEEL_WORK" && mkdir -p "$WHEEL_WORK/dist"
  "$PYTHON" -m pip wheel . --no-deps -w "$WHEEL_WORK/dist"
  # The manylinux tag installers accept (auditwheel); everything below uses that wheel.
  local BUILT=("$WHEEL_WORK"/dist/pterun-*.whl)
  "$PYTHON" tools/check_wheel.py "${BUILT[0]}" "$WHEEL_WORK/wheelhouse"
  local WHEEL=("$WHEEL_WORK"/wheelhouse/pterun-*-manylinux_*.whl)
  wheel_api_tests "${WHEEL[0]}" "$WHEEL_WORK/venv"
}

st_release_wheel() {
  local WHEEL=("$WHEEL_WORK"/wheelhouse/pterun-*-manylinux_*.whl) WHEEL_SITE
  [ -f "${WHEEL[0]}" ] || die "no wheel in $WHEEL_WORK/wheelhouse (the wheel stage failed)"
  WHEEL_SITE="$("$WHEEL_WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  "$PYTHON" tools/release_check.py --wheel-site "$WHEEL_SITE" --python "$WHEEL_WORK/venv/bin/python" "${REL_ARGS[@]}"
  rm -rf "$WHEEL_WORK/target"
  "$PYTHON" -m pip install -q --no-deps --target "$WHEEL_WORK/target" "${WHEEL[0]}"
  PYTHONPATH="$WHEEL_WORK/target" "$PYTHON" -m pytest -q -p no:cacheprovider -m torch tests/python/test_api*.py
}

# ---- manylinux wheels (tools/build_wheels.sh; docs/packaging.md) -------------------
# The zig-built glibc 2.17 wheels, x86-64 and aarch64 (cross-compiled). The
# script shows auditwheel's verdict on each and tags it manylinux_2_17 (a
# repair that must graft nothing and change no file). Then: the x86-64 wheel's
# Python API tests in a fresh venv, as for the GCC wheel; every ELF file of the
# aarch64 wheel is AArch64, and its CLI, under qemu-aarch64 (-cpu max: NEON,
# dot product, ...; -cpu cortex-a53: NEON only), prints for the committed
# programs what the x86-64 wheel's CLI prints, less times and method memory
# (weights packed for each CPU's kernels); with the portable kernels on both
# (PTERUN_ISA=none) the output files are the same bytes.
ML_WORK="$PWD/build-wheel-manylinux"
st_manylinux() {
  rm -rf "$ML_WORK" && mkdir -p "$ML_WORK"
  PYTHON="$PYTHON" DIST="$ML_WORK/dist" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
    bash tools/build_wheels.sh x86_64 aarch64
  local X=("$ML_WORK"/dist/pterun-*_x86_64.whl) A=("$ML_WORK"/dist/pterun-*_aarch64.whl)
  [[ -f ${X[0]} && -f ${A[0]} ]] || die "tools/build_wheels.sh left no wheel for each arch in $ML_WORK/dist"
  wheel_api_tests "${X[0]}" "$ML_WORK/venv"
  local XCLI="$ML_WORK/venv/bin/pterun" ACLI="$ML_WORK/aarch64/pterun/bin/pterun"
  unzip -q "${A[0]}" -d "$ML_WORK/aarch64"
  local f n=0 info
  for f in "$ACLI" "$ML_WORK"/aarch64/pterun/*.so "$ML_WORK"/aarch64/pterun/lib/*.so; do
    info="$(readelf -h "$f")"
    [[ $info =~ Machine:\ +AArch64 ]] || die "${A[0]##*/}: ${f#"$ML_WORK"/aarch64/} is not AArch64"
    n=$((n + 1))
  done
  echo "${A[0]##*/}: $n ELF files, all AArch64"
  local QEMU=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
  info="$("${QEMU[@]}" -cpu max "$ACLI" --version)"
  echo "$info"
  [[ $info == *"cpu features in use: neon dotprod"* ]] ||
    die "the aarch64 CLI does not use the dot-product kernels under qemu-aarch64 -cpu max"
  # What a run prints, less what differs between machines.
  printed() { sed -E '/ loaded in |^execute: |^method memory: /d' "$1"; }
  local p cpu out="$ML_WORK/out"
  for p in examples/mlp.pte tests/corpus/*.pte; do
    rm -rf "$out" && mkdir -p "$out"
    "$XCLI" run "$p" >"$out/x86_64.txt"
    for cpu in max cortex-a53; do
      "${QEMU[@]}" -cpu "$cpu" "$ACLI" run "$p" >"$out/aarch64-$cpu.txt"
      diff <(printed "$out/x86_64.txt") <(printed "$out/aarch64-$cpu.txt") ||
        die "$p: the aarch64 CLI (qemu -cpu $cpu) prints other outputs than the x86-64 CLI"
    done
    PTERUN_ISA=none "$XCLI" run "$p" -q --output-dir "$out/x86_64"
    PTERUN_ISA=none "${QEMU[@]}" -cpu max "$ACLI" run "$p" -q --output-dir "$out/aarch64"
    diff -r "$out/x86_64" "$out/aarch64" || die "$p: portable kernels, other output bytes on aarch64"
    echo "$p: aarch64 (qemu -cpu max, cortex-a53) prints what x86-64 prints; portable outputs the same bytes"
  done
  # The x86-64 wheel carries PCRE2 (Debian's static archive): its regex
  # tokenizers give the prompt ids and greedy tokens tests/fixtures/llm_text
  # records for every tokenizer file there (the aarch64 one has none: no
  # arm64 libpcre2-8.a here).
  local tk ptoks toks got
  while IFS=$'\t' read -r tk _ ptoks toks _; do
    got="$("$XCLI" generate tests/fixtures/llm_text/model.pte --tokenizer "tests/fixtures/tokenizers/$tk" \
      --prompt "$(cat tests/fixtures/llm_text/prompt_text.txt)" --steps 24 --json |
      "$PYTHON" -c 'import json, sys; r = json.load(sys.stdin); print(",".join(map(str, r["prompt_tokens"])), ",".join(map(str, r["tokens"])))')"
    [ "$got" = "$ptoks $toks" ] || die "x86-64 wheel, $tk: got '$got', want '$ptoks $toks'"
  done <tests/fixtures/llm_text/text_cases.txt
  echo "x86-64 wheel: every tokenizer of tests/fixtures/llm_text gives its recorded ids"
}

st_sizes() {
  # Every library's stripped size; fails while libpterun.so is over the
  # runtime's max_stripped_bytes in packaging/components.json.
  "$PYTHON" tools/release_check.py --sizes build-types/gcc-MinSizeRel
}

# ---- the stages, in order -----------------------------------------------------------
stage "build (RelWithDebInfo)" st_build_main
stage "C tests" c_tests build
stage "bare-metal Cortex-M4 and Cortex-M55 firmware under qemu-system-arm" \
  env JOBS="$JOBS" bash tools/run_firmware.sh build "$PYTHON"
stage "Linux aarch64: cross build, C tests under qemu-aarch64 -cpu max" st_aarch64
stage "every SIMD variant: native, AVX-512 emulated (SIMDe), NEON under qemu-aarch64" st_variants
stage "release checks (install tree)" st_release_install
stage "examples built against the installed package (CMake and pkg-config)" st_examples
stage "static build: every component as lib*.a, C tests" st_static
stage "release checks (static install tree; reference: the shared install)" st_release_static
stage "build with ASan + UBSan, C tests under ASan + UBSan" st_asan
for cfg in gcc:Release gcc:MinSizeRel clang:Debug clang:Release clang:RelWithDebInfo clang:MinSizeRel; do
  stage "build ${cfg#*:} with ${cfg%%:*} (-Werror), C tests" st_build_type "${cfg%%:*}" "${cfg#*:}"
done
stage "same bits from every compiler and build type (tools/compare_builds.py)" st_same_bits
stage "library sizes, stripped (gcc MinSizeRel, x86-64; manifest limits)" st_sizes
stage "threaded tests under ThreadSanitizer" st_tsan
stage "core and robustness tests and the example under valgrind" st_valgrind
stage "short fuzz run of every target (libFuzzer, ASan + UBSan)" st_fuzz
stage "Python tests" st_python
stage "Python API tests against the installed wheel" st_wheel
stage "release checks (installed wheel)" st_release_wheel
stage "manylinux_2_17 wheels (zig): x86-64 API tests, aarch64 CLI under qemu" st_manylinux

# ---- differential testing against eager PyTorch (docs/difftest.md) -----------------
# The CI set (tools/difftest/ci.py + tests/fixtures/difftest/ci_seeds.txt): each
# program exported by the real exporter, non-delegated and XNNPACK-lowered, run
# by the CLI in every mode (fusion, prepare, 1-3 threads, every ISA mask) and
# by the installed wheel's Python API (prepared, 1 and 3 threads), compared with
# eager PyTorch and between modes; then the coverage tables (fusion patterns,
# microkernel variants, XNNPACK node types, grammar), failing on a gap.
st_difftest() {
  [ -d "$WHEEL_WORK/target/pterun" ] || die "no wheel in $WHEEL_WORK/target (the wheel stages failed)"
  "$PYTHON" -m tools.difftest --ci --cli build/bin/pterun --pythonpath "$WHEEL_WORK/target" --quiet
}
stage "differential tests against eager PyTorch, with coverage (tools/difftest --ci)" st_difftest

summary
