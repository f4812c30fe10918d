#!/usr/bin/env python3
"""Export XNNPACK-lowered test programs for pterun's XNNPACK backend.

Every case is a small PyTorch model exported twice with the real exporter
(torch 2.13.0, executorch 1.5.1): once lowered with ``XnnpackPartitioner``
(``model.pte``, the program under test) and once without any partitioner
(``plain.pte``, run on pterun's portable kernels for the second parity check).
For each case the script writes, under ``OUT/<case>/``:

* ``model.pte`` (+ ``*.ptd`` for the external-weights case), ``plain.pte``,
* ``forward_input_<k>.npy``  - inputs,
* ``forward_et_<k>.npy``     - ExecuTorch's runtime with its XNNPACK delegate on
  ``model.pte`` (the reference pterun must match),
* ``forward_plain_<k>.npy``  - ExecuTorch's runtime on ``plain.pte``,
* ``forward_eager_<k>.npy``  - eager PyTorch,
* ``graphs.txt``             - the node types and datatypes of every delegate
  payload (decoded with ExecuTorch's own schema), for humans and the docs.

and the index ``OUT/../xnnpack_cases.txt``. Seeded and deterministic.

Usage: python tools/export_xnnpack.py [--only NAME,...] [--out DIR]
"""

from __future__ import annotations

import argparse
import copy
import logging
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

import numpy as np
import torch
from torch import nn

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tools"))

import export_fixtures as ef

DEFAULT_OUT = REPO_ROOT / "tests" / "fixtures" / "xnnpack"
SEED = 20261201


# ---------------------------------------------------------------------------
# models not already in export_fixtures


class TinyVit(nn.Module):
    """Patch conv 4x4/4 - class token - 1 pre-norm encoder block - head."""

    def __init__(self, dim: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.1)
        self.pos = nn.Parameter(torch.randn(1, 17, dim) * 0.1)
        self.n1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.n2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * dim)
        self.down = nn.Linear(2 * dim, dim)
        self.head = nn.Linear(dim, 10)
        self.heads = heads
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        x = self.patch(x).flatten(2).transpose(1, 2)  # [B, 16, dim]
        x = torch.cat([self.cls.expand(b, -1, -1), x], dim=1) + self.pos
        h = self.n1(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        hd = self.dim // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.reshape(b, 17, self.heads, hd).permute(0, 2, 1, 3)

        q, k, v = split(q), split(k), split(v)
        att = torch.softmax((q @ k.transpose(-2, -1)) * (hd**-0.5), dim=-1)
        y = (att @ v).permute(0, 2, 1, 3).reshape(b, 17, self.dim)
        x = x + self.proj(y)
        x = x + self.down(nn.functional.gelu(self.up(self.n2(x))))
        return self.head(x[:, 0])


class GruModel(nn.Module):
    """One-layer GRU over [1, 5, 8] and a Linear on every step."""

    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(8, 12, batch_first=True)
        self.fc = nn.Linear(12, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y, h = self.gru(x)
        return self.fc(y), h


class Mbv3ish(nn.Module):
    """Hardswish, sigmoid gating (squeeze-excite), depthwise conv, avg pool,
    concat, sub/div, clamp: the MobileNetV3-style node types."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.se1 = nn.Conv2d(8, 4, 1)
        self.se2 = nn.Conv2d(4, 8, 1)
        self.pw = nn.Conv2d(16, 12, 1)
        self.pool = nn.AvgPool2d(2)
        self.fc = nn.Linear(12, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.hardswish(self.stem(x))
        y = self.dw(x)
        s = x.mean(dim=(2, 3), keepdim=True)
        s = torch.sigmoid(self.se2(torch.relu(self.se1(s))))
        y = y * s
        z = torch.cat([x, (y - 0.5) / 2.0], dim=1)
        z = torch.clamp(self.pw(z), -1.0, 3.0)
        z = self.pool(z).mean(dim=(2, 3))
        return torch.tanh(self.fc(z))


class ManyOps(nn.Module):
    """The remaining fp32 node types: transposed conv, bilinear resize, pad,
    PReLU, LeakyReLU, ELU, max/min, floor/ceil, abs/neg, sqrt/rsqrt/log/exp,
    square, sin/cos, slice, max pool with padding."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
        self.prelu = nn.PReLU(6)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.prelu(self.up(x))  # [1, 6, 16, 16]
        y = nn.functional.interpolate(
            y, size=(20, 20), mode="bilinear", align_corners=False
        )
        y = nn.functional.pad(y, (1, 2, 0, 1), value=0.5)
        y = self.pool(y)
        a = nn.functional.leaky_relu(y, 0.1) + nn.functional.elu(y)
        b = torch.maximum(a, y) - torch.minimum(a, -y)
        c = torch.floor(b) * 0.25 + torch.ceil(-b) * 0.5 + torch.abs(b) - torch.neg(y)
        d = torch.sqrt(torch.abs(c) + 1.0) + torch.rsqrt(torch.abs(c) + 1.0)
        e = torch.log(torch.abs(d) + 1.0) + torch.exp(-torch.abs(d))
        f = e.pow(2) + torch.sin(e) * torch.cos(e)
        return f[:, 1:5, 2:9, :]


class TwoParts(nn.Module):
    """Linear - cumsum (not lowered) - Linear: two XNNPACK partitions with a
    portable kernel between them."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.a(x))
        y = torch.cumsum(y, dim=-1)
        return self.b(y)


class QMlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        return self.fc2(h) + y


class QCnn(nn.Module):
    """Conv-ReLU, depthwise conv, residual add, max pool, GAP, Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.c1(x))
        x = x + torch.relu(self.dw(x))
        x = torch.relu(self.c2(x))
        x = self.pool(x)
        x = torch.mean(x, dim=(2, 3), keepdim=True).flatten(1)
        return self.fc(x)


class Llm8da4w(nn.Module):
    """Tiny decoder block without embedding (dims multiple of 32 for 4-bit groups)."""

    def __init__(self, dim: int = 64, hidden: int = 128) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        self.head = nn.Linear(dim, 96, bias=False)
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
        att = torch.softmax(self.q(h) @ self.k(h).transpose(-2, -1) / 8.0, dim=-1)
        x = x + self.o(att @ self.v(h))
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
        x = x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))
        return self.head(x)


