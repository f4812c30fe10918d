"""The PyTorch models of pterun's fixture cases (``tools/fixture_cases.py``).

Tiny models, CPU only; their weights come from the seed the exporter sets
before each case is built. ``tools/export_xnnpack.py`` reuses some of them.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.fusion import fuse_conv_bn_eval


class Elementwise(nn.Module):
    """x*2 + y - 1 with relu/sigmoid/tanh and a broadcast bias."""

    def __init__(self) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = x * 2 + y - 1
        b = torch.relu(a) + torch.sigmoid(x) * torch.tanh(y)
        return b + self.bias  # [2,3,4] + [4]: broadcast


class Mlp(nn.Module):
    """Linear(16,32) - ReLU - Linear(32,8) - softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


class SmallCnn(nn.Module):
    """Conv-BN-ReLU-MaxPool-depthwise Conv-GAP-Linear on 1x3x16x16."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 5)
        # Non-trivial running statistics so that eval-mode BN does real work.
        bn_mean, bn_var = self.bn.running_mean, self.bn.running_var
        assert bn_mean is not None and bn_var is not None
        with torch.no_grad():
            bn_mean.copy_(torch.randn(8) * 0.1)
            bn_var.copy_(torch.rand(8) + 0.5)
            self.bn.weight.copy_(torch.rand(8) + 0.5)
            self.bn.bias.copy_(torch.randn(8) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.bn(self.conv1(x))))
        x = self.gap(self.dw(x))
        return self.fc(torch.flatten(x, 1))


class EncoderDecoder(nn.Module):
    """Shared weights; ``forward`` = decode(encode(x)), ``encode`` separately."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.enc(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dec(self.encode(x))


class EncodeOnly(nn.Module):
    """Wraps :class:`EncoderDecoder` so that ``encode`` can be exported."""

    def __init__(self, inner: EncoderDecoder) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner.encode(x)


