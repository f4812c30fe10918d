"""Golden cases of the portable kernels in kernels/portable/conv/."""

from __future__ import annotations

import torch
from golden.format import Bools
from golden.nn import (
    CL4,
    INVALID_ARGUMENT,
    NOT_SUPPORTED,
    Gen,
    Golden,
    Out,
    RetList,
    cl,
    rnd,
)

A = torch.ops.aten


def conv(g: Golden) -> None:
    conv = torch.ops.aten.convolution
    OP = "aten::convolution.out"

    def case(
        name,
        x,
        w,
        b,
        stride,
        pad,
        dil,
        tr,
        opad,
        groups,
        xo=None,
        wo=None,
        oo=None,
        dt=torch.float32,
    ):
        x, w = x.to(dt), w.to(dt)
        b = b.to(dt) if b is not None else None
        ref = conv(
            x.double(),
            w.double(),
            b.double() if b is not None else None,
            stride,
            pad,
            dil,
            tr,
            opad,
            groups,
        ).to(dt)
        at, rt = {
            torch.float32: (1e-4, 1e-4),
            torch.float64: (1e-10, 1e-10),
            torch.float16: (2e-2, 1e-2),
            torch.bfloat16: (1e-1, 2e-2),
        }.get(dt, (0, 0))
        xa = x if xo is None else (x.contiguous(memory_format=xo), None)
        xa = xa if not isinstance(xa, tuple) else xa[0]
        wa = w if wo is None else w.contiguous(memory_format=wo)
        g.out(
            name,
            OP,
            [xa, wa, b, stride, pad, dil, tr, opad, groups],
            ref,
            out=Out(order=oo),
            atol=at,
            rtol=rt,
        )

    CLF = torch.channels_last
    case(
        "basic",
        rnd(2, 3, 7, 6),
        rnd(4, 3, 3, 3),
        rnd(4),
        [1, 1],
        [0, 0],
        [1, 1],
        False,
        [0, 0],
        1,
    )
    case(
        "pad_stride",
        rnd(1, 3, 9, 8),
        rnd(5, 3, 3, 2),
        rnd(5),
        [2, 3],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
    )
    case(
        "dilation",
        rnd(1, 2, 9, 9),
        rnd(3, 2, 3, 3),
        None,
        [1, 1],
        [2, 1],
        [2, 3],
        False,
        [0, 0],
        1,
    )
    case(
        "groups",
        rnd(2, 6, 5, 5),
        rnd(4, 3, 3, 3),
        rnd(4),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        2,
    )
    case(
        "depthwise",
        rnd(1, 4, 6, 6),
        rnd(4, 1, 3, 3),
        rnd(4),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        4,
    )
    case(
        "depthwise_mult",
        rnd(1, 2, 6, 5),
        rnd(6, 1, 3, 3),
        rnd(6),
        [2, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        2,
    )
    case(
        "pointwise",
        rnd(2, 8, 4, 4),
        rnd(5, 8, 1, 1),
        rnd(5),
        [1, 1],
        [0, 0],
        [1, 1],
        False,
        [0, 0],
        1,
    )
    case(
        "cl_in",
        rnd(2, 3, 7, 6),
        rnd(4, 3, 3, 3),
        rnd(4),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        xo=CLF,
    )
    case(
        "cl_all",
        rnd(2, 3, 7, 6),
        rnd(4, 3, 3, 3),
        rnd(4),
        [2, 2],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        xo=CLF,
        wo=CLF,
        oo=CL4,
    )
    case(
        "cl_depthwise",
        rnd(1, 4, 6, 6),
        rnd(4, 1, 3, 3),
        rnd(4),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        4,
        xo=CLF,
        wo=CLF,
        oo=CL4,
    )
    # 40*3*3 = 360 reduction rows cross the 256-row im2col chunk; generated inputs
    x, w = Gen([1, 40, 6, 6], 7), Gen([6, 40, 3, 3], 8)
    b = rnd(6)
    g.out(
        "big_reduction",
        OP,
        [x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1],
        conv(
            x.t.double(),
            w.t.double(),
            b.double(),
            [1, 1],
            [1, 1],
            [1, 1],
            False,
            [0, 0],
            1,
        ).float(),
        atol=1e-4,
        rtol=1e-4,
    )
    case("conv1d", rnd(2, 3, 10), rnd(4, 3, 3), rnd(4), [2], [1], [1], False, [0], 1)
    case(
        "conv1d_groups", rnd(1, 4, 9), rnd(4, 2, 2), None, [1], [0], [2], False, [0], 2
    )
    case(
        "conv3d",
        rnd(1, 2, 4, 5, 4),
        rnd(3, 2, 2, 3, 2),
        rnd(3),
        [1, 2, 1],
        [1, 0, 1],
        [1, 1, 1],
        False,
        [0, 0, 0],
        1,
    )
    case(
        "f64",
        rnd(1, 3, 5, 5),
        rnd(2, 3, 3, 3),
        rnd(2),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        dt=torch.float64,
    )
    case(
        "f16",
        rnd(1, 3, 5, 5),
        rnd(2, 3, 3, 3),
        rnd(2),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        dt=torch.float16,
    )
    case(
        "bf16",
        rnd(1, 3, 5, 5),
        rnd(2, 3, 3, 3),
        rnd(2),
        [1, 1],
        [1, 1],
        [1, 1],
        False,
        [0, 0],
        1,
        dt=torch.bfloat16,
    )
    case(
        "transposed",
        rnd(1, 4, 3, 4),
        rnd(4, 3, 3, 3),
        rnd(3),
        [2, 2],
        [1, 1],
        [1, 1],
        True,
        [1, 0],
        1,
    )
    case(
        "transposed_groups",
        rnd(2, 4, 3, 3),
        rnd(4, 2, 2, 3),
        rnd(4),
        [1, 2],
        [0, 1],
        [2, 1],
        True,
        [0, 1],
        2,
    )
    case("transposed_1d", rnd(1, 2, 5), rnd(2, 3, 4), None, [3], [1], [1], True, [2], 1)
    case(
        "transposed_cl",
        rnd(1, 4, 3, 4),
        rnd(4, 3, 3, 3),
        rnd(3),
        [2, 2],
        [1, 1],
        [1, 1],
        True,
        [1, 0],
        1,
        xo=CLF,
        oo=CL4,
    )
    case(
        "scalar_params",
        rnd(1, 2, 6, 6),
        rnd(2, 2, 3, 3),
        rnd(2),
        [2],
        [1],
        [1],
        False,
        [0],
        1,
    )
    x, w = rnd(1, 3, 5, 5), rnd(2, 3, 3, 3)
    g.out(
        "batch0",
        OP,
        [rnd(0, 3, 5, 5), w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(0, 2, 3, 3),
    )
    g.fail(
        "bad_channels",
        OP,
        [x, rnd(2, 4, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 3, 3),
    )
    g.fail(
        "bad_groups",
        OP,
        [x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 0],
        torch.zeros(1, 2, 3, 3),
    )
    g.fail(
        "kernel_too_big",
        OP,
        [x, rnd(2, 3, 7, 7), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 1, 1),
    )
    g.fail(
        "bad_stride",
        OP,
        [x, w, None, [0, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 3, 3),
    )
    g.fail(
        "bad_bias",
        OP,
        [x, w, rnd(3), [1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 3, 3),
    )
    g.fail(
        "bad_stride_len",
        OP,
        [x, w, None, [1, 1, 1], [0, 0], [1, 1], False, [0, 0], 1],
        torch.zeros(1, 2, 3, 3),
    )


def extra_conv(g: Golden) -> None:
    """Stream 'extra' (operators added last): convolution_backward."""
    # convolution_backward (forward convolutions, 1-D/2-D/3-D, groups, stride, padding, dilation)
    for name, x, w, stride, pad, dil, groups in (
        ("2d", rnd(2, 4, 6, 5), rnd(6, 4, 3, 3), [1, 1], [1, 1], [1, 1], 1),
        ("2d_stride_dil", rnd(1, 4, 9, 8), rnd(4, 2, 3, 2), [2, 1], [1, 0], [2, 2], 2),
        ("depthwise", rnd(1, 3, 5, 5), rnd(6, 1, 3, 3), [2, 2], [1, 1], [1, 1], 3),
        ("1d", rnd(2, 3, 10), rnd(4, 3, 3), [2], [1], [1], 1),
        (
            "3d",
            rnd(1, 2, 4, 4, 3),
            rnd(2, 2, 2, 2, 2),
            [1, 1, 1],
            [0, 1, 0],
            [1, 1, 1],
            1,
        ),
    ):
        out = A.convolution(
            x, w, None, stride, pad, dil, False, [0] * len(stride), groups
        )
        go = rnd(*out.shape)
        res = A.convolution_backward(
            go,
            x,
            w,
            [w.shape[0]],
            stride,
            pad,
            dil,
            False,
            [0] * len(stride),
            groups,
            [True, True, True],
        )
        g.outs(
            "conv_bwd_" + name,
            "aten::convolution_backward.out",
            [
                go,
                x,
                w,
                [w.shape[0]],
                stride,
                pad,
                dil,
                False,
                [0] * len(stride),
                groups,
                Bools([True, True, True]),
            ],
            list(res),
            atol=1e-4,
            rtol=1e-5,
        )
    x, w = rnd(1, 2, 5, 5), rnd(3, 2, 3, 3)
    go = rnd(1, 3, 3, 3)
    res = A.convolution_backward(
        go, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, False, False]
    )
    g.case(
        "conv_bwd_input_only",
        "aten::convolution_backward.out",
        [
            go,
            x,
            w,
            None,
            [1, 1],
            [0, 0],
            [1, 1],
            False,
            [0, 0],
            1,
            Bools([True, False, False]),
            Out(torch.float32, sizes=[1, 2, 5, 5]),
            Out(torch.float32, sizes=[0], cap=1),
            Out(torch.float32, sizes=[0], cap=1),
            RetList([11, 12, 13]),
        ],
        [(11, -1, res[0])],
        atol=1e-4,
        rtol=1e-5,
    )
    xc, goc = cl(rnd(1, 4, 5, 5)), cl(rnd(1, 4, 5, 5))
    wc = rnd(4, 4, 3, 3)
    res = A.convolution_backward(
        goc, xc, wc, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True]
    )
    g.outs(
        "conv_bwd_cl",
        "aten::convolution_backward.out",
        [
            goc,
            xc,
            wc,
            [4],
            [1, 1],
            [1, 1],
            [1, 1],
            False,
            [0, 0],
            1,
            Bools([True, True, True]),
        ],
        list(res),
        outs=[Out(order=CL4), Out(), Out()],
        atol=1e-4,
        rtol=1e-5,
    )
    xd, wd = rnd(1, 2, 5, 5, dtype=torch.float64), rnd(3, 2, 3, 3, dtype=torch.float64)
    god = rnd(1, 3, 3, 3, dtype=torch.float64)
    res = A.convolution_backward(
        god, xd, wd, [3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True]
    )
    g.outs(
        "conv_bwd_f64",
        "aten::convolution_backward.out",
        [
            god,
            xd,
            wd,
            [3],
            [1, 1],
            [0, 0],
            [1, 1],
            False,
            [0, 0],
            1,
            Bools([True, True, True]),
        ],
        list(res),
        atol=1e-12,
        rtol=1e-12,
    )
    g.case(
        "conv_bwd_transposed",
        "aten::convolution_backward.out",
        [
            go,
            x,
            w,
            None,
            [1, 1],
            [0, 0],
            [1, 1],
            True,
            [0, 0],
            1,
            Bools([True, True, True]),
            Out(torch.float32, sizes=[1, 2, 5, 5]),
            Out(torch.float32, sizes=[3, 2, 3, 3]),
            Out(torch.float32, sizes=[3]),
            RetList([11, 12, 13]),
        ],
        [],
        status=NOT_SUPPORTED,
    )
    g.case(
        "conv_bwd_bad_grad",
        "aten::convolution_backward.out",
        [
            rnd(1, 3, 4, 4),
            x,
            w,
            None,
            [1, 1],
            [0, 0],
            [1, 1],
            False,
            [0, 0],
            1,
            Bools([True, True, True]),
            Out(torch.float32, sizes=[1, 2, 5, 5]),
            Out(torch.float32, sizes=[3, 2, 3, 3]),
            Out(torch.float32, sizes=[3]),
            RetList([11, 12, 13]),
        ],
        [],
        status=INVALID_ARGUMENT,
    )


def extra_hostile_conv(g: Golden) -> None:
    """Stream 'extra' (operators added last): hostile convolution padding/dilation (fuzzing)."""
    xc, wc = rnd(1, 1, 4, 4), rnd(1, 1, 3, 3)
    for name, pad, dil in (("pad", [2**62, 0], [1, 1]), ("dil", [0, 0], [2**62, 1])):
        g.fail(
            "hostile_conv_" + name,
            "aten::convolution.out",
            [xc, wc, None, [1, 1], pad, dil, False, [0, 0], 1],
            xc,
        )
    g.carry["hostile_input"] = xc


def fast_conv(g: Golden) -> None:
    """Stream 'fast' (the float32 fast paths; every expected value is from PyTorch): direct depthwise (NCHW, NHWC, stride, dilation, padding, channel multiplier) and 1x1 convolution without im2col."""
    A_ = torch.ops.aten
    for name, xin, w, b, stride, pad, dil, groups, order in (
        (
            "dw_nchw",
            Gen([1, 6, 11, 9], 13),
            Gen([6, 1, 3, 3], 14),
            Gen([6], 15),
            [1, 1],
            [1, 1],
            [1, 1],
            6,
            None,
        ),
        (
            "dw_nchw_s2_dil",
            Gen([1, 4, 12, 13], 16),
            Gen([8, 1, 3, 2], 17),
            None,
            [2, 2],
            [2, 1],
            [2, 3],
            4,
            None,
        ),
        (
            "dw_nhwc",
            Gen([1, 8, 9, 10], 18),
            Gen([8, 1, 3, 3], 19),
            Gen([8], 20),
            [2, 1],
            [1, 1],
            [1, 1],
            8,
            CL4,
        ),
        (
            "dw_nhwc_5x5",
            Gen([1, 12, 7, 7], 21),
            Gen([12, 1, 5, 5], 22),
            None,
            [1, 1],
            [2, 2],
            [1, 1],
            12,
            CL4,
        ),
        (
            "pointwise_nchw",
            Gen([2, 8, 5, 6], 23),
            Gen([12, 4, 1, 1], 24),
            Gen([12], 25),
            [1, 1],
            [0, 0],
            [1, 1],
            2,
            None,
        ),
        (
            "pointwise_nhwc",
            Gen([1, 8, 5, 6], 26),
            Gen([6, 8, 1, 1], 27),
            None,
            [1, 1],
            [0, 0],
            [1, 1],
            1,
            CL4,
        ),
    ):
        xt = xin.t if order is None else cl(xin.t)
        res = A_.convolution(
            xt, w.t, b.t if b else None, stride, pad, dil, False, [0, 0], groups
        )
        xa = xin if order is None else (xt, CL4)
        g.out(
            "fast_conv_" + name,
            "aten::convolution.out",
            [xa, w, b, stride, pad, dil, False, [0, 0], groups],
            res,
            out=Out(order=order),
            atol=1e-5,
            rtol=1e-5,
        )
