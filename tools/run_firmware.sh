#!/usr/bin/env bash
# Bare-metal Cortex-M check (docs/cortex_m.md): builds the firmware
# (firmware/cortex_m: core + portable + quantized + Cortex-M kernels, newlib,
# no file system, threads or malloc) for Cortex-M4F (qemu-system-arm
# mps2-an386) and Cortex-M55 (mps3-an547) around a real Cortex-M program, runs
# both under emulation with semihosting, builds the same application for the
# host against BUILD/lib, and requires all three to print the same bytes and
# the outputs to equal ExecuTorch's Python reference bit for bit; then a
# selective Cortex-M4 image (PTERUN_SELECT_OPS) with only the program's kernels.
# Usage: tools/run_firmware.sh BUILD_DIR PYTHON [FIXTURE]   (FIXTURE: cortex_m_kws)
# Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi, qemu-system-arm (Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="$1"
PYTHON="$2"
FIX="tests/fixtures/${3:-cortex_m_kws}"
ROOT="$PWD"
WORK="$(mktemp -d /tmp/pterun-fw.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
for t in arm-none-eabi-gcc qemu-system-arm cc; do
  command -v "$t" >/dev/null || { echo "run_firmware.sh: $t is missing" >&2; exit 1; }
done

# The host build of the same application (fw_main.c) against the shared libraries.
sed -e "s|@FW_PROGRAM@|$ROOT/$FIX/model.pte|" -e "s|@FW_INPUT@|$ROOT/$FIX/forward_input_0.npy|" \
  firmware/cortex_m/fw_data.S.in >"$WORK/fw_data.S"
cc -std=c11 -O2 -Wall -Wextra -Werror -Iinclude -DFW_ARENA_BYTES='256u*1024u' \
  firmware/cortex_m/fw_main.c firmware/cortex_m/fw_host.c "$WORK/fw_data.S" \
  -L"$BUILD/lib" -lpterun_kernels_cortex_m -lpterun_kernels_quantized -lpterun_kernels_portable \
  -lpterun_optimize -lpterun -lm -Wl,-rpath,"$(cd "$BUILD/lib" && pwd)" -o "$WORK/fw_host"
"$WORK/fw_host" >"$WORK/host.txt"

# ExecuTorch's Python reference, printed the same way.
"$PYTHON" - "$FIX/forward_pyref_0.npy" >"$WORK/ref.txt" <<'PY'
import sys
import numpy as np

a = np.load(sys.argv[1])
bits = a.ravel().view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])
width = 2 * a.itemsize
print(f"output 0 {dict(f='float', i='int').get(a.dtype.kind, '')}{8 * a.itemsize} numel {a.size}:"
      + "".join(f" {int(v):0{width}x}" for v in bits))
PY
grep '^output ' "$WORK/host.txt" | diff - "$WORK/ref.txt" ||
  { echo "run_firmware.sh: host output differs from the Python reference" >&2; exit 1; }

for cpu in cortex-m4 cortex-m55; do
  board=mps2-an386
  [ "$cpu" = cortex-m55 ] && board=mps3-an547
  cmake -S firmware/cortex_m -B "$WORK/$cpu" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-arm-none-eabi.cmake" \
    -DPTERUN_FW_CPU="$cpu" -DPTERUN_FW_PROGRAM="$ROOT/$FIX/model.pte" \
    -DPTERUN_FW_INPUT="$ROOT/$FIX/forward_input_0.npy" >/dev/null
  cmake --build "$WORK/$cpu" -j "${JOBS:-2}" >/dev/null
  arm-none-eabi-size "$WORK/$cpu/pterun_fw.elf"
  timeout 300 qemu-system-arm -M "$board" -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$WORK/$cpu/pterun_fw.elf" >"$WORK/$cpu.txt"
  cat "$WORK/$cpu.txt"
  # Every line but the arena peak (pointer sizes differ) must match.
  diff <(grep -v '^arena peak' "$WORK/host.txt") <(grep -v '^arena peak' "$WORK/$cpu.txt") ||
    { echo "run_firmware.sh: $cpu ($board) output differs from the host build" >&2; exit 1; }
  echo "run_firmware.sh: $cpu on $board matches the host build and the Python reference"
done

# Selective build (-DPTERUN_SELECT_OPS, docs/packaging.md): the Cortex-M4 image
# with only the program's operators prints the same bytes; every kernel of a
# table row is linked if and only if its operator is selected (the full image
# above has them all).
"$PYTHON" tools/select_ops.py "$FIX/model.pte" >"$WORK/ops.txt"
cmake -S firmware/cortex_m -B "$WORK/select" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-arm-none-eabi.cmake" \
  -DPTERUN_FW_CPU=cortex-m4 -DPTERUN_FW_PROGRAM="$ROOT/$FIX/model.pte" \
  -DPTERUN_FW_INPUT="$ROOT/$FIX/forward_input_0.npy" -DPTERUN_SELECT_OPS="$ROOT/$FIX/model.pte" >/dev/null
cmake --build "$WORK/select" -j "${JOBS:-2}" >/dev/null
arm-none-eabi-size "$WORK/cortex-m4/pterun_fw.elf" "$WORK/select/pterun_fw.elf"
# What each library (the core among them) puts in the full and the selective
# image (docs/cortex_m.md, "Footprint").
"$PYTHON" tools/map_sizes.py "$WORK/cortex-m4/pterun_fw.map" "$WORK/select/pterun_fw.map"
timeout 300 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -kernel "$WORK/select/pterun_fw.elf" >"$WORK/select.txt"
diff <(grep -v '^arena peak' "$WORK/host.txt") <(grep -v '^arena peak' "$WORK/select.txt") ||
  { echo "run_firmware.sh: the selective image's output differs from the host build" >&2; exit 1; }
arm-none-eabi-nm "$WORK/cortex-m4/pterun_fw.elf" >"$WORK/full.nm"
arm-none-eabi-nm "$WORK/select/pterun_fw.elf" >"$WORK/select.nm"
"$PYTHON" - "$WORK/ops.txt" "$WORK/full.nm" "$WORK/select.nm" <<'PY'
import re
import sys
from pathlib import Path

selected = set(Path(sys.argv[1]).read_text().split())
def defined(p):
    return {ln.split()[-1] for ln in Path(p).read_text().splitlines() if re.match(r"\S+ [Tt] ", ln)}
full, sel = defined(sys.argv[2]), defined(sys.argv[3])
rows = []
for lib in ("portable", "quantized", "cortex_m"):
    for inc in sorted(Path("kernels", lib).glob("*.inc")):
        text = re.sub(r",\n[ \t]+", ", ", inc.read_text())
        rows += re.findall(r'^[A-Z][A-Z_]*\("([^"]+)", *(\w+)(?:, *\w+)*\) *$', text, re.M)
kept = [(op, fn) for op, fn in rows if op in selected]
bad = [f"{fn} ({op}) missing from the full image" for op, fn in rows if fn not in full]
bad += [f"{fn} ({op}) selected but not linked" for op, fn in kept if fn not in sel]
bad += [f"{fn} ({op}) not selected but linked" for op, fn in rows if op not in selected and fn in sel]
if bad or not kept:
    sys.exit("run_firmware.sh: selective image: " + ("; ".join(bad[:10]) or "no kernel kept"))
print(f"run_firmware.sh: selective image links {len(kept)} of {len(rows)} kernels "
      f"({', '.join(sorted(op for op, _ in kept))}) and prints the same bytes")
PY
