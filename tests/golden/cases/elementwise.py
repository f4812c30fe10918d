"""Golden cases of the portable kernels in kernels/portable/elementwise/."""

from __future__ import annotations

import torch
from golden.math import (
    BF16,
    CL,
    EDGE,
    F16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    INVALID_ARGUMENT,
    U8,
    B,
    Case,
    Lay,
    Out,
    randint,
    randn,
)
from golden.nn import CL4, Golden, cl, rnd
from golden.nn import Out as NnOut


def binary_cases() -> list[Case]:
    C = []
    a, b = randn(2, 3), randn(2, 3)
    e2 = EDGE.reshape(3, 4)
    C.append(Case("aten::add.out", "add f32 same shape", [a, b, 1], [Out(F32)]))
    C.append(
        Case(
            "aten::add.out",
            "add f32 edge values",
            [e2, e2.flip(1).contiguous(), 1],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add f32 broadcast alpha",
            [randn(2, 3, 4), randn(3, 1), 2.5],
            [Out(F32)],
        )
    )
    C.append(
        Case("aten::add.out", "add bias rows", [randn(5, 8), randn(8), 1], [Out(F32)])
    )
    C.append(
        Case(
            "aten::add.out",
            "add int32+int64 alpha",
            [randint(-50, 50, 2, 3), randint(-50, 50, 3, dtype=I64), 2],
            [Out(I64)],
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add f16+f32",
            [randn(4, dtype=F16), randn(4), 1],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add bf16",
            [randn(6, dtype=BF16), randn(6, dtype=BF16), 1],
            [Out(BF16)],
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add f16 out",
            [randn(6, dtype=F16), randn(6, dtype=F16), 1],
            [Out(F16)],
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add u8+i8",
            [randint(0, 255, 5, dtype=U8), randint(-100, 100, 5, dtype=I8), 1],
            [Out(I16)],
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add bool",
            [
                torch.tensor([True, False, True, False]),
                torch.tensor([True, True, False, False]),
                True,
            ],
            [Out(B)],
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add channels-last",
            [Lay(randn(2, 3, 2, 2), CL), randn(3, 1, 1), 1],
            [Out(F32, CL)],
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add cl + contiguous",
            [Lay(randn(2, 3, 2, 2), CL), randn(2, 3, 2, 2), 1],
            [Out(F32)],
        )
    )
    C.append(
        Case("aten::add.out", "add zero-size", [randn(0, 3), randn(3), 1], [Out(F32)])
    )
    C.append(
        Case(
            "aten::add.out", "add rank-0", [torch.tensor(2.5), randn(3), 1], [Out(F32)]
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add int8 wrap",
            [torch.tensor([120, -120], dtype=I8), torch.tensor([10, -10], dtype=I8), 1],
            [Out(I8)],
        )
    )
    C.append(
        Case(
            "aten::add.Scalar_out",
            "add int + float scalar",
            [randint(-5, 5, 4), 2.5, 1],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::add.Scalar_out",
            "add f16 + scalar",
            [randn(4, dtype=F16), 1e-3, 2],
            [Out(F16)],
        )
    )
    C.append(
        Case(
            "aten::add.Scalar_out",
            "add bool + int scalar",
            [torch.tensor([True, False]), 3, 1],
            [Out(I64)],
        )
    )
    C.append(
        Case(
            "aten::sub.out",
            "sub f64 broadcast",
            [randn(3, 1, dtype=F64), randn(1, 4, dtype=F64), 0.5],
            [Out(F64)],
        )
    )
    C.append(
        Case(
            "aten::sub.Scalar_out",
            "sub int scalar",
            [randint(-9, 9, 5), 4, 2],
            [Out(I32)],
        )
    )
    C.append(
        Case("aten::rsub.Scalar_out", "rsub f32", [randn(5), 1.0, 2.0], [Out(F32)])
    )
    C.append(
        Case(
            "aten::mul.out",
            "mul int8 overflow",
            [torch.tensor([100, -77, 5], dtype=I8), torch.tensor([3, 2, -1], dtype=I8)],
            [Out(I8)],
        )
    )
    C.append(
        Case(
            "aten::mul.out",
            "mul f32 broadcast",
            [randn(4, 1, 3), randn(2, 1)],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::mul.out",
            "mul f32 edge",
            [EDGE, EDGE.flip(0).contiguous()],
            [Out(F32)],
        )
    )
    C.append(Case("aten::mul.Scalar_out", "mul scalar", [randn(6), -0.5], [Out(F32)]))
    C.append(
        Case(
            "aten::mul.out",
            "mul bool*int",
            [torch.tensor([True, False]), torch.tensor([3, 4], dtype=I64)],
            [Out(I64)],
        )
    )
    ia = torch.tensor([7, -7, 7, -7, 0, 0, 5, -9], dtype=I32)
    ib = torch.tensor([2, 2, -2, -2, 3, 0, 0, 4], dtype=I32)
    C.append(Case("aten::div.out", "div int -> float (x/0)", [ia, ib], [Out(F32)]))
    C.append(
        Case(
            "aten::div.out",
            "div f32 edge",
            [EDGE, EDGE.flip(0).contiguous()],
            [Out(F32)],
        )
    )
    fa = torch.tensor([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1.0, -1.0, 5.0])
    fb = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 0.0, float("inf")])
    for mode in ("floor", "trunc"):
        C.append(
            Case("aten::div.out_mode", f"div f32 {mode}", [fa, fb, mode], [Out(F32)])
        )
    C.append(Case("aten::div.out_mode", "div f32 none", [fa, fb, None], [Out(F32)]))
    nz_a = torch.tensor([7, -7, 7, -7, 0, 6], dtype=I64)
    nz_b = torch.tensor([2, 2, -2, -2, 3, -3], dtype=I64)
    C.append(
        Case("aten::div.out_mode", "div int floor", [nz_a, nz_b, "floor"], [Out(I64)])
    )
    C.append(
        Case("aten::div.out_mode", "div int trunc", [nz_a, nz_b, "trunc"], [Out(I64)])
    )
    C.append(
        Case(
            "aten::div.out_mode",
            "div int floor by zero",
            [ia, ib, "floor"],
            [Out(I32)],
            status=INVALID_ARGUMENT,
        )
    )
    C.append(Case("aten::div.Scalar_out", "div scalar", [randn(5), 4], [Out(F32)]))
    C.append(
        Case(
            "aten::div.Scalar_mode_out",
            "div scalar floor",
            [fa, -2.0, "floor"],
            [Out(F32)],
        )
    )
    C.append(
        Case("aten::floor_divide.out", "floor_divide int", [nz_a, nz_b], [Out(I64)])
    )
    C.append(Case("aten::floor_divide.out", "floor_divide f32", [fa, fb], [Out(F32)]))
    C.append(Case("aten::remainder.Tensor_out", "remainder f32", [fa, fb], [Out(F32)]))
    C.append(
        Case("aten::remainder.Tensor_out", "remainder int", [nz_a, nz_b], [Out(I64)])
    )
    C.append(
        Case("aten::remainder.Scalar_out", "remainder scalar", [fa, -3.0], [Out(F32)])
    )
    C.append(Case("aten::fmod.Tensor_out", "fmod f32", [fa, fb], [Out(F32)]))
    C.append(Case("aten::fmod.Tensor_out", "fmod int", [nz_a, nz_b], [Out(I64)]))
    C.append(Case("aten::fmod.Scalar_out", "fmod int scalar", [nz_a, 4], [Out(I64)]))
    C.append(
        Case(
            "aten::fmod.Tensor_out",
            "fmod int by zero",
            [ia, ib],
            [Out(I32)],
            status=INVALID_ARGUMENT,
        )
    )
    pos = randn(6).abs() + 0.1
    C.append(Case("aten::pow.Tensor_Scalar_out", "pow ^2", [randn(6), 2], [Out(F32)]))
    C.append(Case("aten::pow.Tensor_Scalar_out", "pow ^0.5", [pos, 0.5], [Out(F32)]))
    C.append(
        Case(
            "aten::pow.Tensor_Scalar_out",
            "pow int ^3",
            [randint(-5, 5, 6), 3],
            [Out(I32)],
        )
    )
    C.append(
        Case("aten::pow.Tensor_Tensor_out", "pow tensor", [pos, randn(6)], [Out(F32)])
    )
    C.append(
        Case(
            "aten::pow.Tensor_Tensor_out",
            "pow int tensor neg exp",
            [
                torch.tensor([2, -1, 1, 3, -1], dtype=I64),
                torch.tensor([-1, -3, -2, 4, 2], dtype=I64),
            ],
            [Out(I64)],
        )
    )
    C.append(
        Case("aten::pow.Scalar_out", "pow scalar base", [2.0, randn(5)], [Out(F32)])
    )
    C.append(
        Case(
            "aten::maximum.out",
            "maximum nan",
            [EDGE, EDGE.flip(0).contiguous()],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::minimum.out",
            "minimum int",
            [randint(-9, 9, 2, 3), randint(-9, 9, 3, dtype=I64)],
            [Out(I64)],
        )
    )
    C.append(Case("aten::atan2.out", "atan2", [randn(7), randn(7)], [Out(F32)]))
    # error paths
    C.append(
        Case(
            "aten::add.out",
            "add not broadcastable",
            [randn(2, 3), randn(4), 1],
            [Out(F32)],
            status=INVALID_ARGUMENT,
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add int with float alpha",
            [randint(0, 5, 3), randint(0, 5, 3), 1.5],
            [Out(I32)],
            status=INVALID_ARGUMENT,
        )
    )
    C.append(
        Case(
            "aten::add.out",
            "add float into int out",
            [randn(3), randn(3), 1],
            [Out(I32)],
            status=INVALID_ARGUMENT,
        )
    )
    C.append(
        Case(
            "aten::sub.out",
            "sub bool",
            [torch.tensor([True]), torch.tensor([False]), 1],
            [Out(B)],
            status=INVALID_ARGUMENT,
        )
    )
    return C


