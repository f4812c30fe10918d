"""Golden cases of the portable kernels in kernels/portable/random/."""

from __future__ import annotations

import torch
from golden.nn import (
    CL4,
    INVALID_ARGUMENT,
    NOT_SUPPORTED,
    Golden,
    Out,
    Ret,
    RetList,
    cl,
    rnd,
)

A = torch.ops.aten


def extra_random(g: Golden) -> None:
    """Stream 'extra' (operators added last): native_dropout's deterministic cases, rand/randn argument errors (values: test_random.c)."""
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
