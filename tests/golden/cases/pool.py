"""Golden cases of the portable kernels in kernels/portable/pool/."""

from __future__ import annotations

import torch
from golden.nn import CL4, INVALID_ARGUMENT, Golden, Out, RetList, cl, dim_order, rnd

A = torch.ops.aten


def pool(g: Golden) -> None:
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


def extra_pool(g: Golden) -> None:
    """Stream 'extra' (operators added last): max_pool2d_with_indices_backward."""
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


def extra_hostile_pool(g: Golden) -> None:
    """Stream 'extra' (operators added last): a hostile max_pool2d kernel (fuzzing); its input is the hostile convolution's."""
    xc = g.carry["hostile_input"]
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
