"""The CI set: generated seeds (tests/fixtures/difftest/ci_seeds.txt) plus the
hand-written specs below, chosen so that together they hit every fusion
pattern the grammar's programs can reach, every XNNPACK node type and every
grammar element (coverage.py checks it and fails otherwise). Committed
exporter fixtures cover the rows only torchao's flows reach (EXTRA_FIXTURES).
"""

from __future__ import annotations

from typing import Any

Spec = dict[str, Any]


def _lin(out: int, bias: bool = True) -> dict[str, Any]:
    return {"op": "linear", "out": out, "bias": bias}


def _conv(
    out: int,
    k: int = 3,
    stride: int = 1,
    pad: int = 1,
    groups: int = 1,
    dil: int = 1,
    nd: int = 2,
) -> dict[str, Any]:
    return {
        "op": "conv",
        "nd": nd,
        "out": out,
        "k": k,
        "stride": stride,
        "padding": pad,
        "dilation": dil,
        "groups": groups,
        "bias": True,
    }


def _convt(
    out: int,
    k: int = 3,
    stride: int = 1,
    pad: int = 1,
    out_pad: int = 0,
    groups: int = 1,
    dil: int = 1,
) -> dict[str, Any]:
    return {
        **_conv(out, k, stride, pad, groups, dil),
        "transposed": True,
        "output_padding": out_pad,
    }


def _act(fn: str, **kw: Any) -> dict[str, Any]:
    return {"op": "act", "fn": fn, **kw}


def _un(fn: str) -> dict[str, Any]:
    return {"op": "unary", "fn": fn}


BN1 = {"op": "bn", "nd": 1, "affine": True}
BN2 = {"op": "bn", "nd": 2, "affine": True}
R6 = _act("hardtanh", min=0.0, max=6.0)
MAXPOOL2 = {
    "op": "pool",
    "nd": 2,
    "kind": "max",
    "k": 2,
    "stride": 2,
    "padding": 0,
    "ceil": False,
}


def _spec(seed: int, shape: list[int], layers: list[dict[str, Any]], **kw: Any) -> Spec:
    return {
        "version": 1,
        "seed": seed,
        "input": {"shape": shape, "dtype": kw.pop("dtype", "f32")},
        "layers": layers,
        **kw,
    }


