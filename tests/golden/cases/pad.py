"""Golden cases of the portable kernels in kernels/portable/pad/."""

from __future__ import annotations

import torch
from golden.nn import Golden, Out, cl, dim_order, nn_is_cl, rnd


def pad(g: Golden) -> None:
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
