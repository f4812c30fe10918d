"""Comparison rules of the differential test (docs/difftest.md).

Against eager PyTorch (float32 outputs):
    max|got - ref| <= tol,  tol = max(REL * max(1, max|ref|), COND * max|ref32 - ref64|)
with REL = 1e-4 (2e-4 for programs with transcendental or normalising
layers: GELU, SiLU, sigmoid, tanh, hardswish, softmax, attention, GRU/LSTM,
layer/group norm, whose vector-math kernels differ from ATen's in the last
bits), and COND = 16: the eager float32 model's own error against the same
model in float64 measures how much the program amplifies rounding (a
LayerNorm after a large activation, a softmax over large logits); pterun
may be up to 16 times as far off as PyTorch itself.

Index outputs (sort / argsort / topk / argmax) are checked by what they
select: gathered from the eager input of their layer, they must give the
reference's values within the same tolerance (ties may pick other indices).
Integer outputs otherwise match exactly.

int8 programs (PT2E, XNNPACKQuantizer) are compared with the eager
converted model: one quantization step of the output (the scale of the
dequantize that makes it); when a float op makes the output (a softmax
after the last quantized layer), 2 % of its magnitude.

Between modes: the docs claim bit-identical outputs for any thread count
(docs/performance.md, docs/cli.md) and for packed vs unpacked weights with
fusion off (docs/performance.md "Weights packed at load"); those groups are
compared with array_equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

REL = 1e-4
REL_QUANT = 1e-4
QUANT_FLOAT = 2e-2  # int8 program whose output a float op makes: 2 % of the magnitude
REL_TRANSCENDENTAL = 2e-4
COND = 16.0
F32_EPS = float(np.finfo(np.float32).eps)
TRANSCENDENTAL = {
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "hardswish",
    "softmax",
    "mha",
    "sdpa",
    "gru",
    "lstm",
    "layernorm",
    "groupnorm",
    "residual_mul",
    "upsample",
}


@dataclass
class Reference:
    outputs: list[np.ndarray]  # eager float32
    err64: list[float]  # per output: max |eager32 - eager64|
    index_inputs: list[np.ndarray]  # per index output, the tensor its layer sorted
    index_layers: list[dict]  # the sort-like layers, in output order
    rel: float
    steps: list[float] | None = None  # int8 programs: each output's quantization step


def tolerance(ref: Reference, k: int) -> float:
    r = ref.outputs[k]
    mag = float(np.max(np.abs(r))) if r.size else 0.0
    if not np.isfinite(mag):
        mag = 0.0
    tol = max(ref.rel * max(1.0, mag), COND * ref.err64[k])
    if ref.steps is not None and k < len(ref.steps):
        # one quantization step, plus the float32 rounding of the two
        # dequantized values compared ((q - zp) * scale on each side: up to an
        # ulp of the output's magnitude each, which at q = 230 is 1.5e-5 of a
        # step; seed 5810 of session 16's campaign differed by exactly one
        # step and measured 1.0000153 steps)
        tol = (
            max(tol, ref.steps[k] * (1 + 1e-5) + 4 * F32_EPS * mag)
            if ref.steps[k] > 0
            else max(tol, QUANT_FLOAT * max(1.0, mag))
        )
    return tol


def _select(L: dict, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    t = torch.from_numpy(x)
    i = torch.from_numpy(idx.astype(np.int64))
    dim = L["dim"]
    if L["op"] == "argmax" and not L.get("keepdim", False):
        i = i.unsqueeze(dim if dim >= 0 else x.ndim + dim)
    return torch.gather(t, dim, i).numpy()


def compare_output(ref: Reference, k: int, got: np.ndarray) -> str | None:
    """None when output k matches the reference, else what differs."""
    r = ref.outputs[k]
    if got.shape != r.shape:
        return f"output {k}: shape {got.shape} != {r.shape}"
    if k >= 1:  # index output of sort-like layer k - 1
        L = ref.index_layers[k - 1]
        x = ref.index_inputs[k - 1]
        if got.dtype != np.int64:
            return f"output {k}: dtype {got.dtype} != int64"
        if got.size and (got.min() < 0 or got.max() >= x.shape[L["dim"]]):
            return f"output {k}: index out of range"
        want = _select(L, x, r)
        have = _select(L, x, got)
        err = float(np.max(np.abs(have - want))) if want.size else 0.0
        tol = max(
            ref.rel * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0), 1e-6
        )
        if not err <= tol:
            n = int(np.sum(got != r))
            return f"output {k} ({L['op']} indices): {n} of {r.size} select other values, max |err| {err:.3g} > {tol:.3g}"
        if L["op"] in ("sort", "argsort") and got.size:
            # every slice must be a permutation
            s = np.sort(np.moveaxis(got, L["dim"], -1), axis=-1)
            if not np.array_equal(s, np.broadcast_to(np.arange(s.shape[-1]), s.shape)):
                return f"output {k}: indices are not a permutation"
        return None
    if got.dtype != r.dtype:
        return f"output {k}: dtype {got.dtype} != {r.dtype}"
    if r.dtype.kind in "iub":
        if not np.array_equal(got, r):
            return f"output {k}: {int(np.sum(got != r))} of {r.size} integers differ"
        return None
    fin_r, fin_g = np.isfinite(r), np.isfinite(got)
    if not np.array_equal(fin_r, fin_g):
        return f"output {k}: non-finite values differ ({int(np.sum(fin_r != fin_g))} elements)"
    d = np.abs(got.astype(np.float64) - r.astype(np.float64))[fin_r]
    err = float(d.max()) if d.size else 0.0
    tol = tolerance(ref, k)
    if not err <= tol:
        n = int(np.sum(d > tol))
        return f"output {k}: {n} of {r.size} elements differ, max |err| {err:.3g} > tol {tol:.3g}"
    return None


def max_error(ref: Reference, got: list[np.ndarray]) -> float:
    if (
        not got
        or got[0].shape != ref.outputs[0].shape
        or ref.outputs[0].dtype.kind != "f"
    ):
        return float("nan")
    d = np.abs(got[0].astype(np.float64) - ref.outputs[0].astype(np.float64))
    d = d[np.isfinite(d)]
    return float(d.max()) if d.size else 0.0


def bit_identical(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        for x, y in zip(a, b, strict=True)
    )
