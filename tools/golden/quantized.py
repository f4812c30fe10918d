"""Golden cases of the quantized kernels (tests/golden/quantized_*.txt).

Oracles:
  * ExecuTorch's own C++ kernels. `import executorch.kernels.quantized` loads
    libquantized_ops_aot_lib, which registers them as
    torch.ops.quantized_decomposed.<op>.out (ATen build) and also registers them
    with the ExecuTorch runtime of the pybindings. Ops without an ATen
    registration (the embeddings) run as one-op programs through the
    ExecuTorch runtime (portable_lib).
  * For the operators ExecuTorch has no kernel for (group quantization,
    torchao affine ops, choose_qparams_per_token/symmetric): the reference
    Python implementations of PyTorch / torchao, evaluated eagerly.
Every output is compared bit for bit; out tensors start with the expected
shape, zero-filled and unbounded, so a kernel must resize them itself.
"""

from __future__ import annotations

import logging
import os
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

import executorch.exir.passes._quant_patterns_and_replacements  # noqa: E402,F401
import executorch.kernels.quantized  # noqa: E402,F401  (registers the oracle kernels)
import executorch.version  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from golden import format as gf  # noqa: E402
from golden.format import BITS, ROOT, Double, Dtype, Expect, Ref, Refs, Str  # noqa: E402

QD = torch.ops.quantized_decomposed


class Out:
    """An output tensor argument (expected value filled in after the oracle ran)."""

    def __init__(self, t):
        self.t = t


SameAs = Ref
TList = Refs


def golden_arg(a):
    if isinstance(a, Out):
        return gf.Out(a.t.dtype, list(a.t.shape), cap=a.t.numel())
    if isinstance(a, torch.Tensor):
        return a.contiguous()
    if isinstance(a, str):
        return Str(a)
    if isinstance(a, float):
        return Double(a)
    if isinstance(a, torch.dtype):
        return Dtype(a)
    if isinstance(a, tuple):
        return list(a)
    return a


class GoldenFile:
    """The cases of one file; arguments are converted when the file is built,
    after every oracle ran."""

    def __init__(self, name):
        self.name = "quantized_" + name.removeprefix("q_")
        self.cases = []

    def add(self, op, label, args):
        self.cases.append((op, label, args))

    def build(self):
        f = gf.GoldenFile(
            self.name,
            "ExecuTorch %s kernels / PyTorch %s, torchao references"
            % (executorch.version.__version__, torch.__version__),
        )
        for op, label, args in self.cases:
            exps = [
                Expect(k, a.t, BITS) for k, a in enumerate(args) if isinstance(a, Out)
            ]
            f.add(gf.Case(gf.case_id(label), op, [golden_arg(a) for a in args], exps))
        return f


def f32(v):
    return torch.tensor(v, dtype=torch.float32)


def rng(seed):
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------------------
# per tensor / per channel / per token / choose_qparams / add (ATen oracle)

QRANGE = {
    torch.uint8: (0, 255),
    torch.int8: (-128, 127),
    torch.int16: (-32768, 32767),
    torch.uint16: (0, 65535),
    torch.int32: (-(2**31), 2**31 - 1),
}


def q_per_tensor(g, label, x, scale, zp, qmin, qmax, dtype, tensor_args=False):
    out = torch.empty(x.shape, dtype=dtype)
    if tensor_args:
        st, zt = (
            torch.tensor([scale], dtype=torch.float64),
            torch.tensor([zp], dtype=torch.int64),
        )
        QD.quantize_per_tensor.Tensor_out(x, st, zt, qmin, qmax, dtype, out=out)
        g.add(
            "quantized_decomposed::quantize_per_tensor.Tensor_out",
            label,
            [x, st, zt, qmin, qmax, dtype, Out(out), SameAs(6)],
        )
    else:
        QD.quantize_per_tensor.out(x, scale, zp, qmin, qmax, dtype, out=out)
        g.add(
            "quantized_decomposed::quantize_per_tensor.out",
            label,
            [x, float(scale), zp, qmin, qmax, dtype, Out(out), SameAs(6)],
        )


def dq_per_tensor(
    g, label, q, scale, zp, qmin, qmax, out_dtype, give_od=True, tensor_args=False
):
    out = torch.empty(q.shape, dtype=out_dtype)
    od = out_dtype if give_od else None
    if tensor_args:
        st, zt = (
            torch.tensor([scale], dtype=torch.float64),
            torch.tensor([zp], dtype=torch.int64),
        )
        QD.dequantize_per_tensor.Tensor_out(
            q, st, zt, qmin, qmax, q.dtype, out_dtype=od, out=out
        )
        g.add(
            "quantized_decomposed::dequantize_per_tensor.Tensor_out",
            label,
            [q, st, zt, qmin, qmax, q.dtype, od, Out(out), SameAs(7)],
        )
    else:
        QD.dequantize_per_tensor.out(
            q, scale, zp, qmin, qmax, q.dtype, out_dtype=od, out=out
        )
        g.add(
            "quantized_decomposed::dequantize_per_tensor.out",
            label,
            [q, float(scale), zp, qmin, qmax, q.dtype, od, Out(out), SameAs(7)],
        )


def rand_q(gen, shape, dtype, lo=None, hi=None):
    a, b = QRANGE[dtype]
    lo = a if lo is None else lo
    hi = b if hi is None else hi
    return torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.int64).to(dtype)


