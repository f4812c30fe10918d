"""Golden cases of the portable kernels in kernels/portable/copy/."""

from __future__ import annotations

import torch
from golden.nn import CL4, Golden, Out, Ret, cl, rnd

A = torch.ops.aten


def copy(g: Golden) -> None:
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


def extra_copy(g: Golden) -> None:
    """Stream 'extra' (operators added last): _conj_physical on real dtypes."""
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
