"""Golden cases of the nn/shape portable kernels; PyTorch (eager) is the reference.

The cases go to the portable family files (golden.portable: tests/golden/
portable_<family>.txt;
the groups here only fix the random seeds); every expected output below is
computed by torch.
"""

from __future__ import annotations

import math

import torch

from golden import format as gf
from golden.format import (
    Bools,
    Close,
    Double,
    Doubles,
    Expect,
    GoldenFile,
    Ref,
    Refs,
    Tensor,
)
from golden.format import TensorList

OK, INVALID_ARGUMENT, INVALID_TYPE, NOT_SUPPORTED, INVALID_PROGRAM = (
    "OK",
    "INVALID_ARGUMENT",
    "INVALID_TYPE",
    "NOT_SUPPORTED",
    "INVALID_PROGRAM",
)


def dim_order(t):
    try:
        return list(t.dim_order())
    except Exception:  # ambiguous layout (e.g. size-1 dims): treat as contiguous
        return list(range(t.dim()))


# ---- argument markers -------------------------------------------------------------
class Out:
    """An out tensor: dtype, initial sizes (defaults to the result's), dim order."""

    def __init__(self, dtype=None, sizes=None, order=None, cap=None):
        self.dtype, self.sizes, self.order, self.cap = dtype, sizes, order, cap


Ret = Ref
RetList = Refs
Dbl = Double
Opt = gf.TensorList


class Gen(gf.Gen):
    """A generated float input (see golden.format.Gen); .t holds its values."""

    def __init__(self, sizes, seed, dtype=torch.float32):
        super().__init__(dtype, list(sizes), seed)
        self.t = self.tensor()


def golden_out(o, like):
    dtype = o.dtype if o.dtype is not None else like.dtype
    sizes = list(o.sizes) if o.sizes is not None else list(like.shape)
    order = o.order if o.order is not None else list(range(len(sizes)))
    cap = (
        o.cap
        if o.cap is not None
        else max(like.numel() if like is not None else 0, math.prod(sizes))
    )
    return gf.Out(dtype, sizes, cap=cap, order=order, fill=0xA5)


def golden_arg(a, like=None):
    if isinstance(a, torch.Tensor):
        return Tensor(a, dim_order(a))
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], torch.Tensor):
        return Tensor(a[0], a[1])  # (tensor, explicit dim order)
    if isinstance(a, Out):
        return golden_out(a, like)
    if isinstance(a, gf.TensorList):  # Opt: an optional-tensor list
        return gf.TensorList(
            [None if it is None else Tensor(it, dim_order(it)) for it in a.items],
            optional=True,
        )
    if isinstance(a, list) and a and all(isinstance(x, float) for x in a):
        return Doubles(a)
    if isinstance(a, list) and a and all(isinstance(x, (torch.Tensor, Out)) for x in a):
        return TensorList(
            [
                golden_arg(x, like[i] if like is not None else None)
                for i, x in enumerate(a)
            ]
        )
    if isinstance(a, list):
        assert all(isinstance(x, int) for x in a), a
    return a


class Golden:
    def __init__(self, family):
        self.file = GoldenFile("nn_" + family, "PyTorch %s (eager)" % torch.__version__)
        self.names = set()

    def case(
        self, name, op, args, expects=(), atol=0.0, rtol=0.0, status=OK, likes=None
    ):
        """args: python values; expects: list of (arg index, list item or -1, tensor)."""
        assert name not in self.names, name
        self.names.add(name)
        likes = likes or {}
        gargs = [golden_arg(a, likes.get(i)) for i, a in enumerate(args)]
        exps = [
            Expect(k, t.detach(), Close(rtol, atol), None if j < 0 else j)
            for k, j, t in expects
        ]
        self.file.add(gf.Case(name, op, gargs, exps, status))

    def out(self, name, op, inputs, result, out=None, atol=0.0, rtol=0.0):
        """Out-variant op with one out tensor: args = inputs + [out, out]."""
        out = out or Out()
        k = len(inputs)
        self.case(
            name,
            op,
            list(inputs) + [out, Ret(k)],
            [(k, -1, result)],
            atol,
            rtol,
            likes={k: result},
        )

    def outs(self, name, op, inputs, results, outs=None, atol=0.0, rtol=0.0):
        """Several out tensors, then a TensorList return slot."""
        outs = outs or [Out() for _ in results]
        k = len(inputs)
        args = list(inputs) + outs + [RetList(list(range(k, k + len(outs))))]
        likes = {k + i: r for i, r in enumerate(results)}
        self.case(
            name,
            op,
            args,
            [(k + i, -1, r) for i, r in enumerate(results)],
            atol,
            rtol,
            likes=likes,
        )

    def fail(self, name, op, inputs, like, status=INVALID_ARGUMENT, out=None):
        """A call that must fail with `status` (like: a tensor shaped like the out)."""
        out = out or Out()
        k = len(inputs)
        self.case(
            name, op, list(inputs) + [out, Ret(k)], [], status=status, likes={k: like}
        )


def rnd(*shape, dtype=torch.float32, lo=-5, hi=5):
    if dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        # Multiples of 1/16: exact in every float dtype and short in the files.
        return (torch.randn(*shape, dtype=torch.float64) * 16).round().div(16).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape).bool()
    if dtype == torch.uint8:
        lo = max(lo, 0)
    return torch.randint(lo, hi, shape, dtype=dtype)


def cl(t):
    """Channels-last copy (4-D) or channels-last-3d (5-D)."""
    if t.dim() == 4:
        return t.contiguous(memory_format=torch.channels_last)
    return t.contiguous(memory_format=torch.channels_last_3d)


CL4 = [0, 2, 3, 1]
TOL = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-12, 1e-12),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 2e-2),
}


def tol(dt):
    return TOL.get(dt, (0.0, 0.0))


# ---- families ----------------------------------------------------------------------
def gen_matmul():
    g = Golden("matmul")
    for dt in (
        torch.float32,
        torch.float64,
        torch.float16,
        torch.bfloat16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.int8,
    ):
        a, b = rnd(5, 7, dtype=dt, lo=-3, hi=4), rnd(7, 19, dtype=dt, lo=-3, hi=4)
        at, rt = tol(dt)
        g.out(
            "mm_%s" % str(dt)[6:],
            "aten::mm.out",
            [a, b],
            torch.mm(a, b),
            atol=at,
            rtol=rt,
        )
    # larger odd sizes cross the K/N blocks (KC 64/256, NC 64/128) and the MR/NR tails
    a, b = Gen([9, 300], 1), Gen([300, 130], 2)
    g.out(
        "mm_big_f32", "aten::mm.out", [a, b], torch.mm(a.t, b.t), atol=1e-4, rtol=1e-4
    )
    a, b = Gen([6, 70], 3, torch.float64), Gen([70, 40], 4, torch.float64)
    g.out(
        "mm_big_f64", "aten::mm.out", [a, b], torch.mm(a.t, b.t), atol=1e-12, rtol=1e-12
    )
    a, b = Gen([5, 90], 5, torch.float16), Gen([90, 20], 6, torch.float16)
    g.out(
        "mm_big_f16", "aten::mm.out", [a, b], torch.mm(a.t, b.t), atol=5e-2, rtol=1e-2
    )
    # transposed (column-major) operands and a column-major out
    a, b = rnd(9, 6).t(), rnd(11, 9).t()
    g.out(
        "mm_transposed_in",
        "aten::mm.out",
        [(a, [1, 0]), (b, [1, 0])],
        torch.mm(a, b),
        out=Out(order=[1, 0]),
        atol=1e-5,
        rtol=1e-5,
    )
    g.out("mm_k0", "aten::mm.out", [rnd(3, 0), rnd(0, 4)], torch.zeros(3, 4))
    g.out("mm_m0", "aten::mm.out", [rnd(0, 3), rnd(3, 4)], torch.zeros(0, 4))
    a, b = rnd(2, 3), rnd(3, 4)
    g.out(
        "mm_resize",
        "aten::mm.out",
        [a, b],
        torch.mm(a, b),
        out=Out(sizes=[1, 1], cap=8),
        atol=1e-6,
        rtol=1e-6,
    )
    g.fail("mm_bad_inner", "aten::mm.out", [rnd(2, 3), rnd(4, 5)], torch.zeros(2, 5))
    g.fail("mm_bad_rank", "aten::mm.out", [rnd(2, 3, 1), rnd(3, 5)], torch.zeros(2, 5))
    g.fail(
        "mm_bad_dtype",
        "aten::mm.out",
        [rnd(2, 3), rnd(3, 5, dtype=torch.float64)],
        torch.zeros(2, 5),
    )
    g.fail(
        "mm_out_too_small",
        "aten::mm.out",
        [rnd(2, 3), rnd(3, 5)],
        torch.zeros(2, 5),
        out=Out(sizes=[1, 1], cap=4),
    )
    for dt in (torch.float32, torch.float16, torch.int64):
        a, b = rnd(3, 4, 5, dtype=dt), rnd(3, 5, 6, dtype=dt)
        at, rt = tol(dt)
        g.out(
            "bmm_%s" % str(dt)[6:],
            "aten::bmm.out",
            [a, b],
            torch.bmm(a, b),
            atol=at,
            rtol=rt,
        )
    g.out("bmm_b0", "aten::bmm.out", [rnd(0, 4, 5), rnd(0, 5, 6)], torch.zeros(0, 4, 6))
    g.fail(
        "bmm_bad_batch",
        "aten::bmm.out",
        [rnd(2, 4, 5), rnd(3, 5, 6)],
        torch.zeros(2, 4, 6),
    )
    for name, bias, beta, alpha in (
        ("row", rnd(6), 1, 1),
        ("full", rnd(4, 6), 0.5, 2.0),
        ("scalar", rnd(()), 1, 1),
        ("col", rnd(4, 1), 2, 1),
        ("beta0_nan", torch.full((4, 6), float("nan")), 0, 1),
    ):
        a, b = rnd(4, 5), rnd(5, 6)
        g.out(
            "addmm_%s" % name,
            "aten::addmm.out",
            [bias, a, b, beta, alpha],
            torch.addmm(bias, a, b, beta=beta, alpha=alpha),
            atol=1e-5,
            rtol=1e-5,
        )
    a, b, c = (
        rnd(4, 5, dtype=torch.int32),
        rnd(5, 6, dtype=torch.int32),
        rnd(6, dtype=torch.int32),
    )
    g.out(
        "addmm_int",
        "aten::addmm.out",
        [c, a, b, 3, 2],
        torch.addmm(c, a, b, beta=3, alpha=2),
    )
    a, b, c = (
        rnd(4, 5, dtype=torch.float16),
        rnd(5, 6, dtype=torch.float16),
        rnd(6, dtype=torch.float16),
    )
    g.out(
        "addmm_f16",
        "aten::addmm.out",
        [c, a, b, 1, 1],
        torch.addmm(c, a, b),
        atol=2e-2,
        rtol=1e-2,
    )
    g.fail(
        "addmm_bad_bias",
        "aten::addmm.out",
        [rnd(5), rnd(4, 5), rnd(5, 6), 1, 1],
        torch.zeros(4, 6),
    )
    return g