def gen_per_tensor():
    g = GoldenFile("q_per_tensor")
    i8 = torch.int8
    # section 8.2 vectors
    q_per_tensor(
        g,
        "ties",
        f32([1.25, 1.75, -1.25, -1.75, 0.25, -0.25, 2.25]),
        0.5,
        0,
        -128,
        127,
        i8,
    )
    q_per_tensor(
        g, "zp after rounding", f32([1.25, -1.25, 0.75]), 0.5, 3, -128, 127, i8
    )
    q_per_tensor(
        g, "clamp", f32([100.0, -100.0, 63.5, 64.0, -64.25]), 0.5, 0, -128, 127, i8
    )
    q_per_tensor(g, "u8 zp10", f32([-0.3, 0.0, 24.5]), 0.1, 10, 0, 255, torch.uint8)
    q_per_tensor(g, "neg zp", f32([0.26, -0.26]), 0.02, -5, -128, 127, i8)
    q_per_tensor(
        g,
        "f32 reciprocal",
        torch.tensor([-0.3770020008087158], dtype=torch.float32),
        0.003004,
        0,
        -128,
        127,
        i8,
    )
    q_per_tensor(
        g,
        "nan inf huge",
        f32([float("inf"), float("nan"), 1e20, -float("inf"), -1e20]),
        1.0,
        0,
        -128,
        127,
        i8,
    )
    q_per_tensor(
        g, "narrow range", f32([-3.0, -2.6, 2.6, 3.0, 0.1]), 0.02, 1, -100, 100, i8
    )
    gen = rng(1)
    for dt in (torch.uint8, torch.int8, torch.int16, torch.uint16, torch.int32):
        lo, hi = QRANGE[dt]
        for k, (scale, zp) in enumerate(
            [(0.05, 0), (0.0137, 3), (1.0 / 3.0, -7), (2.5e-3, 11)]
        ):
            zp = min(max(zp, lo), hi)
            x = torch.randn(37, generator=gen) * 4.0
            q_per_tensor(g, f"rand {dt} {k}", x, scale, zp, lo, hi, dt)
        # ties at +-k.5 after scaling with a power-of-two scale
        x = (torch.arange(-20, 20, dtype=torch.float32) + 0.5) * 0.25
        q_per_tensor(g, f"ties {dt}", x, 0.25, 0 if lo < 0 else 30, lo, hi, dt)
    x = torch.randn(2, 3, 5, generator=gen, dtype=torch.float64) * 3
    q_per_tensor(g, "f64 input", x, 0.0213, -4, -128, 127, i8)
    x = (torch.randn(4, 6, generator=gen) * 3).to(torch.float16)
    q_per_tensor(g, "f16 input", x, 0.0213, 5, -128, 127, i8)
    q_per_tensor(
        g,
        "scale near floor",
        torch.randn(9, generator=gen) * 1e-3,
        6.1e-5,
        0,
        -128,
        127,
        i8,
    )
    q_per_tensor(
        g,
        "Tensor_out",
        torch.randn(3, 4, generator=gen),
        0.031,
        -2,
        -128,
        127,
        i8,
        True,
    )
    q_per_tensor(
        g,
        "Tensor_out u8",
        torch.randn(7, generator=gen),
        0.02,
        128,
        0,
        255,
        torch.uint8,
        True,
    )
    q_per_tensor(g, "rank0", torch.tensor(0.77), 0.1, 0, -128, 127, i8)
    q_per_tensor(g, "empty", torch.zeros(0, 3), 0.1, 0, -128, 127, i8)
    # dequantize
    dq_per_tensor(
        g,
        "8.2 i8",
        torch.tensor([-128, 127, 5, 0], dtype=i8),
        0.1,
        0,
        -128,
        127,
        torch.float32,
    )
    dq_per_tensor(
        g,
        "8.2 i8 f16",
        torch.tensor([-128, 127, 5, 0], dtype=i8),
        0.1,
        0,
        -128,
        127,
        torch.float16,
    )
    dq_per_tensor(
        g, "8.2 zp3", torch.tensor([5, -3], dtype=i8), 0.1, 3, -128, 127, torch.float32
    )
    dq_per_tensor(
        g,
        "8.2 u8",
        torch.tensor([200, 0, 255], dtype=torch.uint8),
        0.0235,
        128,
        0,
        255,
        torch.float32,
    )
    for dt in (torch.uint8, torch.int8, torch.int16, torch.uint16, torch.int32):
        lo, hi = QRANGE[dt]
        for od in (torch.float32, torch.float64, torch.float16):
            q = rand_q(gen, (3, 7), dt, max(lo, -40000), min(hi, 40000))
            zp = 0 if lo < 0 else 17
            dq_per_tensor(g, f"rand {dt} {od}", q, 0.0123, zp, lo, hi, od)
    q = rand_q(gen, (5,), i8)
    dq_per_tensor(
        g, "no out_dtype", q, 0.37, -3, -128, 127, torch.float32, give_od=False
    )
    dq_per_tensor(
        g, "Tensor_out", q, 0.37, -3, -128, 127, torch.float32, tensor_args=True
    )
    dq_per_tensor(
        g, "Tensor_out f16", q, 0.37, 2, -128, 127, torch.float16, tensor_args=True
    )
    dq_per_tensor(
        g,
        "i32 big",
        torch.tensor([2**31 - 1, -(2**31), 123456789], dtype=torch.int32),
        1e-3,
        7,
        -(2**31),
        2**31 - 1,
        torch.float32,
    )
    return g


def q_per_channel(g, label, x, scales, zps, axis, qmin, qmax, dtype):
    scales = torch.tensor(scales, dtype=torch.float64)
    zps = torch.tensor(zps, dtype=torch.int64)
    out = torch.empty(x.shape, dtype=dtype)
    QD.quantize_per_channel.out(x, scales, zps, axis, qmin, qmax, dtype, out=out)
    g.add(
        "quantized_decomposed::quantize_per_channel.out",
        label,
        [x, scales, zps, axis, qmin, qmax, dtype, Out(out), SameAs(7)],
    )


def dq_per_channel(g, label, q, scales, zps, axis, qmin, qmax, out_dtype, give_od=True):
    out = torch.empty(q.shape, dtype=out_dtype)
    od = out_dtype if give_od else None
    QD.dequantize_per_channel.out(
        q, scales, zps, axis, qmin, qmax, q.dtype, out_dtype=od, out=out
    )
    g.add(
        "quantized_decomposed::dequantize_per_channel.out",
        label,
        [q, scales, zps, axis, qmin, qmax, q.dtype, od, Out(out), SameAs(8)],
    )


