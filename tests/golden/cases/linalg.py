"""Golden cases of the portable kernels in kernels/portable/linalg/."""

from __future__ import annotations

import torch
from golden.nn import NOT_SUPPORTED, Gen, Golden, Out, rnd, tol

A = torch.ops.aten


def matmul(g: Golden) -> None:
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


def extra_linalg(g: Golden) -> None:
    """Stream 'extra' (operators added last): _cdist_forward, _pdist_forward."""
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