def gen_shape():
    g = Golden("shape")
    A = torch.ops.aten
    x = rnd(2, 3, 4, 5)
    xc = cl(x)
    for dt in (torch.float32, torch.int8, torch.bool, torch.float16):
        t = rnd(2, 3, 4, dtype=dt)
        g.out(
            "view_%s" % str(dt)[6:],
            "aten::view_copy.out",
            [t, [4, -1]],
            t.reshape(4, -1),
        )
    g.out("view_cl_in", "aten::view_copy.out", [xc, [6, 20]], xc.reshape(6, 20))
    v = rnd(120)
    g.out(
        "view_cl_out",
        "aten::view_copy.out",
        [v, [2, 3, 4, 5]],
        v.reshape(2, 3, 4, 5),
        out=Out(order=CL4),
    )
    g.out(
        "view_cl_both",
        "aten::view_copy.out",
        [xc, [3, 2, 4, 5]],
        xc.reshape(3, 2, 4, 5),
        out=Out(order=CL4),
    )
    g.out("view_empty", "aten::view_copy.out", [rnd(0, 3), [3, 0]], torch.zeros(3, 0))
    g.fail(
        "view_bad_numel", "aten::view_copy.out", [rnd(2, 3), [4, 2]], torch.zeros(4, 2)
    )
    g.fail(
        "view_bad_dtype",
        "aten::view_copy.out",
        [rnd(2, 3), [6]],
        torch.zeros(6),
        out=Out(dtype=torch.float64),
    )
    g.out("permute", "aten::permute_copy.out", [x, [3, 1, 0, 2]], x.permute(3, 1, 0, 2))
    g.out(
        "permute_cl",
        "aten::permute_copy.out",
        [xc, [0, 2, 3, 1]],
        xc.permute(0, 2, 3, 1),
    )
    g.out(
        "permute_to_cl",
        "aten::permute_copy.out",
        [x, [0, -1, 1, 2]],
        x.permute(0, 3, 1, 2),
        out=Out(order=CL4),
    )
    g.fail("permute_dup", "aten::permute_copy.out", [x, [0, 0, 1, 2]], x)
    g.out("transpose", "aten::transpose_copy.int_out", [x, 1, -1], x.transpose(1, -1))
    t = rnd(3, 4, dtype=torch.int64)
    g.out("transpose_i64", "aten::transpose_copy.int_out", [t, 0, 1], t.t())
    g.fail("transpose_bad_dim", "aten::transpose_copy.int_out", [x, 0, 4], x)
    t = rnd(3, 7)
    g.out("t_2d", "aten::t_copy.out", [t], t.t())
    t = rnd(5)
    g.out("t_1d", "aten::t_copy.out", [t], t.t())
    g.out("unsqueeze", "aten::unsqueeze_copy.out", [x, -1], x.unsqueeze(-1))
    g.out("unsqueeze0", "aten::unsqueeze_copy.out", [xc, 1], xc.unsqueeze(1))
    t = rnd(())
    g.out("unsqueeze_scalar", "aten::unsqueeze_copy.out", [t, 0], t.unsqueeze(0))
    t = rnd(2, 1, 3, 1)
    g.out("squeeze_dim", "aten::squeeze_copy.dim_out", [t, 1], A.squeeze_copy.dim(t, 1))
    g.out(
        "squeeze_dim_noop",
        "aten::squeeze_copy.dim_out",
        [t, 0],
        A.squeeze_copy.dim(t, 0),
    )
    g.out(
        "squeeze_dims",
        "aten::squeeze_copy.dims_out",
        [t, [1, -1]],
        A.squeeze_copy.dims(t, [1, -1]),
    )
    t = rnd(3, 1)
    g.out("expand", "aten::expand_copy.out", [t, [2, -1, 4], False], t.expand(2, -1, 4))
    t = rnd(())
    g.out("expand_scalar", "aten::expand_copy.out", [t, [3, 2], False], t.expand(3, 2))
    t = rnd(1, 3, 1, 1)
    g.out(
        "expand_cl_out",
        "aten::expand_copy.out",
        [t, [2, 3, 2, 2], False],
        t.expand(2, 3, 2, 2),
        out=Out(order=CL4),
    )
    g.fail("expand_bad", "aten::expand_copy.out", [rnd(3, 2), [3, 4], False], rnd(3, 4))
    for name, dim, st, en, step in (
        ("basic", 1, 1, 3, 1),
        ("step", 3, 0, None, 2),
        ("neg", 2, -3, -1, 1),
        ("clamp", 0, -100, 100, 1),
        ("empty", 1, 2, 1, 1),
        ("none", -1, None, None, 3),
    ):
        sl = [slice(None)] * 4
        sl[dim] = slice(st, en, step)
        g.out(
            "slice_%s" % name,
            "aten::slice_copy.Tensor_out",
            [x, dim, st, en, step],
            x[tuple(sl)],
        )
    g.out("slice_cl", "aten::slice_copy.Tensor_out", [xc, 1, 1, 3, 1], xc[:, 1:3])
    g.fail("slice_step0", "aten::slice_copy.Tensor_out", [x, 1, 0, 2, 0], x[:, 0:2])
    g.out("select", "aten::select_copy.int_out", [x, 2, -1], x[:, :, -1])
    t = rnd(4)
    g.out("select_1d", "aten::select_copy.int_out", [t, 0, 2], t[2])
    g.out("select_cl", "aten::select_copy.int_out", [xc, 1, 1], xc[:, 1])
    g.fail("select_oob", "aten::select_copy.int_out", [x, 1, 3], x[:, 0])
    g.out("narrow", "aten::narrow_copy.out", [x, 3, 1, 3], x.narrow(3, 1, 3))
    g.out("narrow_neg", "aten::narrow_copy.out", [x, 1, -2, 2], x.narrow(1, -2, 2))
    g.fail("narrow_oob", "aten::narrow_copy.out", [x, 1, 2, 2], x.narrow(1, 0, 2))
    for op in ("alias_copy", "detach_copy", "lift_fresh_copy"):
        g.out(op, "aten::%s.out" % op, [xc], xc)
    t = rnd(4, 5)
    g.out(
        "as_strided",
        "aten::as_strided_copy.out",
        [t, [3, 3], [5, 2], 1],
        torch.as_strided(t, [3, 3], [5, 2], 1),
    )
    g.out(
        "as_strided_nooff",
        "aten::as_strided_copy.out",
        [t, [2, 2], [1, 4], None],
        torch.as_strided(t, [2, 2], [1, 4]),
    )
    g.fail(
        "as_strided_oob", "aten::as_strided_copy.out", [t, [3, 3], [5, 2], 6], rnd(3, 3)
    )
    g.out("flip", "aten::flip.out", [x, [0, 3]], x.flip(0, 3))
    g.out("flip_cl", "aten::flip.out", [xc, [1, -2]], xc.flip(1, -2))
    g.out("flip_none", "aten::flip.out", [x, []], x)
    t = rnd(3, 4, dtype=torch.int32)
    g.out("roll_flat", "aten::roll.out", [t, [5], []], t.roll(5))
    g.out("roll_dims", "aten::roll.out", [x, [1, -7], [1, 3]], x.roll((1, -7), (1, 3)))
    g.out("roll_cl", "aten::roll.out", [xc, [2], [1]], xc.roll(2, 1))
    t = rnd(2, 3)
    g.out("repeat", "aten::repeat.out", [t, [2, 1, 3]], t.repeat(2, 1, 3))
    g.out("repeat_zero", "aten::repeat.out", [t, [0, 2]], t.repeat(0, 2))
    g.fail("repeat_short", "aten::repeat.out", [t, [2]], t)
    t = rnd(2, 8, 3, 2)
    g.out("pixel_shuffle", "aten::pixel_shuffle.out", [t, 2], torch.pixel_shuffle(t, 2))
    g.out(
        "pixel_shuffle_cl",
        "aten::pixel_shuffle.out",
        [cl(t), 2],
        torch.pixel_shuffle(t, 2),
        out=Out(order=CL4),
    )
    t = rnd(1, 2, 4, 6)
    g.out(
        "pixel_unshuffle",
        "aten::pixel_unshuffle.out",
        [t, 2],
        torch.pixel_unshuffle(t, 2),
    )
    t = rnd(3, 2, 6, 4)
    g.out(
        "pixel_unshuffle_cl",
        "aten::pixel_unshuffle.out",
        [cl(t), 2],
        torch.pixel_unshuffle(t, 2),
    )
    g.fail(
        "pixel_shuffle_bad",
        "aten::pixel_shuffle.out",
        [rnd(1, 3, 2, 2), 2],
        rnd(1, 1, 4, 4),
    )
    t = rnd(3, 4, 5)
    for off, d1, d2 in ((0, 0, 1), (1, 1, 2), (-2, 2, 0), (9, 0, 1)):
        g.out(
            "diagonal_%d_%d_%d" % (off + 2, d1, d2),
            "aten::diagonal_copy.out",
            [t, off, d1, d2],
            torch.diagonal(t, off, d1, d2),
        )
    t = rnd(3, 7)
    g.out("unfold", "aten::unfold_copy.out", [t, 1, 3, 2], t.unfold(1, 3, 2))
    g.out("unfold0", "aten::unfold_copy.out", [t, 0, 3, 1], t.unfold(0, 3, 1))
    for dg in (0, 1, -1):
        t = rnd(2, 3, 4)
        g.out("tril_%d" % (dg + 1), "aten::tril.out", [t, dg], torch.tril(t, dg))
    return g


def gen_copy():
    g = Golden("copy")
    x = rnd(2, 3, 4, 5)
    xc = cl(x)
    g.out("clone", "aten::clone.out", [x, None], x)
    g.out("clone_to_cl", "aten::clone.out", [x, 2], x, out=Out(order=CL4))
    g.out("clone_from_cl", "aten::clone.out", [xc, 0], x)
    g.fail("clone_dtype", "aten::clone.out", [x, None], x, out=Out(dtype=torch.float64))
    for src, dst in (
        (torch.float32, torch.float16),
        (torch.float32, torch.bfloat16),
        (torch.float16, torch.float32),
        (torch.float32, torch.int32),
        (torch.int64, torch.float32),
        (torch.float32, torch.bool),
        (torch.bool, torch.float32),
        (torch.int32, torch.int8),
        (torch.float64, torch.float32),
        (torch.uint8, torch.int64),
    ):
        t = (
            (rnd(3, 5, dtype=torch.float32) * 3).to(src)
            if src != torch.bool
            else rnd(3, 5, dtype=src)
        )
        t = (
            t
            if src.is_floating_point or src == torch.bool
            else rnd(3, 5, dtype=src, lo=-100, hi=100)
        )
        name = "to_copy_%s_%s" % (str(src)[6:], str(dst)[6:])
        g.out(
            name, "aten::_to_copy.out", [t, False, None], t.to(dst), out=Out(dtype=dst)
        )
    xh = cl(rnd(2, 3, 4, 5))
    g.out(
        "to_copy_cl_f16",
        "aten::_to_copy.out",
        [xh, False, 1],
        xh.half(),
        out=Out(dtype=torch.float16, order=CL4),
    )
    g.out(
        "to_dim_order_cl",
        "dim_order_ops::_to_dim_order_copy.out",
        [x, False, CL4],
        x,
        out=Out(order=CL4),
    )
    g.out(
        "to_dim_order_contig",
        "dim_order_ops::_to_dim_order_copy.out",
        [xc, False, [0, 1, 2, 3]],
        x,
    )
    g.out(
        "to_dim_order_dtype",
        "dim_order_ops::_to_dim_order_copy.out",
        [xc, False, None],
        x.double(),
        out=Out(dtype=torch.float64, order=CL4),
    )
    g.fail(
        "to_dim_order_mismatch",
        "dim_order_ops::_to_dim_order_copy.out",
        [x, False, CL4],
        x,
    )
    g.fail(
        "to_dim_order_badlen",
        "dim_order_ops::_to_dim_order_copy.out",
        [x, False, [0, 1, 2]],
        x,
    )
    g.out(
        "clone_dim_order",
        "dim_order_ops::_clone_dim_order.out",
        [xc, False, [0, 1, 2, 3]],
        x,
    )
    g.out(
        "clone_dim_order_cl",
        "dim_order_ops::_clone_dim_order.out",
        [x, False, CL4],
        x,
        out=Out(order=CL4),
    )
    g.fail(
        "clone_dim_order_dtype",
        "dim_order_ops::_clone_dim_order.out",
        [x, False, None],
        x,
        out=Out(dtype=torch.float16),
    )
    t, s = rnd(3, 4), rnd(4, dtype=torch.float64)
    g.out("copy_bcast", "aten::copy.out", [t, s, False], torch.ops.aten.copy(t, s))
    s = rnd(3, 1, dtype=torch.int32)
    g.out("copy_int", "aten::copy.out", [t, s, False], torch.ops.aten.copy(t, s))
    g.fail("copy_bad_shape", "aten::copy.out", [t, rnd(2, 4), False], t)
    # in-place copy_: args (self, src, non_blocking, return=self)
    t, s = rnd(2, 3), rnd(3)
    g.case(
        "copy_inplace",
        "aten::copy_",
        [t, s, False, Ret(0)],
        [(0, -1, torch.ops.aten.copy(t, s))],
    )
    return g


