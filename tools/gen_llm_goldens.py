#!/usr/bin/env python3
"""Writes the golden files of the LLM kernel tests (tests/llm/golden/*.bin).

Oracle: ExecuTorch's own kernels. `import executorch.extension.llm.custom_ops`
loads libcustom_ops_aot_lib, whose torch.ops.llama.* (and
torch.ops.preprocess.tile_crop) run the very C++ kernels ExecuTorch's runtime
registers as llama::*.out. Inputs are seeded random tensors.

Files (format: tools/gen_quantized_goldens.py, run by the same C runner):
  llm_cache.bin    update_cache, update_cache_with_indices, fallback, tile_crop
                   (byte-exact)
  llm_attn.bin     custom_sdpa / sdpa_with_kv_cache / custom_quantized_sdpa in
                   float32 (tolerance in tests/llm/CMakeLists.txt)
  llm_attn_half.bin custom_sdpa in bfloat16 and float16
  llm_hadamard.bin fast_hadamard_transform (float32)

Usage: python tools/gen_llm_goldens.py [OUT_DIR]
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import executorch.extension.llm.custom_ops.custom_ops  # noqa: E402,F401  (the oracle kernels)
from gen_quantized_goldens import GoldenFile, InOut, Out, SameAs  # noqa: E402

L = torch.ops.llama
SEED = 20261201


def add(gf: GoldenFile, op: str, label: str, args: list, out) -> None:
    """args then the out tensor and the return slot (the same value)."""
    gf.add(op, label, args + [out, SameAs(len(args))])


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(g, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g).to(dtype)


def cache_cases() -> GoldenFile:
    gf = GoldenFile("llm_cache")
    g = gen(SEED)
    for dtype, (S, start) in [
        (torch.float32, (1, 0)),
        (torch.float32, (1, 11)),
        (torch.float32, (5, 3)),
        (torch.float32, (16, 0)),
        (torch.int8, (3, 7)),
        (torch.bfloat16, (2, 14)),
    ]:
        value = (
            randn(g, 2, S, 3, 8, dtype=dtype)
            if dtype.is_floating_point
            else torch.randint(-128, 128, (2, S, 3, 8), generator=g, dtype=dtype)
        )
        cache = torch.zeros(2, 16, 3, 8, dtype=dtype)
        if dtype.is_floating_point:
            cache += randn(g, 2, 16, 3, 8, dtype=dtype)
        before = cache.clone()
        L.update_cache(value, cache, start)
        placeholder = torch.zeros(1, dtype=dtype)  # never written, as in ExecuTorch
        add(
            gf,
            "llama::update_cache.out",
            f"{dtype} S={S} start={start}",
            [value, InOut(before, cache), start],
            placeholder,
        )
    for S in (1, 4):
        value = randn(g, 1, S, 2, 4)
        cache = randn(g, 1, 8, 2, 4)
        idx = torch.randperm(8, generator=g)[:S].reshape(1, S).to(torch.int64)
        before = cache.clone()
        L.update_cache_with_indices(value, cache, 0, idx)
        add(
            gf,
            "llama::update_cache_with_indices.out",
            f"S={S}",
            [value, InOut(before, cache), 0, idx],
            torch.zeros(1),
        )
    x = randn(g, 3, 5)
    out = L.fallback(x)
    add(gf, "llama::fallback.out", "copy", [x], Out(out))
    # Through the .out overload (ExecuTorch's kernel): the functional
    # torch.ops.preprocess.tile_crop of the 1.5.1 wheel returns wrongly shaped
    # tensors (e.g. [4, 3, 4, 4] for a 2x12x12 image by 4).
    for C, H, W, t in [(3, 8, 12, 4), (2, 12, 12, 4)]:
        img = randn(g, C, H, W)
        tiles = torch.empty(H * W // (t * t), C, t, t)
        torch.ops.preprocess.tile_crop.out(img, t, out=tiles)
        add(
            gf, "preprocess::tile_crop.out", f"{C}x{H}x{W} by {t}", [img, t], Out(tiles)
        )
    return gf


# (label, B, Sq, Hq, Hkv, D, S_kv, start_pos, mode, scale)
ATTN = [
    ("decode gqa", 1, 1, 4, 2, 16, 32, 9, "causal", None),
    ("decode mha", 1, 1, 4, 4, 16, 32, 0, "causal", None),
    ("prefill", 1, 7, 4, 2, 16, 32, 0, "causal", None),
    ("chunked prefill", 2, 5, 4, 1, 16, 32, 11, "causal", None),
    ("prefill scale", 1, 6, 2, 2, 32, 24, 3, "causal", 0.3),
    ("long context blocks", 1, 3, 4, 1, 16, 600, 520, "causal", None),
    ("long prefill", 1, 40, 4, 4, 8, 64, 0, "causal", None),
    ("no mask, not causal", 1, 4, 2, 1, 16, 20, 6, "none", None),
    ("mask", 1, 3, 4, 2, 16, 20, 0, "mask", None),
    ("mask long", 1, 2, 2, 2, 16, 300, 0, "mask", None),
]


def attn_inputs(g, B, Sq, Hq, Hkv, D, Skv, mode, dtype=torch.float32):
    q = randn(g, B, Sq, Hq, D, dtype=dtype)
    k = randn(g, B, Skv, Hkv, D, dtype=dtype)
    v = randn(g, B, Skv, Hkv, D, dtype=dtype)
    mask = None
    if mode == "mask":
        mask = torch.where(torch.rand(Sq, Skv, generator=g) < 0.3, float("-inf"), 0.0)
        mask[:, 0] = 0.0  # every row sees one key
        mask = mask + 0.5 * randn(g, Sq, Skv)
    return q, k, v, mask


def attn_cases() -> GoldenFile:
    gf = GoldenFile("llm_attn")
    g = gen(SEED + 1)
    for label, B, Sq, Hq, Hkv, D, Skv, start, mode, scale in ATTN:
        q, k, v, mask = attn_inputs(g, B, Sq, Hq, Hkv, D, Skv, mode)
        causal = mode == "causal"
        out = L.custom_sdpa(q, k, v, start, mask, 0.0, causal, scale)
        add(
            gf,
            "llama::custom_sdpa.out",
            label,
            [q, k, v, start, mask, 0.0, causal, scale],
            Out(out),
        )
    # sdpa_with_kv_cache: writes k/v at start_pos, then attends causally.
    for label, Sq, start in [("decode", 1, 6), ("prefill", 5, 0), ("chunk", 3, 9)]:
        q = randn(g, 1, Sq, 4, 16)
        kn = randn(g, 1, Sq, 2, 16)
        vn = randn(g, 1, Sq, 2, 16)
        kc = randn(g, 1, 24, 2, 16)
        vc = randn(g, 1, 24, 2, 16)
        kc0, vc0 = kc.clone(), vc.clone()
        out = L.sdpa_with_kv_cache(q, kn, vn, kc, vc, start, Sq, None, 0.0, True, None)
        add(
            gf,
            "llama::sdpa_with_kv_cache.out",
            label,
            [
                q,
                kn,
                vn,
                InOut(kc0, kc),
                InOut(vc0, vc),
                start,
                Sq,
                None,
                0.0,
                True,
                None,
            ],
            Out(out),
        )
    # custom_quantized_sdpa: int8 per-token q/k/v, BSHD and BHSD layouts.
    for label, Sq, start, at2 in [
        ("decode", 1, 10, False),
        ("prefill", 6, 0, False),
        ("chunk dim2", 4, 5, True),
        ("decode dim2", 1, 20, True),
    ]:
        B, Hq, Hkv, D, Skv = 1, 4, 2, 32, 32

        def qt(S, H):
            shape = (B, H, S, D) if at2 else (B, S, H, D)
            pshape = shape[:-1] + (1,)
            t = torch.randint(-128, 128, shape, generator=g, dtype=torch.int8)
            sc = 0.005 + 0.02 * torch.rand(pshape, generator=g)
            zp = torch.randint(-8, 8, pshape, generator=g, dtype=torch.int8)
            return t, zp, sc

        q, qz, qs = qt(Sq, Hq)
        k, kz, ks = qt(Skv, Hkv)
        v, vz, vs = qt(Skv, Hkv)
        out = L.custom_quantized_sdpa(
            q, k, v, start, None, 0.0, True, None, qz, qs, kz, ks, vz, vs, at2
        )
        add(
            gf,
            "llama::custom_quantized_sdpa.out",
            label,
            [q, k, v, start, None, 0.0, True, None, qz, qs, kz, ks, vz, vs, at2],
            Out(out),
        )
    return gf


def half_cases() -> GoldenFile:
    gf = GoldenFile("llm_attn_half")
    g = gen(SEED + 2)
    for dtype in (torch.bfloat16, torch.float16):
        for label, B, Sq, Hq, Hkv, D, Skv, start, mode, scale in ATTN[:4]:
            q, k, v, mask = attn_inputs(g, B, Sq, Hq, Hkv, D, Skv, mode, dtype)
            out = L.custom_sdpa(q, k, v, start, mask, 0.0, mode == "causal", scale)
            add(
                gf,
                "llama::custom_sdpa.out",
                f"{dtype} {label}",
                [q, k, v, start, mask, 0.0, mode == "causal", scale],
                Out(out),
            )
    return gf


def hadamard_cases() -> GoldenFile:
    gf = GoldenFile("llm_hadamard")
    g = gen(SEED + 3)
    for shape in [(1,), (2,), (4, 8), (3, 64), (2, 2, 128), (5, 256)]:
        x = randn(g, *shape)
        out = L.fast_hadamard_transform(x)
        add(gf, "llama::fast_hadamard_transform.out", str(shape), [x], Out(out))
    return gf


def main() -> int:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/llm/golden"
    os.makedirs(out_dir, exist_ok=True)
    for gf in (cache_cases(), attn_cases(), half_cases(), hadamard_cases()):
        path, n, size = gf.write(out_dir)
        print(f"{path}: {n} cases, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
