"""Golden cases of the portable kernels in kernels/portable/norm/."""

from __future__ import annotations

import torch
from golden.math import CL, F16, F32, F64, INVALID_ARGUMENT, Case, Lay, Out, randn
from golden.nn import (
    NOT_SUPPORTED,
    Gen,
    Golden,
    RetList,
    cl,
    dim_order,
    rnd,
    tol,
)
from golden.nn import (
    Out as NnOut,
)

A_ = torch.ops.aten


def norm_cases() -> list[Case]:
    C = []
    x = randn(2, 3, 5) * 4
    C.append(Case("aten::_softmax.out", "softmax last", [x, -1, False], [Out(F32)]))
    C.append(Case("aten::_softmax.out", "softmax dim 1", [x, 1, False], [Out(F32)]))
    C.append(
        Case(
            "aten::_softmax.out",
            "softmax -inf mask",
            [
                torch.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 2 + [2.0]]),
                -1,
                False,
            ],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::_softmax.out",
            "softmax cl",
            [Lay(randn(1, 3, 2, 2), CL), 1, False],
            [Out(F32, CL)],
        )
    )
    C.append(
        Case(
            "aten::_softmax.out",
            "softmax f16",
            [randn(2, 6, dtype=F16), -1, False],
            [Out(F16)],
        )
    )
    C.append(
        Case(
            "aten::_softmax.out",
            "softmax f64",
            [randn(3, 4, dtype=F64), 0, False],
            [Out(F64)],
        )
    )
    C.append(
        Case("aten::_log_softmax.out", "log_softmax last", [x, -1, False], [Out(F32)])
    )
    C.append(
        Case("aten::_log_softmax.out", "log_softmax dim 0", [x, 0, False], [Out(F32)])
    )
    C.append(
        Case(
            "aten::_softmax.out",
            "softmax rank-0",
            [torch.tensor(1.5), 0, False],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::native_layer_norm.out",
            "layer_norm w b",
            [x, [5], randn(5), randn(5), 1e-5],
            [Out(F32), Out(F32), Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::native_layer_norm.out",
            "layer_norm 2d no affine",
            [x, [3, 5], None, None, 1e-3],
            [Out(F32), Out(F32), Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::native_layer_norm.out",
            "layer_norm f64",
            [randn(4, 6, dtype=F64), [6], randn(6, dtype=F64), None, 1e-5],
            [Out(F64), Out(F64), Out(F64)],
        )
    )
    C.append(
        Case(
            "aten::native_layer_norm.out",
            "layer_norm bad shape",
            [x, [4], None, None, 1e-5],
            [Out(F32), Out(F32), Out(F32)],
            status=INVALID_ARGUMENT,
        )
    )
    gx = randn(2, 4, 3, 3)
    C.append(
        Case(
            "aten::native_group_norm.out",
            "group_norm",
            [gx, randn(4), randn(4), 2, 4, 9, 2, 1e-5],
            [Out(F32), Out(F32), Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::native_group_norm.out",
            "group_norm cl no affine",
            [Lay(gx, CL), None, None, 2, 4, 9, 4, 1e-5],
            [Out(F32, CL), Out(F32), Out(F32)],
        )
    )
    return C


def norm(g: Golden) -> None:
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
        outs = [NnOut(order=dim_order(x))] + [NnOut(sizes=[0]), NnOut(sizes=[0])]
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
        NnOut(),
        NnOut(),
        NnOut(),
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
        NnOut(),
        NnOut(sizes=[0]),
        NnOut(sizes=[0]),
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
            NnOut(),
            NnOut(sizes=[0]),
            NnOut(sizes=[0]),
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
            NnOut(torch.int32),
            NnOut(sizes=[0]),
            NnOut(sizes=[0]),
            RetList([7, 8, 9]),
        ],
        [],
        status=NOT_SUPPORTED,
        likes={7: torch.zeros(2, 4), 8: torch.zeros(0), 9: torch.zeros(0)},
    )


def fast_norm(g: Golden) -> None:
    """Stream 'fast' (the float32 fast paths; every expected value is from PyTorch): batch norm on flattened spatial dims."""
    xb = Gen([2, 4, 6, 7], 28)
    bw, bb_, bm, bv = rnd(4), rnd(4), rnd(4), rnd(4).abs() + 0.5
    res = A_._native_batch_norm_legit_no_training(xb.t, bw, bb_, bm, bv, 0.1, 1e-5)
    g.outs(
        "fast_batch_norm_nchw",
        "aten::_native_batch_norm_legit_no_training.out",
        [xb, bw, bb_, bm, bv, 0.1, 1e-5],
        list(res),
        outs=[NnOut(), NnOut(sizes=[0], cap=4), NnOut(sizes=[0], cap=4)],
        atol=1e-5,
        rtol=1e-5,
    )