def gen_per_channel():
    g = GoldenFile("q_per_channel")
    i8 = torch.int8
    x = f32([[0.5, -1.0, 2.0], [1.26, 3.3, -7.0]])
    q_per_channel(g, "8.2", x, [0.5, 0.25, 1.0], [0, -10, 5], 1, -128, 127, i8)
    q = torch.tensor([[1, -14, 7], [3, 3, -2]], dtype=i8)
    dq_per_channel(
        g,
        "8.2 back",
        q,
        torch.tensor([0.5, 0.25, 1.0], dtype=torch.float64),
        torch.tensor([0, -10, 5]),
        1,
        -128,
        127,
        torch.float32,
    )
    gen = rng(2)
    for shape, axis in [
        ((4, 6), 0),
        ((4, 6), 1),
        ((4, 6), -1),
        ((2, 3, 5), 1),
        ((2, 3, 5), -3),
        ((2, 3, 2, 3), 2),
        ((7,), 0),
    ]:
        C = shape[axis]
        x = torch.randn(*shape, generator=gen) * 2
        sc = (torch.rand(C, generator=gen) * 0.05 + 0.005).tolist()
        zp = torch.randint(-10, 10, (C,), generator=gen).tolist()
        q_per_channel(g, f"rand {shape} {axis}", x, sc, zp, axis, -128, 127, i8)
        q_per_channel(
            g,
            f"rand u8 {shape} {axis}",
            x,
            sc,
            [z + 128 for z in zp],
            axis,
            0,
            255,
            torch.uint8,
        )
        for sdt in (torch.float32, torch.float64):
            for with_zp in (False, True):
                for od in (
                    (torch.float32, torch.float64, torch.float16)
                    if sdt == torch.float64
                    else (torch.float32,)
                ):
                    qv = rand_q(gen, shape, i8)
                    scales = torch.tensor(sc, dtype=sdt)
                    zps = torch.tensor(zp, dtype=torch.int64) if with_zp else None
                    dq_per_channel(
                        g,
                        f"dq {shape} {axis} {sdt} zp={with_zp} {od}",
                        qv,
                        scales,
                        zps,
                        axis,
                        -128,
                        127,
                        od,
                    )
                qv = rand_q(gen, shape, torch.uint8)
                dq_per_channel(
                    g,
                    f"dq u8 {shape} {axis} {sdt} zp={with_zp}",
                    qv,
                    torch.tensor(sc, dtype=sdt),
                    torch.tensor([z + 128 for z in zp]) if with_zp else None,
                    axis,
                    0,
                    255,
                    torch.float32,
                )
    qv = rand_q(gen, (3, 4), i8)
    dq_per_channel(
        g,
        "dq no out_dtype",
        qv,
        torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64),
        torch.tensor([1, -1, 0]),
        0,
        -128,
        127,
        torch.float32,
        give_od=False,
    )
    qv = rand_q(gen, (5,), torch.int16)
    dq_per_channel(
        g,
        "dq 1-D i16 f64",
        qv,
        torch.rand(5, generator=gen, dtype=torch.float64),
        torch.tensor([1, -1, 0, 3, 2]),
        0,
        -32768,
        32767,
        torch.float64,
    )
    dq_per_channel(
        g,
        "dq 1-D i16 f16",
        qv,
        torch.rand(5, generator=gen, dtype=torch.float64),
        torch.tensor([1, -1, 0, 3, 2]),
        0,
        -32768,
        32767,
        torch.float16,
    )
    return g


def choose(g, label, x, qmin, qmax):
    so = torch.empty(1, dtype=torch.float64)
    zo = torch.empty(1, dtype=torch.int64)
    QD.choose_qparams.Tensor_out(
        x,
        qmin,
        qmax,
        1e-7,
        torch.int8 if qmin < 0 else torch.uint8,
        scale_out=so,
        zero_point_out=zo,
    )
    g.add(
        "quantized_decomposed::choose_qparams.Tensor_out",
        label,
        [
            x,
            qmin,
            qmax,
            1e-7,
            torch.int8 if qmin < 0 else torch.uint8,
            Out(so),
            Out(zo),
            TList([5, 6]),
        ],
    )


def choose_tok(g, label, x):
    shape = list(x.shape[:-1]) + [1]
    so = torch.empty(shape, dtype=torch.float64)
    zo = torch.empty(shape, dtype=torch.int64)
    QD.choose_qparams_per_token_asymmetric.out(
        x, torch.int8, scale_out=so, zero_point_out=zo
    )
    g.add(
        "quantized_decomposed::choose_qparams_per_token_asymmetric.out",
        label,
        [x, torch.int8, Out(so), Out(zo), TList([2, 3])],
    )
    return so, zo


def q_tok(g, label, x, so, zo, qmin, qmax, dtype):
    out = torch.empty(x.shape, dtype=dtype)
    QD.quantize_per_token.out(x, so, zo, qmin, qmax, dtype, out=out)
    g.add(
        "quantized_decomposed::quantize_per_token.out",
        label,
        [x, so, zo, qmin, qmax, dtype, Out(out), SameAs(6)],
    )
    return out


def dq_tok(g, label, q, so, zo, qmin, qmax, od):
    out = torch.empty(q.shape, dtype=od)
    QD.dequantize_per_token.out(q, so, zo, qmin, qmax, q.dtype, od, out=out)
    g.add(
        "quantized_decomposed::dequantize_per_token.out",
        label,
        [q, so, zo, qmin, qmax, q.dtype, od, Out(out), SameAs(7)],
    )


def gen_choose():
    g = GoldenFile("q_choose_token")
    choose(g, "8.2 a", f32([1.0, 2.5, 3.2, 15.4]), 0, 255)
    for label, v, lo, hi in [
        ("8.2 row1", [-0.5, 0.3, 1.2], -128, 127),
        ("8.2 row2", [0.1, -0.8, 2.1], -128, 127),
        ("all zero", [0.0, 0.0], -128, 127),
        ("tiny pos", [0.0, 0.001], 0, 255),
        ("tiny both", [-0.0002, 0.0003], -128, 127),
        ("all neg", [-5.0, -1.0], -128, 127),
        ("all pos", [1.0, 2.0, 3.0, 4.0], -128, 127),
        ("single", [0.37], -128, 127),
        ("single neg u8", [-0.37], 0, 255),
        ("tiny neg", [-1e-6, -3e-7], -128, 127),
        ("denorm", [1e-40, -1e-41], -128, 127),
        ("neg zero", [-0.0, 0.0], 0, 255),
        ("i16 range", [-3.0, 7.0], -32768, 32767),
    ]:
        choose(g, label, f32(v), lo, hi)
    gen = rng(3)
    for k in range(12):
        x = torch.randn(17, generator=gen) * (10 ** (k % 4 - 2)) + (k - 6) * 0.1
        choose(g, f"rand {k}", x, -128 if k % 2 else 0, 127 if k % 2 else 255)
    # per token
    x = f32([[-0.5, 0.3, 1.2], [0.1, -0.8, 2.1]])
    so, zo = choose_tok(g, "8.2 tokens", x)
    q = q_tok(g, "8.2 tokens", x, so, zo, -128, 127, torch.int8)
    dq_tok(g, "8.2 tokens", q, so, zo, -128, 127, torch.float32)
    edge = f32(
        [
            [0.0, 0.0, 0.0],
            [1.0, 2.0, 3.0],
            [-3.0, -2.0, -1.0],
            [1e-5, 2e-5, 0.0],
            [-0.5, 0.5, 0.0],
            [7.0, 7.0, 7.0],
        ]
    )
    so, zo = choose_tok(g, "edge rows", edge)
    q = q_tok(g, "edge rows", edge, so, zo, -128, 127, torch.int8)
    dq_tok(g, "edge rows", q, so, zo, -128, 127, torch.float32)
    so, zo = choose_tok(g, "single col", f32([[0.3], [-0.2], [0.0]]))
    for shape in [(5, 16), (2, 3, 9), (1, 33), (4, 1, 7)]:
        x = torch.randn(*shape, generator=gen) * 3
        so, zo = choose_tok(g, f"rand {shape}", x)
        q = q_tok(g, f"rand {shape}", x, so, zo, -128, 127, torch.int8)
        for od in (torch.float32, torch.float16, torch.float64):
            dq_tok(g, f"rand {shape} {od}", q, so, zo, -128, 127, od)
        dq_tok(
            g, f"rand {shape} f32 scales", q, so.float(), zo, -128, 127, torch.float32
        )
    x = torch.randn(3, 10, generator=gen)
    so = torch.rand(3, 1, generator=gen, dtype=torch.float64) * 0.01 + 0.001
    zo = torch.tensor([[0], [100], [200]])
    q = q_tok(g, "u8 tokens", x, so, zo, 0, 255, torch.uint8)
    dq_tok(g, "u8 tokens", q, so, zo, 0, 255, torch.float32)
    return g


