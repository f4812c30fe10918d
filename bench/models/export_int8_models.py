#!/usr/bin/env python3
"""Exports the int8 benchmark models (bench/compare.py) with the real exporters.

For each model (seeded weights, fixed input) writes bench/models/out/<name>/
in the layout of export_models.py:

    model.pte          PT2E quantization with XNNPACKQuantizer (symmetric,
                       per-channel int8 weights), converted, then
                       to_edge_transform_and_lower + to_executorch without a
                       delegate: quantize/dequantize operators around float
                       conv/linear, what pterun fuses into integer kernels
    model_xnnpack.pte  the same quantized program lowered with XnnpackPartitioner
    model.onnx         the float model through torch.onnx.export, then
                       onnxruntime.quantization (QDQ, per-channel int8 weights:
                       quantize_static on the same calibration inputs for qcnn,
                       quantize_dynamic for qmlp)
    input_<k>.npy      the inputs every engine runs on
    eager_0.npy        the converted (quantize-simulating) PT2E module's output

Models:
    qcnn   static int8 VGG-style CNN (3x3 convolutions + relu, mean, linear),
           1 x 3 x 64 x 64
    qmlp   dynamically quantized MLP (int8 activations per tensor, int8
           per-channel weights), the fp32 benchmark's mlp: 32 x 784
    qmbv2  static int8 MobileNetV2-style CNN (the fp32 benchmark's mobilenet:
           1x1 expand, depthwise 3x3, 1x1 project, relu6, residual adds),
           1 x 3 x 128 x 128

    python bench/models/export_int8_models.py [--only NAME]...
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from pathlib import Path

import executorch.exir.passes._quant_patterns_and_replacements
import executorch.kernels.quantized  # noqa: F401  (out variants of the Q/DQ ops)
import numpy as np
import torch
from export_models import MLP, MobileNetish  # the fp32 benchmark's (this script's directory)
from torch import nn

OUT = Path(__file__).resolve().parent / "out"


class VggInt8(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        chans = [(3, 32, 1), (32, 32, 2), (32, 64, 1), (64, 64, 2), (64, 128, 1)]
        chans += [(128, 128, 2)]
        layers: list[nn.Module] = []
        for cin, cout, s in chans:
            layers += [nn.Conv2d(cin, cout, 3, s, 1), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(128, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(2, 3)))


MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...], bool]] = {
    "qcnn": (VggInt8, (1, 3, 64, 64), False),
    "qmlp": (MLP, (32, 784), True),
    "qmbv2": (MobileNetish, (1, 3, 128, 128), False),
}


def _quantize(model: nn.Module, x: torch.Tensor, dynamic: bool) -> torch.fx.GraphModule:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    q = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True, is_dynamic=dynamic)
    )
    gm = torch.export.export(model, (x,), strict=True).module()
    gm = prepare_pt2e(gm, q)
    for _ in range(8):
        gm(torch.randn_like(x))
    gm(x)
    return convert_pt2e(gm)


def _onnx_qdq(model: nn.Module, x: torch.Tensor, dynamic: bool, out: Path) -> None:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    fp32 = out / "model_fp32.onnx"
    torch.onnx.export(
        copy.deepcopy(model), (x,), str(fp32), dynamo=True, external_data=False
    )
    if dynamic:
        quantize_dynamic(
            str(fp32),
            str(out / "model.onnx"),
            per_channel=True,
            weight_type=QuantType.QInt8,
        )
    else:
        gen = torch.Generator().manual_seed(7)
        calib = [torch.randn(x.shape, generator=gen).numpy() for _ in range(8)] + [
            x.numpy()
        ]

        class Reader(CalibrationDataReader):
            def __init__(self) -> None:
                self.it = iter(calib)

            def get_next(self) -> dict[str, np.ndarray] | None:
                v = next(self.it, None)
                return None if v is None else {"x": v}

        quantize_static(
            str(fp32),
            str(out / "model.onnx"),
            Reader(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QInt8,
            weight_type=QuantType.QInt8,
        )
    fp32.unlink()


def export_one(name: str) -> None:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.exir import to_edge_transform_and_lower

    make, shape, dynamic = MODELS[name]
    torch.manual_seed(sum(map(ord, name)))
    model = make().eval()
    x = torch.randn(shape)
    out = OUT / name
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    gm = _quantize(copy.deepcopy(model), x, dynamic)
    with torch.no_grad():
        eager = gm(x)
    np.save(out / "input_0.npy", x.numpy())
    np.save(out / "eager_0.npy", eager.numpy())
    ep = torch.export.export(gm, (x,), strict=True)
    plain = to_edge_transform_and_lower(ep).to_executorch()
    (out / "model.pte").write_bytes(plain.buffer)
    ep = torch.export.export(gm, (x,), strict=True)
    xnn = to_edge_transform_and_lower(
        ep, partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    (out / "model_xnnpack.pte").write_bytes(xnn.buffer)
    _onnx_qdq(model, x, dynamic, out)
    print(f"{name}: exported in {time.time() - t0:.1f} s -> {out}")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", action="append", default=[], choices=sorted(MODELS))
    args = ap.parse_args()
    for name in args.only or list(MODELS):
        export_one(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