CI_SPECS: list[Spec] = [
    # float fusion rows: conv / addmm (-> bn) (-> relu / hardtanh), MobileNet-like
    _spec(
        9001,
        [1, 3, 16, 16],
        [
            _conv(8, stride=2),
            BN2,
            R6,
            _conv(8, groups=8),
            BN2,
            _act("relu"),
            _conv(16, k=1, pad=0),
            BN2,
            _conv(16),
            _act("relu"),
            _conv(8),
            R6,
        ],
    ),
    _spec(
        9002,
        [4, 64],
        [
            _lin(32),
            BN1,
            _act("relu"),
            _lin(16),
            BN1,
            R6,
            _lin(24),
            BN1,
            _lin(8),
            _act("relu"),
            _lin(8),
            _act("hardtanh"),
        ],
    ),
    # linear.out kept whole (LLM-style export): linear -> relu / hardtanh, on 3-D input
    _spec(
        9003,
        [2, 5, 32],
        [_lin(48), _act("relu"), _lin(16), R6, _lin(8)],
        keep_linear=True,
    ),
    # int8 static, per channel: conv (-> relu / relu6), linear (-> relu / relu6), add (+relu), mean
    _spec(
        9004,
        [1, 4, 10, 10],
        [
            _conv(8),
            _act("relu"),
            _conv(8),
            R6,
            _conv(8),
            {"op": "residual_add", "body": [_conv(8), _act("relu")]},
            {"op": "gap"},
            {"op": "flatten"},
            _lin(12),
            _act("relu"),
            _lin(6),
            R6,
        ],
        quant="q8s",
    ),
    _spec(
        9005,
        [3, 24],
        [
            _lin(16),
            {"op": "residual_add", "body": [_lin(16)]},
            _lin(8, bias=False),
            _act("relu"),
            _lin(8, bias=False),
            R6,
            _lin(4, bias=False),
        ],
        quant="q8s",
    ),
    _spec(
        9006,
        [2, 6, 8],
        [_act("relu"), {"op": "reduce", "fn": "mean", "dim": 1, "keepdim": True}, R6],
        quant="q8s",
    ),
    # int8 static, per-tensor weights
    _spec(
        9007,
        [3, 24],
        [
            _lin(16),
            _act("relu"),
            _lin(8),
            R6,
            _lin(8),
            _lin(8, bias=False),
            _act("relu"),
            _lin(8, bias=False),
            R6,
            _lin(4, bias=False),
        ],
        quant="q8s",
        per_tensor=True,
    ),
    # int8 dynamic linears, per channel and per tensor, with and without bias
    _spec(
        9008,
        [4, 32],
        [
            _lin(24),
            _act("relu"),
            _lin(16),
            R6,
            _lin(16),
            _lin(8, bias=False),
            _act("relu"),
            _lin(8, bias=False),
            R6,
            _lin(4, bias=False),
        ],
        quant="q8d",
    ),
    _spec(
        9009,
        [4, 32],
        [
            _lin(24),
            _act("relu"),
            _lin(16),
            R6,
            _lin(16),
            _lin(8, bias=False),
            _act("relu"),
            _lin(8, bias=False),
            R6,
            _lin(4, bias=False),
        ],
        quant="q8d",
        per_tensor=True,
    ),
    # int8 static convolutions of more than 16 output channels (the 32-wide
    # VNNI tile; 16 or fewer take the 16-wide one): 24 and 40 channels (a
    # strip and a half), 3x3 and 1x1, requantised in the microkernel
    _spec(
        9125,
        [1, 8, 9, 10],
        [_conv(24), _act("relu"), _conv(40, k=1, pad=0), R6, _conv(8)],
        quant="q8s",
    ),
    # a dynamic linear whose activations (64 x 320 = 20 480 values, then
    # 64 x 288) are quantized split over the pool (q_qdq.c: from 2^14 values)
    _spec(9124, [64, 320], [_lin(288), _act("relu"), _lin(8)], quant="q8d"),
    # XNNPACK node types: elementwise, slicing, concatenations, pooling, resize
    _spec(
        9010,
        [1, 4, 8, 8],
        [
            _un("floor"),
            _un("abs"),
            _un("neg"),
            _un("sqrt"),
            _un("rsqrt"),
            _un("log"),
            _un("exp"),
            _un("sin"),
            _un("cos"),
            _un("square"),
            _un("elu"),
            _un("prelu"),
        ],
    ),
    _spec(
        9011,
        [1, 4, 8, 8],
        [
            _un("ceil"),
            {"op": "unary", "fn": "leaky_relu", "slope": 0.1},
            {"op": "binary", "fn": "sub"},
            {"op": "binary", "fn": "div"},
            {"op": "binary", "fn": "maximum"},
            {"op": "binary", "fn": "minimum"},
            {"op": "slice", "dim": 2, "start": 1, "length": 6},
            {"op": "concat", "dim": 1, "n": 3, "body": [_act("tanh")]},
            {"op": "concat", "dim": 1, "n": 4, "body": [_act("sigmoid")]},
            {"op": "concat", "dim": 1, "n": 5, "body": [_act("gelu")]},
            {"op": "concat", "dim": 1, "n": 2, "body": [_act("hardswish")]},
            {"op": "upsample", "scale": 2, "mode": "bilinear", "align_corners": False},
        ],
    ),
    _spec(
        9012,
        [2, 3, 12, 12],
        [
            {"op": "pad", "pad": [1, 1, 2, 0], "mode": "constant", "value": 0.5},
            MAXPOOL2,
            {
                "op": "pool",
                "nd": 2,
                "kind": "avg",
                "k": 3,
                "stride": 1,
                "padding": 1,
                "ceil": False,
                "count_include_pad": True,
            },
            {
                "op": "conv",
                "nd": 2,
                "out": 4,
                "k": 2,
                "stride": 2,
                "padding": 0,
                "dilation": 1,
                "groups": 1,
                "bias": True,
                "transposed": True,
                "output_padding": 0,
            },
            {"op": "permute", "perm": [0, 2, 3, 1]},
            _lin(6),
            {"op": "softmax", "dim": -1, "log": False},
            {"op": "reshape", "to": [14, 84], "view": True},
            {"op": "matmul"},
        ],
    ),
    # sequences: attention, RNNs, embedding, norms, sort-like, reductions
    _spec(
        9013,
        [2, 6],
        [
            {"op": "embedding", "vocab": 50, "dim": 16},
            {"op": "layernorm", "dims": 1, "affine": True},
            {"op": "mha", "heads": 2},
            {"op": "sdpa", "heads": 4, "causal": True},
            {"op": "transpose", "dims": [1, 2]},
            {"op": "groupnorm", "groups": 4},
        ],
        dtype="i64",
    ),
    # recurrent layers unroll at export: short sequences keep the export quick
    _spec(
        9015,
        [1, 3, 6],
        [
            {
                "op": "rnn",
                "cell": "gru",
                "hidden": 8,
                "layers": 1,
                "bidirectional": False,
            },
            {
                "op": "rnn",
                "cell": "lstm",
                "hidden": 4,
                "layers": 1,
                "bidirectional": True,
            },
        ],
    ),
    _spec(
        9016,
        [2, 5, 9],
        [
            {"op": "sort", "dim": -1, "descending": True},
            {"op": "argsort", "dim": 1, "descending": False},
            {"op": "topk", "dim": -1, "k": 3, "descending": False},
            {"op": "argmax", "dim": 1, "keepdim": False},
        ],
    ),
    _spec(
        9014,
        [2, 8, 20],
        [
            _conv(8, k=3, nd=1),
            {"op": "bn", "nd": 1, "affine": True},
            _act("silu"),
            {
                "op": "conv",
                "nd": 1,
                "out": 8,
                "k": 3,
                "stride": 2,
                "padding": 0,
                "dilation": 1,
                "groups": 2,
                "bias": True,
                "transposed": True,
                "output_padding": 1,
            },
            {"op": "pool", "nd": 1, "kind": "adaptive_avg", "size": 3},
            {"op": "upsample", "scale": 2, "mode": "nearest"},
            {
                "op": "split",
                "dim": 1,
                "first": 4,
                "merge": "add",
                "chunk": True,
                "body": [_act("relu")],
            },
            {
                "op": "split",
                "dim": 2,
                "first": 2,
                "merge": "cat",
                "chunk": False,
                "body": [_act("tanh")],
            },
            {
                "op": "residual_mul",
                "gate": "sigmoid",
                "body": [_act("gelu", approximate="tanh")],
            },
            {"op": "reduce", "fn": "sum", "dim": 2, "keepdim": False},
            _act("relu6"),
        ],
    ),
]

