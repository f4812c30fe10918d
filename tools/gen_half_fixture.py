"""Writes tests/kernels/data/half_torch.txt: float32 bit patterns and what
eager PyTorch converts them to in float16 and bfloat16, one case a line
("f32 f16 bf16" in hex). Checked by tests/kernels/test_kernel_util.c against
the kit's converters (include/pterun/half.h).

Each value is converted as a 0-dim tensor, which runs c10::Half /
c10::BFloat16's scalar conversion (the vectorised bfloat16 cast of a longer
tensor writes 0xFFFF for NaN, an artefact of the SIMD path that
c10::BFloat16 and ExecuTorch do not share).

Usage: python tools/gen_half_fixture.py
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import torch

OUT = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "kernels"
    / "data"
    / "half_torch.txt"
)
SEED = 20261201
N_RANDOM_BITS = 600
N_HALF_RANGE = 1000


def special_patterns() -> list[int]:
    pats = [
        0x00000000,
        0x80000000,
        0x7F800000,
        0xFF800000,  # zeros, infinities
        0x7FC00000,
        0xFFC00000,
        0x7F800001,
        0xFF800001,  # quiet / signalling NaN
        0x7FFFFFFF,
        0xFFFFFFFF,
        0x7FA00000,
        0xFFC12345,
        0x7F802000,
        0x7FBFFFFF,
        0x00000001,
        0x807FFFFF,
        0x00800000,
        0x7F7FFFFF,
        0xFF7FFFFF,  # float extremes
    ]
    # around the half range edges: max half 65504, the tie to inf at 65520
    for v in (
        65504.0,
        65519.0,
        65520.0,
        65535.0,
        6.103515625e-05,
        5.9604644775390625e-08,
    ):
        (b,) = struct.unpack("<I", struct.pack("<f", v))
        pats += [b - 2, b - 1, b, b + 1, b + 2, b | 0x80000000]
    # exact half and bfloat16 ties, both parities
    for b in (0x3F801000, 0x3F803000, 0x33000000, 0x33400000, 0x3F808000, 0x3F818000):
        pats += [b - 1, b, b + 1]
    return pats


def main() -> None:
    rng = np.random.default_rng(SEED)
    pats = special_patterns()
    pats += [int(x) for x in rng.integers(0, 2**32, N_RANDOM_BITS, dtype=np.uint64)]
    # floats whose exponent lands in or near the half range (subnormals too)
    exps = rng.integers(96, 146, N_HALF_RANGE, dtype=np.uint64)
    mant = rng.integers(0, 2**23, N_HALF_RANGE, dtype=np.uint64)
    sign = rng.integers(0, 2, N_HALF_RANGE, dtype=np.uint64)
    pats += [int((s << 31) | (e << 23) | m) for s, e, m in zip(sign, exps, mant)]
    bits = np.array(pats, dtype=np.uint32)
    xs = torch.from_numpy(bits.view(np.float32).copy())
    lines = [
        "# f32 f16 bf16 (hex bits): eager torch "
        + torch.__version__
        + " 0-dim casts; tools/gen_half_fixture.py"
    ]
    for k in range(len(pats)):
        x = xs[k]  # 0-dim: the scalar conversion
        h = int(x.to(torch.float16).view(torch.int16).item()) & 0xFFFF
        b = int(x.to(torch.bfloat16).view(torch.int16).item()) & 0xFFFF
        lines.append(f"{int(bits[k]):08x} {h:04x} {b:04x}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{OUT}: {len(pats)} cases")


if __name__ == "__main__":
    main()
