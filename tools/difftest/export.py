"""Export a difftest model with the real exporter (torch.export +
executorch.exir), as tools/export_fixtures.py and tools/export_xnnpack.py do:
``plain`` (no partitioner: pterun's own kernels run every operator) and
``xnnpack`` (XnnpackPartitioner: pterun's XNNPACK backend runs the payload).
PT2E int8 (``q8s`` static, ``q8d`` dynamic, XNNPACKQuantizer's symmetric
config) quantizes the model first; its programs are exported the same two ways.
"""

from __future__ import annotations

import copy
import logging
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)

FLAVOURS = ("plain", "xnnpack")
QUANTS = ("fp32", "q8s", "q8d")


@dataclass
class Exported:
    flavour: str
    pte: bytes
    operators: list[str] = field(default_factory=list)
    delegated: int = 0  # delegate calls in the program


def _op_name(op: Any) -> str:
    return f"{op.name}.{op.overload}" if op.overload else str(op.name)


_PATTERN_CACHE: dict[Any, Any] = {}


def _cache_conv_bn_patterns() -> None:
    """convert_pt2e, on any graph with a batch norm, exports torchao's 96
    conv-bn QAT match/replacement pattern graphs (torch.export with dynamo,
    ~0.3 s each: ~30 s of a ~45 s quantized check). They depend only on the
    pattern's parameters, never on the model, so each is exported once per
    process. The pattern graphs are only read (matched, copied into the
    model): the programs are byte-identical with and without this cache."""
    from torchao.quantization.pt2e import qat_utils as q

    if getattr(q, "_difftest_cached", False):
        return
    q._difftest_cached = True  # type: ignore[attr-defined]
    export_pattern = q._get_aten_graph_module_for_pattern

    def keyed(make: Any, kind: str) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            fn = make(*args, **kwargs)
            fn._difftest_key = (kind, args, tuple(sorted(kwargs.items())))
            return fn

        return wrapped

    def cached(
        pattern: Any, example_inputs: Any, is_cuda: bool = False, **kw: Any
    ) -> Any:
        key = getattr(pattern, "_difftest_key", None)
        if key is None:
            return export_pattern(pattern, example_inputs, is_cuda, **kw)
        key = (key, is_cuda)
        if key not in _PATTERN_CACHE:
            _PATTERN_CACHE[key] = export_pattern(pattern, example_inputs, is_cuda, **kw)
        return _PATTERN_CACHE[key]

    q._get_quantized_qat_conv_bn_pattern = keyed(
        q._get_quantized_qat_conv_bn_pattern, "match"
    )
    q._get_folded_quantized_qat_conv_bn_pattern = keyed(
        q._get_folded_quantized_qat_conv_bn_pattern, "replacement"
    )
    q._get_aten_graph_module_for_pattern = cached


def quantize(
    net: nn.Module, x: torch.Tensor, quant: str, seed: int, per_tensor: bool = False
) -> nn.Module:
    """PT2E int8 with XNNPACKQuantizer (per-channel weights; static: 8
    calibration batches shaped like x; dynamic: one run on x)."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    _cache_conv_bn_patterns()
    q = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(
            is_per_channel=not per_tensor, is_dynamic=quant == "q8d"
        )
    )
    gm = torch.export.export(copy.deepcopy(net), (x,), strict=True).module()
    gm = prepare_pt2e(gm, q)
    g = torch.Generator().manual_seed(seed + 3)
    if quant == "q8d":
        gm(x)
    else:
        for _ in range(8):
            gm(torch.rand(x.shape, generator=g) * 4 - 2)
        gm(x)
    return convert_pt2e(gm)


def _load_torch_ops() -> None:
    """torchao's quantization ops get .out schemas from pterun's torch_ops
    (as tools/export_xnnpack.py does for its non-delegated dynamic programs)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "python" / "pterun" / "torch_ops.py"
    spec = importlib.util.spec_from_file_location("pterun_torch_ops", path)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def export(
    module: nn.Module,
    x: torch.Tensor,
    flavour: str,
    dynamic_quant: bool = False,
    keep_linear: bool = False,
) -> Exported:
    import executorch.exir.passes._quant_patterns_and_replacements
    import executorch.kernels.quantized  # noqa: F401  (out variants of the Q/DQ ops)
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackDynamicallyQuantizedPartitioner,
        XnnpackPartitioner,
    )
    from executorch.exir import (
        EdgeCompileConfig,
        ExecutorchBackendConfig,
        to_edge_transform_and_lower,
    )

    if dynamic_quant and flavour == "plain":
        _load_torch_ops()
    ep = torch.export.export(copy.deepcopy(module), (x,), strict=False)
    parts: list[Any] = []
    if flavour == "xnnpack":
        parts = [
            XnnpackDynamicallyQuantizedPartitioner()
            if dynamic_quant
            else XnnpackPartitioner()
        ]
    cfg = None
    if keep_linear and flavour == "plain":
        # aten::linear kept whole (as the LLM export flow keeps it): the
        # program calls aten::linear.out, whose fusion rows need it
        cfg = EdgeCompileConfig(
            preserve_ops=[torch.ops.aten.linear.default], _check_ir_validity=False
        )
    edge = to_edge_transform_and_lower(ep, partitioner=parts, compile_config=cfg)
    prog = edge.to_executorch(ExecutorchBackendConfig())
    plan = prog.executorch_program.execution_plan[0]
    return Exported(
        flavour,
        bytes(prog.buffer),
        sorted({_op_name(op) for op in plan.operators}),
        len(plan.delegates),
    )
