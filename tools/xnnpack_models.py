"""The models of ``tools/export_xnnpack.py`` not already in
``tools/fixture_models.py``: the node types XNNPACK's partitioner lowers
(fp32, fp16, static and dynamic int8, 8da4w)."""

from __future__ import annotations

import torch
from torch import nn


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
