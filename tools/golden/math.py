"""The case-table kit of the math-style portable cases; PyTorch (eager) is the
reference. The tables are in tests/golden/cases/<family>.py (golden.portable
runs them, all on the one generator ``g``). A case lists the inputs, the out
tensors (dtype, layout, tolerance) and the status; the expected outs come from
calling the same out variant in PyTorch.
"""

from __future__ import annotations

import torch

from golden.format import (
    EXACT,
    Close,
    Double,
    Expect,
    Ref,
    Refs,
    Str,
    Tensor,
    case_id,
    dtype_size,
)
from golden.format import (
    Case as GCase,
)
from golden.format import (
    Out as GOut,
)
from golden.torchref import call_out

TOL = {
    torch.float16: (2e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
    torch.float32: (2e-5, 2e-6),
    torch.float64: (1e-10, 1e-12),
}
INVALID_ARGUMENT = "INVALID_ARGUMENT"

CL = "cl"  # marker: channels-last layout


class Out:
    """An out tensor argument: dtype, dim order (None or CL), tolerance override."""

    def __init__(self, dtype, layout=None, tol=None, exact=False):
        self.dtype, self.layout, self.tol, self.exact = dtype, layout, tol, exact


class Case:
    def __init__(self, op, label, args, outs, status="OK"):
        self.op, self.label, self.args, self.outs, self.status = (
            op,
            label,
            args,
            outs,
            status,
        )


class Lay:
    """An input tensor with a memory layout (channels-last)."""

    def __init__(self, t, layout):
        self.t, self.layout = t, layout


def dim_order_of(t, layout):
    if layout == CL and t.dim() == 4:
        return [0, 2, 3, 1]
    return list(range(t.dim()))


def torch_value(a):
    if isinstance(a, Lay):
        return (
            a.t.contiguous(memory_format=torch.channels_last) if a.layout == CL else a.t
        )
    return a


def golden_arg(a):
    if isinstance(a, Lay):
        return Tensor(a.t, dim_order_of(a.t, a.layout))
    if isinstance(a, float):
        return Double(a)
    if isinstance(a, str):
        return Str(a)
    if isinstance(a, tuple):
        return list(a)
    return a


def to_golden(c):
    """The golden case of c: the out tensors start with a wrong first size (the
    kernel must resize them within their bounds) and a fill pattern."""
    args = [golden_arg(a) for a in c.args]
    outs = [torch.empty(0, dtype=o.dtype) for o in c.outs]
    expects = []
    first = len(args)
    if c.status != "OK":
        try:
            call_out(c.op, [torch_value(a) for a in c.args], outs)
        except Exception:  # noqa: BLE001 - any PyTorch error is the expected failure
            pass
        else:
            raise AssertionError(f"{c.label}: PyTorch accepted a case expected to fail")
        like = next(
            (torch_value(a) for a in c.args if isinstance(a, (torch.Tensor, Lay))),
            torch.empty(0),
        )
        for o in c.outs:
            args.append(
                GOut(
                    o.dtype,
                    list(like.shape),
                    cap=65536 // dtype_size(o.dtype),
                    fill=0xCD,
                )
            )
    else:
        call_out(c.op, [torch_value(a) for a in c.args], outs)
        for o, t in zip(c.outs, outs):
            sizes = list(t.shape)
            order = dim_order_of(t, o.layout)
            rtol, atol = o.tol or TOL.get(o.dtype, (0.0, 0.0))
            expects.append(
                Expect(len(args), t, EXACT if o.exact else Close(rtol, atol))
            )
            args.append(
                GOut(
                    o.dtype,
                    ([0] + sizes[1:]) if sizes else sizes,
                    cap=t.numel() + 16 // dtype_size(o.dtype),
                    order=order,
                    max_sizes=sizes,
                    bounded=True,
                    fill=0xCD,
                )
            )
    args.append(
        Ref(first)
        if len(c.outs) == 1
        else Refs(list(range(first, first + len(c.outs))))
    )
    return GCase(case_id(c.label), c.op, args, expects, c.status)


# ---------------------------------------------------------------------------- data

# ---------------------------------------------------------------------------- data
g = torch.Generator().manual_seed(1234)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def randint(lo, hi, *shape, dtype=torch.int32):
    return torch.randint(lo, hi, shape, generator=g, dtype=torch.int64).to(dtype)


EDGE = torch.tensor(
    [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        3.75,
        float("nan"),
        float("inf"),
        float("-inf"),
        1e-3,
        7.0,
    ]
)
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I8, I16, I32, I64, U8, B = (
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
)
