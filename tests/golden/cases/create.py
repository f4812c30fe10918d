"""Golden cases of the portable kernels in kernels/portable/create/."""

from __future__ import annotations

import torch
from golden.nn import CL4, INVALID_ARGUMENT, Dbl, Golden, Out, Ret, cl, rnd


def create(g: Golden) -> None:
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