# Rows the planner hides: when a chain's input is dead at the chain's end,
# ExecuTorch's memory plan may put the result in the input's bytes, and a
# fused call that would overwrite what it reads is not made (the unfused
# chain runs). A residual keeps the input alive, so these chains fuse.
CI_SPECS += [
    _spec(
        9101,
        [4, 16],
        [
            {"op": "residual_add", "body": [_lin(16), BN1, R6]},
            {"op": "residual_add", "body": [_lin(16), BN1, _act("hardtanh")]},
        ],
    ),
    _spec(
        9102,
        [1, 8, 8, 8],
        [
            {"op": "residual_add", "body": [_conv(8), R6]},
            {"op": "residual_add", "body": [_conv(8), _act("hardtanh")]},
        ],
    ),
    _spec(
        9103,
        [2, 5, 16],
        [
            {"op": "residual_add", "body": [_lin(16), _act("relu")]},
            {"op": "residual_add", "body": [_lin(16), R6]},
        ],
        keep_linear=True,
    ),
    # int8 add -> relu with the chain's operand first and second
    _spec(
        9104,
        [3, 16],
        [
            {"op": "residual_add", "body": [_lin(16)]},
            _act("relu"),
            {"op": "residual_add", "swap": True, "body": [_lin(16)]},
            _act("relu"),
            _lin(8),
        ],
        quant="q8s",
    ),
    # XNNPACK's average pooling (the padded one above stays outside the delegate)
    _spec(
        9106,
        [1, 4, 8, 8],
        [
            {
                "op": "pool",
                "nd": 2,
                "kind": "avg",
                "k": 2,
                "stride": 2,
                "padding": 0,
                "ceil": False,
                "count_include_pad": False,
            }
        ],
    ),
    # ten rows: the f32 GEMM's 6-row kernel and its 4-row tail kernel
    _spec(9105, [10, 32], [_lin(24), _act("gelu"), _lin(8)]),
    # the direct small-channel convolution (pterun_compute_f32_conv2d_nchw):
    # at most 4 input channels and at least 16 output columns, with its fused
    # activations and a stride-2 one
    _spec(9115, [1, 3, 20, 24], [_conv(8), BN2, R6, _conv(4, stride=2), _act("relu")]),
    # a 1-channel stem (the GEMM, not depthwise planes), then depthwise
    # convolutions on planes narrower than 16 columns: the NHWC route
    # through scratch (kernels/portable/conv/depthwise.c), strides 1 and 2
    _spec(
        9116,
        [1, 1, 25, 10],
        [
            _conv(16, k=4, stride=2),
            _act("relu"),
            _conv(16, groups=16),
            BN2,
            _act("relu"),
            _conv(16, groups=16, stride=2),
        ],
    ),
    # a depthwise-separable chain on narrow planes: the layout pass
    # (src/optimize/method_layout.c) makes its intermediates channels-last
    # (a batch of 2; the 3-channel stem writes its output by window rows):
    # depthwise convolutions NCHW -> NHWC, NHWC -> NHWC, the 1x1 ones as one
    # GEMM over the pixels (batch norms folded, one without a bias), and a
    # mean reading NHWC
    _spec(
        9119,
        [2, 3, 18, 10],
        [
            _conv(16, stride=2),
            _act("relu"),
            _conv(16, groups=16),
            BN2,
            R6,
            _conv(24, k=1, pad=0),
            BN2,
            _act("relu"),
            _conv(24, groups=24),
            BN2,
            _act("relu"),
            {**_conv(32, k=1, pad=0), "bias": False},
            BN2,
            R6,
            {"op": "reduce", "fn": "mean", "dim": [2, 3], "keepdim": False},
        ],
    ),
    # inverted residual blocks on narrow planes: the layout pass joins the
    # residual add, the unfused activation and the 1x1 convolutions' inputs
    # and outputs into one channels-last group (two flat adds over NHWC);
    # a dilated 3-channel stem writes its channels-last output by window rows
    _spec(
        9120,
        [1, 3, 9, 7],
        [
            _conv(8, pad=2, dil=2),
            _conv(8, groups=8),
            BN2,
            {
                "op": "residual_add",
                "body": [
                    _conv(16, k=1, pad=0),
                    BN2,
                    R6,
                    _conv(16, groups=16),
                    BN2,
                    R6,
                    {**_conv(8, k=1, pad=0), "bias": False},
                    BN2,
                ],
            },
            _act("relu"),
            {
                "op": "residual_add",
                "body": [_conv(8, groups=8), BN2, _conv(8, k=1, pad=0)],
            },
            _conv(8, groups=8, stride=2),
        ],
    ),
    # channels-last 1x1 convolutions with folded batch norms on 2x2 and 1x1
    # planes: W^T is held only packed and scaled; one pixel (M = 1) takes
    # another microkernel, which repacks it from the unfolded weight
    # (kernels/portable/conv/pointwise_cl.c: pk_pack_b_scaled)
    _spec(
        9121,
        [1, 8, 4, 4],
        [
            _conv(8, groups=8, stride=2),
            BN2,
            _act("relu"),
            _conv(16, k=1, pad=0),
            BN2,
            _act("relu"),
            _conv(16, groups=16, stride=2),
            BN2,
            R6,
            _conv(24, k=1, pad=0),
            BN2,
            _act("relu"),
            {"op": "reduce", "fn": "mean", "dim": [2, 3], "keepdim": True},
        ],
    ),
    # a ResNet-like chain: one-group convolutions run channels-last on the
    # indirect GEMM (kernels/portable/conv/kxk_cl.c, the layout pass's "k"
    # shape): the 3-channel stem over a channels-last copy of its image, a
    # 2x2 max pool over channels-last rows (its indices keep NCHW), 3x3
    # layers of 16 channels (the 12x16 tile) in a residual block, a stride-2
    # layer of 40 (12x32 strips, 8 columns stored in the last; 2 x 25 pixels:
    # the last tile on the tail sibling), a dilated one, a residual of 24,
    # batch norms folded, a mean reading NHWC
    _spec(
        9122,
        [2, 3, 20, 20],
        [
            _conv(16),
            BN2,
            _act("relu"),
            MAXPOOL2,
            {
                "op": "residual_add",
                "body": [_conv(16), BN2, _act("relu"), _conv(16), BN2],
            },
            _act("relu"),
            _conv(40, stride=2),
            BN2,
            R6,
            _conv(24, pad=2, dil=2),
            {"op": "residual_add", "body": [_conv(24), BN2, _act("relu")]},
            {"op": "reduce", "fn": "mean", "dim": [2, 3], "keepdim": False},
        ],
    ),
    # a torchvision-style ResNet stem: a 3x3 / stride-2 / padding-1 max pool
    # (windows cut by the padding) between channels-last convolutions, run
    # on the channels-last rows of pool.c (pterun_compute_f32_max_rows), the
    # 16- and 32-channel 3x3 layers on their kept pointer tables (kxk_cl.c),
    # residual batch norms whose result lies over the convolution's input
    # (results in bytes of their own)
    _spec(
        9126,
        [2, 3, 21, 19],
        [
            _conv(16),
            BN2,
            _act("relu"),
            {
                "op": "pool",
                "nd": 2,
                "kind": "max",
                "k": 3,
                "stride": 2,
                "padding": 1,
                "ceil": False,
            },
            {
                "op": "residual_add",
                "body": [_conv(16), BN2, _act("relu"), _conv(16), BN2],
            },
            _act("relu"),
            _conv(32, stride=2),
            BN2,
            _act("relu"),
            {"op": "residual_add", "body": [_conv(32), BN2]},
            {"op": "reduce", "fn": "mean", "dim": [2, 3], "keepdim": False},
        ],
    ),
    # a depthwise-separable chain on wide planes (18-36 columns) with 32
    # channels and more (src/optimize/method_layout.c, LAYOUT_WIDE_MIN_C):
    # the 3-channel stem keeps its output NCHW, so the first depthwise
    # convolution reads NCHW and writes NHWC; a stride-2 one NHWC -> NHWC;
    # the last depthwise one writes NCHW because its 1x1 projects to 16
    # channels (fewer than 32 keep a group NCHW). Then a stride-2 depthwise
    # convolution reading that NCHW group, whose output group would go
    # channels-last: kept NCHW (its input's transpose would cost more)
    _spec(
        9123,
        [1, 3, 40, 72],
        [
            _conv(32, stride=2),
            R6,
            _conv(32, groups=32),
            BN2,
            R6,
            _conv(64, k=1, pad=0),
            BN2,
            _act("relu"),
            _conv(64, groups=64, stride=2),
            BN2,
            _act("relu"),
            _conv(64, k=1, pad=0),
            _conv(64, groups=64),
            R6,
            {**_conv(16, k=1, pad=0), "bias": False},
            BN2,
            _conv(32, k=1, pad=0),
            _conv(32, groups=32, stride=2),
            _conv(48, k=1, pad=0),
            _conv(48, groups=48),
            {"op": "reduce", "fn": "mean", "dim": [2, 3], "keepdim": False},
        ],
    ),
    # shared weights (spec "share": equal constants, stored once by the
    # exporter): a tied embedding / head (the embedding reads the bytes the
    # head's transpose packs), and one Linear five times, whose transposes
    # outrun the fold budget (twice the file) and run at execute. The file
    # bytes under a packed transpose must not go back while another value
    # reads them (the CLI gives packed bytes back): bench/vit was wrong
    _spec(
        9117,
        [1, 8],
        [
            {"op": "embedding", "vocab": 300, "dim": 32},
            _lin(32),
            _act("relu"),
            _lin(32),
            _lin(300, bias=False),
        ],
        dtype="i64",
        share=True,
    ),
    _spec(
        9118,
        [2, 64],
        [_lin(64), _act("relu"), _lin(64), _act("relu"), _lin(64), _lin(64), _lin(64)],
        share=True,
    ),
    # int8 static depthwise convolutions (the qdwconv family: strides 1 and
    # 2, a channel multiplier, dilation) between 1x1 ones, relu6 after them
    # (PT2E's separately quantized hardtanh: the clamp form of hardtanh_q8);
    # the unit-stride one on 306 outputs runs the NCHW loop, the others
    # channels-last (kernels/quantized/q_int8.c, dw_nhwc_pays)
    _spec(
        9114,
        [1, 6, 18, 17],
        [
            _conv(12, k=1, pad=0),
            R6,
            _conv(12, groups=12),
            R6,
            _conv(24, groups=12, stride=2),
            _act("relu"),
            _conv(24, k=5, pad=4, groups=24, dil=2),
            _conv(8, k=1, pad=0),
            {"op": "gap"},
            {"op": "flatten"},
            _lin(5),
        ],
        quant="q8s",
    ),
    # aten::linear on few rows with enough output columns that the row-dot
    # path splits them over the pool (kernels/portable/linalg/linear.c:
    # 64 KiB of weight per task), an uneven last task
    _spec(9107, [2, 64], [_lin(1100), _act("relu"), _lin(8)], keep_linear=True),
    # dynamically quantized int8 convolutions (the XNNPACK backend's qd8 Conv2d:
    # per-image scale and zero point, padded im2col, groups, a 1x1, a batch of 2)
    _spec(
        9108,
        [2, 4, 11, 10],
        [
            _conv(8, stride=2),
            _act("relu"),
            _conv(8, k=1, pad=0, groups=2),
            _conv(6, k=3, pad=2, dil=2),
        ],
        quant="q8d",
    ),
    # int8 static 1-D convolutions: the fused int8 conv2d declines them at load
    # and they run unfused (campaign seed 1320 failed to load before)
    _spec(
        9109,
        [2, 10, 8],
        [_conv(4, k=5, pad=2, nd=1), _act("relu"), _conv(3, k=3, pad=1, nd=1)],
        quant="q8s",
    ),
    # int8 static transposed convolutions, per-channel weights (the XNNPACK
    # backend's qs8 ConvTranspose2d: int8 GEMM over the taps each output
    # pixel reaches): strides 1, 2 and 3, padding, output padding, fused
    # relus, a 1x1, dilation, a batch of 2
    _spec(
        9110,
        [2, 4, 7, 6],
        [
            _convt(8),
            _act("relu"),
            _convt(6, k=4, stride=3, pad=2, out_pad=2, dil=2),
            _convt(5, k=1, pad=0),
            _convt(4, stride=2, out_pad=1),
            _act("relu"),
        ],
        quant="q8s",
    ),
    # the same per tensor, where XNNPACK also takes groups (per-channel
    # weights with groups stay outside the delegate)
    _spec(
        9111,
        [2, 4, 6, 5],
        [
            _convt(8, stride=2, out_pad=1, groups=2),
            _act("relu"),
            _convt(8, k=2, stride=2, pad=0, groups=4),
            _convt(6, k=1, pad=0),
            _convt(3, k=3, stride=1, pad=0),
        ],
        quant="q8s",
        per_tensor=True,
    ),
    # dynamically quantized transposed convolutions (qd8: per-image scale and
    # zero point), groups, a batch of 2
    _spec(
        9112,
        [2, 4, 6, 5],
        [
            _convt(8, stride=2, out_pad=1),
            _act("relu"),
            _convt(6, k=2, stride=2, pad=0, groups=2),
            _convt(4, k=3, pad=0),
        ],
        quant="q8d",
    ),
    # a BatchNorm1d whose result PT2E quantizes but whose input it does not
    # (after a split): the partitioner's DepthwiseConv2d on fp32 with a qint8
    # output and a reshape of that qint8 value into an fp32 one (campaign
    # seed 1437; ExecuTorch's runtime refuses the program)
    _spec(
        9113,
        [3, 4, 16],
        [
            {
                "op": "split",
                "dim": 1,
                "first": 2,
                "merge": "add",
                "chunk": False,
                "body": [BN1],
            }
        ],
        quant="q8s",
    ),
]