# ---------------------------------------------------------------------------
# builders: module (eager reference), exportable module, inputs, quant kind


@dataclass
class Built:
    eager: nn.Module
    graph: nn.Module  # what torch.export sees (PT2E-converted for quantized cases)
    inputs: tuple[torch.Tensor, ...]
    rtol: float
    atol: float
    note: str
    partitioner: str = "all"  # "all" | "dynamic"
    external: bool = False
    dynamic: Any = None  # torch.export dynamic_shapes


def _pt2e(m: nn.Module, inputs: tuple[torch.Tensor, ...], **cfg: Any) -> nn.Module:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(**cfg))
    gm = torch.export.export(m, inputs, strict=True).module()
    gm = prepare_pt2e(gm, q)
    for k in range(8):
        gm(*[t + 0.1 * k * torch.randn_like(t) for t in inputs])
    gm(*inputs)
    return convert_pt2e(gm)


def b_mlp() -> Built:
    m = ef.Mlp().eval()
    return Built(m, m, (torch.randn(3, 16),), 1e-5, 1e-6, "Linear-ReLU-Linear-softmax")


def b_mobilenet() -> Built:
    m = ef.MobileNetish().eval()
    return Built(m, m, (torch.randn(1, 3, 32, 32),), 1e-5, 1e-5, "MobileNetV2-style")


def b_resnet() -> Built:
    m = ef.ResNetish().eval()
    return Built(m, m, (torch.randn(1, 3, 32, 32),), 1e-5, 1e-5, "ResNet-style")


def b_mbv3() -> Built:
    m = Mbv3ish().eval()
    return Built(
        m, m, (torch.randn(1, 3, 16, 16),), 1e-5, 1e-5, "MobileNetV3-style ops"
    )


def b_vit() -> Built:
    m = TinyVit().eval()
    return Built(m, m, (torch.randn(1, 3, 16, 16),), 1e-5, 1e-5, "ViT block")


def b_many_ops() -> Built:
    m = ManyOps().eval()
    return Built(
        m, m, (torch.randn(1, 4, 8, 8),), 1e-5, 1e-5, "remaining fp32 node types"
    )