def gen_create():
    g = Golden("create")
    for dt, v in (
        (torch.float32, 1.5),
        (torch.int64, 7),
        (torch.bool, True),
        (torch.float16, -2.25),
        (torch.int8, -3),
        (torch.float64, 0.1),
    ):
        g.case(
            "full_%s" % str(dt)[6:],
            "aten::full.out",
            [[2, 3], v, Out(dt, [2, 3]), Ret(2)],
            [(2, -1, torch.full((2, 3), v, dtype=dt))],
        )
    g.case(
        "full_resize",
        "aten::full.out",
        [[4], 2.0, Out(torch.float32, [1], cap=4), Ret(2)],
        [(2, -1, torch.full((4,), 2.0))],
    )
    g.case(
        "full_cl",
        "aten::full.out",
        [[2, 3, 2, 2], 3, Out(torch.float32, [2, 3, 2, 2], CL4), Ret(2)],
        [(2, -1, torch.full((2, 3, 2, 2), 3.0))],
    )
    g.case(
        "full_float_into_int",
        "aten::full.out",
        [[2], 1.5, Out(torch.int32, [2]), Ret(2)],
        [],
        status=INVALID_ARGUMENT,
    )
    x = rnd(2, 3)
    g.case(
        "full_like",
        "aten::full_like.out",
        [x, 4, None, Out(torch.float32, [2, 3]), Ret(3)],
        [(3, -1, torch.full_like(x, 4))],
    )
    g.case(
        "zeros",
        "aten::zeros.out",
        [[3, 2], Out(torch.float32, [3, 2]), Ret(1)],
        [(1, -1, torch.zeros(3, 2))],
    )
    g.case(
        "ones_i32",
        "aten::ones.out",
        [[5], Out(torch.int32, [5]), Ret(1)],
        [(1, -1, torch.ones(5, dtype=torch.int32))],
    )
    g.case(
        "zeros_bad_size",
        "aten::zeros.out",
        [[-1], Out(torch.float32, [1]), Ret(1)],
        [],
        status=INVALID_ARGUMENT,
    )
    g.case(
        "scalar_tensor",
        "aten::scalar_tensor.out",
        [2.5, Out(torch.float32, []), Ret(1)],
        [(1, -1, torch.scalar_tensor(2.5))],
    )
    g.case(
        "scalar_tensor_i64",
        "aten::scalar_tensor.out",
        [-4, Out(torch.int64, []), Ret(1)],
        [(1, -1, torch.scalar_tensor(-4, dtype=torch.int64))],
    )
    g.case(
        "arange",
        "aten::arange.out",
        [5, Out(torch.int64, [5]), Ret(1)],
        [(1, -1, torch.arange(5))],
    )
    g.case(
        "arange_f",
        "aten::arange.out",
        [Dbl(4.5), Out(torch.float32, [5]), Ret(1)],
        [(1, -1, torch.arange(4.5))],
    )
    for name, a, b, st, dt in (
        ("int", 2, 11, 3, torch.int64),
        ("neg", 10, -3, -4, torch.int32),
        ("float", 0.5, 2.0, 0.25, torch.float32),
        ("float_out_int_args", 1, 5, 1, torch.float32),
        ("empty", 3, 3, 1, torch.int64),
    ):
        r = torch.arange(a, b, st, dtype=dt)
        g.case(
            "arange_start_%s" % name,
            "aten::arange.start_out",
            [a, b, st, Out(dt, [r.numel()]), Ret(3)],
            [(3, -1, r)],
        )
    g.case(
        "arange_bad_sign",
        "aten::arange.start_out",
        [0, 5, -1, Out(torch.int64, [0]), Ret(3)],
        [],
        status=INVALID_ARGUMENT,
    )
    g.case(
        "arange_zero_step",
        "aten::arange.start_out",
        [0, 5, 0, Out(torch.int64, [0]), Ret(3)],
        [],
        status=INVALID_ARGUMENT,
    )
    x = rnd(2, 3, dtype=torch.int32)
    g.out("fill_scalar", "aten::fill.Scalar_out", [x, 9], torch.full_like(x, 9))
    x = rnd(2, 2, 2, 2)
    g.out(
        "fill_scalar_cl",
        "aten::fill.Scalar_out",
        [cl(x), -1.5],
        torch.full_like(x, -1.5),
        out=Out(order=CL4),
    )
    v = torch.tensor(3.25, dtype=torch.float64)
    x = rnd(3, 2)
    g.out("fill_tensor", "aten::fill.Tensor_out", [x, v], torch.full_like(x, 3.25))
    g.fail("fill_tensor_not_scalar", "aten::fill.Tensor_out", [x, rnd(2)], x)
    g.case(
        "empty",
        "aten::empty.out",
        [[2, 5], None, Out(torch.float32, [1, 1], cap=10), Ret(2)],
        [],
    )
    g.case(
        "empty_dim_order",
        "dim_order_ops::_empty_dim_order.out",
        [[2, 3, 4, 4], CL4, Out(torch.float32, [2, 3, 4, 4], CL4), Ret(2)],
        [],
    )
    g.case(
        "empty_dim_order_bad",
        "dim_order_ops::_empty_dim_order.out",
        [[2, 3, 4, 4], CL4, Out(torch.float32, [2, 3, 4, 4]), Ret(2)],
        [],
        status=INVALID_ARGUMENT,
    )
    return g


def gen_concat():
    g = Golden("concat")
    a, b, c = rnd(2, 3, 4), rnd(2, 1, 4), rnd(2, 5, 4)
    g.out("cat_dim1", "aten::cat.out", [[a, b, c], 1], torch.cat([a, b, c], 1))
    g.out("cat_dim0", "aten::cat.out", [[a, a], -3], torch.cat([a, a], 0))
    d = rnd(2, 3, 2)
    g.out("cat_last", "aten::cat.out", [[a, d], 2], torch.cat([a, d], 2))
    e = torch.zeros(0)
    g.out("cat_skip_empty", "aten::cat.out", [[a, e, a], 1], torch.cat([a, e, a], 1))
    x, y = rnd(2, 3, 2, 2), rnd(2, 5, 2, 2)
    g.out(
        "cat_cl",
        "aten::cat.out",
        [[cl(x), y], 1],
        torch.cat([x, y], 1),
        out=Out(order=CL4),
    )
    xi = rnd(2, 3, dtype=torch.int32)
    xf = rnd(2, 3)
    g.out("cat_promote", "aten::cat.out", [[xi, xf], 0], torch.cat([xi, xf], 0))
    g.fail("cat_bad_shape", "aten::cat.out", [[a, rnd(3, 1, 4)], 1], a)
    g.out("stack0", "aten::stack.out", [[a, a * 2], 0], torch.stack([a, a * 2], 0))
    g.out(
        "stack_last",
        "aten::stack.out",
        [[a, c[:, :3], b.expand(2, 3, 4).contiguous()], -1],
        torch.stack([a, c[:, :3], b.expand(2, 3, 4)], -1),
    )
    g.fail("stack_bad", "aten::stack.out", [[a, b], 0], torch.stack([a, a], 0))
    t = rnd(3, 7, 2)
    parts = torch.split(t, [2, 0, 5], 1)
    g.case(
        "split_with_sizes",
        "aten::split_with_sizes_copy.out",
        [t, [2, 0, 5], 1, [Out() for _ in parts], RetList([])],
        [(3, j, p) for j, p in enumerate(parts)],
        likes={3: list(parts)},
    )
    parts = torch.split(t, 3, 1)
    g.case(
        "split",
        "aten::split_copy.Tensor_out",
        [t, 3, 1, [Out() for _ in parts], RetList([])],
        [(3, j, p) for j, p in enumerate(parts)],
        likes={3: list(parts)},
    )
    g.case(
        "split_bad_sum",
        "aten::split_with_sizes_copy.out",
        [t, [2, 4], 1, [Out(), Out()], RetList([])],
        [],
        status=INVALID_ARGUMENT,
        likes={3: [t[:, :2], t[:, :4]]},
    )
    xc = cl(rnd(2, 3, 2, 2))
    parts = torch.unbind(xc, 1)
    g.case(
        "unbind",
        "aten::unbind_copy.int_out",
        [xc, 1, [Out() for _ in parts], RetList([])],
        [(2, j, p) for j, p in enumerate(parts)],
        likes={2: list(parts)},
    )
    return g


