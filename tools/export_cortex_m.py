#!/usr/bin/env python3
"""Export the Cortex-M fixtures with ExecuTorch's real Cortex-M flow.

Writes, under tests/fixtures/, the layout of tools/export_fixtures.py
(model.pte, <method>_input_<k>.npy, <method>_pyref_<k>.npy, ops.txt) and the
index tests/fixtures/cortex_m_cases.txt. The reference (`pyref`) is ExecuTorch's
own Python reference of every cortex_m operator (backends/cortex_m/ops/
operators.py), run on the very graph that is serialized; ExecuTorch's runtime
has no cortex_m kernels outside a Cortex-M build. pterun must match it bit for
bit (atol 0).

Programs (fixed seeds, CPU):
  cortex_m_kws      MLCommons Tiny's keyword-spotting DS-CNN (executorch.examples
                    .models.mlperf_tiny.ds_cnn.DSCNNKWS, random weights,
                    randomized batch-norm statistics folded by the quantizer),
                    quantized with CortexMQuantizer and lowered by
                    CortexMPassManager for Cortex-M55 (quantized_linear with
                    kernel_sum, the MVE layout).
  cortex_m_kws_m4   a smaller conv net of the same shape lowered for Cortex-M4
                    (quantized_linear with bias, the DSP/scalar layout).
  cortex_m_quant    one method per operator pattern through the same quantizer
                    and passes: add, mul, sigmoid (activation LUT), softmax,
                    matmul (batch matmul), maximum, minimum, div, transpose,
                    max_pool2d, conv_transpose2d.
  cortex_m_ops      one method per cortex_m operator called directly on int8
                    tensors (as ExecuTorch's NHWC tests do), covering every
                    operator of operators.yaml including the _nhwc variants.

Usage: python tools/export_cortex_m.py [--only NAME,...]
Needs torch 2.13.0, executorch 1.5.1 and tosa-tools (imported by the quantizer).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

import torch
from executorch.backends.cortex_m.edge_compile_config import (
    cortex_m_edge_compile_config,
)
from executorch.backends.cortex_m.passes.cortex_m_pass_manager import (
    CortexMPassManager,
)
from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
from executorch.backends.cortex_m.target_config import (
    CortexM,
    CortexMTargetConfig,
)
from executorch.exir import EdgeCompileConfig, to_edge
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

# Registers cortex_m::*; imported after the passes (an import cycle otherwise).
importlib.import_module("executorch.backends.cortex_m.ops.operators")

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
sys.path.insert(0, str(ROOT / "tools"))
import fixturekit as fk

CM = torch.ops.cortex_m

Inputs = tuple[torch.Tensor, ...]
Case = tuple[nn.Module, Inputs]


def _cl(t: torch.Tensor) -> torch.Tensor:
    return t.to(memory_format=torch.channels_last)


def _seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g)


def _i8(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randint(-128, 128, shape, generator=g, dtype=torch.int8)


def _randomize_bn(m: nn.Module, g: torch.Generator) -> None:
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            n = mod.num_features
            mod.running_mean.copy_(0.1 * torch.randn(n, generator=g))
            mod.running_var.copy_(0.5 + torch.rand(n, generator=g))
            mod.weight.data.copy_(0.5 + torch.rand(n, generator=g))
            mod.bias.data.copy_(0.1 * torch.randn(n, generator=g))


# ---- quantizer-flow programs ------------------------------------------------------


class SmallKWS(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, (5, 3), stride=(2, 1), padding=(2, 1))
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 12, 1)
        self.pool = nn.AvgPool2d((5, 5))
        self.fc = nn.Linear(12, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.c1(x))
        x = torch.relu(self.dw(x))
        x = torch.relu(self.pw(x))
        return self.fc(self.pool(x).flatten(1))


class Lambda(nn.Module):
    def __init__(self, fn: Callable[..., torch.Tensor], **params: torch.Tensor) -> None:
        super().__init__()
        self.fn = fn
        for k, v in params.items():
            self.register_buffer(k, v)

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        return self.fn(self, *xs)


def _quant_methods() -> dict[str, Case]:
    g = _seeded(7)
    x4 = _cl(_randn(g, 1, 4, 6, 5))
    y4 = _cl(_randn(g, 1, 4, 6, 5))
    ct = nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1).eval()
    return {
        "add": (Lambda(lambda s, a, b: a + b), (x4, y4)),
        "mul": (Lambda(lambda s, a, b: a * b), (x4, y4)),
        "sigmoid": (Lambda(lambda s, a: torch.sigmoid(a)), (x4,)),
        "softmax": (
            Lambda(lambda s, a: torch.softmax(a, dim=-1)),
            (_randn(g, 2, 3, 10),),
        ),
        "matmul": (
            Lambda(lambda s, a, b: torch.matmul(a, b)),
            (_randn(g, 2, 5, 8), _randn(g, 2, 8, 6)),
        ),
        "maximum": (Lambda(lambda s, a, b: torch.maximum(a, b)), (x4, y4)),
        "minimum": (Lambda(lambda s, a, b: torch.minimum(a, b)), (x4, y4)),
        "div": (
            Lambda(lambda s, a, b: a / b),
            (x4, _cl(1.5 + torch.rand(1, 4, 6, 5, generator=g))),
        ),
        "transpose": (Lambda(lambda s, a: a.transpose(1, 2)), (_randn(g, 2, 5, 7),)),
        "max_pool2d": (nn.MaxPool2d(2, stride=2), (x4,)),
        "conv_transpose2d": (ct, (x4,)),
    }


def _quantize_lower(
    module: nn.Module, inputs: Inputs, cpu: CortexM, g: torch.Generator
):
    module = module.eval()
    graph = torch.export.export(module, inputs, strict=True).module(check_guards=False)
    prepared = prepare_pt2e(graph, CortexMQuantizer())
    prepared(*inputs)
    for _ in range(3):  # calibration: the example plus scaled random inputs
        prepared(
            *[
                _cl(torch.randn(t.shape, generator=g))
                if t.dim() == 4
                else torch.randn(t.shape, generator=g)
                for t in inputs
            ]
        )
    converted = convert_pt2e(prepared)
    return torch.export.export(converted, inputs, strict=True)


def _lower(eps: dict[str, Any], cpu: CortexM | None):
    # The direct programs hold no aten operator to preserve; the Cortex-M config
    # (slow to apply per method) is only needed before the passes.
    config = (
        cortex_m_edge_compile_config()
        if cpu is not None
        else EdgeCompileConfig(_check_ir_validity=False)
    )
    edge = to_edge(eps, compile_config=config)
    if cpu is not None:
        cfg = CortexMTargetConfig(cpu=cpu)
        for name in list(eps):
            edge._edge_programs[name] = CortexMPassManager(
                edge.exported_program(name), target_config=cfg
            ).transform()
    refs = {}
    for name in eps:
        refs[name] = edge.exported_program(name).module()
    return edge, refs


# ---- direct one-op programs --------------------------------------------------------


def _requant(g: torch.Generator, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    mult = torch.randint(1 << 29, (1 << 31) - 1, (n,), generator=g, dtype=torch.int32)
    shift = torch.randint(-12, -6, (n,), generator=g, dtype=torch.int32)
    return mult, shift


def _ops_methods() -> dict[str, Case]:
    g = _seeded(11)
    e = torch.empty(0, dtype=torch.uint8)
    x = _cl(_i8(g, 1, 4, 7, 6))
    xh = _i8(g, 1, 7, 6, 4)  # NHWC logical
    w_conv = _i8(g, 5, 3, 3, 4)  # OHWI
    w_dw = _i8(g, 1, 3, 3, 8)  # IHWO, depth multiplier 2
    w_t = _i8(g, 3, 3, 3, 4)  # OHWI, 3 outputs
    b5 = torch.randint(-3000, 3000, (5,), generator=g, dtype=torch.int32)
    b8 = torch.randint(-3000, 3000, (8,), generator=g, dtype=torch.int32)
    b3 = torch.randint(-3000, 3000, (3,), generator=g, dtype=torch.int32)
    m5, s5 = _requant(g, 5)
    m8, s8 = _requant(g, 8)
    m3, s3 = _requant(g, 3)
    lut = _i8(g, 256)
    wl = _i8(g, 6, 12)
    bl = torch.randint(-5000, 5000, (6,), generator=g, dtype=torch.int32)
    ks = torch.randint(-20000, 20000, (6,), generator=g, dtype=torch.int32)
    a = _i8(g, 2, 3, 4, 5)
    b = _i8(g, 2, 3, 4, 5)
    conv = {"w": w_conv, "b": b5, "m": m5, "s": s5, "e": e}
    dw = {"w": w_dw, "b": b8, "m": m8, "s": s8, "e": e}
    tc = {"w": w_t, "b": b3, "m": m3, "s": s3, "e": e}
    return {
        "quantize": (
            Lambda(
                lambda s, v: CM.quantize_per_tensor(v, 0.037, 3, -128, 127, torch.int8)
            ),
            (_randn(g, 3, 17) * 3,),
        ),
        "dequantize": (
            Lambda(
                lambda s, v: CM.dequantize_per_tensor(
                    v, 0.037, -5, -128, 127, torch.int8
                )
            ),
            (_i8(g, 3, 17),),
        ),
        "add": (
            Lambda(
                lambda s, p, q: CM.quantized_add(
                    p,
                    3,
                    1518500250,
                    -1,
                    q,
                    -7,
                    1373371043,
                    0,
                    -2,
                    1431655765,
                    -19,
                    -100,
                    127,
                )
            ),
            (a, b),
        ),
        "add_bcast": (
            Lambda(
                lambda s, p, q: CM.quantized_add(
                    p,
                    3,
                    1518500250,
                    -1,
                    q,
                    -7,
                    1373371043,
                    0,
                    -2,
                    1431655765,
                    -19,
                    -128,
                    127,
                )
            ),
            (x, _cl(_i8(g, 1, 4, 1, 1))),
        ),
        "mul": (
            Lambda(lambda s, p, q: CM.quantized_mul(p, 4, q, -9, 1, 1686629713, -8)),
            (a, b),
        ),
        "div": (
            Lambda(lambda s, p, q: CM.quantized_div(p, 2, q, -3, 5, 3.75)),
            (a, b),
        ),
        "div_i16": (
            Lambda(lambda s, p, q: CM.quantized_div(p, 200, q, -300, 50, 20.0)),
            (
                torch.randint(-32768, 32767, (3, 11), generator=g, dtype=torch.int16),
                torch.randint(-400, 400, (3, 11), generator=g, dtype=torch.int16),
            ),
        ),
        "activation": (
            Lambda(lambda s, v: CM.quantized_activation(v, s.lut), lut=lut),
            (a,),
        ),
        "minimum": (Lambda(lambda s, p, q: CM.minimum(p, q)), (a, _i8(g, 1, 3, 1, 5))),
        "maximum": (Lambda(lambda s, p, q: CM.maximum(p, q)), (a, _i8(g, 1))),
        "linear_bias": (
            Lambda(
                lambda s, v: CM.quantized_linear(
                    v, s.w, s.b, None, 5, 0, -3, [1431655765], [-10], 120, -128
                ),
                w=wl,
                b=bl,
            ),
            (_i8(g, 2, 3, 12),),
        ),
        "linear_ksum": (
            Lambda(
                lambda s, v: CM.quantized_linear(
                    v, s.w, None, s.k, 5, 0, -3, [1431655765], [-10], 127, -110
                ),
                w=wl,
                k=ks,
            ),
            (_i8(g, 4, 12),),
        ),
        "softmax": (
            Lambda(lambda s, v: CM.softmax(v, -1, 3, -128, 1717986918, 22, -248)),
            (_i8(g, 3, 2, 9),),
        ),
        "softmax_dim1": (
            Lambda(lambda s, v: CM.softmax(v, 1, -2, -128, 1288490189, 23, -248)),
            (_i8(g, 2, 6, 3),),
        ),
        "transpose": (Lambda(lambda s, v: CM.transpose(v, [0, 2, 3, 1])), (a,)),
        "pad": (Lambda(lambda s, v: CM.pad(v, [0, 1, 2, 0], [0, 2, 0, 1], -9)), (x,)),
        "pad_rank3": (
            Lambda(lambda s, v: CM.pad(v, [0, 1, 0, 2], [0, 0, 3, 1], 4)),
            (a[0],),
        ),
        "conv2d": (
            Lambda(
                lambda s, v: CM.quantized_conv2d(
                    v, s.w, s.b, [1, 2], [1, 1], [1, 1], 7, -4, s.m, s.s, -128, 127, s.e
                ),
                **conv,
            ),
            (x,),
        ),
        "conv2d_nhwc": (
            Lambda(
                lambda s, v: CM.quantized_conv2d_nhwc(
                    v, s.w, s.b, [2, 1], [0, 1], [1, 1], -3, 6, s.m, s.s, -100, 100, s.e
                ),
                **conv,
            ),
            (xh,),
        ),
        "depthwise": (
            Lambda(
                lambda s, v: CM.quantized_depthwise_conv2d(
                    v,
                    s.w,
                    s.b,
                    [1, 1],
                    [1, 1],
                    [1, 1],
                    2,
                    9,
                    -1,
                    s.m,
                    s.s,
                    -128,
                    127,
                    s.e,
                ),
                **dw,
            ),
            (x,),
        ),
        "depthwise_nhwc": (
            Lambda(
                lambda s, v: CM.quantized_depthwise_conv2d_nhwc(
                    v,
                    s.w,
                    None,
                    [2, 2],
                    [1, 0],
                    [1, 1],
                    2,
                    -5,
                    3,
                    s.m,
                    s.s,
                    -128,
                    127,
                    s.e,
                ),
                **dw,
            ),
            (xh,),
        ),
        "transpose_conv2d": (
            Lambda(
                lambda s, v: CM.quantized_transpose_conv2d(
                    v,
                    s.w,
                    s.b,
                    [2, 2],
                    [1, 1],
                    [1, 0],
                    [1, 1],
                    4,
                    -2,
                    s.m,
                    s.s,
                    -128,
                    127,
                    s.e,
                    s.e,
                ),
                **tc,
            ),
            (x,),
        ),
        "transpose_conv2d_nhwc": (
            Lambda(
                lambda s, v: CM.quantized_transpose_conv2d_nhwc(
                    v,
                    s.w,
                    None,
                    [1, 2],
                    [0, 1],
                    [0, 1],
                    [1, 1],
                    -6,
                    1,
                    s.m,
                    s.s,
                    -120,
                    120,
                    s.e,
                    s.e,
                ),
                **tc,
            ),
            (xh,),
        ),
        "avg_pool2d": (
            Lambda(
                lambda s, v: CM.quantized_avg_pool2d(
                    v, [3, 2], [2, 2], [1, 1], True, 3, 1518500250, -3, s.e
                ),
                e=e,
            ),
            (x,),
        ),
        "avg_pool2d_nhwc": (
            Lambda(
                lambda s, v: CM.quantized_avg_pool2d_nhwc(
                    v, [2, 3], [2, 1], [0, 1], False, -4, 1 << 30, 1, s.e
                ),
                e=e,
            ),
            (xh,),
        ),
        "max_pool2d": (
            Lambda(
                lambda s, v: CM.quantized_max_pool2d(
                    v, [3, 3], [2, 2], [1, 1], [1, 1], False, 2, 2, -100, 120
                )
            ),
            (x,),
        ),
        "max_pool2d_nhwc": (
            Lambda(
                lambda s, v: CM.quantized_max_pool2d_nhwc(
                    v, [2, 3], [2, 1], [0, 1], [1, 1], False, 0, 0, -128, 127
                )
            ),
            (xh,),
        ),
        "batch_matmul": (
            Lambda(
                lambda s, p, q: CM.quantized_batch_matmul(
                    p, 3, q, -2, 1, 1431655765, -9, s.e
                ),
                e=e,
            ),
            (_i8(g, 2, 3, 7), _i8(g, 2, 4, 7)),
        ),
    }


# ---- writing --------------------------------------------------------------------------


def _write(
    name: str, edge: Any, refs: dict[str, Any], cases: dict[str, Case]
) -> list[str]:
    prog = edge.to_executorch()
    out_dir = fk.case_dir(FIXTURES, name)
    fk.write_program(out_dir, bytes(prog.buffer))
    operators = fk.method_operators(prog)
    (out_dir / "ops.txt").write_text(fk.ops_table(operators))
    rows = []
    for method, (_, inputs) in cases.items():
        outs = fk.run_eager(
            refs[method], inputs, fresh_copy=False, flatten=fk.tensor_leaves
        )
        fk.save_arrays(out_dir, method, "input", inputs)
        fk.save_arrays(out_dir, method, "pyref", outs)
        rows.append(
            fk.index_row(
                fk.row_name(name, method),
                name,
                method,
                len(inputs),
                len(outs),
                0,
                0,
                ref="pyref",
            )
        )
    ops = sorted(
        {
            o
            for method_ops in operators.values()
            for o in method_ops
            if "cortex_m::" in o
        }
    )
    print(f"{name}: {len(cases)} methods, {len(ops)} cortex_m operators: {ops}")
    return rows


def export_kws() -> list[str]:
    from executorch.examples.models.mlperf_tiny.ds_cnn import DSCNNKWS

    torch.manual_seed(0)
    g = _seeded(1)
    model = DSCNNKWS().eval()
    _randomize_bn(model, g)
    x = _cl(torch.rand(1, 1, 49, 10, generator=g) * 2 - 1)
    ep = _quantize_lower(model, (x,), CortexM.M55, g)
    edge, refs = _lower({"forward": ep}, CortexM.M55)
    return _write("cortex_m_kws", edge, refs, {"forward": (model, (x,))})


def export_kws_m4() -> list[str]:
    torch.manual_seed(1)
    g = _seeded(2)
    model = SmallKWS().eval()
    x = _cl(torch.randn(1, 1, 10, 5, generator=g))
    ep = _quantize_lower(model, (x,), CortexM.M4, g)
    edge, refs = _lower({"forward": ep}, CortexM.M4)
    return _write("cortex_m_kws_m4", edge, refs, {"forward": (model, (x,))})


def export_quant() -> list[str]:
    torch.manual_seed(2)
    g = _seeded(3)
    cases = _quant_methods()
    eps = {n: _quantize_lower(m, i, CortexM.M55, g) for n, (m, i) in cases.items()}
    edge, refs = _lower(eps, CortexM.M55)
    return _write("cortex_m_quant", edge, refs, cases)


def export_ops() -> list[str]:
    cases = _ops_methods()
    eps = {n: torch.export.export(m, i, strict=False) for n, (m, i) in cases.items()}
    edge, refs = _lower(eps, None)
    return _write("cortex_m_ops", edge, refs, cases)


PROGRAMS: dict[str, Callable[[], list[str]]] = {
    "cortex_m_kws": export_kws,
    "cortex_m_kws_m4": export_kws_m4,
    "cortex_m_quant": export_quant,
    "cortex_m_ops": export_ops,
}

HEADER = """\
# pterun Cortex-M fixture index, generated by tools/export_cortex_m.py - do not edit.
# Columns: name dir method n_inputs n_outputs rtol atol data ref (as tests/fixtures/cases.txt)
#   ref pyref: ExecuTorch's Python reference of the cortex_m operators
#              (backends/cortex_m/ops/operators.py) run on the serialized graph;
#              pterun's libpterun_kernels_cortex_m must match it bit for bit.
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    fresh = {
        name: fn()
        for name, fn in PROGRAMS.items()
        if not args.only or name in args.only.split(",")
    }
    # keep the rows of the programs not exported now
    fk.update_index(
        FIXTURES / "cortex_m_cases.txt", HEADER, fresh, list(PROGRAMS), key_column=1
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