def unary_cases() -> list[Case]:
    C = []
    x = torch.cat([EDGE, randn(6)])
    u01 = torch.tensor([0.0, 0.1, 0.5, 0.9, 1.0, -0.5, 2.0, float("nan")])
    for op in [
        "sqrt",
        "rsqrt",
        "reciprocal",
        "exp",
        "expm1",
        "log",
        "log1p",
        "log2",
        "log10",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "erf",
        "sigmoid",
    ]:
        C.append(Case(f"aten::{op}.out", f"{op} f32", [x], [Out(F32)]))
    for op in ["sqrt", "exp", "sigmoid", "log"]:
        C.append(
            Case(
                f"aten::{op}.out", f"{op} int32 -> f32", [randint(0, 9, 5)], [Out(F32)]
            )
        )
        C.append(
            Case(
                f"aten::{op}.out", f"{op} f16", [randn(5, dtype=F16).abs()], [Out(F16)]
            )
        )
    C.append(
        Case(
            "aten::tanh.out",
            "tanh f64 cl",
            [Lay(randn(1, 2, 2, 3, dtype=F64), CL)],
            [Out(F64, CL)],
        )
    )
    C.append(Case("aten::exp.out", "exp bf16", [randn(5, dtype=BF16)], [Out(BF16)]))
    C.append(Case("aten::exp.out", "exp rank-0", [torch.tensor(0.5)], [Out(F32)]))
    C.append(Case("aten::exp.out", "exp zero-size", [randn(2, 0)], [Out(F32)]))
    C.append(Case("aten::logit.out", "logit no eps", [u01, None], [Out(F32)]))
    C.append(Case("aten::logit.out", "logit eps", [u01, 0.05], [Out(F32)]))
    for op in ["abs", "neg", "floor", "ceil", "round", "trunc", "sign"]:
        C.append(
            Case(
                f"aten::{op}.out",
                f"{op} f32",
                [torch.cat([EDGE, torch.tensor([1.5, 2.5, -0.5, -1.5, 0.49999997])])],
                [Out(F32, exact=True)],
            )
        )
        C.append(
            Case(
                f"aten::{op}.out",
                f"{op} int64",
                [randint(-9, 9, 6, dtype=I64)],
                [Out(I64)],
            )
        )
    C.append(
        Case("aten::abs.out", "abs f16", [randn(5, dtype=F16)], [Out(F16, exact=True)])
    )
    C.append(
        Case(
            "aten::neg.out",
            "neg bool",
            [torch.tensor([True])],
            [Out(B)],
            status=INVALID_ARGUMENT,
        )
    )
    C.append(Case("aten::isnan.out", "isnan", [EDGE], [Out(B)]))
    C.append(Case("aten::isinf.out", "isinf", [EDGE], [Out(B)]))
    C.append(Case("aten::isnan.out", "isnan int", [randint(0, 3, 3)], [Out(B)]))
    C.append(Case("aten::logical_not.out", "logical_not f32", [EDGE], [Out(B)]))
    C.append(
        Case(
            "aten::logical_not.out",
            "logical_not int -> f32",
            [randint(0, 3, 5)],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::bitwise_not.out",
            "bitwise_not int8",
            [randint(-100, 100, 5, dtype=I8)],
            [Out(I8)],
        )
    )
    C.append(
        Case(
            "aten::bitwise_not.out",
            "bitwise_not bool",
            [torch.tensor([True, False])],
            [Out(B)],
        )
    )
    C.append(
        Case(
            "aten::sqrt.out",
            "sqrt into int out",
            [randn(3)],
            [Out(I32)],
            status=INVALID_ARGUMENT,
        )
    )
    return C


