#!/usr/bin/env python3
"""Writes every golden file of the kernel tests (tests/golden/*.txt) from the
references: eager PyTorch for the portable kernels (one file per family folder
of kernels/portable, cases made by golden.math and golden.nn), ExecuTorch's own kernels
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
                if not path.exists() or path.read_text() != text:
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
