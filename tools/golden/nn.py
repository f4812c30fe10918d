"""The case-table kit of the nn-style portable cases: ``Golden`` (one case per
call, out variants, failures) and the random inputs they draw.

The tables themselves are in tests/golden/cases/<family>.py; golden.portable
runs them in their random streams. Every expected output is computed by torch.
"""

from __future__ import annotations

import math

import torch

from golden import format as gf
from golden.format import (
    Close,
    Double,
    Doubles,
    Expect,
    GoldenFile,
    Ref,
    Refs,
    Tensor,
    TensorList,
)

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
        # Tensors one table hands to a later one of its stream (drawn once, so
        # the random sequence stays the one the cases were written with).
        self.carry: dict[str, torch.Tensor] = {}

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


def distinct(*shape, dtype=torch.float32):
    """Values without ties (a shuffled ramp of multiples of 1/8), so that
    orderings are unique."""
    n = math.prod(shape)
    v = (torch.randperm(n).double() - n // 2) / 8
    return v.reshape(shape).to(dtype)


def nn_is_cl(t):
    return t.dim() == 4 and dim_order(t) == CL4