class Fp16Cnn(nn.Module):
    """A small fp16 CNN: conv, depthwise conv, pooling, add, hardtanh, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 8, 1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.stem(x))
        x = x + nn.functional.hardtanh(self.pw(self.dw(x)), 0.0, 6.0)
        x = self.pool(x).mean(dim=(2, 3))
        return self.fc(x)


def b_fp16_mlp() -> Built:
    m = ef.Mlp().half().eval()
    return Built(m, m, (torch.randn(3, 16).half(),), 2e-3, 1e-5, "fp16 MLP")


def b_fp16_cnn() -> Built:
    m = Fp16Cnn().half().eval()
    return Built(
        m, m, (torch.randn(1, 3, 16, 16).half(),), 2e-3, 1e-5, "fp16 small CNN"
    )


def b_lstm() -> Built:
    m = ef.LstmModel().eval()
    return Built(m, m, (torch.randn(1, 6, 8),), 1e-5, 1e-6, "LSTM")


def b_gru() -> Built:
    m = GruModel().eval()
    return Built(m, m, (torch.randn(1, 5, 8),), 1e-5, 1e-6, "GRU")


def b_two_parts() -> Built:
    m = TwoParts().eval()
    return Built(m, m, (torch.randn(2, 8),), 1e-5, 1e-6, "two partitions around cumsum")


class DynMlp(nn.Module):
    """Linear - GELU - Linear + x (residual) - softmax over [batch, 16] with a
    dynamic batch (up to 8): the delegate runs at other than its exported
    shapes."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.b(nn.functional.gelu(self.a(x))) + x
        return torch.softmax(y.reshape(-1, 4, 4).transpose(1, 2), dim=-1)


def b_dyn_mlp() -> Built:
    from torch.export import Dim

    m = DynMlp().eval()
    dyn = {"x": {0: Dim("batch", min=1, max=8)}}
    return Built(
        m,
        m,
        (torch.randn(3, 16),),
        1e-5,
        1e-6,
        "dynamic batch (max 8, run at 3)",
        dynamic=dyn,
    )