class Accumulator(nn.Module):
    """A buffer with a non-zero initial value that is updated in place."""

    acc: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("acc", torch.arange(8, dtype=torch.float32).reshape(2, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.acc.add_(x)
        return self.acc + x


class SeqMlp(nn.Module):
    """Per-row MLP over a [seq, 8] input with a dynamic seq length."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class SymOps(nn.Module):
    """Shape arithmetic on a dynamic dim: emits sym_size and prim ops."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = x.shape[0]
        folded = x.reshape(n * 2, 4) * 2.0
        ramp = torch.ones(n) * (n + 1)
        return folded, ramp


class ExternalMlp(nn.Module):
    """Weights of this model are stored in an external .ptd file."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.sigmoid(self.fc1(x)))


def _cond_true(t: torch.Tensor) -> torch.Tensor:
    return t.sin() + 1.0


def _cond_false(t: torch.Tensor) -> torch.Tensor:
    return t.cos() - 1.0


class CondModel(nn.Module):
    """torch.cond on a data-dependent predicate (JumpFalse/Move).

    Only one cond: in ExecuTorch 1.5.1 a second cond after the first one
    makes ExecuTorch's own runtime return wrong values for the first one.
    ``MoveCall`` is a shallow EValue copy, so the first result keeps living in
    its branch's planned buffer, which the memory planner then hands to the
    second cond's branch.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, _cond_true, _cond_false, (x,))


class TwoCondModel(nn.Module):
    """Two torch.cond in sequence. ExecuTorch 1.5.1's runtime returns the
    second cond's values for the first (MoveCall aliases a buffer the planner
    reuses); pterun copies into the destination's own planned memory, so the
    reference here is eager PyTorch."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = torch.cond(x.sum() > 0, _cond_true, _cond_false, (x,))
        b = torch.cond(x.mean() < 0, _cond_true, _cond_false, (x * 2.0,))
        return a, b


# ---- real models (issue 3): small versions of common architectures ----------


class InvertedResidual(nn.Module):
    """MobileNetV2 block: 1x1 expand - BN - ReLU6 - depthwise 3x3 - BN - ReLU6 -
    1x1 project - BN, with a residual when the shape allows it."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.expand = nn.Conv2d(cin, hid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(hid)
        self.dw = nn.Conv2d(
            hid, hid, 3, stride=stride, padding=1, groups=hid, bias=False
        )
        self.bn2 = nn.BatchNorm2d(hid)
        self.project = nn.Conv2d(hid, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = nn.functional.relu6(self.bn1(self.expand(x)))
        y = nn.functional.relu6(self.bn2(self.dw(y)))
        y = self.bn3(self.project(y))
        return x + y if self.use_res else y


def randomize_bn(m: nn.Module) -> None:
    """Non-trivial running statistics so that eval-mode BN does real work."""
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            c = mod.num_features
            assert mod.running_mean is not None and mod.running_var is not None
            with torch.no_grad():
                mod.running_mean.copy_(torch.randn(c) * 0.1)
                mod.running_var.copy_(torch.rand(c) + 0.5)
                mod.weight.copy_(torch.rand(c) + 0.5)
                mod.bias.copy_(torch.randn(c) * 0.1)


class MobileNetish(nn.Module):
    """Stem conv (stride 2) - 3 inverted residual blocks - 1x1 conv - GAP - Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(8)
        self.blocks = nn.Sequential(
            InvertedResidual(8, 8, 1, 3),
            InvertedResidual(8, 16, 2, 3),
            InvertedResidual(16, 16, 1, 3),
        )
        self.head = nn.Conv2d(16, 32, 1, bias=False)
        self.bn4 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, 10)
        randomize_bn(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.relu6(self.bn0(self.stem(x)))
        x = self.blocks(x)
        x = nn.functional.relu6(self.bn4(self.head(x)))
        x = nn.functional.adaptive_avg_pool2d(x, 1)
        return self.fc(torch.flatten(x, 1))


class MobileNetishBn(MobileNetish):
    """MobileNetish with its BatchNorms kept (NCHW), returning the logits and
    the feature map before pooling: conv -> BN -> ReLU6 and conv -> BN chains
    for the load-time BN folding, compared element by element."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.blocks(nn.functional.relu6(self.bn0(self.stem(x))))
        f = nn.functional.relu6(self.bn4(self.head(f)))
        pooled = nn.functional.adaptive_avg_pool2d(f, 1)
        return self.fc(torch.flatten(pooled, 1)), f


class ConvBnEdges(nn.Module):
    """Convolution -> BatchNorm chains the load-time folding must leave alone
    or take with care: a convolution output read twice, a BatchNorm without
    affine parameters, a grouped convolution whose BatchNorm output is both a
    method output and a ReLU's input."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(4, 8, 3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(4, 8, 1)
        self.b2 = nn.BatchNorm2d(8, affine=False)
        self.c3 = nn.Conv2d(4, 8, 3, padding=1, groups=2, bias=False)
        self.b3 = nn.BatchNorm2d(8)
        with torch.no_grad():
            for bn in (self.b1, self.b2, self.b3):
                assert bn.running_mean is not None and bn.running_var is not None
                bn.running_mean.copy_(torch.randn(8) * 0.1)
                bn.running_var.copy_(torch.rand(8) + 0.5)
                if bn.affine:
                    bn.weight.copy_(torch.rand(8) + 0.5)
                    bn.bias.copy_(torch.randn(8) * 0.1)

    def forward(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        y1 = self.c1(x)
        a = self.b1(y1) + y1
        b = self.b2(self.c2(x))
        c = self.b3(self.c3(x))
        return a, b, torch.relu(c), c


class LinearBn(nn.Module):
    """Linear -> BatchNorm1d -> ReLU -> Linear -> BatchNorm1d on a batch of 4:
    addmm -> batch norm chains for the load-time BN folding."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.bn1 = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 4)
        self.bn2 = nn.BatchNorm1d(4)
        with torch.no_grad():
            for bn in (self.bn1, self.bn2):
                c = bn.num_features
                assert bn.running_mean is not None and bn.running_var is not None
                bn.running_mean.copy_(torch.randn(c) * 0.1)
                bn.running_var.copy_(torch.rand(c) + 0.5)
                bn.weight.copy_(torch.rand(c) + 0.5)
                bn.bias.copy_(torch.randn(c) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn2(self.fc2(torch.relu(self.bn1(self.fc1(x)))))


class LinearBnStack(nn.Module):
    """Two Linear -> BatchNorm1d -> ReLU blocks in a row on [1, 64] (64 -> 32
    -> 16), the MLP autoencoder's stack: the second addmm -> batch norm ->
    relu chain is fused next to the first (issue 21, defect 2)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.bn1 = nn.BatchNorm1d(32)
        self.fc2 = nn.Linear(32, 16)
        self.bn2 = nn.BatchNorm1d(16)
        with torch.no_grad():
            for bn in (self.bn1, self.bn2):
                c = bn.num_features
                assert bn.running_mean is not None and bn.running_var is not None
                bn.running_mean.copy_(torch.randn(c) * 0.1)
                bn.running_var.copy_(torch.rand(c) + 0.5)
                bn.weight.copy_(torch.rand(c) + 0.5)
                bn.bias.copy_(torch.randn(c) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.fc1(x)))
        return torch.relu(self.bn2(self.fc2(x)))


class LinearNdRelu(nn.Module):
    """Linear(64, 128) -> ReLU on a [2, 10, 64] input: the exporter's addmm
    on a [20, 64] view, then a [2, 10, 128] view before the relu (a
    transformer FFN's first half; issue 21, defect 3)."""

    def __init__(self) -> None:
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(64, 128), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ffn(x)


def fold_bn(m: nn.Module) -> None:
    """Folds every Conv2d-BatchNorm2d pair (eval mode) in the models above."""
    for mod in list(m.modules()):
        for conv_name, bn_name in (
            ("stem", "bn0"),
            ("head", "bn4"),
            ("expand", "bn1"),
            ("dw", "bn2"),
            ("project", "bn3"),
        ):
            conv, bn = getattr(mod, conv_name, None), getattr(mod, bn_name, None)
            if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d):
                setattr(mod, conv_name, fuse_conv_bn_eval(conv, bn))
                setattr(mod, bn_name, nn.Identity())


class BasicBlock(nn.Module):
    """ResNet basic block with an optional 1x1 stride-2 downsample shortcut."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + self.down(x))


class ResNetish(nn.Module):
    """Conv7x7/2 - BN - ReLU - MaxPool3x3/2 - 2 basic blocks - GAP - Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = BasicBlock(8, 8, 1)
        self.layer2 = BasicBlock(8, 16, 2)
        self.fc = nn.Linear(16, 10)
        randomize_bn(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        x = torch.mean(x, dim=(2, 3))
        return self.fc(x)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention written out (qkv projection, masked
    scores, softmax, weighted sum, output projection)."""

    mask: torch.Tensor

    def __init__(self, dim: int, heads: int, max_len: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer(
            "mask",
            torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)),
            persistent=False,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        hd = c // self.heads
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / hd**0.5)
        att = att.masked_fill(~self.mask[:t, :t], float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(y)


class GptBlock(nn.Module):
    def __init__(self, dim: int, heads: int, max_len: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, max_len)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))


class TinyGpt(nn.Module):
    """Token + position embedding, 2 pre-LN blocks, final LN, LM head."""

    def __init__(
        self,
        vocab: int = 64,
        dim: int = 32,
        heads: int = 2,
        max_len: int = 16,
        layers: int = 2,
    ) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.Sequential(
            *[GptBlock(dim, heads, max_len) for _ in range(layers)]
        )
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        with torch.no_grad():  # non-trivial LN affine parameters
            for mod in self.modules():
                if isinstance(mod, nn.LayerNorm):
                    mod.weight.copy_(torch.rand(dim) + 0.5)
                    mod.bias.copy_(torch.randn(dim) * 0.1)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        pos = torch.arange(t, dtype=torch.int64)
        x = self.tok(idx) + self.pos(pos)
        x = self.ln(self.blocks(x))
        return self.head(x)


class LstmModel(nn.Module):
    """One-layer LSTM over [1, 6, 8] (batch first) and a Linear on every step;
    returns the per-step outputs and the final hidden and cell states."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(
        self, x: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        y, (h, c) = self.lstm(x)
        return self.fc(y), h, c


class GruModel(nn.Module):
    """Two-layer GRU over [2, 5, 8] (batch first, batch 2); returns the
    per-step outputs of the top layer and both layers' final hidden states."""

    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(8, 16, num_layers=2, batch_first=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y, h = self.gru(x)
        return y, h


class DynSeqEncoder(nn.Module):
    """A transformer-encoder layer over [1, seq, 16] with a dynamic seq length
    (non-causal attention, softmax over seq, layer norm, mean over seq)."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.ln1 = nn.LayerNorm(16)
        self.q = nn.Linear(16, 16)
        self.k = nn.Linear(16, 16)
        self.v = nn.Linear(16, 16)
        self.ln2 = nn.LayerNorm(16)
        self.ff = nn.Linear(16, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.inp(x)
        a = self.ln1(h)
        s = torch.bmm(self.q(a), self.k(a).transpose(1, 2)) * 0.25
        h = h + torch.bmm(torch.softmax(s, dim=-1), self.v(a))
        h = h + torch.tanh(self.ff(self.ln2(h)))
        return self.out(h), self.out(h.mean(dim=1))


class NormRows(nn.Module):
    """Rows big enough (16 x 1024) for the portable layer norm, GELU (both
    forms), softmax and log_softmax to split over the pool; each output is
    reduced to one value per row so the fixture stays small."""

    def __init__(self) -> None:
        super().__init__()
        self.spread = nn.Parameter(torch.randn(16))
        self.ln1 = nn.LayerNorm(1024)
        self.ln2 = nn.LayerNorm(1024)
        self.q = nn.Parameter(torch.randn(1024))
        with torch.no_grad():
            for ln in (self.ln1, self.ln2):
                ln.weight.copy_(1 + 0.5 * torch.randn(1024))
                ln.bias.copy_(0.5 * torch.randn(1024))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = (x.unsqueeze(-1) * self.spread).reshape(x.shape[0], 1024)
        p = torch.softmax(nn.functional.gelu(self.ln1(h)) * 4, dim=-1)
        lp = torch.log_softmax(
            nn.functional.gelu(self.ln2(h), approximate="tanh"), dim=-1
        )
        return (p * self.q).sum(-1), (lp * self.q).sum(-1)
