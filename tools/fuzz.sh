#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and fuzzes each one.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Environment: BUILD (default build-fuzz), PAR (targets run at once, default 2),
#   CC (default clang), FUZZ_FLAGS (extra libFuzzer flags).
# Working corpora grow in $BUILD/corpus/<target> (seeded from the fixtures,
# tests/corpus, tests/fuzz/corpus and tests/fuzz/regressions); crashers
# land in $BUILD/crashes/<target>/ and make the script fail. Copy a crasher
# to tests/fuzz/regressions/<target>/ once it is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${1:-60}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(program method execute npy ptd xnnpack bundle tokenizer_hf tokenizer_tiktoken tokenizer_spm)
BUILD="${BUILD:-build-fuzz}"
PAR="${PAR:-2}"
CC="${CC:-clang}"
command -v "$CC" >/dev/null || { echo "fuzz.sh: $CC not found (apt-get install clang libclang-rt-dev)" >&2; exit 1; }
. tools/build_dirs.sh
mapfile -t GEN < <(pt_gen_args "$BUILD")

CC="$CC" cmake -S . -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTERUN_FUZZ=ON \
  -DPTERUN_WERROR=ON "-DPTERUN_SANITIZE=address;undefined" >/dev/null
cmake --build "$BUILD" -j "$PAR" --target $(printf 'fuzz_%s ' "${TARGETS[@]}")

seed() { # target -> seed files
  case "$1" in
    program|method|execute) ls tests/fixtures/*/model.pte tests/corpus/*.pte 2>/dev/null || true ;;
    npy) ls tests/fixtures/*/*.npy tests/cli/data/*.npy 2>/dev/null || true ;;
    ptd) ls tests/fixtures/*/*.ptd 2>/dev/null || true ;;
    xnnpack) ls tests/fixtures/xnnpack/*/model.pte 2>/dev/null || true ;;
    bundle) ls tests/fixtures/devtools/*.bpte 2>/dev/null || true ;;
    tokenizer_hf) ls tests/fixtures/tokenizers/*.json 2>/dev/null || true ;;
    tokenizer_tiktoken) ls tests/fixtures/tokenizers/tiktoken.model 2>/dev/null || true ;;
    tokenizer_spm) ls tests/fixtures/tokenizers/spm_*.model 2>/dev/null || true ;;
  esac
}

run_one() {
  local t="$1" corpus="$BUILD/corpus/$1" crashes="$BUILD/crashes/$1" log="$BUILD/fuzz-$1.log"
  mkdir -p "$corpus" "$crashes"
  for f in $(seed "$t") tests/fuzz/corpus/"$t"/* tests/fuzz/regressions/"$t"/*; do
    [ -f "$f" ] && cp -f "$f" "$corpus/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
  done
  local rc=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    nice -n 10 "$BUILD/bin/fuzz_$t" "$corpus" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$crashes/" ${FUZZ_FLAGS:-} >"$log" 2>&1 || rc=$?
  local n
  n=$( (grep -o 'stat::number_of_executed_units: [0-9]*' "$log" || true) | awk '{print $2}' | tail -1)
  # -fork mode prints no final stats: take the last "#N:" progress line.
  [ -n "$n" ] || n=$( (grep -oE '^#[0-9]+:' "$log" || true) | tail -1 | tr -d '#:')
  echo "fuzz_$t: ${n:-?} executions (time cap ${SECS}s), exit $rc (log: $log)"
  # A CI log is all we get from a remote failure: show the report (printable
  # characters only: the log may quote the input).
  if [ "$rc" -ne 0 ]; then
    echo "---- fuzz_$t: end of $log ----" >&2
    (grep -v -E '^#[0-9]+' "$log" || true) | tail -n 80 | LC_ALL=C tr -cd '\11\12\40-\176' >&2
    ls -l "$crashes" >&2 || true
  fi
  return $rc
}

pids=() ; names=() ; fail=0
for t in "${TARGETS[@]}"; do
  run_one "$t" & pids+=($!) ; names+=("$t")
  if [ ${#pids[@]} -ge "$PAR" ]; then
    wait "${pids[0]}" || { echo "fuzz_${names[0]} FAILED" >&2; fail=1; }
    pids=("${pids[@]:1}") ; names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "fuzz_${names[$i]} FAILED" >&2; fail=1; }
done
exit $fail