def gen_conv():
    g = Golden("conv")
    conv = torch.ops.aten.convolution
    OP = "aten::convolution.out"

    def case(
        name,
        x,
        w,
        b,
        stride,
        pad,
        dil,
        tr,
        opad,
        groups,
        xo=None,
        wo=None,
        oo=None,
        dt=torch.float32,
    ):
        x, w = x.to(dt), w.to(dt)
        b = b.to(dt) if b is not None else None
        ref = conv(
            x.double(),
            w.double(),
            b.double() if b is not None else None,
            stride,
            pad,
            dil,
            tr,
            opad,
            groups,
        ).to(dt)
        at, rt = {
            torch.float32: (1e-4, 1e-4),
            torch.float64: (1e-10, 1e-10),
            torch.float16: (2e-2, 1e-2),
            torch.bfloat16: (1e-1, 2e-2),
        }.get(dt, (0, 0))
        xa = x if xo is None else (x.contiguous(memory_format=xo), None)
        xa = xa if not isinstance(xa, tuple) else xa[0]
        wa = w if wo is None else w.contiguous(memory_format=wo)
        g.out(
            name,
            OP,
            [xa, wa, b, stride, pad, dil, tr, opad, groups],
            ref,
            out=Out(order=oo),
            atol=at,
            rtol=rt,
        )

    CLF = torch.channels_last
    case(
        "basic",
        rnd(2, 3, 7, 6),
        rnd(4, 3, 3, 3),
        rnd(4),
        [1, 1],
        [0, 0],
        [1, 1],
        False,
        [0, 0],
        1,
    )
    case(
        "pad_stride",
        rnd(1, 3, 9, 8),
        rnd(5, 3, 3, 2),
        rnd(5),
        [2, 3],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
    )
    case(
        "dilation",
        rnd(1, 2, 9, 9),
        rnd(3, 2, 3, 3),
        None,
        [1, 1],
        [2, 1],
        [2, 3],
        False,
        [0, 0],
        1,
    )
    case(
        "groups",
        rnd(2, 6, 5, 5),
        rnd(4, 3, 3, 3),
        rnd(4),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        2,
    )
    case(
        "depthwise",
        rnd(1, 4, 6, 6),
        rnd(4, 1, 3, 3),
        rnd(4),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        4,
    )
    case(
        "depthwise_mult",
        rnd(1, 2, 6, 5),
        rnd(6, 1, 3, 3),
        rnd(6),
        [2, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        2,
    )
    case(
        "pointwise",
        rnd(2, 8, 4, 4),
        rnd(5, 8, 1, 1),
        rnd(5),
        [1, 1],
        [0, 0],
        [1, 1],
        False,
        [0, 0],
        1,
    )
    case(
        "cl_in",
        rnd(2, 3, 7, 6),
        rnd(4, 3, 3, 3),
        rnd(4),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        xo=CLF,
    )
    case(
        "cl_all",
        rnd(2, 3, 7, 6),
        rnd(4, 3, 3, 3),
        rnd(4),
        [2, 2],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        xo=CLF,
        wo=CLF,
        oo=CL4,
    )
    case(
        "cl_depthwise",
        rnd(1, 4, 6, 6),
        rnd(4, 1, 3, 3),
        rnd(4),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        4,
        xo=CLF,
        wo=CLF,
        oo=CL4,
    )
    # 40*3*3 = 360 reduction rows cross the 256-row im2col chunk; generated inputs
    x, w = Gen([1, 40, 6, 6], 7), Gen([6, 40, 3, 3], 8)
    b = rnd(6)
    g.out(
        "big_reduction",
        OP,
        [x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1],
        conv(
            x.t.double(),
            w.t.double(),
            b.double(),
            [1, 1],
            [1, 1],
            [1, 1],
            False,
            [0, 0],
            1,
        ).float(),
        atol=1e-4,
        rtol=1e-4,
    )
    case("conv1d", rnd(2, 3, 10), rnd(4, 3, 3), rnd(4), [2], [1], [1], False, [0], 1)
    case(
        "conv1d_groups", rnd(1, 4, 9), rnd(4, 2, 2), None, [1], [0], [2], False, [0], 2
    )
    case(
        "conv3d",
        rnd(1, 2, 4, 5, 4),
        rnd(3, 2, 2, 3, 2),
        rnd(3),
        [1, 2, 1],
        [1, 0, 1],
        [1, 1, 1],
        False,
        [0, 0, 0],
        1,
    )
    case(
        "f64",
        rnd(1, 3, 5, 5),
        rnd(2, 3, 3, 3),
        rnd(2),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        dt=torch.float64,
    )
    case(
        "f16",
        rnd(1, 3, 5, 5),
        rnd(2, 3, 3, 3),
        rnd(2),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        dt=torch.float16,
    )
    case(
        "bf16",
        rnd(1, 3, 5, 5),
        rnd(2, 3, 3, 3),
        rnd(2),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        dt=torch.bfloat16,
    )
    case(
        "transposed",
        rnd(1, 4, 3, 4),
        rnd(4, 3, 3, 3),
        rnd(3),
        [2, 2],
        [1, 1],
        [1, 1],
        True,
        [1, 0],
        1,
    )
    case(
        "transposed_groups",
        rnd(2, 4, 3, 3),
        rnd(4, 2, 2, 3),
        rnd(4),
        [1, 2],
        [0, 1],
        [2, 1],
        True,
        [0, 1],
        2,
    )
    case("transposed_1d", rnd(1, 2, 5), rnd(2, 3, 4), None, [3], [1], [1], True, [2], 1)
    case(
        "transposed_cl",
        rnd(1, 4, 3, 4),
        rnd(4, 3, 3, 3),
        rnd(3),
        [2, 2],
        [1, 1],
        [1, 1],
        True,
        [1, 0],
        1,
        xo=CLF,
        oo=CL4,
    )
    case(
        "scalar_params",
        rnd(1, 2, 6, 6),
        rnd(2, 2, 3, 3),
        rnd(2),
        [2],
        [1],
        [1],
        False,
        [0],
        1,
    )
    x, w = rnd(1, 3, 5, 5), rnd(2, 3, 3, 3)
    g.out(
        "batch0",
        OP,
        [rnd(0, 3, 5, 5), w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(0, 2, 3, 3),
    )
    g.fail(
        "bad_channels",
        OP,
        [x, rnd(2, 4, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 3, 3),
    )
    g.fail(
        "bad_groups",
        OP,
        [x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 0],
        torch.zeros(1, 2, 3, 3),
    )
    g.fail(
        "kernel_too_big",
        OP,
        [x, rnd(2, 3, 7, 7), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 1, 1),
    )
    g.fail(
        "bad_stride",
        OP,
        [x, w, None, [0, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 3, 3),
    )
    g.fail(
        "bad_bias",
        OP,
        [x, w, rnd(3), [1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 3, 3),
    )
    g.fail(
        "bad_stride_len",
        OP,
        [x, w, None, [1, 1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 3, 3),
    )
    return g


def gen_norm():
    g = Golden("norm")
    A = torch.ops.aten
    for name, x, aff in (
        ("4d", rnd(2, 3, 4, 5), True),
        ("cl", cl(rnd(2, 3, 4, 5)), True),
        ("2d", rnd(5, 4), True),
        ("3d_noaff", rnd(2, 3, 6), False),
        ("f64", rnd(2, 3, 2, 2, dtype=torch.float64), True),
        ("f16", rnd(2, 3, 2, 2, dtype=torch.float16), True),
    ):
        c = x.shape[1]
        w = rnd(c, dtype=x.dtype) if aff else None
        b = rnd(c, dtype=x.dtype) if aff else None
        rm, rv = (
            rnd(c, dtype=x.dtype),
            (torch.rand(c, dtype=torch.float64) + 0.5).to(x.dtype),
        )
        res = A._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5)
        at, rt = tol(x.dtype)
        at, rt = max(at, 1e-5), max(rt, 1e-5)
        outs = [Out(order=dim_order(x))] + [Out(sizes=[0]), Out(sizes=[0])]
        g.outs(
            "bn_eval_" + name,
            "aten::_native_batch_norm_legit_no_training.out",
            [x, w, b, rm, rv, 0.1, 1e-5],
            list(res),
            outs=outs,
            atol=at,
            rtol=rt,
        )
    x = rnd(3, 4, 5, 2)
    w, b, rm, rv = rnd(4), rnd(4), rnd(4), torch.rand(4) + 0.5
    rm2, rv2 = rm.clone(), rv.clone()
    res = A._native_batch_norm_legit(x, w, b, rm2, rv2, True, 0.1, 1e-5)
    args = [
        x,
        w,
        b,
        rm.clone(),
        rv.clone(),
        True,
        0.1,
        1e-5,
        Out(),
        Out(),
        Out(),
        RetList([8, 9, 10]),
    ]
    g.case(
        "bn_train",
        "aten::_native_batch_norm_legit.out",
        args,
        [
            (8, -1, res[0]),
            (9, -1, res[1]),
            (10, -1, res[2]),
            (3, -1, rm2),
            (4, -1, rv2),
        ],
        atol=1e-5,
        rtol=1e-5,
        likes={8: res[0], 9: res[1], 10: res[2]},
    )
    res = A._native_batch_norm_legit(x, w, b, rm.clone(), rv.clone(), False, 0.1, 1e-5)
    args = [
        x,
        w,
        b,
        rm,
        rv,
        False,
        0.1,
        1e-5,
        Out(),
        Out(sizes=[0]),
        Out(sizes=[0]),
        RetList([8, 9, 10]),
    ]
    g.case(
        "bn_legit_eval",
        "aten::_native_batch_norm_legit.out",
        args,
        [(8, -1, res[0]), (9, -1, res[1]), (10, -1, res[2])],
        atol=1e-5,
        rtol=1e-5,
        likes={8: res[0], 9: res[1], 10: res[2]},
    )
    res = A._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5)
    g.outs(
        "bn_no_stats",
        "aten::_native_batch_norm_legit.no_stats_out",
        [x, w, b, True, 0.1, 1e-5],
        list(res),
        atol=1e-5,
        rtol=1e-5,
    )
    g.case(
        "bn_bad_weight",
        "aten::_native_batch_norm_legit_no_training.out",
        [
            x,
            rnd(3),
            b,
            rm,
            rv,
            0.1,
            1e-5,
            Out(),
            Out(sizes=[0]),
            Out(sizes=[0]),
            RetList([7, 8, 9]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={7: x, 8: torch.zeros(0), 9: torch.zeros(0)},
    )
    g.case(
        "bn_int_input",
        "aten::_native_batch_norm_legit_no_training.out",
        [
            rnd(2, 4, dtype=torch.int32),
            w,
            b,
            rm,
            rv,
            0.1,
            1e-5,
            Out(torch.int32),
            Out(sizes=[0]),
            Out(sizes=[0]),
            RetList([7, 8, 9]),
        ],
        [],
        status=NOT_SUPPORTED,
        likes={7: torch.zeros(2, 4), 8: torch.zeros(0), 9: torch.zeros(0)},
    )
    return g


def gen_pool():
    g = Golden("pool")
    A = torch.ops.aten
    for name, x, k, s, p, ceil, inc, div in (
        ("basic", rnd(2, 3, 6, 6), [2, 2], [2, 2], [0, 0], False, True, None),
        ("pad_excl", rnd(1, 2, 7, 5), [3, 3], [2, 2], [1, 1], False, False, None),
        ("pad_incl", rnd(1, 2, 7, 5), [3, 2], [2, 1], [1, 1], False, True, None),
        ("ceil", rnd(1, 2, 7, 7), [2, 2], [2, 2], [0, 0], True, True, None),
        ("ceil_pad", rnd(1, 2, 6, 7), [3, 3], [2, 2], [1, 1], True, False, None),
        ("divisor", rnd(1, 2, 5, 5), [3, 3], [], [1, 1], False, True, 4),
        ("cl", cl(rnd(2, 4, 6, 5)), [3, 2], [1, 2], [1, 0], False, True, None),
        ("3d_input", rnd(3, 6, 6), [2, 2], [2, 2], [0, 0], False, True, None),
        (
            "f64",
            rnd(1, 2, 4, 4, dtype=torch.float64),
            [2, 2],
            [1, 1],
            [0, 0],
            False,
            True,
            None,
        ),
        (
            "i64",
            rnd(1, 2, 4, 4, dtype=torch.int64, lo=-50, hi=50),
            [2, 2],
            [2, 2],
            [0, 0],
            False,
            True,
            None,
        ),
    ):
        res = A.avg_pool2d(x, k, s, p, ceil, inc, div)
        g.out(
            "avg_" + name,
            "aten::avg_pool2d.out",
            [x, k, s, p, ceil, inc, div],
            res,
            out=Out(order=dim_order(x)),
            atol=1e-5,
            rtol=1e-5,
        )
    g.fail(
        "avg_bad_pad",
        "aten::avg_pool2d.out",
        [rnd(1, 1, 4, 4), [2, 2], [1, 1], [2, 2], False, True, None],
        torch.zeros(1, 1, 5, 5),
    )
    for name, x, k, s, p, d, ceil in (
        ("basic", rnd(2, 3, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1], False),
        ("pad", rnd(1, 2, 7, 5), [3, 3], [2, 2], [1, 1], [1, 1], False),
        ("dil", rnd(1, 2, 9, 8), [3, 2], [1, 2], [1, 1], [2, 3], False),
        ("ceil", rnd(1, 2, 7, 6), [3, 3], [2, 2], [1, 0], [1, 1], True),
        ("cl", cl(rnd(2, 4, 6, 5)), [3, 3], [2, 1], [1, 1], [1, 1], False),
        ("3d_input", rnd(2, 5, 4), [2, 2], [], [0, 0], [1, 1], False),
        (
            "i32",
            rnd(1, 2, 4, 4, dtype=torch.int32, lo=-50, hi=50),
            [2, 2],
            [1, 1],
            [0, 0],
            [1, 1],
            False,
        ),
        (
            "f16",
            rnd(1, 2, 4, 4, dtype=torch.float16),
            [2, 2],
            [2, 2],
            [0, 0],
            [1, 1],
            False,
        ),
    ):
        res = A.max_pool2d_with_indices(x, k, s, p, d, ceil)
        g.outs(
            "max_" + name,
            "aten::max_pool2d_with_indices.out",
            [x, k, s, p, d, ceil],
            list(res),
            outs=[Out(order=dim_order(x)), Out(order=dim_order(x))],
        )
    x = rnd(1, 1, 4, 4)
    x[0, 0, 1, 1] = float("nan")
    res = A.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    g.outs(
        "max_nan",
        "aten::max_pool2d_with_indices.out",
        [x, [2, 2], [2, 2], [0, 0], [1, 1], False],
        list(res),
    )
    for name, x, osz in (
        ("down", rnd(2, 3, 7, 9), [3, 4]),
        ("global", rnd(1, 4, 5, 6), [1, 1]),
        ("up", rnd(1, 2, 3, 3), [5, 4]),
        ("cl", cl(rnd(2, 3, 6, 6)), [2, 3]),
        ("3d_input", rnd(3, 5, 5), [2, 2]),
    ):
        res = A._adaptive_avg_pool2d(x, osz)
        g.out(
            "adaptive_" + name,
            "aten::_adaptive_avg_pool2d.out",
            [x, osz],
            res,
            out=Out(order=dim_order(x)),
            atol=1e-6,
            rtol=1e-6,
        )
    return g


def gen_upsample():
    g = Golden("upsample")
    A = torch.ops.aten
    for name, x, osz, sc in (
        ("2x", rnd(1, 2, 3, 4), None, [2.0, 2.0]),
        ("size", rnd(2, 2, 4, 5), [7, 3], None),
        ("frac_scale", rnd(1, 1, 5, 4), None, [1.5, 0.75]),
        ("cl", cl(rnd(1, 3, 3, 3)), [6, 5], None),
        ("i8", rnd(1, 2, 3, 3, dtype=torch.int8), [4, 6], None),
    ):
        # (torch lacks int8 nearest on CPU; nearest only copies, so compute in float)
        res = A.upsample_nearest2d.vec(x.float(), osz, sc).to(x.dtype)
        g.out(
            "nearest_" + name,
            "aten::upsample_nearest2d.vec_out",
            [x, osz, sc],
            res,
            out=Out(order=dim_order(x)),
        )
    for name, x, osz, ac, sc in (
        ("2x", rnd(1, 2, 3, 4), None, False, [2.0, 2.0]),
        ("align", rnd(1, 2, 3, 4), [5, 7], True, None),
        ("down", rnd(2, 1, 8, 6), [3, 4], False, None),
        ("frac_scale", rnd(1, 1, 5, 4), None, False, [1.5, 0.75]),
        ("cl", cl(rnd(1, 3, 3, 3)), [6, 5], False, None),
        ("align_1", rnd(1, 1, 3, 3), [1, 4], True, None),
        ("f64", rnd(1, 1, 3, 3, dtype=torch.float64), [4, 5], False, None),
    ):
        res = A.upsample_bilinear2d.vec(x, osz, ac, sc)
        g.out(
            "bilinear_" + name,
            "aten::upsample_bilinear2d.vec_out",
            [x, osz, ac, sc],
            res,
            out=Out(order=dim_order(x)),
            atol=1e-5,
            rtol=1e-5,
        )
    g.fail(
        "nearest_both",
        "aten::upsample_nearest2d.vec_out",
        [rnd(1, 1, 2, 2), [4, 4], [2.0, 2.0]],
        torch.zeros(1, 1, 4, 4),
    )
    g.fail(
        "bilinear_rank3",
        "aten::upsample_bilinear2d.vec_out",
        [rnd(1, 2, 2), [4, 4], False, None],
        torch.zeros(1, 4, 4),
    )
    return g


def gen_pad():
    g = Golden("pad")
    A = torch.ops.aten
    x = rnd(2, 3, 4, 5)
    for name, t, pad, v in (
        ("last", x, [1, 2], 0.0),
        ("two", x, [1, 0, 2, 3], 1.5),
        ("crop", x, [-1, 2, 0, -2], 0.0),
        ("all", rnd(2, 3), [1, 1, 2, 0], -1.0),
        ("cl", cl(x), [1, 1, 1, 1], 0.5),
        ("int", rnd(3, 4, dtype=torch.int32), [2, 1], 7),
    ):
        g.out(
            "constant_" + name,
            "aten::constant_pad_nd.out",
            [t, pad, v],
            A.constant_pad_nd(t, pad, v),
            out=Out(order=dim_order(t)),
        )
    g.fail("constant_odd", "aten::constant_pad_nd.out", [x, [1, 2, 3], 0.0], x)
    for kind in ("reflection", "replication"):
        for sp, t, pad in (
            (1, rnd(2, 3, 5), [2, 3]),
            (1, rnd(3, 6), [1, 0]),
            (2, rnd(1, 2, 4, 5), [1, 2, 3, 0]),
            (2, cl(rnd(1, 2, 4, 5)), [2, 2, 1, 1]),
            (3, rnd(1, 1, 3, 4, 3), [1, 1, 0, 2, 2, 1]),
        ):
            op = getattr(A, "%s_pad%dd" % (kind, sp))
            tag = "%s%dd_%s" % (kind, sp, "x".join(map(str, t.shape)))
            if nn_is_cl(t):
                tag += "_cl"
            g.out(
                tag,
                "aten::%s_pad%dd.out" % (kind, sp),
                [t, pad],
                op(t, pad),
                out=Out(order=dim_order(t)),
            )
    g.fail(
        "reflection_too_big",
        "aten::reflection_pad1d.out",
        [rnd(1, 3), [3, 0]],
        torch.zeros(1, 6),
    )
    return g


def gen_index():
    g = Golden("index")
    A = torch.ops.aten
    w = rnd(7, 3)
    ix = torch.tensor([[0, 6, 2], [5, 3, 3]])
    g.out(
        "embedding",
        "aten::embedding.out",
        [w, ix, -1, False, False],
        A.embedding(w, ix),
    )
    ix32 = torch.tensor([4, 0], dtype=torch.int32)
    g.out(
        "embedding_i32",
        "aten::embedding.out",
        [w, ix32, -1, False, False],
        A.embedding(w, ix32),
    )
    g.fail(
        "embedding_oob",
        "aten::embedding.out",
        [w, torch.tensor([-1]), -1, False, False],
        torch.zeros(1, 3),
    )
    x = rnd(3, 4, 5)
    i = torch.tensor([2, 0, 2, 3])
    g.out(
        "index_select", "aten::index_select.out", [x, 1, i], torch.index_select(x, 1, i)
    )
    xc = cl(rnd(2, 3, 4, 4))
    g.out(
        "index_select_cl",
        "aten::index_select.out",
        [xc, 1, i[:2]],
        torch.index_select(xc, 1, i[:2]),
    )
    g.fail(
        "index_select_oob", "aten::index_select.out", [x, 0, torch.tensor([3])], x[:1]
    )
    g.fail(
        "index_select_neg", "aten::index_select.out", [x, 0, torch.tensor([-1])], x[:1]
    )
    gi = torch.randint(0, 4, (3, 2, 5))
    g.out("gather", "aten::gather.out", [x, 1, gi, False], torch.gather(x, 1, gi))
    gi = torch.randint(0, 5, (2, 4, 3))
    g.out(
        "gather_last", "aten::gather.out", [x, -1, gi, False], torch.gather(x, -1, gi)
    )
    si = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 1]])
    t, src = rnd(3, 4), rnd(2, 4)
    g.out(
        "scatter_src",
        "aten::scatter.src_out",
        [t, 0, si, src],
        torch.scatter(t, 0, si, src),
    )
    g.out(
        "scatter_value",
        "aten::scatter.value_out",
        [t, 0, si, 2.5],
        torch.scatter(t, 0, si, 2.5),
    )
    ta = rnd(3, 4, dtype=torch.int32)
    sa = rnd(2, 4, dtype=torch.int32)
    g.out(
        "scatter_add",
        "aten::scatter_add.out",
        [ta, 0, si, sa],
        torch.scatter_add(ta, 0, si, sa),
    )
    g.fail("scatter_oob", "aten::scatter.value_out", [t, 0, si + 3, 1.0], t)
    x = rnd(3, 4, 5)
    sv = rnd(3, 5)
    g.out(
        "select_scatter",
        "aten::select_scatter.out",
        [x, sv, 1, -1],
        torch.select_scatter(x, sv, 1, -1),
    )
    sv = rnd(3, 2, 5)
    g.out(
        "slice_scatter",
        "aten::slice_scatter.out",
        [x, sv, 1, 1, None, 2],
        torch.slice_scatter(x, sv, 1, 1, None, 2),
    )
    g.fail(
        "slice_scatter_bad",
        "aten::slice_scatter.out",
        [x, rnd(3, 3, 5), 1, 1, None, 2],
        x,
    )
    m = torch.tensor([[0, 1.5, 0], [2, 0, -1]])
    g.out("nonzero", "aten::nonzero.out", [m], torch.nonzero(m))
    g.out("nonzero_bool", "aten::nonzero.out", [m != 0], torch.nonzero(m != 0))
    mk = rnd(3, 4, dtype=torch.bool)
    t = rnd(3, 4)
    g.out(
        "masked_select", "aten::masked_select.out", [t, mk], torch.masked_select(t, mk)
    )
    mrow = torch.tensor([True, False, True, True])
    g.out(
        "masked_select_bcast",
        "aten::masked_select.out",
        [t, mrow],
        torch.masked_select(t, mrow),
    )
    src = rnd(12)
    g.out(
        "masked_scatter",
        "aten::masked_scatter.out",
        [t, mk, src],
        torch.masked_scatter(t, mk, src),
    )
    # advanced indexing
    x = rnd(3, 4, 5)
    for name, idx in (
        ("one", [torch.tensor([2, 0, -1])]),
        ("middle", [None, torch.tensor([[1, 3], [0, 0]])]),
        ("two_adjacent", [None, torch.tensor([1, 2]), torch.tensor([[0], [4]])]),
        ("separated", [torch.tensor([0, 2]), None, torch.tensor([1, 3])]),
        ("mask", [torch.tensor([True, False, True])]),
        ("mask2d", [None, rnd(4, 5, dtype=torch.bool)]),
        (
            "mask_and_index",
            [torch.tensor([0, 2]), torch.tensor([True, False, True, False])],
        ),
        ("i32", [torch.tensor([1, 1], dtype=torch.int32)]),
    ):
        res = A.index.Tensor(x, idx)
        g.out("index_" + name, "aten::index.Tensor_out", [x, Opt(idx)], res)
    g.fail("index_oob", "aten::index.Tensor_out", [x, Opt([torch.tensor([3])])], x[:1])
    xc = cl(rnd(2, 3, 2, 2))
    idx = [None, torch.tensor([2, 0])]
    g.out("index_cl", "aten::index.Tensor_out", [xc, Opt(idx)], A.index.Tensor(xc, idx))
    for name, idx, vals, acc in (
        ("basic", [torch.tensor([0, 2])], rnd(2, 4, 5), False),
        ("bcast", [None, torch.tensor([1, 3])], rnd(1), False),
        ("acc", [torch.tensor([0, 0, 1])], rnd(3, 4, 5), True),
        ("mask", [torch.tensor([True, False, True])], rnd(4, 5), False),
    ):
        res = A.index_put(x, idx, vals, acc)
        g.out(
            "index_put_" + name,
            "aten::index_put.out",
            [x, Opt(idx), vals, acc],
            res,
            atol=1e-6,
            rtol=1e-6,
        )
    idx = [torch.tensor([1])]
    vals = rnd(4, 5)
    g.case(
        "index_put_inplace",
        "aten::index_put_",
        [x, Opt(idx), vals, False, Ret(0)],
        [(0, -1, A.index_put(x, idx, vals, False))],
    )
    return g


def distinct(*shape, dtype=torch.float32):
    """Values without ties (a shuffled ramp of multiples of 1/8), so that
    orderings are unique."""
    n = math.prod(shape)
    v = (torch.randperm(n).double() - n // 2) / 8
    return v.reshape(shape).to(dtype)


def gen_extra():
    """Operators added last: topk, repeat_interleave, grid_sampler_2d,
    _upsample_bilinear2d_aa, _cdist_forward, _pdist_forward,
    convolution_backward, max_pool2d_with_indices_backward, native_dropout
    (its deterministic cases), rand/randn (argument errors only; values are
    checked by test_random.c), _conj_physical (real dtypes)."""
    g = Golden("extra")
    A = torch.ops.aten
    # topk
    for name, x, k, dim, largest in (
        ("last", distinct(3, 7), 3, -1, True),
        ("smallest", distinct(3, 7), 4, 1, False),
        ("dim0", distinct(5, 4), 2, 0, True),
        ("all", distinct(2, 6), 6, 1, True),
        ("k0", distinct(2, 5), 0, 1, True),
        ("3d_mid", distinct(2, 6, 3), 3, 1, False),
        ("f64", distinct(4, 5, dtype=torch.float64), 2, 1, True),
        ("f16", distinct(4, 5, dtype=torch.float16), 3, 1, False),
        ("bf16", distinct(2, 8, dtype=torch.bfloat16), 3, 1, True),
        ("i32", torch.randperm(24, dtype=torch.int32).reshape(4, 6) - 12, 3, 1, True),
        ("i64_small", torch.randperm(24).reshape(4, 6) * 1000003, 2, 1, False),
        ("u8", torch.randperm(20).to(torch.uint8).reshape(4, 5), 2, 1, True),
        ("cl", cl(distinct(2, 3, 4, 5)), 2, 1, True),
        ("scalar", torch.tensor(2.5), 1, 0, True),
    ):
        res = torch.topk(x, k, dim, largest, True)
        g.outs(
            "topk_" + name, "aten::topk.values", [x, k, dim, largest, True], list(res)
        )
    # sort (what torch.sort(x, dim, descending) exports as): stable in
    # pterun; distinct values where ATen's order of ties is unspecified, and
    # the ties cases with torch.sort(stable=True), which pterun matches.
    # Its own random stream: the cases after it keep their values.
    rng = torch.get_rng_state()
    torch.manual_seed(2113)
    for name, x, dim, desc in (
        ("last", distinct(3, 7), -1, False),
        ("desc", distinct(3, 7), 1, True),
        ("dim0", distinct(5, 4), 0, False),
        ("3d_mid", distinct(2, 6, 3), 1, True),
        ("f64", distinct(4, 5, dtype=torch.float64), 1, False),
        ("f16", distinct(4, 5, dtype=torch.float16), 1, True),
        ("bf16", distinct(2, 8, dtype=torch.bfloat16), 1, False),
        ("i32", torch.randperm(24, dtype=torch.int32).reshape(4, 6) - 12, 1, True),
        ("u8", torch.randperm(20).to(torch.uint8).reshape(4, 5), 1, False),
        ("cl", cl(distinct(2, 3, 4, 5)), 1, False),
        ("scalar", torch.tensor(2.5), 0, False),
        ("one", distinct(3, 1), 1, True),
        ("long", distinct(2, 300), 1, False),
    ):
        res = torch.sort(x, dim=dim, descending=desc)
        g.outs("sort_" + name, "aten::sort.values", [x, dim, desc], list(res))
    x = torch.tensor([[1.0, float("nan"), 3.0, -float("inf"), float("inf"), -0.0, 0.0]])
    for desc in (False, True):
        g.outs(
            f"sort_nan_{'desc' if desc else 'asc'}",
            "aten::sort.values",
            [x, 1, desc],
            list(torch.sort(x, dim=1, descending=desc, stable=True)),
        )
    x = torch.tensor([[2.0, 1.0, 2.0, 1.0, 2.0, 0.5, 1.0, 2.0]])
    for desc in (False, True):
        g.outs(
            f"sort_ties_{'desc' if desc else 'asc'}",
            "aten::sort.values",
            [x, 1, desc],
            list(torch.sort(x, dim=1, descending=desc, stable=True)),
        )
    x = torch.tensor([[True, False, True, False]])
    g.outs(
        "sort_bool",
        "aten::sort.values",
        [x, 1, False],
        list(torch.sort(x, dim=1, stable=True)),
    )
    x = distinct(2, 3)
    g.case(
        "sort_bad_indices_dtype",
        "aten::sort.values",
        [x, 1, False, Out(torch.float32, [2, 3]), Out(torch.int32, [2, 3]), RetList([3, 4])],
        [],
        status=INVALID_ARGUMENT,
        likes={3: x},
    )
    g.case(
        "sort_bad_dim",
        "aten::sort.values",
        [x, 2, False, Out(torch.float32, [2, 3]), Out(torch.int64, [2, 3]), RetList([3, 4])],
        [],
        status=INVALID_ARGUMENT,
        likes={3: x},
    )
    torch.set_rng_state(rng)
    x = torch.tensor([[1.0, float("nan"), 3.0, -float("inf"), float("inf")]])
    g.outs(
        "topk_nan_largest",
        "aten::topk.values",
        [x, 3, 1, True, True],
        list(torch.topk(x, 3, 1, True, True)),
    )
    g.outs(
        "topk_nan_smallest",
        "aten::topk.values",
        [x, 3, 1, False, True],
        list(torch.topk(x, 3, 1, False, True)),
    )
    x = distinct(3, 5)
    g.outs(
        "topk_unsorted_k1",
        "aten::topk.values",
        [x, 1, 1, True, False],
        list(torch.topk(x, 1, 1, True, False)),
    )
    g.outs(
        "topk_resize",
        "aten::topk.values",
        [x, 2, 1, True, True],
        list(torch.topk(x, 2, 1, True, True)),
        outs=[Out(sizes=[1, 1], cap=6), Out(sizes=[1, 1], cap=6)],
    )
    g.case(
        "topk_k_too_big",
        "aten::topk.values",
        [
            x,
            6,
            1,
            True,
            True,
            Out(torch.float32, sizes=[3, 5]),
            Out(torch.int64, [3, 5]),
            RetList([5, 6]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={5: x},
    )
    g.case(
        "topk_bad_dim",
        "aten::topk.values",
        [
            x,
            1,
            2,
            True,
            True,
            Out(torch.float32, sizes=[3, 1]),
            Out(torch.int64, [3, 1]),
            RetList([5, 6]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={5: x},
    )
    g.case(
        "topk_bad_indices",
        "aten::topk.values",
        [
            x,
            1,
            1,
            True,
            True,
            Out(torch.float32, sizes=[3, 1]),
            Out(torch.int32, [3, 1]),
            RetList([5, 6]),
        ],
        [],
        status=INVALID_ARGUMENT,
        likes={5: x},
    )
    # repeat_interleave
    for name, r, osz in (
        ("i64", torch.tensor([2, 0, 3, 1]), None),
        ("i32", torch.tensor([1, 2, 3], dtype=torch.int32), 6),
        ("empty", torch.zeros(0, dtype=torch.int64), None),
        ("zeros", torch.tensor([0, 0]), None),
    ):
        res = torch.repeat_interleave(r, output_size=osz)
        g.out(
            "repeat_interleave_" + name,
            "aten::repeat_interleave.Tensor_out",
            [r, osz],
            res,
            out=Out(r.dtype, sizes=[0], cap=max(res.numel(), 1)),
        )
    g.fail(
        "repeat_interleave_negative",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor([1, -1]), None],
        torch.zeros(1, dtype=torch.int64),
    )
    g.fail(
        "repeat_interleave_bad_size",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor([1, 2]), 4],
        torch.zeros(3, dtype=torch.int64),
    )
    g.fail(
        "repeat_interleave_float",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor([1.0, 2.0]), None],
        torch.zeros(3),
    )
    g.fail(
        "repeat_interleave_scalar",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor(3), None],
        torch.zeros(3, dtype=torch.int64),
    )
    g.fail(
        "repeat_interleave_2d",
        "aten::repeat_interleave.Tensor_out",
        [torch.tensor([[1, 2]]), None],
        torch.zeros(3, dtype=torch.int64),
    )
    # grid_sampler_2d: every mode x padding x align_corners, grid partly outside [-1, 1]
    inp = rnd(2, 3, 5, 6)
    grid = (torch.rand(2, 4, 3, 2, dtype=torch.float64) * 2.6 - 1.3).float()
    for mode in (0, 1, 2):
        for pad in (0, 1, 2):
            for align in (False, True):
                res = A.grid_sampler_2d(inp, grid, mode, pad, align)
                g.out(
                    "grid_sampler_m%d_p%d_a%d" % (mode, pad, int(align)),
                    "aten::grid_sampler_2d.out",
                    [inp, grid, mode, pad, align],
                    res,
                    atol=1e-5,
                    rtol=1e-5,
                )
    gd = grid.double()
    ind = inp.double()
    g.out(
        "grid_sampler_f64",
        "aten::grid_sampler_2d.out",
        [ind, gd, 0, 2, False],
        A.grid_sampler_2d(ind, gd, 0, 2, False),
        atol=1e-12,
        rtol=1e-12,
    )
    g.out(
        "grid_sampler_cl",
        "aten::grid_sampler_2d.out",
        [cl(inp), grid, 0, 0, False],
        A.grid_sampler_2d(inp, grid, 0, 0, False),
        out=Out(order=CL4),
        atol=1e-5,
        rtol=1e-5,
    )
    g.fail(
        "grid_sampler_bad_mode",
        "aten::grid_sampler_2d.out",
        [inp, grid, 3, 0, False],
        torch.zeros(2, 3, 4, 3),
    )
    g.fail(
        "grid_sampler_bad_grid",
        "aten::grid_sampler_2d.out",
        [inp, rnd(2, 4, 3, 3), 0, 0, False],
        torch.zeros(2, 3, 4, 3),
    )
    g.fail(
        "grid_sampler_int",
        "aten::grid_sampler_2d.out",
        [inp.int(), grid.int(), 0, 0, False],
        torch.zeros(2, 3, 4, 3, dtype=torch.int32),
        status=NOT_SUPPORTED,
    )
    # _upsample_bilinear2d_aa: down and up sampling, scales, align_corners
    for name, x, osz, align, sh, sw in (
        ("down", rnd(1, 2, 9, 11), [4, 5], False, None, None),
        ("down_align", rnd(1, 2, 9, 11), [4, 5], True, None, None),
        ("up", rnd(2, 2, 3, 4), [7, 6], False, None, None),
        ("mixed", rnd(1, 3, 8, 3), [3, 7], False, None, None),
        ("scales", rnd(1, 1, 10, 10), [5, 3], False, 0.5, 0.3),
        ("cl", cl(rnd(1, 3, 8, 8)), [3, 5], False, None, None),
    ):
        res = A._upsample_bilinear2d_aa(x, osz, align, sh, sw)
        g.out(
            "upsample_aa_" + name,
            "aten::_upsample_bilinear2d_aa.out",
            [x, osz, align, sh, sw],
            res,
            out=Out(order=dim_order(x)),
            atol=1e-5,
            rtol=1e-5,
        )
    x = rnd(1, 1, 6, 6, dtype=torch.float64)
    g.out(
        "upsample_aa_f64",
        "aten::_upsample_bilinear2d_aa.out",
        [x, [4, 3], False, None, None],
        A._upsample_bilinear2d_aa(x, [4, 3], False, None, None),
        atol=1e-12,
        rtol=1e-12,
    )
    g.fail(
        "upsample_aa_rank3",
        "aten::_upsample_bilinear2d_aa.out",
        [rnd(2, 6, 6), [3, 3], False, None, None],
        torch.zeros(2, 3, 3),
    )
    # _cdist_forward
    x1, x2 = rnd(2, 4, 3), rnd(2, 5, 3)
    for p in (0.0, 1.0, 2.0, 3.0, 0.5, float("inf")):
        g.out(
            "cdist_p%s" % str(p).replace(".", "_"),
            "aten::_cdist_forward.out",
            [x1, x2, p, None],
            A._cdist_forward(x1, x2, p, None),
            atol=1e-5,
            rtol=1e-5,
        )
    g.out(
        "cdist_mm",
        "aten::_cdist_forward.out",
        [x1, x2, 2.0, 1],
        A._cdist_forward(x1, x2, 2.0, 1),
        atol=1e-4,
        rtol=1e-4,
    )
    b1, b2 = rnd(26, 4), rnd(2, 1, 3, 4)  # P > 25: the matrix-product form
    g.out(
        "cdist_bcast_big",
        "aten::_cdist_forward.out",
        [b1, b2, 2.0, None],
        A._cdist_forward(b1, b2, 2.0, None),
        atol=1e-4,
        rtol=1e-4,
    )
    g.out(
        "cdist_f64",
        "aten::_cdist_forward.out",
        [x1.double(), x2.double(), 2.0, 2],
        A._cdist_forward(x1.double(), x2.double(), 2.0, 2),
        atol=1e-12,
        rtol=1e-12,
    )
    g.out(
        "cdist_empty",
        "aten::_cdist_forward.out",
        [rnd(0, 3), rnd(4, 3), 2.0, None],
        torch.zeros(0, 4),
    )
    g.fail(
        "cdist_bad_m",
        "aten::_cdist_forward.out",
        [rnd(3, 2), rnd(4, 3), 2.0, None],
        torch.zeros(3, 4),
    )
    g.fail(
        "cdist_neg_p",
        "aten::_cdist_forward.out",
        [x1, x2, -1.0, None],
        torch.zeros(2, 4, 5),
    )
    g.fail(
        "cdist_int",
        "aten::_cdist_forward.out",
        [x1.int(), x2.int(), 2.0, None],
        torch.zeros(2, 4, 5, dtype=torch.int32),
        status=NOT_SUPPORTED,
    )
    # _pdist_forward
    x = rnd(5, 3)
    for p in (0.0, 1.0, 2.0, 1.5, float("inf")):
        g.out(
            "pdist_p%s" % str(p).replace(".", "_"),
            "aten::_pdist_forward.out",
            [x, p],
            A._pdist_forward(x, p),
            atol=1e-5,
            rtol=1e-5,
        )
    g.out("pdist_one_row", "aten::_pdist_forward.out", [rnd(1, 3), 2.0], torch.zeros(0))
    g.out(
        "pdist_f64_t",
        "aten::_pdist_forward.out",
        [(x.double().t().contiguous().t(), [1, 0]), 2.0],
        A._pdist_forward(x.double(), 2.0),
        atol=1e-12,
        rtol=1e-12,
    )
    g.fail(
        "pdist_rank3", "aten::_pdist_forward.out", [rnd(2, 2, 2), 2.0], torch.zeros(1)
    )
    # convolution_backward (forward convolutions, 1-D/2-D/3-D, groups, stride, padding, dilation)
    for name, x, w, stride, pad, dil, groups in (
        ("2d", rnd(2, 4, 6, 5), rnd(6, 4, 3, 3), [1, 1], [1, 1], [1, 1], 1),
        ("2d_stride_dil", rnd(1, 4, 9, 8), rnd(4, 2, 3, 2), [2, 1], [1, 0], [2, 2], 2),
        ("depthwise", rnd(1, 3, 5, 5), rnd(6, 1, 3, 3), [2, 2], [1, 1], [1, 1], 3),
        ("1d", rnd(2, 3, 10), rnd(4, 3, 3), [2], [1], [1], 1),
        (
            "3d",
            rnd(1, 2, 4, 4, 3),
            rnd(2, 2, 2, 2, 2),
            [1, 1, 1],
            [0, 1, 0],
            [1, 1, 1],
            1,
        ),
    ):
        out = A.convolution(
            x, w, None, stride, pad, dil, False, [0] * len(stride), groups
        )
        go = rnd(*out.shape)
        res = A.convolution_backward(
            go,
            x,
            w,
            [w.shape[0]],
            stride,
            pad,
            dil,
            False,
            [0] * len(stride),
            groups,
            [True, True, True],
        )
        g.outs(
            "conv_bwd_" + name,
            "aten::convolution_backward.out",
            [
                go,
                x,
                w,
                [w.shape[0]],
                stride,
                pad,
                dil,
                False,
                [0] * len(stride),
                groups,
                Bools([True, True, True]),
            ],
            list(res),
            atol=1e-4,
            rtol=1e-5,
        )
    x, w = rnd(1, 2, 5, 5), rnd(3, 2, 3, 3)
    go = rnd(1, 3, 3, 3)
    res = A.convolution_backward(
        go, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, False, False]
    )
    g.case(
        "conv_bwd_input_only",
        "aten::convolution_backward.out",
        [
            go,
            x,
            w,
            None,
            [1, 1],
            [0, 0],
            [1, 1],
            False,
            [0, 0],
            1,
            Bools([True, False, False]),
            Out(torch.float32, sizes=[1, 2, 5, 5]),
            Out(torch.float32, sizes=[0], cap=1),
            Out(torch.float32, sizes=[0], cap=1),
            RetList([11, 12, 13]),
        ],
        [(11, -1, res[0])],
        atol=1e-4,
        rtol=1e-5,
    )
    xc, goc = cl(rnd(1, 4, 5, 5)), cl(rnd(1, 4, 5, 5))
    wc = rnd(4, 4, 3, 3)
    res = A.convolution_backward(
        goc, xc, wc, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True]
    )
    g.outs(
        "conv_bwd_cl",
        "aten::convolution_backward.out",
        [
            goc,
            xc,
            wc,
            [4],
            [1, 1],
            [1, 1],
            [1, 1],
            False,
            [0, 0],
            1,
            Bools([True, True, True]),
        ],
        list(res),
        outs=[Out(order=CL4), Out(), Out()],
        atol=1e-4,
        rtol=1e-5,
    )
    xd, wd = rnd(1, 2, 5, 5, dtype=torch.float64), rnd(3, 2, 3, 3, dtype=torch.float64)
    god = rnd(1, 3, 3, 3, dtype=torch.float64)
    res = A.convolution_backward(
        god, xd, wd, [3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True]
    )
    g.outs(
        "conv_bwd_f64",
        "aten::convolution_backward.out",
        [
            god,
            xd,
            wd,
            [3],
            [1, 1],
            [0, 0],
            [1, 1],
            False,
            [0, 0],
            1,
            Bools([True, True, True]),
        ],
        list(res),
        atol=1e-12,
        rtol=1e-12,
    )
    g.case(
        "conv_bwd_transposed",
        "aten::convolution_backward.out",
        [
            go,
            x,
            w,
            None,
            [1, 1],
            [0, 0],
            [1, 1],
            True,
            [0, 0],
            1,
            Bools([True, True, True]),
            Out(torch.float32, sizes=[1, 2, 5, 5]),
            Out(torch.float32, sizes=[3, 2, 3, 3]),
            Out(torch.float32, sizes=[3]),
            RetList([11, 12, 13]),
        ],
        [],
        status=NOT_SUPPORTED,
    )
    g.case(
        "conv_bwd_bad_grad",
        "aten::convolution_backward.out",
        [
            rnd(1, 3, 4, 4),
            x,
            w,
            None,
            [1, 1],
            [0, 0],
            [1, 1],
            False,
            [0, 0],
            1,
            Bools([True, True, True]),
            Out(torch.float32, sizes=[1, 2, 5, 5]),
            Out(torch.float32, sizes=[3, 2, 3, 3]),
            Out(torch.float32, sizes=[3]),
            RetList([11, 12, 13]),
        ],
        [],
        status=INVALID_ARGUMENT,
    )
    # max_pool2d_with_indices_backward
    for name, x, k, s, p, d, ceil in (
        ("basic", rnd(2, 3, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1], False),
        ("overlap", rnd(1, 2, 7, 5), [3, 3], [1, 1], [1, 1], [1, 1], False),
        ("dil_ceil", rnd(1, 2, 9, 8), [3, 2], [2, 2], [1, 1], [2, 1], True),
        ("cl", cl(rnd(2, 4, 6, 5)), [3, 3], [2, 1], [1, 1], [1, 1], False),
        ("3d_input", rnd(3, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1], False),
        (
            "f64",
            rnd(1, 2, 5, 5, dtype=torch.float64),
            [3, 3],
            [1, 1],
            [0, 0],
            [1, 1],
            False,
        ),
    ):
        vals, idx = A.max_pool2d_with_indices(x, k, s, p, d, ceil)
        go = rnd(*vals.shape, dtype=x.dtype)
        if dim_order(x) == CL4:
            go, idx = cl(go), cl(idx)
        res = A.max_pool2d_with_indices_backward(go, x, k, s, p, d, ceil, idx)
        g.out(
            "max_pool_bwd_" + name,
            "aten::max_pool2d_with_indices_backward.grad_input",
            [go, x, k, s, p, d, ceil, idx],
            res,
            out=Out(order=dim_order(x)),
            atol=1e-6,
            rtol=1e-6,
        )
    x = rnd(1, 1, 4, 4)
    g.fail(
        "max_pool_bwd_bad_index",
        "aten::max_pool2d_with_indices_backward.grad_input",
        [
            rnd(1, 1, 2, 2),
            x,
            [2, 2],
            [2, 2],
            [0, 0],
            [1, 1],
            False,
            torch.tensor([[[[0, 3], [8, 16]]]]),
        ],
        x,
    )
    g.fail(
        "max_pool_bwd_bad_shape",
        "aten::max_pool2d_with_indices_backward.grad_input",
        [
            rnd(1, 1, 3, 3),
            x,
            [2, 2],
            [2, 2],
            [0, 0],
            [1, 1],
            False,
            torch.zeros(1, 1, 3, 3, dtype=torch.int64),
        ],
        x,
    )
    # native_dropout: the deterministic cases (eval, p = 0, p = 1)
    x = rnd(3, 4)
    x[0, 0] = float("inf")
    for name, p, train in (
        ("eval", 0.5, False),
        ("p0", 0.0, True),
        ("p0_none", 0.0, None),
    ):
        res = A.native_dropout(x, p, train)
        g.outs(
            "dropout_" + name,
            "aten::native_dropout.out",
            [x, p, train],
            list(res),
            outs=[Out(), Out(torch.bool)],
        )
    xf = rnd(2, 5)
    res = A.native_dropout(xf, 1.0, True)
    g.outs(
        "dropout_p1",
        "aten::native_dropout.out",
        [xf, 1.0, True],
        list(res),
        outs=[Out(), Out(torch.bool)],
    )
    xc = cl(rnd(1, 2, 3, 3, dtype=torch.float64))
    res = A.native_dropout(xc, 0.3, False)
    g.outs(
        "dropout_eval_cl",
        "aten::native_dropout.out",
        [xc, 0.3, False],
        list(res),
        outs=[Out(order=CL4), Out(torch.bool, order=CL4)],
    )
    g.case(
        "dropout_bad_p",
        "aten::native_dropout.out",
        [
            x,
            1.5,
            True,
            Out(torch.float32, sizes=[3, 4]),
            Out(torch.bool, [3, 4]),
            RetList([3, 4]),
        ],
        [],
        status=INVALID_ARGUMENT,
    )
    g.case(
        "dropout_bad_mask",
        "aten::native_dropout.out",
        [
            x,
            0.5,
            True,
            Out(torch.float32, sizes=[3, 4]),
            Out(torch.float32, [3, 4]),
            RetList([3, 4]),
        ],
        [],
        status=INVALID_ARGUMENT,
    )
    g.case(
        "dropout_int",
        "aten::native_dropout.out",
        [
            x.int(),
            0.5,
            True,
            Out(torch.int32, [3, 4]),
            Out(torch.bool, [3, 4]),
            RetList([3, 4]),
        ],
        [],
        status=NOT_SUPPORTED,
    )
    # rand / randn: argument errors (values: test_random.c)
    for op in ("rand", "randn"):
        g.case(
            op + "_int_out",
            "aten::%s.out" % op,
            [[2, 3], Out(torch.int32, [2, 3]), Ret(1)],
            [],
            status=NOT_SUPPORTED,
        )
        g.case(
            op + "_neg_size",
            "aten::%s.out" % op,
            [[2, -3], Out(torch.float32, [2, 3]), Ret(1)],
            [],
            status=INVALID_ARGUMENT,
        )
    # _conj_physical on real dtypes is a copy (complex: test_random.c)
    for dt in (torch.float32, torch.float64, torch.int64, torch.bool, torch.bfloat16):
        x = rnd(2, 3, dtype=dt)
        g.out(
            "conj_physical_" + str(dt).split(".")[1],
            "aten::_conj_physical.out",
            [x],
            A._conj_physical(x),
        )
    x = cl(rnd(1, 2, 2, 3))
    g.out("conj_physical_cl", "aten::_conj_physical.out", [x], x, out=Out(order=CL4))
    g.fail(
        "conj_physical_dtype",
        "aten::_conj_physical.out",
        [rnd(2, 3)],
        torch.zeros(2, 3),
        out=Out(torch.float64),
    )
    # Hostile arguments found by fuzzing: int64 overflow must be a status.
    x = rnd(2, 2)
    g.fail("hostile_view_size_overflow", "aten::view_copy.out", [x, [2**59, 16]], x)
    g.fail(
        "hostile_as_strided_overflow",
        "aten::as_strided_copy.out",
        [rnd(8), [8], [2**61 + 1], 0],
        rnd(8),
    )
    xc, wc = rnd(1, 1, 4, 4), rnd(1, 1, 3, 3)
    for name, pad, dil in (("pad", [2**62, 0], [1, 1]), ("dil", [0, 0], [2**62, 1])):
        g.fail(
            "hostile_conv_" + name,
            "aten::convolution.out",
            [xc, wc, None, [1, 1], pad, dil, False, [0, 0], 1],
            xc,
        )
    g.case(
        "hostile_max_pool_kernel",
        "aten::max_pool2d_with_indices.out",
        [
            xc,
            [2**40, 1],
            [1, 1],
            [0, 0],
            [2**40, 1],
            False,
            Out(torch.float32, [1, 1, 4, 4]),
            Out(torch.int64, [1, 1, 4, 4]),
            RetList([6, 7]),
        ],
        [],
        status=INVALID_ARGUMENT,
    )
    return g


def gen_fast():
    """Cases aimed at the float32 fast paths (tiles, direct depthwise, 1x1
    convolution without im2col, flat channels-last elementwise rows, batch
    norm on flattened spatial dims); every expected value is from PyTorch."""
    g = Golden("fast")
    # Tiled transposes past one 32x32 tile,
    # direct depthwise convolution (NCHW and NHWC, stride, dilation, padding,
    # channel multiplier), 1x1 convolution without im2col, channels-last
    # elementwise ops on flat rows.
    x = Gen([1, 34, 33], 11)
    g.out(
        "fast_permute_tiled",
        "aten::permute_copy.out",
        [x, [2, 0, 1]],
        x.t.permute(2, 0, 1),
    )
    xi = torch.arange(33 * 34, dtype=torch.int64).reshape(33, 34)
    g.out(
        "fast_transpose_tiled_i64", "aten::transpose_copy.int_out", [xi, 0, 1], xi.t()
    )
    xh = Gen([1, 33, 34], 12, torch.float16)
    g.out(
        "fast_transpose_tiled_f16",
        "aten::transpose_copy.int_out",
        [xh, 1, 2],
        xh.t.transpose(1, 2),
    )
    A_ = torch.ops.aten
    for name, xin, w, b, stride, pad, dil, groups, order in (
        (
            "dw_nchw",
            Gen([1, 6, 11, 9], 13),
            Gen([6, 1, 3, 3], 14),
            Gen([6], 15),
            [1, 1],
            [1, 1],
            [1, 1],
            6,
            None,
        ),
        (
            "dw_nchw_s2_dil",
            Gen([1, 4, 12, 13], 16),
            Gen([8, 1, 3, 2], 17),
            None,
            [2, 2],
            [2, 1],
            [2, 3],
            4,
            None,
        ),
        (
            "dw_nhwc",
            Gen([1, 8, 9, 10], 18),
            Gen([8, 1, 3, 3], 19),
            Gen([8], 20),
            [2, 1],
            [1, 1],
            [1, 1],
            8,
            CL4,
        ),
        (
            "dw_nhwc_5x5",
            Gen([1, 12, 7, 7], 21),
            Gen([12, 1, 5, 5], 22),
            None,
            [1, 1],
            [2, 2],
            [1, 1],
            12,
            CL4,
        ),
        (
            "pointwise_nchw",
            Gen([2, 8, 5, 6], 23),
            Gen([12, 4, 1, 1], 24),
            Gen([12], 25),
            [1, 1],
            [0, 0],
            [1, 1],
            2,
            None,
        ),
        (
            "pointwise_nhwc",
            Gen([1, 8, 5, 6], 26),
            Gen([6, 8, 1, 1], 27),
            None,
            [1, 1],
            [0, 0],
            [1, 1],
            1,
            CL4,
        ),
    ):
        xt = xin.t if order is None else cl(xin.t)
        res = A_.convolution(
            xt, w.t, b.t if b else None, stride, pad, dil, False, [0, 0], groups
        )
        xa = xin if order is None else (xt, CL4)
        g.out(
            "fast_conv_" + name,
            "aten::convolution.out",
            [xa, w, b, stride, pad, dil, False, [0, 0], groups],
            res,
            out=Out(order=order),
            atol=1e-5,
            rtol=1e-5,
        )
    a, bb = cl(rnd(2, 3, 4, 5)), cl(rnd(2, 3, 4, 5))
    g.out("fast_add_cl", "aten::add.out", [a, bb, 1], a + bb, out=Out(order=CL4))
    g.out(
        "fast_hardtanh_cl",
        "aten::hardtanh.out",
        [a, -0.5, 0.5],
        torch.nn.functional.hardtanh(a, -0.5, 0.5),
        out=Out(order=CL4),
    )
    xb = Gen([2, 4, 6, 7], 28)
    bw, bb_, bm, bv = rnd(4), rnd(4), rnd(4), rnd(4).abs() + 0.5
    res = A_._native_batch_norm_legit_no_training(xb.t, bw, bb_, bm, bv, 0.1, 1e-5)
    g.outs(
        "fast_batch_norm_nchw",
        "aten::_native_batch_norm_legit_no_training.out",
        [xb, bw, bb_, bm, bv, 0.1, 1e-5],
        list(res),
        outs=[Out(), Out(sizes=[0], cap=4), Out(sizes=[0], cap=4)],
        atol=1e-5,
        rtol=1e-5,
    )
    return g


def nn_is_cl(t):
    return t.dim() == 4 and dim_order(t) == CL4


FAMILIES = {
    "index": gen_index,
    "matmul": gen_matmul,
    "conv": gen_conv,
    "norm": gen_norm,
    "pool": gen_pool,
    "upsample": gen_upsample,
    "pad": gen_pad,
    "shape": gen_shape,
    "copy": gen_copy,
    "create": gen_create,
    "concat": gen_concat,
    "extra": gen_extra,
    "fast": gen_fast,
}


def files():
    for n in sorted(FAMILIES):
        torch.manual_seed(sum(map(ord, n)))  # stable per family
        yield FAMILIES[n]().file