# Committed exporter fixtures run (fused, --verbose) for the fusion rows only
# torchao's / ExecuTorch's LLM flows emit, and for the XNNPACK backend's
# 4-bit blockwise fully-connected nodes (`8da4w -X`: the qb4w microkernels);
# compared with their committed references at the fixture index's
# tolerance. (index file, fixture name)
EXTRA_FIXTURES = (
    ("quantized_cases.txt", "quantized_8da4w"),
    ("quantized_cases.txt", "quantized_8da4w_fused"),
    ("quantized_cases.txt", "quantized_8da4w_pt"),
    ("quantized_cases.txt", "quantized_8da8w"),
    ("quantized_cases.txt", "quantized_staticops"),
    ("quantized_cases.txt", "quantized_addrelu"),
    ("xnnpack_cases.txt", "llm_8da4w"),
)


def run_extras(cli: Any) -> list[dict[str, Any]]:
    """Each EXTRA_FIXTURES program in every ISA mask, fused, one thread:
    coverage facts, and a failure when an output leaves the fixture's
    tolerance against its committed reference."""
    from pathlib import Path

    import numpy as np

    from . import check, runner

    root = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
    rows = {}
    for index in sorted({i for i, _ in EXTRA_FIXTURES}):
        for line in (root / index).read_text().splitlines():
            f = line.split("#", 1)[0].split()
            if len(f) >= 8:
                rows[(index, f[0])] = f
    out = []
    for index, name in EXTRA_FIXTURES:
        f = rows[(index, name)]
        d, method, n_in, n_out, rtol, atol = (
            root / f[1],
            f[2],
            int(f[3]),
            int(f[4]),
            float(f[5]),
            float(f[6]),
        )
        # quantized index: column 9 names the reference (default et); the
        # XNNPACK index's column 9 is the kind, its reference ExecuTorch's
        ref = f[8] if len(f) == 9 and index == "quantized_cases.txt" else "et"
        v = check.Verdict(
            {"seed": name, "input": {"shape": [], "dtype": "f32"}, "layers": []}
        )
        inputs = [d / f"{method}_input_{k}.npy" for k in range(n_in)]
        import tempfile

        for isa in runner.ISAS:
            m = runner.Mode(True, True, 1, isa)
            with tempfile.TemporaryDirectory() as td:
                r = runner.run_cli(
                    Path(cli),
                    d / "model.pte",
                    inputs,
                    m,
                    Path(td),
                    n_out,
                    ("--quiet", "--verbose"),
                )
            v.runs += 1
            check.parse_log(v, r.log)
            if r.outputs is None:
                v.failures.append(check.Failure("error", name, m.name, r.error or "?"))
                continue
            for k, got in enumerate(r.outputs):
                want = np.load(d / f"{method}_{ref}_{k}.npy")
                if got.shape != want.shape or not np.all(
                    np.abs(got.astype(np.float64) - want)
                    <= atol + rtol * np.abs(want.astype(np.float64))
                ):
                    v.failures.append(
                        check.Failure(
                            "mismatch",
                            name,
                            m.name,
                            f"output {k} beyond rtol {rtol} atol {atol}",
                        )
                    )
        out.append(
            {
                "spec": v.spec,
                "failures": [x.as_dict() for x in v.failures],
                "runs": v.runs,
                "programs": 1,
                "fusions": sorted(v.fusions),
                "fusion_total": v.fusion_total,
                "variants": sorted(v.variants),
                "variants_available": sorted(v.variants_available),
                "xnn_nodes": sorted(v.xnn_nodes),
                "layouts": sorted(v.layouts),
                "cells": sorted(v.cells),
                "kinds": [],
            }
        )
    return out
