"""Golden cases of the LLM kernels (tests/golden/llm_*.txt).

Oracle: ExecuTorch's own kernels. `import executorch.extension.llm.custom_ops`
loads libcustom_ops_aot_lib, whose torch.ops.llama.* (and
torch.ops.preprocess.tile_crop) run the very C++ kernels ExecuTorch's runtime
registers as llama::*.out. Inputs are seeded random tensors.

Files:
  llm_cache        update_cache, update_cache_with_indices (the cache is an
                   in-place argument, checked after the call), fallback,
                   tile_crop: bit for bit
  llm_attn         custom_sdpa / sdpa_with_kv_cache / custom_quantized_sdpa in
                   float32, within rtol 2e-5, atol 2e-6 (the summation order
                   differs from ExecuTorch's vectorised one)
  llm_attn_half    custom_sdpa in bfloat16 and float16 (1e-2)
  llm_hadamard     fast_hadamard_transform, 2^k and 28 * 2^k (float32, 1e-5)
  llm_hadamard_half  the same on float16 (ExecuTorch rounds after every
                   butterfly, pterun once: rtol 1e-2, atol 2e-2)
  llm_delta        gated_delta_rule and its alias (float32, rtol 1e-4, atol 1e-5:
                   ExecuTorch switches to a chunked algorithm for long prompts)
"""

from __future__ import annotations

import logging
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

import torch

import executorch.extension.llm.custom_ops.custom_ops  # noqa: E402,F401  (the oracle kernels)
import executorch.version  # noqa: E402

from golden import format as gf  # noqa: E402
from golden.format import BITS, Close, Expect, Ref, Refs  # noqa: E402

ATTN_F32 = Close(rtol=2e-5, atol=2e-6)
ATTN_HALF = Close(rtol=1e-2, atol=1e-2)
HADAMARD = Close(rtol=1e-5, atol=1e-5)


class InOut:
    """A tensor argument the kernel updates in place, checked afterwards."""

    def __init__(self, before: torch.Tensor, after: torch.Tensor) -> None:
        self.t = before
        self.after = after


class Out:
    def __init__(self, t: torch.Tensor) -> None:
        self.t = t


class GoldenFile:
    def __init__(self, name: str, cmp) -> None:
        self.f = gf.GoldenFile(
            name,
            "ExecuTorch %s llama:: kernels (libcustom_ops_aot_lib), torch %s"
            % (executorch.version.__version__, torch.__version__),
        )
        self.cmp = cmp


L = torch.ops.llama
SEED = 20261201


def add(g: GoldenFile, op: str, label: str, args: list, out) -> None:
    """args, then the out tensor and the return slot (the same value). An
    Out is checked with the file's comparison, an InOut bit for bit."""
    args = args + [out, Ref(len(args))]
    conv, exps = [], []
    for k, a in enumerate(args):
        if isinstance(a, InOut):
            conv.append(a.t.contiguous())
            exps.append(Expect(k, a.after, BITS))
        elif isinstance(a, Out):
            conv.append(gf.Out(a.t.dtype, list(a.t.shape), cap=a.t.numel()))
            exps.append(Expect(k, a.t, g.cmp))
        elif isinstance(a, torch.Tensor):
            conv.append(a.contiguous())
        else:
            conv.append(a)
    g.f.add(gf.Case(gf.case_id(label), op, conv, exps))


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(g, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g).to(dtype)