def activation_cases() -> list[Case]:
    C = []
    x = torch.cat([EDGE, randn(8) * 3])
    # exact: the sign of a zero counts (aten::relu keeps -0)
    C.append(Case("aten::relu.out", "relu f32", [x], [Out(F32, exact=True)]))
    C.append(Case("aten::relu.out", "relu int", [randint(-5, 5, 6)], [Out(I32)]))
    C.append(
        Case("aten::relu.out", "relu cl", [Lay(randn(2, 3, 2, 2), CL)], [Out(F32, CL)])
    )
    C.append(Case("aten::gelu.out", "gelu none", [x, "none"], [Out(F32)]))
    C.append(Case("aten::gelu.out", "gelu tanh", [x, "tanh"], [Out(F32)]))
    C.append(
        Case("aten::gelu.out", "gelu f16", [randn(6, dtype=F16), "none"], [Out(F16)])
    )
    C.append(Case("aten::hardtanh.out", "hardtanh", [x, -1.0, 2.0], [Out(F32)]))
    C.append(
        Case(
            "aten::hardtanh.out", "hardtanh int", [randint(-9, 9, 6), -2, 3], [Out(I32)]
        )
    )
    C.append(Case("aten::clamp.out", "clamp min/max", [x, -0.5, 0.5], [Out(F32)]))
    C.append(Case("aten::clamp.out", "clamp min only", [x, 0.0, None], [Out(F32)]))
    C.append(
        Case(
            "aten::clamp.out",
            "clamp int float bound",
            [randint(-9, 9, 6), 0.5, None],
            [Out(F32)],
        )
    )
    C.append(Case("aten::clamp.out", "clamp min>max", [x, 1.0, -1.0], [Out(F32)]))
    C.append(
        Case(
            "aten::clamp.out",
            "clamp none",
            [x, None, None],
            [Out(F32)],
            status=INVALID_ARGUMENT,
        )
    )
    C.append(
        Case(
            "aten::clamp.Tensor_out",
            "clamp tensor bounds",
            [randn(3, 4), randn(4) - 1, randn(3, 1) + 1],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::clamp.Tensor_out",
            "clamp tensor max only",
            [randn(3, 4), None, randn(4)],
            [Out(F32)],
        )
    )
    C.append(Case("aten::leaky_relu.out", "leaky_relu", [x, 0.1], [Out(F32)]))
    C.append(Case("aten::elu.out", "elu", [x, 1.0, 1.0, 1.0], [Out(F32)]))
    C.append(Case("aten::elu.out", "elu params", [x, 0.5, 2.0, 1.5], [Out(F32)]))
    C.append(Case("aten::glu.out", "glu last", [randn(3, 4), -1], [Out(F32)]))
    C.append(
        Case(
            "aten::glu.out", "glu dim 1 cl", [Lay(randn(1, 4, 2, 3), CL), 1], [Out(F32)]
        )
    )
    C.append(
        Case(
            "aten::glu.out",
            "glu odd",
            [randn(3, 5), -1],
            [Out(F32)],
            status=INVALID_ARGUMENT,
        )
    )
    C.append(Case("aten::hardswish.out", "hardswish", [x], [Out(F32)]))
    C.append(Case("aten::hardsigmoid.out", "hardsigmoid", [x], [Out(F32)]))
    C.append(Case("aten::silu.out", "silu", [x], [Out(F32)]))
    return C