def add_case(g, label, a, sa, za, b, sb, zb, so, zo, lo=0, hi=255):
    out = torch.empty(a.shape, dtype=a.dtype)
    QD.add.out(a, sa, za, 0, 255, b, sb, zb, 0, 255, so, zo, lo, hi, out=out)
    g.add(
        "quantized_decomposed::add.out",
        label,
        [
            a,
            float(sa),
            za,
            0,
            255,
            b,
            float(sb),
            zb,
            0,
            255,
            float(so),
            zo,
            lo,
            hi,
            Out(out),
            SameAs(14),
        ],
    )


def gen_add_mixed():
    g = GoldenFile("q_add_mixed")
    u8 = torch.uint8
    add_case(
        g,
        "8.2",
        torch.tensor([0, 128, 255, 10], dtype=u8),
        0.1,
        128,
        torch.tensor([255, 128, 0, 20], dtype=u8),
        0.05,
        100,
        0.2,
        0,
    )
    gen = rng(4)
    for k in range(6):
        a = rand_q(gen, (3, 11), u8)
        b = rand_q(gen, (3, 11), u8)
        add_case(
            g,
            f"rand {k}",
            a,
            0.01 * (k + 1),
            100 + k,
            b,
            0.023,
            128 - k,
            0.05 / (k + 1),
            50 + k,
            0 if k % 2 else 10,
            255 if k % 2 else 200,
        )
    # mixed_mm / mixed_linear
    x = f32([[1.5, -2.0]])
    w = torch.tensor([[3, -1], [2, 4]], dtype=torch.int8)
    s = f32([0.5, 0.25])
    out = torch.empty(1, 2)
    QD.mixed_mm.out(x, w, s, None, out=out)
    g.add(
        "quantized_decomposed::mixed_mm.out",
        "8.2",
        [x, w, s, None, Out(out), SameAs(4)],
    )
    for dt in (torch.float32, torch.float16):
        for m, n, p in [(3, 5, 4), (1, 16, 3), (4, 1, 2)]:
            x = (torch.randn(m, n, generator=gen)).to(dt)
            w = rand_q(gen, (n, p), torch.int8)
            s = (torch.rand(n, generator=gen) * 0.1).to(dt)
            out = torch.empty(m, p, dtype=dt)
            QD.mixed_mm.out(x, w, s, None, out=out)
            g.add(
                "quantized_decomposed::mixed_mm.out",
                f"rand {dt} {m}x{n}x{p}",
                [x, w, s, None, Out(out), SameAs(4)],
            )
    x = f32([[0.1, 0.2, 0.3, 0.4]])
    w = torch.tensor([[1, -2, 3, -4], [127, -128, 5, 0]], dtype=torch.int8)
    s = f32([[0.5, 0.25], [0.01, 0.02]])
    out = torch.empty(1, 2)
    QD.mixed_linear.out(x, w, s, None, None, out=out)
    g.add(
        "quantized_decomposed::mixed_linear.out",
        "8.2",
        [x, w, s, None, None, Out(out), SameAs(5)],
    )
    for dt in (torch.float32, torch.float16):
        for m, n, p, G in [
            (2, 8, 3, 0),
            (2, 8, 3, 2),
            (3, 12, 5, 4),
            (1, 7, 2, 3),
            (2, 5, 3, 4),
            (2, 6, 2, 6),
        ]:
            for od, dtarg in [
                (dt, None),
                (torch.float32, torch.float32),
                (torch.float16, torch.float16),
                (torch.float64, None),
            ]:
                x = torch.randn(m, n, generator=gen).to(dt)
                w = rand_q(gen, (p, n), torch.int8)
                s = (
                    (torch.rand(p, generator=gen) * 0.05).to(dt)
                    if G == 0
                    else (torch.rand(p, G, generator=gen) * 0.05).to(dt)
                )
                out = torch.empty(m, p, dtype=od)
                QD.mixed_linear.out(x, w, s, None, dtarg, out=out)
                g.add(
                    "quantized_decomposed::mixed_linear.out",
                    f"rand {dt} {m}x{n}x{p} G{G} {od} {dtarg}",
                    [x, w, s, None, dtarg, Out(out), SameAs(5)],
                )
    return g


# ---------------------------------------------------------------------------
# embeddings (ExecuTorch runtime oracle)

_emb_cache = {}


