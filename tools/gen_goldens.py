#!/usr/bin/env python3
"""Writes every golden file of the kernel tests (tests/golden/*.txt) from the
references: eager PyTorch for the portable kernels (one file per family folder
of kernels/portable, case tables in tests/golden/cases/<family>.py), ExecuTorch's own kernels
(and the PyTorch/torchao reference code) for the quantized ones, ExecuTorch's
llama:: kernels for the LLM ones.

Usage: python tools/gen_goldens.py [--check] [FAMILY...]
  FAMILY: portable, quantized, llm (default: all)
  --check: regenerate in memory and fail if a committed file differs or is
           missing, or if tests/golden holds a file of the family (of any
           family, without FAMILY) that no generator writes.
Deterministic: the same torch/executorch versions give the same bytes, on any
x86-64 CPU with AVX2: the CPU-dependent code paths of the references are
pinned to AVX2 (PINNED_CPU_ENV), whatever the caller's environment says.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from pathlib import Path

# ATen picks its vectorised kernels (DispatchStub), oneDNN its JIT kernels
# (GELU, convolution) and MKL its BLAS code path by the CPU it runs on, so an
# AVX-512 machine gave other last bits than the AVX2 one the files were
# written on (issue 21, defect 5). Pinned before torch is imported; the
# committed files are these AVX2 bits (checked on AMD Zen 3, AVX2, and Zen 4,
# AVX-512). A CPU without AVX2 cannot give them: main() says so and fails.
PINNED_CPU_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
}
os.environ.update(PINNED_CPU_ENV)

sys.path.insert(0, str(Path(__file__).resolve().parent))

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "tests" / "golden"
FAMILIES = ("portable", "quantized", "llm")


# --check: a reference the kernel test compares within a tolerance
# ("expect ... close rtol=R atol=A") may come out differently on another CPU
# even with the pins above: libm and MKL choose code paths by CPU model, not
# only by ISA (an Intel Ice Lake gave tan and pow 1 ulp, matmul and attention
# sums up to 12 % of their cases' tolerance away from the AMD machines the
# files were written on). Such a value may differ from the committed one by
# at most CLOSE_SHARE of that tolerance, atol + rtol * |value|, so a kernel
# that passes against one reference keeps most of its margin against the
# other. Everything else (inputs, shapes, statuses, "bits" and "exact"
# expectations) must match byte for byte.
CLOSE_SHARE = 0.25


def _value_close(a: str, b: str, rtol: float, atol: float) -> float | None:
    """|a - b| as a share of the case's tolerance (0 for the same NaN), or
    None if either side is not a number or only one is NaN or infinite."""
    try:
        fa, fb = float(a), float(b)
    except ValueError:
        return None
    if math.isnan(fa) or math.isnan(fb):  # only a NaN printed the same way matches
        return 0.0 if a == b else None
    if math.isinf(fa) or math.isinf(fb):
        return 0.0 if fa == fb else None
    tol = atol + rtol * max(abs(fa), abs(fb))
    return abs(fa - fb) / tol if tol > 0 else None


def _close_enough(committed: str, fresh: str) -> tuple[bool, float]:
    """Whether two renderings of a golden file agree as CLOSE_SHARE says;
    also the largest share of a tolerance seen on "close" lines."""
    a, b = committed.splitlines(), fresh.splitlines()
    if len(a) != len(b):
        return False, 0.0
    worst = 0.0
    for la, lb in zip(a, b):
        if la == lb:
            continue
        ha, _, va = la.partition(" :")
        hb, _, vb = lb.partition(" :")
        f = ha.split()
        if ha != hb or len(f) < 7 or f[0] != "expect" or f[2] != "close":
            return False, worst
        try:
            rtol = float(f[3].removeprefix("rtol="))
            atol = float(f[4].removeprefix("atol="))
        except ValueError:
            return False, worst
        xs, ys = va.split(), vb.split()
        if len(xs) != len(ys):
            return False, worst
        for x, y in zip(xs, ys):
            if x == y:
                continue
            d = _value_close(x, y, rtol, atol)
            if d is None or d > CLOSE_SHARE:
                return False, max(worst, d or 0.0)
            worst = max(worst, d)
    return True, worst


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("families", nargs="*", choices=[[], *FAMILIES], default=[])
    ns = ap.parse_args(argv)
    families = ns.families or list(FAMILIES)
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    if capability != "AVX2":
        print(
            f"gen_goldens.py: ATen runs its {capability} kernels, not the pinned "
            "AVX2 ones (ATEN_CPU_CAPABILITY=avx2 needs an x86-64 CPU with AVX2): "
            "the references would not be the committed bits",
            file=sys.stderr,
        )
        return 1
    written, bad = set(), []
    for fam in families:
        mod = importlib.import_module("golden." + fam)
        for gf in mod.files():
            path = GOLDEN_DIR / (gf.name + ".txt")
            text = gf.render()
            written.add(path.name)
            if ns.check:
                committed = path.read_text() if path.exists() else None
                if committed != text:
                    ok, worst = (
                        _close_enough(committed, text)
                        if committed is not None
                        else (False, 0)
                    )
                    if ok:
                        print(
                            f"{path.name}: 'close' references within "
                            f"{100 * worst:.1f} % of their tolerance of the committed ones"
                        )
                    else:
                        bad.append(path.name)
            else:
                path.write_text(text)
            print(
                "%s %s: %d cases, %d bytes"
                % (
                    "checked" if ns.check else "wrote",
                    path.name,
                    len(gf.cases),
                    len(text),
                )
            )
    if ns.check:
        prefixes = tuple(f + "_" for f in (ns.families or FAMILIES))
        ours = {p.name for p in GOLDEN_DIR.glob("*.txt") if p.name != "CMakeLists.txt"}
        stale = {n for n in ours if n.startswith(prefixes) or not ns.families} - written
        bad += sorted("%s (no generator writes it)" % s for s in stale)
    for b in bad:
        print("out of date: tests/golden/%s (run python tools/gen_goldens.py)" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
