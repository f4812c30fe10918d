"""The case table of ``tools/export_fixtures.py``: what each fixture case
exports (its methods, example and saved inputs, dynamic shapes) and the
tolerances of its index rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from fixture_models import (
    Accumulator,
    CondModel,
    ConvBnEdges,
    DynSeqEncoder,
    Elementwise,
    EncodeOnly,
    EncoderDecoder,
    ExternalMlp,
    LinearBn,
    LinearBnStack,
    GruModel,
    LinearNdRelu,
    LstmModel,
    Mlp,
    MobileNetish,
    MobileNetishBn,
    NormRows,
    ResNetish,
    SeqMlp,
    SmallCnn,
    SymOps,
    TinyGpt,
    TwoCondModel,
    fold_bn,
)
from torch import nn
from torch.export import Dim
from torch.nn.utils.fusion import fuse_conv_bn_eval

DynamicShapes = dict[str, Any] | tuple[Any, ...] | None


@dataclass
class MethodSpec:
    """One method of a case: module to export and the inputs to use."""

    module: nn.Module
    example_inputs: tuple[torch.Tensor, ...]
    inputs: tuple[torch.Tensor, ...]  # saved as the fixture inputs
    dynamic_shapes: DynamicShapes = None


@dataclass
class Case:
    """A fixture case: one program with one or more methods."""

    name: str
    build: Callable[[], dict[str, MethodSpec]]
    rtol: float
    atol: float
    note: str
    external_constants: bool = False
    # Mutable buffers whose initial value must be serialized (name patterns
    # for InitializedMutableBufferPass); without it the exporter stores only
    # shape and dtype and the buffer starts with undefined contents.
    init_buffers: list[str] = field(default_factory=list)
    # Which outputs pterun must match: "et" (ExecuTorch's runtime) or "eager"
    # where ExecuTorch's runtime is known to be wrong (the case's note says why).
    reference: str = "et"


def _rand(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float32)


def _build_elementwise() -> dict[str, MethodSpec]:
    m = Elementwise().eval()
    x, y = _rand(2, 3, 4), _rand(2, 3, 4)
    return {"forward": MethodSpec(m, (x, y), (x, y))}


def _build_mlp() -> dict[str, MethodSpec]:
    m = Mlp().eval()
    x = _rand(2, 16)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_cnn() -> dict[str, MethodSpec]:
    m = SmallCnn().eval()
    x = _rand(1, 3, 16, 16)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_cnn_channels_last() -> dict[str, MethodSpec]:
    m = SmallCnn().eval()
    # ExecuTorch 1.5.1's portable batch-norm kernel rejects non-contiguous
    # dim orders ("Check failed (is_contiguous_dim_order(...))", error 0x12),
    # so its runtime cannot produce reference outputs for an unfused BN in
    # channels_last.  Fold BN into conv1 (same function, eval mode) and keep
    # every other layer.
    m.conv1 = fuse_conv_bn_eval(m.conv1, m.bn)
    m.bn = nn.Identity()  # type: ignore[assignment]
    m = m.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    # The depthwise weight is [8, 1, 3, 3]; channels_last strides for it are
    # (9, 1, 3, 1), which the exporter's stable stride sort turns into
    # dim_order [0, 2, 1, 3] - neither contiguous nor channels_last - and
    # ExecuTorch's own convolution kernel rejects that (error 0x12).  Keep
    # that one weight in standard strides (9, 9, 3, 1), i.e. [0, 1, 2, 3];
    # the bytes are the same. (.contiguous() would be a no-op here.)
    with torch.no_grad():
        m.dw.weight = nn.Parameter(
            m.dw.weight.clone(memory_format=torch.contiguous_format)
        )
    x = _rand(1, 3, 16, 16).contiguous(memory_format=torch.channels_last)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_two_methods() -> dict[str, MethodSpec]:
    m = EncoderDecoder().eval()
    x_fwd = _rand(2, 8)
    x_enc = _rand(3, 8)
    return {
        "forward": MethodSpec(m, (x_fwd,), (x_fwd,)),
        "encode": MethodSpec(EncodeOnly(m).eval(), (x_enc,), (x_enc,)),
    }


def _build_mutable_buffer() -> dict[str, MethodSpec]:
    m = Accumulator().eval()
    x = _rand(2, 4)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_dynamic_dim() -> dict[str, MethodSpec]:
    m = SeqMlp().eval()
    seq = Dim("seq", min=1, max=16)
    example = _rand(16, 8)
    x = _rand(5, 8)  # smaller than the upper bound on purpose
    return {"forward": MethodSpec(m, (example,), (x,), ({0: seq},))}


def _build_sym_ops() -> dict[str, MethodSpec]:
    n = Dim("n", min=1, max=8)
    example = _rand(8, 8)
    x = _rand(3, 8)
    return {"forward": MethodSpec(SymOps().eval(), (example,), (x,), ({0: n},))}


def _build_external_data() -> dict[str, MethodSpec]:
    m = ExternalMlp().eval()
    x = _rand(2, 8)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_control_flow(take_true: bool) -> dict[str, MethodSpec]:
    m = CondModel().eval()
    x = _rand(2, 3).abs() + 0.1  # sum > 0
    inputs = (x,) if take_true else (-x,)
    return {"forward": MethodSpec(m, (x,), inputs)}


def _build_two_conds() -> dict[str, MethodSpec]:
    m = TwoCondModel().eval()
    x = _rand(2, 3).abs() + 0.1  # first cond true, second false
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_mobilenet() -> dict[str, MethodSpec]:
    m = MobileNetish().eval()
    # ExecuTorch's portable batch norm rejects channels_last (see
    # cnn_channels_last), so BN is folded into the convolutions; the model and
    # input are channels_last.
    fold_bn(m)
    m = m.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    # Depthwise [C,1,3,3] and 1x1 [Co,Ci,1,1] weights have ambiguous
    # channels_last strides that the exporter turns into dim orders
    # ExecuTorch's convolution rejects; keep those weights contiguous (the
    # bytes are the same).
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.Conv2d) and (
                mod.groups > 1 or mod.kernel_size == (1, 1)
            ):
                mod.weight = nn.Parameter(
                    mod.weight.clone(memory_format=torch.contiguous_format)
                )
    x = _rand(1, 3, 32, 32).contiguous(memory_format=torch.channels_last)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_mobilenet_bn() -> dict[str, MethodSpec]:
    m = MobileNetishBn().eval()
    x = _rand(1, 3, 32, 32)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_conv_bn_edges() -> dict[str, MethodSpec]:
    m = ConvBnEdges().eval()
    x = _rand(1, 4, 8, 8)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_linear_bn() -> dict[str, MethodSpec]:
    m = LinearBn().eval()
    x = _rand(4, 8)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_linear_bn_stack() -> dict[str, MethodSpec]:
    m = LinearBnStack().eval()
    x = _rand(1, 64)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_linear_nd_relu() -> dict[str, MethodSpec]:
    m = LinearNdRelu().eval()
    x = _rand(2, 10, 64)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_resnet() -> dict[str, MethodSpec]:
    m = ResNetish().eval()
    x = _rand(1, 3, 32, 32)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_gpt() -> dict[str, MethodSpec]:
    m = TinyGpt().eval()
    idx = torch.randint(0, 64, (1, 12), dtype=torch.int64)
    return {"forward": MethodSpec(m, (idx,), (idx,))}


def _build_norm_rows() -> dict[str, MethodSpec]:
    m = NormRows().eval()
    x = _rand(16, 64)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_lstm() -> dict[str, MethodSpec]:
    m = LstmModel().eval()
    x = _rand(1, 6, 8)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_gru() -> dict[str, MethodSpec]:
    m = GruModel().eval()
    x = _rand(2, 5, 8)
    return {"forward": MethodSpec(m, (x,), (x,))}


def _build_dynamic_seq() -> dict[str, MethodSpec]:
    m = DynSeqEncoder().eval()
    seq = Dim("seq", min=2, max=32)
    example = _rand(1, 32, 8)
    x = _rand(1, 11, 8)  # smaller than the upper bound on purpose
    return {"forward": MethodSpec(m, (example,), (x,), ({1: seq},))}


F32_NOTE = "float32, outputs O(1); kernel summation order may differ"

CASES: list[Case] = [
    Case("elementwise", _build_elementwise, 1e-5, 1e-6, F32_NOTE),
    Case("mlp", _build_mlp, 1e-5, 1e-6, "softmax outputs in [0,1]"),
    Case("cnn", _build_cnn, 1e-5, 1e-6, F32_NOTE),
    Case("cnn_channels_last", _build_cnn_channels_last, 1e-5, 1e-6, F32_NOTE),
    Case("two_methods", _build_two_methods, 1e-5, 1e-6, F32_NOTE),
    Case(
        "mutable_buffer",
        _build_mutable_buffer,
        1e-5,
        1e-6,
        "first call after load",
        init_buffers=["acc"],
    ),
    Case("dynamic_dim", _build_dynamic_dim, 1e-5, 1e-6, "input seq 5 of max 16"),
    Case("sym_ops", _build_sym_ops, 1e-5, 1e-6, "input n 3 of max 8"),
    Case(
        "external_data",
        _build_external_data,
        1e-5,
        1e-6,
        "weights in .ptd",
        external_constants=True,
    ),
    Case(
        "control_flow",
        lambda: _build_control_flow(True),
        1e-5,
        1e-6,
        "torch.cond, input takes the true branch",
    ),
    Case(
        "control_flow_false",
        lambda: _build_control_flow(False),
        1e-5,
        1e-6,
        "same program as control_flow, input takes the false branch",
    ),
    Case(
        "two_conds",
        _build_two_conds,
        1e-5,
        1e-6,
        "two torch.cond in sequence; ExecuTorch's runtime is wrong here",
        reference="eager",
    ),
    Case(
        "mobilenet",
        _build_mobilenet,
        1e-5,
        1e-6,
        "inverted residuals, depthwise convs, ReLU6, channels_last, BN folded",
    ),
    Case(
        "resnet",
        _build_resnet,
        1e-5,
        1e-6,
        "basic blocks with BN, maxpool 3x3/2, downsample shortcut, mean over H,W",
    ),
    Case(
        "gpt",
        _build_gpt,
        1e-5,
        1e-6,
        "int64 tokens; embeddings, causal attention, layer norm, gelu; logits O(1)",
    ),
    Case("lstm", _build_lstm, 1e-5, 1e-6, "LSTM(8,16) over 6 steps; outputs y, h, c"),
    Case(
        "gru",
        _build_gru,
        1e-5,
        1e-6,
        "GRU(8,16), 2 layers, batch 2 over 5 steps; outputs y, h",
    ),
    Case(
        "dynamic_seq",
        _build_dynamic_seq,
        1e-5,
        1e-6,
        "attention encoder over a dynamic seq (2..32), run at seq 11",
    ),
    Case(
        "norm_rows",
        _build_norm_rows,
        1e-5,
        1e-6,
        "layer norm, gelu (erf, tanh), softmax, log_softmax on 16 x 1024 rows",
    ),
    Case(
        "mobilenet_bn",
        _build_mobilenet_bn,
        1e-5,
        1e-6,
        "mobilenet with BN kept (NCHW); outputs logits and the 32x8x8 feature map",
    ),
    Case(
        "conv_bn_edges",
        _build_conv_bn_edges,
        1e-5,
        1e-6,
        "conv -> BN edge cases: conv output read twice, BN without affine, BN output "
        "both a method output and a ReLU input",
    ),
    Case(
        "linear_bn",
        _build_linear_bn,
        1e-5,
        1e-6,
        "Linear -> BatchNorm1d (-> ReLU) on a batch of 4 (addmm -> batch norm)",
    ),
    Case(
        "linear_bn_stack",
        _build_linear_bn_stack,
        1e-5,
        1e-6,
        "two Linear -> BatchNorm1d -> ReLU blocks in a row on [1, 64] (64 -> 32 -> 16)",
    ),
    Case(
        "linear_nd_relu",
        _build_linear_nd_relu,
        1e-5,
        1e-6,
        "Linear(64, 128) -> ReLU on [2, 10, 64]: addmm on a [20, 64] view",
    ),
]