def cache_cases() -> GoldenFile:
    gfile = GoldenFile("llm_cache", BITS)
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
            gfile,
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
            gfile,
            "llama::update_cache_with_indices.out",
            f"S={S}",
            [value, InOut(before, cache), 0, idx],
            torch.zeros(1),
        )
    x = randn(g, 3, 5)
    out = L.fallback(x)
    add(gfile, "llama::fallback.out", "copy", [x], Out(out))
    # Through the .out overload (ExecuTorch's kernel): the functional
    # torch.ops.preprocess.tile_crop of the 1.5.1 wheel returns wrongly shaped
    # tensors (e.g. [4, 3, 4, 4] for a 2x12x12 image by 4).
    for C, H, W, t in [(3, 8, 12, 4), (2, 12, 12, 4)]:
        img = randn(g, C, H, W)
        tiles = torch.empty(H * W // (t * t), C, t, t)
        torch.ops.preprocess.tile_crop.out(img, t, out=tiles)
        add(
            gfile,
            "preprocess::tile_crop.out",
            f"{C}x{H}x{W} by {t}",
            [img, t],
            Out(tiles),
        )
    return gfile


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


_GEN_SEED = [0]


def gen_input(dtype, *sizes) -> gf.Gen:
    """A float input the test driver computes itself (keeps the files small)."""
    _GEN_SEED[0] += 1
    return gf.Gen(dtype, list(sizes), _GEN_SEED[0])


def val(a):
    return a.tensor() if isinstance(a, gf.Gen) else a


def attn_inputs(g, B, Sq, Hq, Hkv, D, Skv, mode, dtype=torch.float32):
    q = gen_input(dtype, B, Sq, Hq, D)
    k = gen_input(dtype, B, Skv, Hkv, D)
    v = gen_input(dtype, B, Skv, Hkv, D)
    mask = None
    if mode == "mask":
        mask = torch.where(torch.rand(Sq, Skv, generator=g) < 0.3, float("-inf"), 0.0)
        mask[:, 0] = 0.0  # every row sees one key
        mask = mask + 0.5 * randn(g, Sq, Skv)
    return q, k, v, mask


def attn_cases() -> GoldenFile:
    gfile = GoldenFile("llm_attn", ATTN_F32)
    g = gen(SEED + 1)
    for label, B, Sq, Hq, Hkv, D, Skv, start, mode, scale in ATTN:
        q, k, v, mask = attn_inputs(g, B, Sq, Hq, Hkv, D, Skv, mode)
        causal = mode == "causal"
        out = L.custom_sdpa(val(q), val(k), val(v), start, mask, 0.0, causal, scale)
        add(
            gfile,
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
            gfile,
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
            gfile,
            "llama::custom_quantized_sdpa.out",
            label,
            [q, k, v, start, None, 0.0, True, None, qz, qs, kz, ks, vz, vs, at2],
            Out(out),
        )
    return gfile


def half_cases() -> GoldenFile:
    gfile = GoldenFile("llm_attn_half", ATTN_HALF)
    g = gen(SEED + 2)
    for dtype in (torch.bfloat16, torch.float16):
        for label, B, Sq, Hq, Hkv, D, Skv, start, mode, scale in ATTN[:4]:
            q, k, v, mask = attn_inputs(g, B, Sq, Hq, Hkv, D, Skv, mode, dtype)
            out = L.custom_sdpa(
                val(q), val(k), val(v), start, mask, 0.0, mode == "causal", scale
            )
            add(
                gfile,
                "llama::custom_sdpa.out",
                f"{dtype} {label}",
                [q, k, v, start, mask, 0.0, mode == "causal", scale],
                Out(out),
            )
    return gfile


def hadamard_cases() -> GoldenFile:
    gfile = GoldenFile("llm_hadamard", HADAMARD)
    g = gen(SEED + 3)
    for shape in [(1,), (2,), (4, 8), (3, 64), (2, 2, 128), (5, 256)]:
        x = randn(g, *shape)
        out = L.fast_hadamard_transform(x)
        add(gfile, "llama::fast_hadamard_transform.out", str(shape), [x], Out(out))
    # 28 * 2^k: the order-28 Hadamard matrix after the 2^k transforms.
    for shape in [(28,), (2, 56), (3, 112), (1, 896)]:
        x = randn(g, *shape)
        out = L.fast_hadamard_transform(x)
        add(gfile, "llama::fast_hadamard_transform.out", str(shape), [x], Out(out))
    return gfile


def hadamard_half_cases() -> GoldenFile:
    """float16 (the wheel's kernel has no bfloat16 case)."""
    gfile = GoldenFile("llm_hadamard_half", Close(rtol=1e-2, atol=2e-2))
    g = gen(SEED + 5)
    for shape in [(4, 8), (2, 128), (28,), (3, 112)]:
        x = randn(g, *shape).to(torch.float16)
        out = L.fast_hadamard_transform(x)
        add(gfile, "llama::fast_hadamard_transform.out", str(shape), [x], Out(out))
    return gfile


def delta_cases() -> GoldenFile:
    """gated_delta_rule: decode and prompts, per-row and per-head decay, GQA."""
    gfile = GoldenFile("llm_delta", Close(rtol=1e-4, atol=1e-5))
    g = gen(SEED + 4)
    for label, B, Hq, H, T, K, V, per_row in [
        ("decode", 1, 2, 2, 1, 8, 8, True),
        ("prompt gqa", 1, 4, 2, 6, 16, 8, True),
        ("scalar decay", 2, 2, 1, 5, 8, 16, False),
        ("long prompt", 1, 2, 2, 70, 8, 8, True),
    ]:
        q = randn(g, B, Hq, T, K)
        k = torch.nn.functional.normalize(randn(g, B, H, T, K), dim=-1)
        v = randn(g, B, H, T, V)
        dshape = (B, H, T, K) if per_row else (B, H, T)
        decay = torch.sigmoid(2.0 + randn(g, *dshape))
        beta = torch.sigmoid(randn(g, B, H, T))
        s0 = 0.1 * randn(g, B, H, K, V)
        for op in ("gated_delta_rule", "channelwise_gated_delta_rule"):
            out, fin = getattr(L, op)(q, k, v, decay, beta, s0)
            args = [q, k, v, decay, beta, s0]
            conv = [a.contiguous() for a in args] + [
                gf.Out(out.dtype, list(out.shape), cap=out.numel()),
                gf.Out(fin.dtype, list(fin.shape), cap=fin.numel()),
                Refs([6, 7]),
            ]
            exps = [Expect(6, out, gfile.cmp), Expect(7, fin, gfile.cmp)]
            gfile.f.add(
                gf.Case(gf.case_id(f"{op} {label}"), f"llama::{op}.out", conv, exps)
            )
    return gfile


def files():
    for fn in (
        cache_cases,
        attn_cases,
        half_cases,
        hadamard_cases,
        hadamard_half_cases,
        delta_cases,
    ):
        yield fn().f
