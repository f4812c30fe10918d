#!/usr/bin/env python3
"""Exports the benchmark models (bench/compare.py) with the real exporters.

For each model (seeded weights, fixed input) writes bench/models/out/<name>/:

    model.pte          torch.export + to_edge_transform_and_lower + to_executorch
                       (no delegate: what pterun and ExecuTorch's portable runtime run)
    model_xnnpack.pte  the same, lowered with XnnpackPartitioner
    model.onnx         torch.onnx.export (dynamo exporter)
    input_<k>.npy      the inputs every engine runs on
    eager_0.npy        eager PyTorch's output (compare.py checks every engine against it)

The files are generated, not committed (bench/models/out/ is ignored):

    python bench/models/export_models.py [--only NAME]...
"""

from __future__ import annotations

import argparse
import copy
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

OUT = Path(__file__).resolve().parent / "out"


# ---- the models ----------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(784, 1024),
            nn.ReLU(),
            nn.Linear(1024, 1024),
            nn.ReLU(),
            nn.Linear(1024, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.block = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(),
            nn.Conv2d(hidden, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.block(x)
        return x + y if self.use_res else y


class MobileNetish(nn.Module):
    """MobileNetV2-style: 1x1 expand, depthwise 3x3, 1x1 project."""

    def __init__(self) -> None:
        super().__init__()
        layers: list[nn.Module] = [
            nn.Conv2d(3, 32, 3, 2, 1, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU6(),
        ]
        cfg = [
            (32, 16, 1, 1),
            (16, 24, 2, 6),
            (24, 24, 1, 6),
            (24, 32, 2, 6),
            (32, 32, 1, 6),
        ]
        cfg += [(32, 64, 2, 6), (64, 64, 1, 6), (64, 96, 1, 6)]
        for cin, cout, s, e in cfg:
            layers.append(InvertedResidual(cin, cout, s, e))
        layers += [nn.Conv2d(96, 320, 1, bias=False), nn.BatchNorm2d(320), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(320, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.features(x)
        return self.head(y.mean(dim=(2, 3)))


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.down: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + self.down(x))


class ResNetish(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 32, 3, 1, 1, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.layers = nn.Sequential(
            BasicBlock(32, 32, 1),
            BasicBlock(32, 64, 2),
            BasicBlock(64, 64, 1),
            BasicBlock(64, 128, 2),
            BasicBlock(128, 128, 1),
        )
        self.head = nn.Linear(128, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.layers(self.stem(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


class GatedConv1d(nn.Module):
    """WaveNet-style gated dilated 1-D convolutions with residuals."""

    def __init__(self, ch: int = 64, layers: int = 6) -> None:
        super().__init__()
        self.inp = nn.Conv1d(16, ch, 1)
        self.filt = nn.ModuleList(
            nn.Conv1d(ch, ch, 3, padding=2**i, dilation=2**i) for i in range(layers)
        )
        self.gate = nn.ModuleList(
            nn.Conv1d(ch, ch, 3, padding=2**i, dilation=2**i) for i in range(layers)
        )
        self.res = nn.ModuleList(nn.Conv1d(ch, ch, 1) for _ in range(layers))
        self.out = nn.Conv1d(ch, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        for f, g, r in zip(self.filt, self.gate, self.res):
            h = h + r(torch.tanh(f(h)) * torch.sigmoid(g(h)))
        return self.out(h)


class ViT(nn.Module):
    def __init__(
        self,
        img: int = 64,
        patch: int = 8,
        dim: int = 192,
        depth: int = 4,
        heads: int = 3,
    ) -> None:
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, patch)
        n = (img // patch) ** 2
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(
            dim,
            heads,
            dim * 4,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.embed(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], dim=1) + self.pos
        t = self.encoder(t)
        return self.head(self.norm(t[:, 0]))


class GRUNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(64, 256, num_layers=2, batch_first=True)
        self.head = nn.Linear(256, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.gru(x)
        return self.head(y[:, -1])


class LSTMNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(64, 256, num_layers=2, batch_first=True)
        self.head = nn.Linear(256, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


class Attention(nn.Module):
    """One pre-norm self-attention block (scaled dot product) plus an MLP."""

    def __init__(self, dim: int = 256, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.n1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.n2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        a = (
            torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
            @ v
        )
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.n2(x))


class DSCNN(nn.Module):
    """Keyword spotting, depthwise-separable (the DS-CNN of "Hello Edge",
    MLPerf Tiny's KWS model): a 10x4 stride-2 stem over a 49x10 MFCC map,
    four depthwise 3x3 + pointwise 64->64 pairs, average pool, 12 classes."""

    def __init__(self, width: int = 64) -> None:
        super().__init__()
        layers: list[nn.Module] = [
            nn.Conv2d(1, width, (10, 4), 2, (5, 1), bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
        ]
        for _ in range(4):
            layers += [
                nn.Conv2d(width, width, 3, 1, 1, groups=width, bias=False),
                nn.BatchNorm2d(width),
                nn.ReLU(),
                nn.Conv2d(width, width, 1, bias=False),
                nn.BatchNorm2d(width),
                nn.ReLU(),
            ]
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(width, 12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.features(x)
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


class ResNet8(nn.Module):
    """CIFAR ResNet-8 (MLPerf Tiny's image classifier): a 16-channel 3x3
    stem, one basic block per stage at 16, 32 and 64 channels, 10 classes."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()
        )
        self.layers = nn.Sequential(
            BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2)
        )
        self.head = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.layers(self.stem(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


class MobileNetV1(nn.Module):
    """MobileNetV1 (Howard et al. 2017) at a width multiplier: a 3x3 stride-2
    stem, 13 depthwise 3x3 + pointwise pairs, average pool, a linear head."""

    CFG: tuple[tuple[int, int], ...] = (
        (64, 1),
        (128, 2),
        (128, 1),
        (256, 2),
        (256, 1),
        (512, 2),
        (512, 1),
        (512, 1),
        (512, 1),
        (512, 1),
        (512, 1),
        (1024, 2),
        (1024, 1),
    )

    def __init__(self, alpha: float, classes: int) -> None:
        super().__init__()

        def ch(c: int) -> int:
            return max(8, int(c * alpha))

        cin = ch(32)
        layers: list[nn.Module] = [
            nn.Conv2d(3, cin, 3, 2, 1, bias=False),
            nn.BatchNorm2d(cin),
            nn.ReLU(),
        ]
        for c, s in self.CFG:
            cout = ch(c)
            layers += [
                nn.Conv2d(cin, cin, 3, s, 1, groups=cin, bias=False),
                nn.BatchNorm2d(cin),
                nn.ReLU(),
                nn.Conv2d(cin, cout, 1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(),
            ]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.features(x)
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


MODELS: dict[
    str, tuple[Callable[[], nn.Module], Callable[[], tuple[torch.Tensor, ...]]]
] = {
    "mlp": (MLP, lambda: (torch.randn(32, 784),)),
    "mobilenet": (MobileNetish, lambda: (torch.randn(1, 3, 128, 128),)),
    "resnet": (ResNetish, lambda: (torch.randn(1, 3, 64, 64),)),
    "conv1d": (GatedConv1d, lambda: (torch.randn(1, 16, 2048),)),
    "vit": (ViT, lambda: (torch.randn(1, 3, 64, 64),)),
    "gru": (GRUNet, lambda: (torch.randn(1, 32, 64),)),
    "lstm": (LSTMNet, lambda: (torch.randn(1, 32, 64),)),
    "attention": (Attention, lambda: (torch.randn(1, 128, 256),)),
    "kws": (DSCNN, lambda: (torch.randn(1, 1, 49, 10),)),
    "resnet8": (ResNet8, lambda: (torch.randn(1, 3, 32, 32),)),
    # width 0.25 at 96x96: the visual-wake-words configuration (MLPerf Tiny)
    "mobilenetv1_025": (
        lambda: MobileNetV1(0.25, 2),
        lambda: (torch.randn(1, 3, 96, 96),),
    ),
    "mobilenetv1": (
        lambda: MobileNetV1(1.0, 1000),
        lambda: (torch.randn(1, 3, 224, 224),),
    ),
}


def _randomize_bn(model: nn.Module) -> None:
    """Non-trivial BatchNorm statistics, so folding them is actually tested."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)


def export_one(name: str) -> None:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackPartitioner,
    )
    from executorch.exir import to_edge_transform_and_lower

    make, make_inputs = MODELS[name]
    torch.manual_seed(sum(map(ord, name)))
    model = make().eval()
    _randomize_bn(model)
    inputs = make_inputs()
    out = OUT / name
    out.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        eager = model(*inputs)
    for k, x in enumerate(inputs):
        np.save(out / f"input_{k}.npy", x.numpy())
    np.save(out / "eager_0.npy", eager.numpy())
    t0 = time.time()
    ep = torch.export.export(copy.deepcopy(model), inputs, strict=True)
    plain = to_edge_transform_and_lower(ep).to_executorch()
    (out / "model.pte").write_bytes(plain.buffer)
    ep = torch.export.export(copy.deepcopy(model), inputs, strict=True)
    xnn = to_edge_transform_and_lower(
        ep, partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    (out / "model_xnnpack.pte").write_bytes(xnn.buffer)
    torch.onnx.export(
        copy.deepcopy(model),
        inputs,
        str(out / "model.onnx"),
        dynamo=True,
        external_data=False,
    )
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