def _register_fake_embeddings():
    # The Python reference kernels (used by export under fake tensors) reject
    # group size 1; shape functions are all export needs.
    lib = torch.library.Library("quantized_decomposed", "IMPL")

    def make(nbit, with_dtype):
        def meta(
            weight, weight_scales, weight_zero_points, qmin, qmax, indices, dtype=None
        ):
            d = weight.shape[1] * (8 // nbit)
            out_dtype = (
                dtype if (with_dtype and dtype is not None) else weight_scales.dtype
            )
            return torch.empty(
                list(indices.shape) + [d], dtype=out_dtype, device="meta"
            )

        return meta

    for nbit, name in (
        (8, "embedding_byte"),
        (4, "embedding_4bit"),
        (2, "embedding_2bit"),
    ):
        lib.impl(name, make(nbit, False), "Meta")
        lib.impl(name + ".dtype", make(nbit, True), "Meta")
    return lib


_FAKE_LIB = None


def run_et(fn, inputs):
    global _FAKE_LIB
    if _FAKE_LIB is None:
        _FAKE_LIB = _register_fake_embeddings()
    from executorch.exir import EdgeCompileConfig, to_edge
    from executorch.extension.pybindings import portable_lib as pl

    class M(torch.nn.Module):
        def forward(self, *a):
            return fn(*a)

    ep = torch.export.export(M(), tuple(inputs))
    prog = to_edge(
        ep, compile_config=EdgeCompileConfig(_check_ir_validity=False)
    ).to_executorch()
    m = pl._load_for_executorch_from_buffer(prog.buffer)
    return m.forward(tuple(inputs))[0]


def emb_case(
    g, label, nbit, w, scales, zps, qmin, qmax, idx, dtype_variant, dtype=None
):
    name = {8: "embedding_byte", 4: "embedding_4bit", 2: "embedding_2bit"}[nbit]
    op = getattr(QD, name)
    ins = [w, scales] + ([zps] if zps is not None else []) + [idx]

    def fn(*a):
        a = list(a)
        zz = a[2] if zps is not None else None
        ii = a[-1]
        if dtype_variant:
            return op.dtype(a[0], a[1], zz, qmin, qmax, ii, dtype=dtype)
        return op.default(a[0], a[1], zz, qmin, qmax, ii)

    out = run_et(fn, ins)
    if dtype_variant:
        g.add(
            f"quantized_decomposed::{name}.dtype_out",
            label,
            [w, scales, zps, qmin, qmax, idx, dtype, Out(out), SameAs(7)],
        )
    else:
        g.add(
            f"quantized_decomposed::{name}.out",
            label,
            [w, scales, zps, qmin, qmax, idx, Out(out), SameAs(6)],
        )


def pack4(q):  # q int8 [V, D] in [-8, 7] -> u8 [V, D/2], even element high nibble
    u = (q.to(torch.int16) + 8).to(torch.uint8)
    return (u[:, 0::2] << 4) | u[:, 1::2]


def pack2(q):  # q in [-2, 1] -> u8 [V, D/4], element j%4 in bits 2*(j%4)
    u = (q.to(torch.int16) + 2).to(torch.uint8)
    return u[:, 0::4] | (u[:, 1::4] << 2) | (u[:, 2::4] << 4) | (u[:, 3::4] << 6)


def gen_embedding():
    g = GoldenFile("q_embedding")
    i8 = torch.int8
    w = torch.tensor([[-3, 1, 6, 7], [2, -5, -4, 0], [-8, 3, -1, 6]], dtype=i8)
    sc = f32([[0.5, 1.0], [1.5, 2.0], [2.5, 3.0]])
    zp = f32([[1, -5], [0, 2], [-3, -1]])
    idx = torch.tensor([2, 0])
    emb_case(g, "8.2 byte", 8, w, sc, zp, -128, 127, idx, False)
    emb_case(g, "8.2 byte dtype", 8, w, sc, zp, -128, 127, idx, True, torch.float32)
    for dt in (torch.float16, torch.bfloat16):
        s2 = torch.tensor([[0.1, 0.3]] * 3, dtype=dt)
        emb_case(
            g, f"8.2 byte {dt}", 8, w, s2, None, -128, 127, torch.tensor([1]), False
        )
        emb_case(
            g,
            f"8.2 byte dtype {dt}",
            8,
            w,
            s2,
            None,
            -128,
            127,
            torch.tensor([1]),
            True,
            dt,
        )
        emb_case(
            g,
            f"byte f32 scales -> {dt}",
            8,
            w,
            f32([[0.1, 0.3]] * 3),
            None,
            -128,
            127,
            torch.tensor([1, 0]),
            True,
            dt,
        )
    emb_case(
        g,
        "8.2 4bit",
        4,
        torch.tensor([[89, 239], [163, 72], [11, 126]], dtype=torch.uint8),
        f32([0.5, 1.0, 1.5]),
        f32([1, -5, 0]),
        -8,
        7,
        torch.tensor([0, 2, 1]),
        False,
    )
    emb_case(
        g,
        "8.2 2bit",
        2,
        torch.tensor([[0x1B, 0xE4]], dtype=torch.uint8),
        f32([0.5]),
        None,
        -2,
        1,
        torch.tensor([0]),
        False,
    )
    gen = rng(5)
    for nbit, (lo, hi) in ((8, (-128, 127)), (4, (-8, 7)), (2, (-2, 1))):
        for V, D, G in [(3, 8, 0), (3, 8, 1), (2, 16, 2), (2, 8, 8), (2, 24, 3)]:
            if D % 4:
                continue
            q = torch.randint(lo, hi + 1, (V, D), generator=gen).to(i8)
            wt = q if nbit == 8 else (pack4(q) if nbit == 4 else pack2(q))
            for sdt in (torch.float32, torch.float16, torch.bfloat16):
                shape = (V,) if G == 0 else (V, G)
                scales = (torch.rand(*shape, generator=gen) * 0.2 + 0.01).to(sdt)
                zps = torch.randint(-3, 4, shape, generator=gen).to(sdt)
                idx = torch.randint(0, V, (3,), generator=gen)
                for with_zp in (False, True) if sdt != torch.bfloat16 else (True,):
                    z = zps if with_zp else None
                    lbl = f"{nbit}bit V{V} D{D} G{G} {sdt} zp={with_zp}"
                    if nbit == 8 or sdt == torch.float32:
                        # the plain 2/4-bit .out variants are exported with a float32
                        # out; ExecuTorch then reads f16/bf16 scales as float32
                        # (out of bounds), so only float32 scales make sense there
                        emb_case(g, lbl, nbit, wt, scales, z, lo, hi, idx, False)
                    emb_case(
                        g, lbl + " dtype", nbit, wt, scales, z, lo, hi, idx, True, sdt
                    )
                    if not with_zp and sdt == torch.float16:
                        emb_case(
                            g,
                            lbl + " dtype->f32",
                            nbit,
                            wt,
                            scales,
                            None,
                            lo,
                            hi,
                            idx,
                            True,
                            torch.float32,
                        )
            if nbit == 8:
                emb_case(
                    g,
                    f"u8 weight V{V} D{D}",
                    8,
                    (q.to(torch.int16) + 128).to(torch.uint8),
                    f32([0.05] * V),
                    f32([128.0] * V),
                    0,
                    255,
                    torch.tensor([0, V - 1]),
                    False,
                )
            else:
                emb_case(
                    g,
                    f"{nbit}bit i32 idx 2-D V{V} D{D}",
                    nbit,
                    wt,
                    (torch.rand(V, generator=gen) + 0.1),
                    None,
                    lo,
                    hi,
                    torch.randint(0, V, (2, 3), generator=gen, dtype=torch.int32),
                    True,
                    torch.float32,
                )
    emb_case(
        g,
        "byte idx 2-D",
        8,
        w,
        sc,
        None,
        -128,
        127,
        torch.tensor([[0, 1], [2, 2]]),
        True,
        None,
    )
    return g


# ---------------------------------------------------------------------------
# operators ExecuTorch has no kernel for: PyTorch / torchao references, run
# through the .out overloads of python/pterun/torch_ops.py


def _load_torch_ops():
    import importlib.util

    path = os.path.join(str(ROOT), "python", "pterun", "torch_ops.py")
    spec = importlib.util.spec_from_file_location("pterun_torch_ops", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def gen_extension():
    _load_torch_ops()
    import torchao.quantization.quant_primitives  # noqa: F401

    TA = torch.ops.torchao
    g = GoldenFile("q_extension")
    gen = rng(6)
    # quantize_per_channel_group
    for R, C, gs in [(3, 8, 4), (2, 6, 3), (2, 5, 8)]:
        for idt, sdt in [
            (torch.float32, torch.float32),
            (torch.float16, torch.float16),
            (torch.bfloat16, torch.bfloat16),
            (torch.float32, torch.float64),
        ]:
            for zdt in (
                (torch.int64, torch.float32) if idt == torch.float32 else (torch.int32,)
            ):
                ngroups = R * max(C // gs, 1)
                x = (torch.randn(R, C, generator=gen) * 2).to(idt)
                x[0, 0] = 0.125  # exercises ties with the power-of-two scales below
                sc = (torch.rand(ngroups, 1, generator=gen) * 0.1 + 0.01).to(sdt)
                sc[0, 0] = 0.25
                zp = torch.randint(-4, 5, (ngroups, 1), generator=gen).to(zdt)
                for lo, hi, dt in [(-8, 7, torch.int8), (0, 255, torch.uint8)]:
                    z = zp if lo < 0 else (zp + 128).to(zdt)
                    out = torch.empty(R, C, dtype=dt)
                    QD.quantize_per_channel_group.out(x, sc, z, lo, hi, dt, gs, out=out)
                    g.add(
                        "quantized_decomposed::quantize_per_channel_group.out",
                        f"{R}x{C} gs{gs} {idt} {sdt} {zdt} [{lo},{hi}]",
                        [x, sc, z, lo, hi, dt, gs, Out(out), SameAs(7)],
                    )
    # dequantize_per_channel_group
    for R, C, gs in [(3, 8, 4), (2, 6, 3), (2, 5, 8)]:
        ngroups = R * max(C // gs, 1)
        q = torch.randint(-8, 8, (R, C), generator=gen).to(torch.int8)
        for sdt in (
            (torch.float32, torch.float16, torch.bfloat16)
            if gs != 3
            else (torch.float32,)
        ):
            sc = (torch.rand(ngroups, generator=gen) * 0.1 + 0.01).to(sdt)
            if gs > C:
                sc = sc.reshape(ngroups, 1)
            for zdt in (None, torch.int64, torch.float32):
                zp = (
                    None
                    if zdt is None
                    else torch.randint(-3, 4, (ngroups,), generator=gen).to(zdt)
                )
                ods = (
                    (torch.float32, torch.float16, torch.bfloat16)
                    if zdt is None
                    else (torch.float32,)
                )
                for od in ods:
                    out = torch.empty(R, C, dtype=od)
                    QD.dequantize_per_channel_group.out(
                        q, sc, zp, -8, 7, torch.int8, gs, od, out=out
                    )
                    g.add(
                        "quantized_decomposed::dequantize_per_channel_group.out",
                        f"{R}x{C} gs{gs} {sdt} zp={zdt} {od}",
                        [q, sc, zp, -8, 7, torch.int8, gs, od, Out(out), SameAs(8)],
                    )
    # choose_qparams_per_token (symmetric)
    for shape in [(4, 9), (2, 3, 5), (1, 1)]:
        for idt in (torch.float32, torch.float16, torch.bfloat16):
            x = (torch.randn(*shape, generator=gen) * 3).to(idt)
            if shape[0] > 1:
                x[0].zero_()
            oshape = list(shape[:-1]) + [1]
            so = torch.empty(oshape, dtype=torch.float64)
            zo = torch.empty(oshape, dtype=torch.int64)
            QD.choose_qparams_per_token.out(
                x, torch.int8, scale_out=so, zero_point_out=zo
            )
            g.add(
                "quantized_decomposed::choose_qparams_per_token.out",
                f"{shape} {idt}",
                [x, torch.int8, Out(so), Out(zo), TList([2, 3])],
            )
    # choose_qparams_symmetric
    for k, (vals, lo, hi, dt) in enumerate(
        [
            ([0.3, -0.75, 0.1, 0.0], -128, 127, torch.int8),
            ([1.0, 2.0], -128, 127, torch.int8),
            ([-5.0, -1.0], 0, 255, torch.uint8),
            ([0.0, 0.0], -128, 127, torch.int8),
            ([1e-12, -1e-13], -8, 7, torch.int8),
        ]
    ):
        x = f32(vals)
        so = torch.empty(1, dtype=torch.float64)
        zo = torch.empty(1, dtype=torch.int64)
        QD.choose_qparams_symmetric.Tensor_out(
            x, lo, hi, 1e-7, dt, scale_out=so, zero_point_out=zo
        )
        g.add(
            "quantized_decomposed::choose_qparams_symmetric.Tensor_out",
            f"case {k}",
            [x, lo, hi, 1e-7, dt, Out(so), Out(zo), TList([5, 6])],
        )
    for idt in (torch.float32, torch.float16):
        x = (torch.randn(33, generator=gen) * 4).to(idt)
        so = torch.empty(1, dtype=torch.float64)
        zo = torch.empty(1, dtype=torch.int64)
        QD.choose_qparams_symmetric.Tensor_out(
            x,
            -128,
            127,
            1.1920928955078125e-07,
            torch.int8,
            scale_out=so,
            zero_point_out=zo,
        )
        g.add(
            "quantized_decomposed::choose_qparams_symmetric.Tensor_out",
            f"rand {idt}",
            [
                x,
                -128,
                127,
                1.1920928955078125e-07,
                torch.int8,
                Out(so),
                Out(zo),
                TList([5, 6]),
            ],
        )

    # torchao affine ops
    def ta_choose(label, x, mt, block, tdt, qmin, qmax, eps, sdt, zdt, keepdim):
        s, z = TA.choose_qparams_affine(
            x, mt, block, tdt, qmin, qmax, eps, sdt, zdt, keepdim
        )
        so, zo = torch.empty_like(s), torch.empty_like(z)
        TA.choose_qparams_affine.out(
            x,
            mt,
            block,
            tdt,
            qmin,
            qmax,
            eps,
            sdt,
            zdt,
            keepdim,
            scale_out=so,
            zero_point_out=zo,
        )
        g.add(
            "torchao::choose_qparams_affine.out",
            label,
            [
                x,
                mt,
                list(block),
                tdt,
                qmin,
                qmax,
                eps,
                sdt,
                zdt,
                keepdim,
                Out(so),
                Out(zo),
                TList([10, 11]),
            ],
        )
        return so, zo

    def ta_quant(label, x, block, s, z, odt, qmin, qmax):
        out = torch.empty(x.shape, dtype=odt)
        TA.quantize_affine.out(x, block, s, z, odt, qmin, qmax, out=out)
        g.add(
            "torchao::quantize_affine.out",
            label,
            [x, list(block), s, z, odt, qmin, qmax, Out(out), SameAs(7)],
        )
        return out

    def ta_dequant(label, q, block, s, z, idt, qmin, qmax, odt):
        out = torch.empty(q.shape, dtype=odt)
        TA.dequantize_affine.out(q, block, s, z, idt, qmin, qmax, odt, out=out)
        g.add(
            "torchao::dequantize_affine.out",
            label,
            [q, list(block), s, z, idt, qmin, qmax, odt, Out(out), SameAs(8)],
        )

    ta_choose(
        "8.2 sym int4",
        f32([[0.3, -0.75, 0.1, 0.0]]),
        "SYMMETRIC",
        [1, 4],
        torch.int8,
        -8,
        7,
        None,
        None,
        None,
        False,
    )
    ta_choose(
        "8.2 asym token",
        f32([[-0.5, 0.3, 1.2]]),
        "ASYMMETRIC",
        [1, 3],
        torch.int8,
        -128,
        127,
        None,
        None,
        torch.int8,
        False,
    )
    ta_choose(
        "all zero",
        f32([[0.0, 0.0, 0.0]]),
        "ASYMMETRIC",
        [1, 3],
        torch.int8,
        -128,
        127,
        None,
        None,
        torch.int8,
        False,
    )
    for idt in (torch.float32, torch.float16, torch.bfloat16):
        shapes = [
            ((2, 8), (1, 4)),
            ((3, 4), (1, 4)),
            ((2, 1, 4), (1, 1, 4)),
            ((2, 4), (2, 4)),
            ((4, 4), (2, 2)),
        ]
        if idt != torch.float32:
            shapes = shapes[:2]
        for shape, block in shapes:
            x = (torch.randn(*shape, generator=gen) * 2).to(idt)
            mts = [
                ("SYMMETRIC", -8, 7, None),
                ("SYMMETRIC", -128, 127, torch.int8),
                ("SYMMETRIC_NO_CLIPPING_ERR", -8, 7, torch.int8),
                ("ASYMMETRIC", -128, 127, torch.int8),
                ("ASYMMETRIC", 0, 15, torch.int32),
            ]
            if len(shape) > 2 or shape[0] == shape[1]:
                mts = [mts[0], mts[3]]
            for mt, lo, hi, zdt in mts:
                tdt = torch.int8 if lo < 0 else torch.uint8
                for keepdim in (False, True) if mt == "ASYMMETRIC" else (False,):
                    lbl = f"{idt} {shape} {block} {mt} [{lo},{hi}] kd={keepdim}"
                    s, z = ta_choose(
                        lbl, x, mt, block, tdt, lo, hi, None, None, zdt, keepdim
                    )
                q = ta_quant(lbl, x, block, s, z, tdt, lo, hi)
                ta_dequant(lbl + f" -> {idt}", q, block, s, z, tdt, lo, hi, idt)
                if idt != torch.float32:
                    ta_dequant(
                        lbl + " -> f32", q, block, s, z, tdt, lo, hi, torch.float32
                    )
                if zdt is not None and mt == "ASYMMETRIC":
                    ta_dequant(lbl + " no zp", q, block, s, None, tdt, lo, hi, idt)
            tok = (1,) * (len(shape) - 1) + (shape[-1],)
            s, z = ta_choose(
                f"{idt} f32 scales",
                x,
                "ASYMMETRIC",
                tok,
                torch.int8,
                -128,
                127,
                None,
                torch.float32,
                torch.int8,
                False,
            )
            q = ta_quant(f"{idt} f32 scales", x, tok, s, z, torch.int8, -128, 127)
            ta_dequant(f"{idt} f32 scales", q, tok, s, z, torch.int8, -128, 127, idt)
    x = torch.randn(3, 8, generator=gen)
    s, z = ta_choose(
        "default qrange",
        x,
        "ASYMMETRIC",
        [1, 8],
        torch.int8,
        None,
        None,
        1e-6,
        torch.float32,
        torch.int32,
        False,
    )
    q = ta_quant("default qrange", x, [1, 8], s, z, torch.int8, None, None)
    ta_dequant("default qrange", q, [1, 8], s, z, torch.int8, None, None, torch.float32)
    return g


def _inv_differs(so):
    """1 if PyTorch's (float)(1.0 / so) differs from ExecuTorch's 1.0f / (float)so."""
    return np.float32(1.0 / so) != np.float32(1.0) / np.float32(so)


def gen_add_ext():
    """quantized_decomposed::add_relu.out / add.scalar_out: the QuantFusionPass
    patterns (dq -> add (-> relu) -> q) evaluated by PyTorch, through the .out
    overloads of python/pterun/torch_ops.py."""
    _load_torch_ops()
    g = GoldenFile("q_add_ext")
    gen = rng(7)

    def relu_case(
        label, a, sa, za, b, sb, zb, so, zo, alo=None, ahi=None, lo=None, hi=None
    ):
        info = torch.iinfo(a.dtype)
        alo = info.min if alo is None else alo
        ahi = info.max if ahi is None else ahi
        lo = info.min if lo is None else lo
        hi = info.max if hi is None else hi
        out = torch.empty(0, dtype=a.dtype)
        QD.add_relu.out(
            a, sa, za, alo, ahi, b, sb, zb, alo, ahi, so, zo, lo, hi, out=out
        )
        g.add(
            "quantized_decomposed::add_relu.out",
            label,
            [
                a,
                float(sa),
                za,
                alo,
                ahi,
                b,
                float(sb),
                zb,
                alo,
                ahi,
                float(so),
                zo,
                lo,
                hi,
                Out(out),
                SameAs(14),
            ],
        )
        return out

    def scalar_case(label, a, sa, za, bval, so, zo, odt=None, lo=None, hi=None):
        odt = a.dtype if odt is None else odt
        ai, oi = torch.iinfo(a.dtype), torch.iinfo(odt)
        lo = oi.min if lo is None else lo
        hi = oi.max if hi is None else hi
        out = torch.empty(0, dtype=odt)
        QD.add.scalar_out(
            a, sa, za, ai.min, ai.max, a.dtype, bval, so, zo, lo, hi, odt, out=out
        )
        g.add(
            "quantized_decomposed::add.scalar_out",
            label,
            [
                a,
                float(sa),
                za,
                ai.min,
                ai.max,
                a.dtype,
                bval,
                float(so),
                zo,
                lo,
                hi,
                odt,
                Out(out),
                SameAs(12),
            ],
        )
        return out

    u8 = torch.uint8
    # the exporter's case: uint8, per-tensor, same shape
    relu_case(
        "8.2-like",
        torch.tensor([0, 128, 255, 10], dtype=u8),
        0.1,
        128,
        torch.tensor([255, 0, 128, 3], dtype=u8),
        0.05,
        100,
        0.2,
        0,
    )
    for k in range(4):
        a = torch.randint(0, 256, (3, 17), generator=gen).to(u8)
        b = torch.randint(0, 256, (3, 17), generator=gen).to(u8)
        sa = float(torch.rand(1, generator=gen)) * 0.05 + 0.001
        sb = float(torch.rand(1, generator=gen)) * 0.05 + 0.001
        so = float(torch.rand(1, generator=gen)) * 0.05 + 0.002
        relu_case(f"rand {k}", a, sa, 90 + 13 * k, b, sb, 160 - 20 * k, so, 7 * k)
    # clamps: narrow output range, zero point at the top
    a = torch.randint(0, 256, (40,), generator=gen).to(u8)
    b = torch.randint(0, 256, (40,), generator=gen).to(u8)
    relu_case("clamp [10,200]", a, 0.03, 128, b, 0.02, 128, 0.01, 64, lo=10, hi=200)
    relu_case("zp 255", a, 0.03, 128, b, 0.02, 128, 0.004, 255)
    relu_case(
        "input range [0,127]", a // 2, 0.03, 64, b // 2, 0.02, 64, 0.02, 3, 0, 127
    )
    # ties: power-of-two scales put every sum on a .5 boundary of the output grid
    q = torch.arange(0, 256, dtype=torch.int32).to(u8)
    relu_case("ties", q, 0.25, 0, torch.full((256,), 3, dtype=u8), 0.125, 2, 0.5, 1)
    # PyTorch's reciprocal (double 1/s rounded to float) vs ExecuTorch's 1.0f/(float)s:
    # half-step sums, so a one-ulp change of the reciprocal flips a rounding
    found = 0
    for k in range(2000):
        so = 0.001 + k * 0.0003791
        if not _inv_differs(so):
            continue
        sa = float(np.float32(so)) * 0.5
        v = q.to(torch.float32) * np.float32(sa)
        et = torch.round(v * (np.float32(1.0) / np.float32(so)))
        py = torch.round(v * np.float32(1.0 / so))
        if bool((et != py).any()):
            out = relu_case(
                f"reciprocal so={so!r}",
                q,
                sa,
                0,
                torch.zeros(256, dtype=u8),
                1.0,
                0,
                so,
                0,
            )
            assert torch.equal(out.to(torch.float32), torch.clamp(py, 0, 255)), (
                "ref changed"
            )
            found += 1
            if found == 2:
                break
    assert found == 2, "no scale exercising the reciprocal rounding"
    # broadcasting (ATen rules), rank 0, empty
    a = torch.randint(0, 256, (2, 3, 4), generator=gen).to(u8)
    relu_case(
        "bcast [2,3,4]+[4]",
        a,
        0.02,
        100,
        torch.randint(0, 256, (4,), generator=gen).to(u8),
        0.03,
        120,
        0.025,
        20,
    )
    relu_case(
        "bcast [2,1,4]+[3,1]",
        a[:, :1, :].contiguous(),
        0.02,
        100,
        torch.randint(0, 256, (3, 1), generator=gen).to(u8),
        0.03,
        120,
        0.025,
        20,
    )
    relu_case(
        "bcast [1]+[2,3,4]",
        torch.tensor([77], dtype=u8),
        0.02,
        100,
        a,
        0.03,
        120,
        0.025,
        20,
    )
    relu_case(
        "rank 0",
        torch.tensor(200, dtype=u8),
        0.02,
        100,
        torch.tensor(30, dtype=u8),
        0.03,
        20,
        0.025,
        5,
    )
    relu_case(
        "empty",
        torch.empty(0, 3, dtype=u8),
        0.02,
        100,
        torch.empty(0, 3, dtype=u8),
        0.03,
        20,
        0.025,
        5,
    )
    # other quantized dtypes (the schema has none: a's dtype is the output's)
    for dt, zs in (
        (torch.int8, (-10, 5, -128)),
        (torch.int16, (-300, 1000, 0)),
        (torch.uint16, (30000, 32768, 100)),
    ):
        info = torch.iinfo(dt)
        a = torch.randint(info.min, info.max + 1, (5, 7), generator=gen).to(dt)
        b = torch.randint(info.min, info.max + 1, (5, 7), generator=gen).to(dt)
        span = float(info.max - info.min)
        relu_case(
            f"{dt}", a, 4.0 / span, zs[0], b, 3.0 / span, zs[1], 5.0 / span, zs[2]
        )

    # add.scalar
    a = torch.randint(0, 256, (4, 9), generator=gen).to(u8)
    for bval in (
        1.5,
        -0.3,
        0.0,
        3,
        -2,
        True,
        False,
        2**40 + 1,
        1e30,
        -1e30,
        float("inf"),
        float("-inf"),
    ):
        scalar_case(f"u8 b={bval!r}", a, 0.02, 128, bval, 0.03, 40)
    scalar_case("ties", q, 0.25, 0, 0.125, 0.5, 1)
    scalar_case("clamp [10,200]", a, 0.02, 128, 0.7, 0.01, 64, lo=10, hi=200)
    scalar_case("u8 -> i8", a, 0.02, 128, -0.25, 0.03, -5, odt=torch.int8)
    scalar_case(
        "i8 -> u8",
        (a.to(torch.int16) - 128).to(torch.int8),
        0.02,
        3,
        1.0,
        0.03,
        40,
        odt=torch.uint8,
    )
    scalar_case(
        "i16",
        torch.randint(-32768, 32768, (33,), generator=gen).to(torch.int16),
        1e-4,
        -7,
        0.5,
        2e-4,
        11,
    )
    scalar_case(
        "u16 -> u8",
        torch.randint(0, 65536, (33,), generator=gen).to(torch.uint16),
        1e-4,
        32768,
        0.5,
        0.05,
        20,
        odt=torch.uint8,
    )
    scalar_case("rank 0", torch.tensor(9, dtype=u8), 0.5, 3, 2.25, 0.25, 0)
    scalar_case("empty", torch.empty(2, 0, dtype=u8), 0.5, 3, 2.25, 0.25, 0)
    return g


def files():
    for fn in (
        gen_per_tensor,
        gen_per_channel,
        gen_choose,
        gen_add_mixed,
        gen_embedding,
        gen_extension,
        gen_add_ext,
    ):
        yield fn().build()