class DynCnn(nn.Module):
    """Conv-ReLU - max pool - constant pad - depthwise conv - 1x1 conv - average
    pool over an NCHW image whose height and width are dynamic (exported up
    to 32 x 32, run at 12 x 20): convolution, pooling and pad follow the
    call's shapes."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        y = nn.functional.pad(y, (1, 1, 1, 1), value=0.5)
        y = self.pw(torch.relu(self.dw(y)))
        return nn.functional.avg_pool2d(y, 2)


def b_dyn_cnn() -> Built:
    from torch.export import Dim

    m = DynCnn().eval()
    h, w = Dim("h", min=2, max=16), Dim("w", min=2, max=16)
    dyn = {"x": {2: 2 * h, 3: 2 * w}}
    return Built(
        m,
        m,
        (torch.randn(1, 3, 12, 20),),
        1e-5,
        1e-5,
        "dynamic height and width through conv, pool and pad (max 32, run at 12 x 20)",
        dynamic=dyn,
    )


def b_external() -> Built:
    m = ef.Mlp().eval()
    return Built(
        m, m, (torch.randn(3, 16),), 1e-5, 1e-6, "weights in a .ptd", external=True
    )


def b_q_cnn() -> Built:
    m = QCnn().eval()
    x = (torch.randn(1, 3, 16, 16),)
    return Built(
        m, _pt2e(m, x, is_per_channel=True), x, 0.0, 0.0, "PT2E static int8 per-channel"
    )


def b_q_mlp() -> Built:
    m = QMlp().eval()
    x = (torch.randn(4, 16), torch.randn(4, 8))
    return Built(
        m, _pt2e(m, x, is_per_channel=False), x, 0.0, 0.0, "PT2E static int8 per-tensor"
    )


def b_q_dyn() -> Built:
    m = QMlp().eval()
    x = (torch.randn(4, 16), torch.randn(4, 8))
    g = _pt2e(m, x, is_per_channel=True, is_dynamic=True)
    return Built(
        m, g, x, 0.0, 0.0, "PT2E dynamic int8 linear, per-channel int8 weights"
    )


def b_q_dyn_conv() -> Built:
    """XnnpackDynamicallyQuantizedPartitioner's Conv2d: qd8 input (one scale
    and zero point per image), per-channel int8 filter, float output."""
    m = nn.Sequential(nn.Conv2d(3, 4, 3)).eval()
    x = (torch.randn(1, 3, 8, 8),)
    return Built(
        m,
        _pt2e(m, x, is_per_channel=True, is_dynamic=True),
        x,
        0.0,
        0.0,
        "PT2E dynamic int8 convolution, per-channel int8 weights",
    )


def b_q_deconv() -> Built:
    """The static int8 ConvTranspose2d (qs8, per-channel int8 filter): stride 2
    with padding and output padding, a fused ReLU, a kernel equal to the
    stride, a batch of 2."""
    m = nn.Sequential(
        nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
        nn.ReLU(),
        nn.ConvTranspose2d(6, 3, 2, stride=2),
    ).eval()
    x = (torch.randn(2, 4, 5, 6),)
    return Built(
        m,
        _pt2e(m, x, is_per_channel=True),
        x,
        0.0,
        0.0,
        "PT2E static int8 transposed convolutions, per-channel int8 weights",
    )


def b_q_dyn_deconv() -> Built:
    """The dynamically quantized ConvTranspose2d (qd8 input, one scale and
    zero point per image), per-channel int8 filter, float output."""
    m = nn.Sequential(
        nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
    ).eval()
    x = (torch.randn(2, 3, 6, 5),)
    return Built(
        m,
        _pt2e(m, x, is_per_channel=True, is_dynamic=True),
        x,
        0.0,
        0.0,
        "PT2E dynamic int8 transposed convolution, per-channel int8 weights",
    )


def b_8da4w() -> Built:
    from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
    from torchao.quantization.granularity import PerGroup

    m = Llm8da4w().eval()
    q = copy.deepcopy(m)
    quantize_(
        q,
        Int8DynamicActivationIntxWeightConfig(
            weight_dtype=torch.int4, weight_granularity=PerGroup(32)
        ),
    )
    x = (torch.randn(1, 7, 64),)
    return Built(
        m, q, x, 0.0, 0.0, "8da4w linears (torchao, group 32)", partitioner="dynamic"
    )


BUILDERS: dict[str, Callable[[], Built]] = {
    "mlp": b_mlp,
    "mobilenet": b_mobilenet,
    "resnet": b_resnet,
    "mbv3": b_mbv3,
    "vit": b_vit,
    "many_ops": b_many_ops,
    "lstm": b_lstm,
    "gru": b_gru,
    "two_parts": b_two_parts,
    "dyn_mlp": b_dyn_mlp,
    "dyn_cnn": b_dyn_cnn,
    "external": b_external,
    "q_cnn": b_q_cnn,
    "q_mlp": b_q_mlp,
    "q_dyn": b_q_dyn,
    "q_dyn_conv": b_q_dyn_conv,
    "q_deconv": b_q_deconv,
    "q_dyn_deconv": b_q_dyn_deconv,
    "llm_8da4w": b_8da4w,
    "fp16_mlp": b_fp16_mlp,
    "fp16_cnn": b_fp16_cnn,
}


# Programs pterun must refuse at load, naming what it does not implement:
# tests/fixtures/xnnpack_refused/<name>.pte (no references). None today (the
# dynamically quantized convolution, the last one, runs: q_dyn_conv).
REFUSED: dict[str, Callable[[], Built]] = {}
# What the refusal must say (tests/runtime/run_refused.cmake).
REFUSED_MESSAGE: dict[str, str] = {}

QUANTIZED = {
    "q_cnn",
    "q_mlp",
    "q_dyn",
    "q_dyn_conv",
    "q_deconv",
    "q_dyn_deconv",
    "llm_8da4w",
}


# ---------------------------------------------------------------------------
# export


def export(b: Built, lowered: bool) -> tuple[bytes, dict[str, bytes]]:
    import executorch.kernels.quantized  # noqa: F401  (out variants of the Q/DQ ops)
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackDynamicallyQuantizedPartitioner,
        XnnpackPartitioner,
    )
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower

    if not lowered and b.partitioner == "dynamic":
        # torchao's quantization ops get .out schemas from pterun's torch_ops
        # (as in tools/export_quantized_models.py): pterun runs them.
        from export_quantized_models import _load_torch_ops

        _load_torch_ops()

    module = copy.deepcopy(b.graph)
    ep = torch.export.export(module, b.inputs, dynamic_shapes=b.dynamic, strict=False)
    if lowered and b.external:
        from executorch.exir.passes.external_constants_pass import (
            delegate_external_constants_pass_unlifted,
        )

        gm = ep.module()
        delegate_external_constants_pass_unlifted(gm, gen_tag_fn=lambda _n: "weights")
        ep = torch.export.export(gm, b.inputs, strict=False)
    parts: list[Any] = []
    if lowered:
        parts = [
            XnnpackDynamicallyQuantizedPartitioner()
            if b.partitioner == "dynamic"
            else XnnpackPartitioner()
        ]
    edge = to_edge_transform_and_lower(ep, partitioner=parts)
    config = ExecutorchBackendConfig()
    prog = edge.to_executorch(config)
    data = {f"{k}.ptd": bytes(v) for k, v in (prog._tensor_data or {}).items()}
    return bytes(prog.buffer), data


def describe_payloads(pte: bytes) -> str:
    """Node types and value datatypes of every XnnpackBackend payload."""
    from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import (
        XNNHeader,
    )
    from executorch.exir._serialize._flatbuffer import _flatc_decompile  # noqa: F401

    program = ef._parse_program(pte)
    from executorch.exir._serialize._program import _get_extended_header

    eh = _get_extended_header(pte)
    base = eh.segment_base_offset if eh is not None and eh.is_valid() else 0
    lines = []
    for plan in program.execution_plan:
        for i, d in enumerate(plan.delegates):
            loc = d.processed
            if loc.location.name == "SEGMENT":
                seg = program.segments[loc.index]
                blob = pte[base + seg.offset : base + seg.offset + seg.size]
            else:
                blob = bytes(program.backend_delegate_data[loc.index].data)
            hdr = XNNHeader.from_bytes(blob[: XNNHeader.EXPECTED_LENGTH])
            fb = blob[
                hdr.flatbuffer_offset : hdr.flatbuffer_offset + hdr.flatbuffer_size
            ]
            lines.append(f"{plan.name} delegate {i} {d.id}: {_graph_summary(fb)}")
    return "\n".join(lines) + "\n"


def _graph_summary(fb: bytes) -> str:
    import json
    import os
    import re
    import subprocess
    import tempfile

    from executorch.backends.xnnpack.serialization import xnnpack_graph_serialize as s

    schema = Path(s.__file__).parent / "schema.fbs"
    flatc = os.environ.get("FLATC", str(Path(sys.executable).parent / "flatc"))
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "g.bin").write_bytes(fb)
        try:
            subprocess.run(
                [
                    flatc,
                    "--json",
                    "--strict-json",
                    "--raw-binary",
                    "-o",
                    d,
                    str(schema),
                    "--",
                    str(Path(d) / "g.bin"),
                ],
                check=True,
                capture_output=True,
            )
        except (OSError, subprocess.CalledProcessError):
            return f"{len(fb)} bytes (flatc unavailable: node list not decoded)"
        text = (Path(d) / "g.json").read_text()
        # flatc writes non-finite floats (output_min_max) as bare inf/nan
        g = json.loads(re.sub(r"(?<=[:\s\[,])(-?)(inf|nan)\b", r'"\1\2"', text))
    nodes = [n.get("xnode_union_type", "?") for n in g.get("xnodes", [])]
    dtypes = sorted(
        {
            (
                v.get("xvalue_union", {}).get("tensor_value")
                or v.get("xvalue_union", {})
            ).get("datatype", "?")
            for v in g.get("xvalues", [])
        }
    )
    return f"{len(nodes)} nodes [{' '.join(nodes)}] dtypes {{{' '.join(map(str, dtypes))}}}"


def run_et(
    pte: Path, data: list[Path], inputs: tuple[torch.Tensor, ...]
) -> list[np.ndarray]:
    return [ef._to_numpy(t) for t in ef.run_executorch(pte, data, "forward", inputs)]


def write_case(name: str, out: Path) -> None:
    torch.manual_seed(SEED + sum(map(ord, name)))
    b = BUILDERS[name]()
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    for f in d.glob("*"):
        f.unlink()
    pte, data = export(b, lowered=True)
    if b"XnnpackBackend" not in pte:
        raise RuntimeError(f"{name}: nothing was delegated to XNNPACK")
    (d / "model.pte").write_bytes(pte)
    for fname, blob in data.items():
        (d / fname).write_bytes(blob)
    plain, pdata = export(b, lowered=False)
    if pdata:
        raise RuntimeError(f"{name}: the plain export has external data")
    (d / "plain.pte").write_bytes(plain)
    for k, t in enumerate(b.inputs):
        np.save(d / f"forward_input_{k}.npy", ef._to_numpy(t))
    et = run_et(d / "model.pte", [d / f for f in data], b.inputs)
    with torch.no_grad():
        eager = [ef._to_numpy(t) for t in ef._flatten_outputs(b.graph(*b.inputs))]
    try:
        pl = run_et(d / "plain.pte", [], b.inputs)
    except RuntimeError:
        # ExecuTorch has no kernels for torchao's quantization ops: the plain
        # program's reference is then eager PyTorch.
        pl = eager
    for k, a in enumerate(et):
        np.save(d / f"forward_et_{k}.npy", a)
        np.save(d / f"forward_plain_{k}.npy", pl[k])
        np.save(d / f"forward_eager_{k}.npy", eager[k])
    (d / "graphs.txt").write_text(describe_payloads(pte))
    diff = max(float(np.max(np.abs(x - y))) for x, y in zip(et, pl, strict=True))
    print(f"{name}: {len(pte)} B, et vs plain max |diff| {diff:.3g}")


def index_row(name: str, out: Path) -> str:
    """The index line of a written case, from its files and builder."""
    torch.manual_seed(SEED + sum(map(ord, name)))
    b = BUILDERS[name]()
    d = out / name
    et = [np.load(p) for p in sorted(d.glob("forward_et_*.npy"))]
    n_in = len(list(d.glob("forward_input_*.npy")))
    data = sorted(p.name for p in d.glob("*.ptd"))
    # Quantized cases: one output quantization step of the reference is the
    # tolerance (the output of a dequantize is a multiple of its scale).
    atol = max(_step(a) for a in et) if name in QUANTIZED else b.atol
    files = ",".join(data) if data else "-"
    kind = "quant" if name in QUANTIZED else "float"
    return (
        f"{name} xnnpack/{name} forward {n_in} {len(et)} {b.rtol:g} {atol:.6g} "
        f"{files} {kind}  # {b.note}"
    )


def _step(a: np.ndarray) -> float:
    """Smallest spacing between distinct output values: the dequantization
    scale for a quantized output; for a float output of a dynamically
    quantized GEMM, 1% of the output range (documented in docs/xnnpack.md)."""
    u = np.unique(a.astype(np.float64))
    if u.size < 2:
        return 1e-6
    gaps = np.diff(u)
    g = float(np.min(gaps))
    rng = float(u[-1] - u[0])
    # distinct values of a dequantized output are (almost) multiples of a step
    if np.allclose(gaps / g, np.round(gaps / g), atol=1e-3):
        return g * 1.0001
    return 0.01 * rng


# ---------------------------------------------------------------------------
# LLM flow: ExecuTorch's own llama exporter, 8da4w linears lowered with -X


LLM_PARAMS = {
    "dim": 64,
    "multiple_of": 32,
    "n_heads": 4,
    "n_kv_heads": 2,
    "n_layers": 2,
    "norm_eps": 1e-05,
    "vocab_size": 128,
    "rope_theta": 10000.0,
}
LLM_PROMPT = [5, 17, 42, 99, 3]
LLM_STEPS = 40


def greedy(execute, prompt: list[int], steps: int) -> tuple[list[int], np.ndarray]:
    """Greedy decoding with the KV-cache program: prefill, then one token per
    call. Returns the tokens and the logits of every call."""
    toks, logits = list(prompt), []
    out = execute(np.array([prompt], dtype=np.int64), np.array([0], dtype=np.int64))
    for pos in range(len(prompt), len(prompt) + steps):
        row = np.asarray(out, dtype=np.float32).reshape(-1)
        logits.append(row)
        toks.append(int(np.argmax(row)))
        out = execute(
            np.array([[toks[-1]]], dtype=np.int64), np.array([pos], dtype=np.int64)
        )
    return toks, np.stack(logits)


def write_llm_prefill(d: Path) -> None:
    """The prefill call as a fixture row (ctest runs it with the CLI):
    inputs tokens and position, reference the first logits."""
    toks, logits = np.load(d / "et_tokens.npy"), np.load(d / "et_logits.npy")
    np.save(d / "forward_input_0.npy", toks[None, : len(toks) - len(logits)])
    np.save(d / "forward_input_1.npy", np.array([0], dtype=np.int64))
    np.save(d / "forward_et_0.npy", logits[0][None, :])


def export_llm(out: Path) -> None:
    """tests/fixtures/xnnpack_llm: a random 2-layer llama from
    `export_llama --model llama3 -kv --use_sdpa_with_kv_cache -X -qmode 8da4w
    --group_size 32` and ExecuTorch+XNNPACK's greedy tokens and logits."""
    import json
    import tempfile

    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: kernels)
    from executorch.examples.models.llama.export_llama_lib import (
        build_args_parser,
        export_llama,
    )
    from executorch.runtime import Runtime

    d = out.parent / "xnnpack_llm"
    d.mkdir(exist_ok=True)
    (d / "params.json").write_text(json.dumps(LLM_PARAMS, indent=1) + "\n")
    # Seeded random weights (without a checkpoint the exporter leaves them
    # uninitialised), saved as the checkpoint export_llama loads.
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(SEED)
    model = construct_transformer(
        ModelArgs(**LLM_PARAMS, max_seq_len=64, max_context_len=64)
    )
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(
                torch.ones_like(p) if "norm" in name else torch.randn_like(p) * 0.08
            )
    ckpt = Path(tempfile.mkdtemp()) / "model.pth"
    torch.save({k: v for k, v in model.state_dict().items() if "freqs" not in k}, ckpt)
    argv = [
        "--model", "llama3", "--params", str(d / "params.json"), "--checkpoint", str(ckpt), "-kv",
        "--use_sdpa_with_kv_cache", "-X", "-qmode", "8da4w", "--group_size", "32",
        "--max_seq_length", "64", "--max_context_length", "64",
        "--output_name", str(d / "model.pte"),
    ]  # fmt: skip
    torch.manual_seed(SEED)
    export_llama(build_args_parser().parse_args(argv))
    method = Runtime.get().load_program(str(d / "model.pte")).load_method("forward")

    def run(tokens: np.ndarray, pos: np.ndarray) -> np.ndarray:
        return method.execute([torch.from_numpy(tokens), torch.from_numpy(pos)])[
            0
        ].numpy()

    toks, logits = greedy(run, LLM_PROMPT, LLM_STEPS)
    np.save(d / "et_tokens.npy", np.array(toks, dtype=np.int64))
    np.save(d / "et_logits.npy", logits)
    write_llm_prefill(d)
    (d / "graphs.txt").write_text(describe_payloads((d / "model.pte").read_bytes()))
    print(f"llm: tokens {toks}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument(
        "--index-only", action="store_true", help="rewrite the index from the files"
    )
    p.add_argument("--llm", action="store_true", help="only the export_llama fixture")
    a = p.parse_args()
    torch.set_num_threads(1)
    if a.llm:
        export_llm(a.out)
        return 0
    names = [n for n in a.only.split(",") if n] or [*BUILDERS, *REFUSED]
    if not a.index_only:
        for n in names:
            if n in REFUSED:
                refused = a.out.parent / "xnnpack_refused"
                refused.mkdir(exist_ok=True)
                torch.manual_seed(SEED)
                pte, _ = export(REFUSED[n](), lowered=True)
                (refused / f"{n}.pte").write_bytes(pte)
                (refused / f"{n}.graphs.txt").write_text(describe_payloads(pte))
                (refused / f"{n}.expect").write_text(REFUSED_MESSAGE[n] + "\n")
                continue
            write_case(n, a.out)
    rows = [
        index_row(n, a.out) for n in BUILDERS if (a.out / n / "model.pte").is_file()
    ]
    header = (
        "# XNNPACK-lowered fixtures, generated by tools/export_xnnpack.py - do not edit.\n"
        "# Columns: name dir method n_inputs n_outputs rtol atol data kind\n"
        "#   model.pte is lowered with XnnpackPartitioner; plain.pte is the same model\n"
        "#   without a partitioner. _et_ = ExecuTorch+XNNPACK on model.pte.\n"
        "#   kind quant: atol is one quantization step of the output (for float\n"
        "#   outputs of dynamically quantized GEMMs: 1% of the output range).\n"
    )
    (a.out.parent / "xnnpack_cases.txt").write_text(header + "\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
