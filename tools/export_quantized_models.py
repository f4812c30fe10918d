#!/usr/bin/env python3
"""Export the quantized end-to-end fixtures with the real exporter.

Writes, under tests/fixtures/quantized_<name>/, the same layout as
tools/export_fixtures.py (model.pte, <method>_input_<k>.npy,
<method>_eager_<k>.npy, <method>_et_<k>.npy when ExecuTorch's runtime can run
the program, ops.txt) and the index tests/fixtures/quantized_cases.txt.

Models (all undelegated, CPU only, fixed seeds):
  quantized_cnn      PT2E static quantization, XNNPACKQuantizer symmetric
                     per-channel config: quantize/dequantize_per_tensor,
                     dequantize_per_channel around float conv/linear.
  quantized_dynlinear PT2E dynamic quantization of linear layers:
                     choose_qparams.Tensor_out + per-tensor Tensor_out Q/DQ.
  quantized_convnet  PT2E static int8 like quantized_cnn, with every static
                     pattern the int8 fusion rewrites: depthwise / grouped /
                     dilated / strided convs + relu, conv without activation,
                     linear + relu, linear (the quantizer puts its own
                     quantize/dequantize between a conv and a relu6, which
                     therefore stays a separate dequantize -> hardtanh ->
                     quantize).
  quantized_llm      a tiny decoder with a 4-bit and an 8-bit quantized
                     embedding (embedding_4bit/_byte.dtype_out, the layouts of
                     ExecuTorch's EmbeddingQuantHandler) and an int8 KV cache
                     quantized per token (choose_qparams_per_token_asymmetric,
                     quantize_per_token, dequantize_per_token).
  quantized_8da4w_fused  the same program after pterun's fuse_dequantize_linear
                     pass: every "dequantize_affine(constant weight) -> linear"
                     becomes pterun_quantized::linear_dequantize.out, which keeps
                     the int4 codes (stored as int8) and never builds a float
                     weight.
  quantized_8da4w    a tiny transformer quantized with torchao quantize_:
                     Int8DynamicActivationIntxWeightConfig(int4, PerGroup(16))
                     on attention/MLP linears, IntxWeightOnlyConfig(int4,
                     PerGroup(16)) on the output head. Exporting needs the .out
                     overloads of python/pterun/torch_ops.py; ExecuTorch's
                     runtime has no kernels for the torchao ops, so the
                     reference is eager PyTorch.
  quantized_dynmm    PT2E dynamic int8 (XNNPACKQuantizer, per-tensor weights)
                     of bias-free linears on a [B, T, K] input: the
                     exporter writes mm on an elided [B * T, K] view, and
                     the relu reads mm's result through another view.
  quantized_staticmm PT2E static int8 with per-tensor weights: linear
                     without bias + relu (mm), linear with bias (addmm),
                     linear without bias, on a [B, T, K] input.
  quantized_staticops PT2E static int8 (XNNPACKQuantizer per-channel) of the
                     other operators the quantizer annotates: residual adds
                     (+ relu), relu6 and relu on their own, max / avg / adaptive
                     pooling (mean), cat, between convolutions.
  quantized_8da4w_pt 8da4w in quantized_decomposed's per-token form (what
                     torchao's 8da4w linears were before the affine ops):
                     choose_qparams_per_token_asymmetric, quantize_per_token,
                     dequantize_per_token on the activation and
                     dequantize_per_channel_group on int4 weights (group 16),
                     two linears with a relu between, [B, T, K] input.
                     ExecuTorch's runtime has no dequantize_per_channel_group
                     kernel: the reference is eager PyTorch.
  quantized_8da8w    quantized_8da4w's transformer with int8 per-channel
                     weights (Int8DynamicActivationIntxWeightConfig(int8,
                     PerAxis(0))): dequantize_affine with block [1, K].
  quantized_addrelu  PT2E static uint8 per-tensor quantization (XNNPACKQuantizer
                     with a uint8 activation spec) of relu(x + y) + x, exported
                     with ExecutorchBackendConfig(do_quant_fusion_and_const_prop=
                     True): QuantFusionPass turns dq -> add -> relu -> q into
                     quantized_decomposed::add_relu.out (.out schema from
                     python/pterun/torch_ops.py) and dq -> add -> q into
                     quantized_decomposed::add.out. ExecuTorch's runtime has no
                     add_relu kernel, so the reference is eager PyTorch.
                     (add.scalar is never emitted: to_edge's ScalarToTensorPass
                     turns the scalar into a constant tensor first, so the
                     pattern becomes add.out; see docs/quantized.md.)

Usage: python tools/export_quantized_models.py [--only NAME,...]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import logging
import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

import torch
from torch import nn

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "tests" / "fixtures"
SEED = 20240611

import executorch.exir.passes._quant_patterns_and_replacements
import executorch.kernels.quantized  # noqa: F401  (ExecuTorch runtime kernels)

sys.path.insert(0, str(REPO_ROOT / "tools"))
import fixturekit as fk

# ---------------------------------------------------------------------------
# models


class SmallCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = self.pool(x).flatten(1)
        return self.fc(x)


class ConvNet(nn.Module):
    """The static int8 fusion patterns: grouped and depthwise convs with
    stride and dilation + relu, conv without activation (then relu6, which
    the quantizer keeps apart), a conv with K > 1024 (the GEMM's K blocks),
    linear + relu, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.c3 = nn.Conv2d(8, 16, 3, padding=2, dilation=2, groups=2)
        self.c4 = nn.Conv2d(16, 128, 1)
        self.c5 = nn.Conv2d(128, 6, 3, padding=1)  # K = 1152: two K blocks
        self.fc1 = nn.Linear(6 * 6 * 6, 24)
        self.fc2 = nn.Linear(24, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.relu6(self.c1(x))
        x = torch.relu(self.c2(x))
        x = torch.relu(self.c3(x))
        x = torch.relu(self.c5(self.c4(x)))
        x = torch.relu(self.fc1(x.flatten(1)))
        return self.fc2(x)


class DynLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class DynMm(nn.Module):
    """Bias-free linears (the exporter's mm), a relu between them."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 48, bias=False)
        self.fc2 = nn.Linear(48, 16, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class StaticMm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 48, bias=False)
        self.fc2 = nn.Linear(48, 24)
        self.fc3 = nn.Linear(24, 8, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(self.fc2(torch.relu(self.fc1(x))))


class PerToken8da4w(nn.Module):
    def __init__(self, dims=(32, 48, 16), group: int = 16) -> None:
        super().__init__()
        self.group = group
        for i, (k, n) in enumerate(itertools.pairwise(dims)):
            w = torch.randn(n, k)
            s = w.reshape(n, k // group, group).abs().amax(-1) / 7
            q = torch.clamp(
                torch.round(w.reshape(n, k // group, group) / s[..., None]), -8, 7
            )
            self.register_buffer(f"q{i}", q.to(torch.int8).reshape(n, k))
            self.register_buffer(f"s{i}", s)
            self.register_buffer(
                f"z{i}", torch.randint(-1, 2, s.shape, dtype=torch.int64)
            )

    def _linear(self, x: torch.Tensor, i: int) -> torch.Tensor:
        s, z = QD.choose_qparams_per_token_asymmetric(x, torch.int8)
        q = QD.quantize_per_token(x, s, z, -128, 127, torch.int8)
        x = QD.dequantize_per_token(q, s, z, -128, 127, torch.int8, torch.float32)
        w = QD.dequantize_per_channel_group(
            getattr(self, f"q{i}"),
            getattr(self, f"s{i}"),
            getattr(self, f"z{i}"),
            -8,
            7,
            torch.int8,
            self.group,
            torch.float32,
        )
        return nn.functional.linear(x, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._linear(torch.relu(self._linear(x, 0)), 1)


class StaticOps(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.c2b = nn.Conv2d(8, 8, 3, padding=1)
        self.c2c = nn.Conv2d(8, 8, 1)
        self.c3 = nn.Conv2d(16, 8, 1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = nn.functional.relu6(self.c1(x))
        b = self.c2(a)
        h = torch.relu(a + b)
        h = h + a
        # a longer residual branch: the memory plan may reuse the skip
        # operand's int8 bytes before the add (the fused add then reads
        # that operand as float)
        h = h + self.c2c(torch.relu(self.c2b(h)))
        h = torch.relu(nn.functional.max_pool2d(h, 2))
        g = nn.functional.avg_pool2d(h, 2)
        g = g + h.mean((2, 3), keepdim=True)  # a broadcasting add
        c = self.c3(torch.cat([g, h[:, :, :2, :2]], 1))
        c = nn.functional.adaptive_avg_pool2d(c, 1)
        return self.fc(c.flatten(1))


QD = torch.ops.quantized_decomposed


def _quantize_embedding(w: torch.Tensor, bits: int, group: int):
    """Symmetric groupwise quantization like ExecuTorch's EmbeddingQuantHandler:
    scale = max|w| / (2^(bits-1) - 1) per group ... packed in ET's layouts."""
    qmax = 2 ** (bits - 1) - 1
    qmin = -(2 ** (bits - 1))
    V, D = w.shape
    g = w.reshape(V, D // group, group)
    scale = g.abs().amax(-1).clamp(min=1e-6) / qmax  # [V, G]
    q = (
        torch.clamp(torch.round(g / scale.unsqueeze(-1)), qmin, qmax)
        .to(torch.int8)
        .reshape(V, D)
    )
    if bits == 4:
        u = (q.to(torch.int16) + 8).to(torch.uint8)
        packed = (u[:, 0::2] << 4) | u[:, 1::2]
    else:
        packed = q
    return packed, scale.to(torch.float32), qmin, qmax


class TinyLlm(nn.Module):
    """Decoder with quantized embeddings and an int8 per-token KV cache."""

    def __init__(self, vocab: int = 64, dim: int = 32, max_len: int = 16) -> None:
        super().__init__()
        tok = torch.randn(vocab, dim)
        pos = torch.randn(max_len, dim) * 0.1
        w4, s4, _, _ = _quantize_embedding(tok, 4, 16)
        w8, s8, _, _ = _quantize_embedding(pos, 8, 32)
        self.register_buffer("tok_w", w4)
        self.register_buffer("tok_s", s4)
        self.register_buffer("pos_w", w8)
        self.register_buffer("pos_s", s8)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self.dim = dim

    def _kv_roundtrip(self, t: torch.Tensor) -> torch.Tensor:
        s, z = QD.choose_qparams_per_token_asymmetric.default(t, torch.float32)
        q = QD.quantize_per_token.default(t, s, z, -128, 127, torch.int8)
        return QD.dequantize_per_token.default(
            q, s, z, -128, 127, torch.int8, torch.float32
        )

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[-1]
        x = QD.embedding_4bit.dtype(
            self.tok_w, self.tok_s, None, -8, 7, idx, dtype=torch.float32
        )
        pos = torch.arange(T)
        x = x + QD.embedding_byte.dtype(
            self.pos_w, self.pos_s, None, -128, 127, pos, dtype=torch.float32
        )
        h = self.norm(x)
        q = self.q(h)
        k = self._kv_roundtrip(self.k(h))
        v = self._kv_roundtrip(self.v(h))
        att = (q @ k.transpose(-2, -1)) / (self.dim**0.5)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        x = x + self.o(att @ v)
        return self.head(self.norm(x))


class TinyTransformer(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 64, hidden: int = 128) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        self.n1 = nn.LayerNorm(dim)
        self.n2 = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.dim = dim

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.emb(idx)
        T = idx.shape[-1]
        q, k, v = self.qkv(self.n1(x)).split(self.dim, dim=-1)
        att = (q @ k.transpose(-2, -1)) / (self.dim**0.5)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        x = x + self.proj(att @ v)
        x = x + self.down(torch.relu(self.up(self.n2(x))))
        return self.head(x)


# ---------------------------------------------------------------------------
# builders: (module to export, example inputs, reference kind, rtol, atol, note)


def _pt2e_int8(
    m: nn.Module, x: torch.Tensor, *, per_channel: bool = True, dynamic: bool = False
) -> torch.fx.GraphModule:
    """PT2E int8 with XNNPACKQuantizer's symmetric config (per-channel or
    per-tensor weights; static: calibrated on 8 random batches shaped like x,
    dynamic: one run on x)."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    q = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(
            is_per_channel=per_channel, is_dynamic=dynamic
        )
    )
    gm = prepare_pt2e(torch.export.export(m, (x,), strict=True).module(), q)
    if dynamic:
        gm(x)
    else:
        for _ in range(8):
            gm(torch.randn(x.shape))
    return convert_pt2e(gm)


def _pt2e_case(seed: int, model, shape, note: str, **kw):
    """A PT2E int8 fixture (XNNPACKQuantizer, _pt2e_int8's options) of
    model() on a seeded random input of `shape`; the reference is
    ExecuTorch's runtime (the quantized kernels are bit-exact with it)."""
    torch.manual_seed(seed)
    m = model().eval()
    x = torch.randn(*shape)
    return _pt2e_int8(m, x, **kw), (x,), "et", 0.0, 1e-6, note


def build_cnn():
    return _pt2e_case(
        SEED,
        SmallCnn,
        (1, 3, 16, 16),
        "PT2E static int8 (XNNPACKQuantizer per-channel), undelegated",
    )


def build_convnet():
    return _pt2e_case(
        SEED + 6,
        ConvNet,
        (2, 3, 12, 12),
        "PT2E static int8: depthwise/grouped/dilated conv+relu, conv, linear+relu",
    )


def build_dynlinear():
    return _pt2e_case(
        SEED + 1,
        DynLinear,
        (4, 32),
        "PT2E dynamic int8 linear (choose_qparams + per-tensor Q/DQ)",
        dynamic=True,
    )


def build_dynmm():
    return _pt2e_case(
        SEED + 7,
        DynMm,
        (2, 3, 32),
        "PT2E dynamic int8, per-tensor weights, mm",
        per_channel=False,
        dynamic=True,
    )


def build_staticmm():
    return _pt2e_case(
        SEED + 8,
        StaticMm,
        (2, 3, 32),
        "PT2E static int8, per-tensor weights, mm/addmm",
        per_channel=False,
    )


def build_staticops():
    return _pt2e_case(
        SEED + 10,
        StaticOps,
        (1, 3, 8, 8),
        "PT2E static int8: adds (+relu), relu6, relu, pools, cat",
    )


def build_llm():
    torch.manual_seed(SEED + 2)
    m = TinyLlm().eval()
    idx = torch.randint(0, 64, (1, 12))
    # tolerance: the quantized ops are bit-exact with ExecuTorch's, but the
    # float linear/layer_norm kernels may sum in another order; a last-bit
    # difference in k or v can flip one per-token rounding, i.e. one KV
    # quantization step (range/255 ~ 1e-2) times an attention weight.
    return (
        m,
        (idx,),
        "et",
        0.0,
        2e-3,
        "4-bit + 8-bit embeddings, int8 per-token KV cache",
    )


def _torchao_dynamic(m: nn.Module, weight_dtype: torch.dtype, granularity) -> None:
    """torchao's Int8DynamicActivationIntxWeightConfig on a TinyTransformer's
    attention/MLP linears, IntxWeightOnlyConfig(int4, PerGroup(16)) on its
    output head (in place)."""
    from torchao.quantization import (
        Int8DynamicActivationIntxWeightConfig,
        IntxWeightOnlyConfig,
        quantize_,
    )
    from torchao.quantization.granularity import PerGroup

    quantize_(
        m,
        Int8DynamicActivationIntxWeightConfig(
            weight_dtype=weight_dtype, weight_granularity=granularity
        ),
        filter_fn=lambda mod, fqn: isinstance(mod, nn.Linear) and fqn != "head",
    )
    quantize_(
        m,
        IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(16)),
        filter_fn=lambda mod, fqn: fqn == "head",
    )


def build_8da4w():
    from torchao.quantization.granularity import PerGroup

    fk.load_torch_ops()
    torch.manual_seed(SEED + 3)
    m = TinyTransformer().eval()
    idx = torch.randint(0, 64, (1, 10))
    _torchao_dynamic(m, torch.int4, PerGroup(16))
    # tolerance: ExecuTorch's runtime cannot run this program; pterun must
    # match eager PyTorch up to float32 rounding (same formulas, different
    # summation order in linear): see the index comment.
    return (
        m,
        (idx,),
        "eager",
        0.0,
        5e-3,
        "torchao 8da4w linears + 4-bit weight-only head",
    )


def build_8da8w():
    from torchao.quantization.granularity import PerAxis

    fk.load_torch_ops()
    torch.manual_seed(SEED + 9)
    m = TinyTransformer().eval()
    idx = torch.randint(0, 64, (1, 10))
    _torchao_dynamic(m, torch.int8, PerAxis(0))
    # tolerance: as quantized_8da4w
    return m, (idx,), "eager", 0.0, 5e-3, "torchao 8da8w (per-channel) linears"


def build_8da4w_pt():
    fk.load_torch_ops()  # dequantize_per_channel_group.out
    torch.manual_seed(SEED + 11)
    m = PerToken8da4w().eval()
    x = torch.randn(2, 3, 32)
    # tolerance: as quantized_8da4w (activations quantized per token at run time)
    return m, (x,), "eager", 0.0, 5e-3, "8da4w, quantized_decomposed per-token form"


def build_8da4w_fused():
    m, inputs, ref, rtol, atol, _ = build_8da4w()
    return m, inputs, ref, rtol, atol, "as quantized_8da4w, with fuse_dequantize_linear"


class AddRelu(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = torch.relu(x + y)
        return h + x


def build_addrelu():
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer_utils import (
        QuantizationConfig,
    )
    from torchao.quantization.pt2e import MinMaxObserver
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.quantization.pt2e.quantizer import QuantizationSpec

    fk.load_torch_ops()  # add_relu.out (QuantFusionPass defines no out variant)
    torch.manual_seed(SEED + 4)
    # QuantFusionPass only matches uint8 per-tensor dq/q around add.
    act = QuantizationSpec(
        dtype=torch.uint8,
        quant_min=0,
        quant_max=255,
        qscheme=torch.per_tensor_affine,
        is_dynamic=False,
        observer_or_fake_quant_ctr=MinMaxObserver.with_args(eps=2**-12),
    )
    q = XNNPACKQuantizer().set_global(QuantizationConfig(act, act, None, None))
    x, y = torch.randn(4, 32), torch.randn(4, 32)
    gm = torch.export.export(AddRelu().eval(), (x, y), strict=True).module()
    gm = prepare_pt2e(gm, q)
    for _ in range(8):
        gm(torch.randn(4, 32), torch.randn(4, 32))
    gm = convert_pt2e(gm)
    # tolerance: add_relu.out equals PyTorch's float32 formulas bit for bit;
    # quantize_per_tensor.out and add.out follow ExecuTorch (1.0f / scale in
    # float, PyTorch's eager ops use double 1.0 / scale rounded to float), so a
    # value on a rounding boundary may land one quantization step (the output
    # scale, ~0.03 here) away: atol 0.05.
    return gm, (x, y), "eager", 0.0, 5e-2, "PT2E uint8 relu(x + y) + x, quant fusion"


CASES = {
    "quantized_cnn": build_cnn,
    "quantized_dynlinear": build_dynlinear,
    "quantized_convnet": build_convnet,
    "quantized_llm": build_llm,
    "quantized_8da4w": build_8da4w,
    "quantized_8da4w_fused": build_8da4w_fused,
    "quantized_addrelu": build_addrelu,
    "quantized_dynmm": build_dynmm,
    "quantized_staticmm": build_staticmm,
    "quantized_8da8w": build_8da8w,
    "quantized_staticops": build_staticops,
    "quantized_8da4w_pt": build_8da4w_pt,
}
FUSED = {"quantized_8da4w_fused"}
QUANT_FUSION = {
    "quantized_addrelu"
}  # to_executorch with do_quant_fusion_and_const_prop


def export_one(name: str):
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge

    module, inputs, ref, rtol, atol, note = CASES[name]()
    eager = fk.run_eager(module, inputs, fresh_copy=False, flatten=fk.tensor_leaves)
    ep = torch.export.export(copy.deepcopy(module), inputs, strict=False)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    if name in FUSED:
        edge = edge.transform([fk.load_torch_ops().fuse_dequantize_linear])
    prog = edge.to_executorch(
        ExecutorchBackendConfig(do_quant_fusion_and_const_prop=name in QUANT_FUSION)
    )
    out_dir = fk.case_dir(FIXTURES, name)
    pte, _ = fk.write_program(out_dir, bytes(prog.buffer))
    operators = fk.method_operators(prog)  # one method: forward
    ops = [o for method_ops in operators.values() for o in method_ops]
    (out_dir / "ops.txt").write_text(fk.ops_table(operators))
    fk.save_arrays(out_dir, "forward", "input", inputs)
    fk.save_arrays(out_dir, "forward", "eager", eager)
    et_err = None
    if ref == "et":
        et = fk.run_executorch(pte, [], "forward", inputs)
        fk.save_arrays(out_dir, "forward", "et", et)
        et_err = max(
            float((a.double() - b.double()).abs().max())
            for a, b in zip(et, eager, strict=False)
        )
    print(
        f"{name}: {len(ops)} ops, quantized ops: "
        f"{sorted({o for o in ops if 'quantized' in o or 'torchao' in o})}, "
        f"ET vs eager max |diff| = {et_err}"
    )
    if name in QUANT_FUSION:
        want = {"quantized_decomposed::add_relu.out"}
        if not want <= set(ops):
            raise RuntimeError(f"{name}: QuantFusionPass did not emit {want}: {ops}")
    return (name, len(inputs), len(eager), rtol, atol, ref, note, et_err)


HEADER = """\
# pterun quantized fixture index, generated by tools/export_quantized_models.py - do not edit.
# Columns: name dir method n_inputs n_outputs rtol atol data ref (as tests/fixtures/cases.txt)
#   ref et:    pterun's quantized kernels are bit-exact with ExecuTorch's, so
#              outputs must equal ExecuTorch's up to float32 summation order in
#              the portable conv/matmul kernels (atol 1e-6).
#   quantized_llm quantizes k/v per token at run time: a last-bit difference
#              in a float kernel can flip one rounding, i.e. one KV quantization
#              step (~1e-2) weighted by attention; atol 2e-3 covers that.
#   ref eager: ExecuTorch's runtime cannot run the program (no kernels for
#              torchao::choose_qparams_affine / quantize_affine / dequantize_affine);
#              the reference is eager PyTorch, which computes the same
#              quantization formulas (measured difference 4.8e-7). Activations
#              are quantized per token at run time, so a last-bit difference in
#              a float kernel may flip one rounding: atol 5e-3 is about one
#              activation quantization step (~1.6e-2) times a weight (~0.3).
#   quantized_addrelu (ref eager): quantize_per_tensor/add.out round with
#              ExecuTorch's float reciprocal, eager PyTorch with the double one,
#              so a value on a rounding boundary may move one output step
#              (~0.03): atol 0.05. add_relu.out itself is bit-exact with PyTorch.
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    fresh: dict[str, list[str]] = {}
    for n in names:
        name, nin, nout, rtol, atol, ref, _note, _ = export_one(n)
        fresh[name] = [
            fk.index_row(name, name, "forward", nin, nout, rtol, atol, ref=ref)
        ]
    # rows of the cases not exported now are kept
    fk.update_index(FIXTURES / "quantized_cases.txt", HEADER, fresh, list(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