def compare_cases() -> list[Case]:
    C = []
    a = torch.cat([EDGE, torch.tensor([2.0, 3.0])]).reshape(2, 7)
    b = torch.tensor([1.0, -0.0, float("nan"), 3.0, 1.0, float("inf"), 7.0])
    for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
        C.append(Case(f"aten::{op}.Tensor_out", f"{op} tensor", [a, b], [Out(B)]))
        C.append(Case(f"aten::{op}.Scalar_out", f"{op} scalar", [a, 1.0], [Out(B)]))
    C.append(
        Case(
            "aten::lt.Tensor_out",
            "lt int vs float",
            [randint(-3, 3, 6), randn(6)],
            [Out(B)],
        )
    )
    C.append(
        Case("aten::eq.Scalar_out", "eq int scalar", [randint(-3, 3, 6), 1], [Out(B)])
    )
    C.append(
        Case("aten::gt.Scalar_out", "gt into f32 out", [randn(5), 0.0], [Out(F32)])
    )
    for op in ["logical_and", "logical_or", "logical_xor"]:
        C.append(Case(f"aten::{op}.out", op, [EDGE, EDGE.roll(3)], [Out(B)]))
    ia, ib = randint(-100, 100, 6), randint(-100, 100, 6)
    for op in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
        C.append(Case(f"aten::{op}.Tensor_out", f"{op} int", [ia, ib], [Out(I32)]))
        C.append(Case(f"aten::{op}.Scalar_out", f"{op} scalar", [ia, 12], [Out(I32)]))
        C.append(
            Case(
                f"aten::{op}.Tensor_out",
                f"{op} bool",
                [torch.tensor([True, True, False]), torch.tensor([True, False, False])],
                [Out(B)],
            )
        )
    sh = torch.tensor([0, 1, 3, 7, 8, 31, 40], dtype=I32)
    val = torch.tensor([1, -5, 100, -1, 3, 1, 7], dtype=I32)
    C.append(Case("aten::bitwise_left_shift.Tensor_out", "shl", [val, sh], [Out(I32)]))
    C.append(Case("aten::bitwise_right_shift.Tensor_out", "shr", [val, sh], [Out(I32)]))
    C.append(
        Case(
            "aten::bitwise_left_shift.Tensor_Scalar_out",
            "shl scalar",
            [randint(-9, 9, 4, dtype=I8), 3],
            [Out(I8)],
        )
    )
    C.append(
        Case(
            "aten::bitwise_right_shift.Tensor_Scalar_out",
            "shr scalar",
            [randint(-99, 99, 4, dtype=I64), 2],
            [Out(I64)],
        )
    )
    C.append(
        Case(
            "aten::bitwise_and.Tensor_out",
            "bitwise float",
            [randn(2), randn(2)],
            [Out(F32)],
            status=INVALID_ARGUMENT,
        )
    )
    cond = torch.tensor([[True, False, True], [False, False, True]])
    C.append(
        Case(
            "aten::where.self_out",
            "where broadcast",
            [cond, randn(2, 3), randn(3)],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::where.self_out",
            "where mixed dtype",
            [cond, randint(-5, 5, 2, 3), randn(1, 3, dtype=F64)],
            [Out(F64)],
        )
    )
    C.append(
        Case(
            "aten::where.self_out",
            "where cond broadcast",
            [torch.tensor([True, False]), randn(3, 2), randn(3, 1)],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::masked_fill.Scalar_out",
            "masked_fill attn",
            [randn(2, 4, 4), torch.ones(4, 4, dtype=B).triu(1), float("-inf")],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::masked_fill.Scalar_out",
            "masked_fill int",
            [randint(0, 9, 2, 3), torch.tensor([True, False, True]), 7],
            [Out(I32)],
        )
    )
    # Own generator: appending here leaves every later group's draws as they were.
    lg = torch.Generator().manual_seed(4321)

    def lrand(*shape):
        return torch.randn(*shape, generator=lg, dtype=torch.float64).to(F32)

    mask = torch.rand(1, 1, 5, 7, generator=lg) < 0.4
    C.append(
        Case(
            "aten::where.self_out",
            "where attention mask",
            [mask, lrand(2, 3, 5, 7), lrand(2, 3, 5, 7)],
            [Out(F32)],
        )
    )
    C.append(
        Case(
            "aten::where.self_out",
            "where int32 broadcast",
            [
                mask[0, 0],
                torch.randint(-9, 9, (3, 5, 7), generator=lg, dtype=torch.int32),
                torch.randint(-9, 9, (5, 1), generator=lg, dtype=torch.int32),
            ],
            [Out(torch.int32)],
        )
    )
    C.append(
        Case(
            "aten::logical_not.out",
            "logical_not bool mask",
            [torch.rand(2, 3, 4, 5, generator=lg) < 0.5],
            [Out(B)],
        )
    )
    # A flag per row broadcast over the last dim (decomposed attention's
    # fully-masked-row guard): rows copied whole from self, or from a
    # broadcast other. Own generator, as above.
    wg = torch.Generator().manual_seed(2718)
    row_flag = torch.rand(1, 3, 5, 1, generator=wg) < 0.5
    C.append(
        Case(
            "aten::where.self_out",
            "where row flag",
            [
                row_flag,
                torch.randn(1, 3, 5, 7, generator=wg, dtype=torch.float64).to(F32),
                torch.randn(1, 3, 5, 1, generator=wg, dtype=torch.float64).to(F32),
            ],
            [Out(F32)],
        )
    )
    return C


def fast_elementwise(g: Golden) -> None:
    """Stream 'fast' (the float32 fast paths; every expected value is from PyTorch): channels-last elementwise ops on flat rows."""
    a, bb = cl(rnd(2, 3, 4, 5)), cl(rnd(2, 3, 4, 5))
    g.out("fast_add_cl", "aten::add.out", [a, bb, 1], a + bb, out=NnOut(order=CL4))
    g.out(
        "fast_hardtanh_cl",
        "aten::hardtanh.out",
        [a, -0.5, 0.5],
        torch.nn.functional.hardtanh(a, -0.5, 0.5),
        out=NnOut(order=CL4),
    )
