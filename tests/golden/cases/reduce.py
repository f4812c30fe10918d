"""Golden cases of the portable kernels in kernels/portable/reduce/."""

from __future__ import annotations

import torch
from golden.math import (
    CL,
    F32,
    F64,
    I32,
    I64,
    INVALID_ARGUMENT,
    B,
    Case,
    Lay,
    Out,
    randint,
    randn,
)


def reduce_cases() -> list[Case]:
    C = []
    x = randn(2, 3, 4)
    xn = x.clone()
    xn[1, 2, 1] = float("nan")
    C.append(
        Case("aten::sum.IntList_out", "sum dim 1", [x, [1], False, None], [Out(F32)])
    )
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum dims -1,0 keep",
            [x, [-1, 0], True, None],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum all (None)",
            [x, None, False, None],
            [Out(F32)],
        )
    )
    C.append(
        Case("aten::sum.IntList_out", "sum all ([])", [x, [], False, None], [Out(F32)])
    )
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum int -> int64",
            [randint(-9, 9, 3, 4), [1], False, None],
            [Out(I64)],
        )
    )
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum bool",
            [torch.tensor([[True, False], [True, True]]), [0], False, None],
            [Out(I64)],
        )
    )
    C.append(
        Case("aten::sum.IntList_out", "sum dtype f64", [x, [2], False, 7], [Out(F64)])
    )
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum channels-last dim 1",
            [Lay(randn(2, 3, 2, 2), CL), [1], True, None],
            [Out(F32, CL)],
        )
    )
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum zero-size",
            [randn(2, 0), [1], False, None],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum rank-0",
            [torch.tensor(3.0), None, False, None],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum dup dims",
            [x, [1, 1], False, None],
            [Out(F32)],
            status=INVALID_ARGUMENT,
        )
    )
    C.append(Case("aten::mean.out", "mean last", [x, [-1], True, None], [Out(F32)]))
    C.append(
        Case(
            "aten::mean.out",
            "mean int dtype",
            [randint(-9, 9, 3, 4), [0], False, 6],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::mean.out", "mean empty", [randn(0, 3), [0], False, None], [Out(F32)]
        )
    )
    C.append(Case("aten::mean.dtype_out", "mean all", [x, None], [Out(F32)]))
    C.append(
        Case(
            "aten::prod.int_out", "prod dim", [randn(3, 4), 1, False, None], [Out(F32)]
        )
    )
    C.append(
        Case("aten::prod.out", "prod int all", [randint(1, 4, 5), None], [Out(I64)])
    )
    C.append(Case("aten::amax.out", "amax nan", [xn, [2], False], [Out(F32)]))
    C.append(Case("aten::amin.out", "amin dims", [x, [0, 2], True], [Out(F32)]))
    C.append(
        Case(
            "aten::amax.out",
            "amax int all",
            [randint(-9, 9, 3, 4), [], False],
            [Out(I32)],
        )
    )
    C.append(
        Case(
            "aten::amax.out",
            "amax empty dim",
            [randn(2, 0), [1], False],
            [Out(F32)],
            status=INVALID_ARGUMENT,
        )
    )
    ties = torch.tensor(
        [
            [1.0, 3.0, 3.0, 0.0],
            [float("nan"), 1.0, float("nan"), 5.0],
            [-1.0, -1.0, -2.0, -2.0],
        ]
    )
    C.append(Case("aten::argmax.out", "argmax ties nan", [ties, 1, False], [Out(I64)]))
    C.append(Case("aten::argmin.out", "argmin ties nan", [ties, 1, True], [Out(I64)]))
    C.append(Case("aten::argmax.out", "argmax flat", [x, None, False], [Out(I64)]))
    C.append(
        Case("aten::max.dim_max", "max dim", [ties, 0, False], [Out(F32), Out(I64)])
    )
    C.append(
        Case("aten::min.dim_min", "min dim keep", [x, 1, True], [Out(F32), Out(I64)])
    )
    C.append(Case("aten::max.unary_out", "max all", [x], [Out(F32)]))
    C.append(
        Case("aten::min.unary_out", "min all int", [randint(-9, 9, 7)], [Out(I32)])
    )
    bx = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    C.append(Case("aten::any.all_out", "any all", [bx], [Out(B)]))
    C.append(Case("aten::any.dims_out", "any dims", [bx, [1], False], [Out(B)]))
    C.append(Case("aten::any.out", "any dim keep", [bx, 0, True], [Out(B)]))
    C.append(Case("aten::all.all_out", "all all", [bx], [Out(B)]))
    C.append(
        Case(
            "aten::all.out",
            "all dim",
            [torch.tensor([[True, True], [False, True]]), 0, False],
            [Out(B)],
        )
    )
    # Bool / uint8 masks reduced along their contiguous last dim (the byte
    # path), rows of several lengths including all-true and all-false rows.
    mask = torch.tensor(
        [
            [False] * 5,
            [True] * 5,
            [False, False, False, False, True],
            [True] * 4 + [False],
        ]
    )
    C.append(Case("aten::any.out", "any bool last dim", [mask, 1, False], [Out(B)]))
    C.append(Case("aten::all.out", "all bool last dim", [mask, -1, True], [Out(B)]))
    u8 = torch.tensor([[0, 0, 7], [3, 200, 1], [0, 0, 0]], dtype=torch.uint8)
    C.append(Case("aten::any.dims_out", "any u8 rows", [u8, [1], False], [Out(B)]))
    C.append(Case("aten::all.out", "all u8 rows", [u8, 1, False], [Out(B)]))
    C.append(
        Case(
            "aten::var.correction_out",
            "var correction 1",
            [x, [1], None, False],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::var.correction_out",
            "var correction 0 all",
            [x, None, 0, True],
            [Out(F32)],
        )
    )
    C.append(Case("aten::var.out", "var unbiased", [x, [2], True, False], [Out(F32)]))
    C.append(
        Case(
            "aten::var_mean.correction_out",
            "var_mean",
            [x, [0, 1], 1, False],
            [Out(F32), Out(F32)],
        )
    )
    lx = torch.tensor([[0.0, 1.0, 2.0], [float("-inf")] * 3, [float("inf"), 0.0, 1.0]])
    C.append(Case("aten::logsumexp.out", "logsumexp", [lx, [1], False], [Out(F32)]))
    C.append(
        Case(
            "aten::logsumexp.out",
            "logsumexp big",
            [randn(3, 5) * 50, [0, 1], True],
            [Out(F32)],
        )
    )
    C.append(Case("aten::cumsum.out", "cumsum f32", [x, 1, None], [Out(F32)]))
    C.append(
        Case(
            "aten::cumsum.out",
            "cumsum int -> int64",
            [randint(-9, 9, 3, 4), -1, None],
            [Out(I64)],
        )
    )
    C.append(
        Case("aten::cumsum.out", "cumsum dtype", [randint(-9, 9, 5), 0, 6], [Out(F32)])
    )
    # A reduced dim of size 1 under eight or more outputs: the float32 run
    # path once summed nothing (difftest fixture sum_size1_dim). No random draw.
    one = torch.arange(16, dtype=torch.float32).reshape(1, 2, 8, 1) - 7.5
    C.append(
        Case(
            "aten::sum.IntList_out",
            "sum size-1 dim keep",
            [one, [3], True, None],
            [Out(F32)],
        )
    )
    C.append(
        Case("aten::mean.out", "mean size-1 dim", [one, [3], False, None], [Out(F32)])
    )
    return C
