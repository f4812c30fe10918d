"""Build an eager PyTorch model from a difftest spec (tools/difftest/grammar.py).

A spec is plain JSON: the input (shape, dtype) and a list of layers, each a
dict with an ``op`` and its parameters, some with a nested ``body`` (residual
adds and muls, concat branches, split-and-merge). Shapes follow from the
input; ``propagate`` checks every layer's preconditions and is what makes a
spec valid. ``build`` makes the module with weights drawn from the spec's
seed, batch norms with random running statistics and affine parameters (so
folding them is exercised), in eval mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

Shape = list[int]
Spec = dict[str, Any]
Layer = dict[str, Any]


class SpecError(ValueError):
    """A layer's preconditions do not hold for its input shape."""


def _need(cond: bool, msg: str) -> None:
    if not cond:
        raise SpecError(msg)


def _conv_len(n: int, k: int, s: int, p: int, d: int) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _convt_len(n: int, k: int, s: int, p: int, op: int, d: int = 1) -> int:
    return (n - 1) * s - 2 * p + d * (k - 1) + op + 1


def _pool_len(n: int, k: int, s: int, p: int, ceil: bool = False) -> int:
    num = n + 2 * p - k
    out = (num + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= n + p:
        out -= 1
    return out


# ---------------------------------------------------------------------------
# Shape rules: one function per op, (layer, input shape) -> output shape.


def _shape_linear(L: Layer, s: Shape) -> Shape:
    _need(2 <= len(s) <= 4, "linear: rank 2-4")
    return s[:-1] + [L["out"]]


def _shape_conv(L: Layer, s: Shape) -> Shape:
    nd = L["nd"]
    _need(len(s) == nd + 2, f"conv{nd}d: rank {nd + 2}")
    c = s[1]
    g = L["groups"]
    _need(c % g == 0 and L["out"] % g == 0, "conv: groups divide channels")
    out = [s[0], L["out"]]
    for n in s[2:]:
        if L.get("transposed"):
            _need(
                L["output_padding"] < max(L["stride"], L["dilation"]),
                "convT: output_padding",
            )
            m = _convt_len(
                n, L["k"], L["stride"], L["padding"], L["output_padding"], L["dilation"]
            )
        else:
            m = _conv_len(n, L["k"], L["stride"], L["padding"], L["dilation"])
        _need(m >= 1, "conv: output too small")
        out.append(m)
    return out


def _shape_bn(L: Layer, s: Shape) -> Shape:
    _need(len(s) in ((2, 3) if L["nd"] == 1 else (4,)), "batch norm rank")
    return s


def _shape_same(L: Layer, s: Shape) -> Shape:
    return s


def _shape_groupnorm(L: Layer, s: Shape) -> Shape:
    _need(len(s) >= 3 and s[1] % L["groups"] == 0, "group norm: groups divide channels")
    return s


def _shape_softmax(L: Layer, s: Shape) -> Shape:
    _need(-len(s) <= L["dim"] < len(s), "softmax dim")
    return s


def _shape_flatten(L: Layer, s: Shape) -> Shape:
    _need(len(s) >= 3, "flatten: rank >= 3")
    return [s[0], math.prod(s[1:])]


def _shape_reshape(L: Layer, s: Shape) -> Shape:
    to = [s[0]] + list(L["to"])
    _need(math.prod(to) == math.prod(s), "reshape: element count")
    return to


def _shape_permute(L: Layer, s: Shape) -> Shape:
    p = L["perm"]
    _need(
        sorted(p) == list(range(len(s))) and p[0] == 0,
        "permute: perm of the rank, batch first",
    )
    return [s[i] for i in p]


def _shape_transpose(L: Layer, s: Shape) -> Shape:
    a, b = L["dims"]
    _need(0 < a < len(s) and 0 < b < len(s), "transpose dims")
    t = list(s)
    t[a], t[b] = t[b], t[a]
    return t


def _shape_pool(L: Layer, s: Shape) -> Shape:
    nd = L["nd"]
    _need(len(s) == nd + 2, f"pool{nd}d rank")
    out = s[:2]
    for n in s[2:]:
        if L["kind"].startswith("adaptive"):
            m = L["size"]
            _need(m <= n, "adaptive pool: output <= input")
        else:
            _need(L["padding"] * 2 <= L["k"], "pool: padding <= k/2")
            m = _pool_len(n, L["k"], L["stride"], L["padding"], L.get("ceil", False))
        _need(m >= 1, "pool: output too small")
        out.append(m)
    return out


def _shape_mha(L: Layer, s: Shape) -> Shape:
    _need(
        len(s) == 3 and s[2] % L["heads"] == 0, "attention: [N, T, E], heads divide E"
    )
    return s


def _shape_rnn(L: Layer, s: Shape) -> Shape:
    _need(len(s) == 3, "rnn: [N, T, F]")
    return [s[0], s[1], L["hidden"] * (2 if L.get("bidirectional") else 1)]


def _shape_embedding(L: Layer, s: Shape) -> Shape:
    _need(len(s) == 2, "embedding: [N, T] indices")
    return s + [L["dim"]]


def _shape_reduce(L: Layer, s: Shape) -> Shape:
    # "dim": one dim, or a list of them (a global mean over H and W)
    dims = sorted(L["dim"]) if isinstance(L["dim"], list) else [L["dim"]]
    _need(all(0 < d < len(s) for d in dims), "reduce: non-batch dims")
    _need(len(set(dims)) == len(dims), "reduce: distinct dims")
    if L["keepdim"]:
        return [1 if i in dims else n for i, n in enumerate(s)]
    _need(len(s) - len(dims) >= 2, "reduce without keepdim: rank >= 2 left")
    return [n for i, n in enumerate(s) if i not in dims]


def _shape_upsample(L: Layer, s: Shape) -> Shape:
    _need(len(s) in (3, 4), "upsample: rank 3 or 4")
    _need(L["mode"] != "bilinear" or len(s) == 4, "bilinear: rank 4")
    _need(L["mode"] != "linear" or len(s) == 3, "linear: rank 3")
    return s[:2] + [n * L["scale"] for n in s[2:]]


def _shape_pad(L: Layer, s: Shape) -> Shape:
    p = L["pad"]
    _need(len(p) % 2 == 0 and len(p) // 2 <= len(s) - 1, "pad length")
    out = list(s)
    for i in range(len(p) // 2):
        d = len(s) - 1 - i
        if L["mode"] == "reflect":
            _need(max(p[2 * i], p[2 * i + 1]) < s[d], "reflect pad < size")
        out[d] = s[d] + p[2 * i] + p[2 * i + 1]
    _need(
        L["mode"] == "constant" or len(p) // 2 <= len(s) - 2,
        "non-constant pad: batch+channel",
    )
    return out


def _shape_sortlike(L: Layer, s: Shape) -> Shape:
    d = L["dim"]
    _need(0 < d < len(s) or -len(s) < d < 0, "sort dim: not the batch")
    if L["op"] == "topk":
        _need(1 <= L["k"] <= s[d], "topk: k <= size")
        out = list(s)
        out[d] = L["k"]
        return out
    return s


def _shape_body_block(L: Layer, s: Shape) -> Shape:
    t = propagate_layers(L["body"], s)
    how = L["op"]
    if how in ("residual_add", "residual_mul"):
        _need(t == s, f"{how}: body keeps the shape")
        return s
    if how == "concat":
        d = L["dim"]
        _need(0 < d < len(s), "concat: a non-batch dim")
        _need(
            len(t) == len(s) and all(t[i] == s[i] for i in range(len(s)) if i != d),
            "concat: other dims",
        )
        n = L.get("n", 2)
        _need(2 <= n <= 5, "concat: 2-5 tensors")
        out = list(s)
        out[d] = (n + 1) // 2 * s[d] + n // 2 * t[d]
        return out
    raise SpecError(f"unknown block {how}")


def _shape_split(L: Layer, s: Shape) -> Shape:
    d = L["dim"]
    _need(0 < d < len(s), "split: a non-batch dim")
    n = s[d]
    first = L["first"]
    _need(0 < first < n, "split: sizes")
    a = list(s)
    a[d] = first
    b = list(s)
    b[d] = n - first
    ta = propagate_layers(L["body"], a)
    merge = L["merge"]
    if merge == "cat":
        _need(
            len(ta) == len(a) and all(ta[i] == a[i] for i in range(len(a)) if i != d),
            "split cat",
        )
        out = list(s)
        out[d] = ta[d] + b[d]
        return out
    _need(ta == b, f"split {merge}: equal halves")
    return b


def _shape_sdpa(L: Layer, s: Shape) -> Shape:
    _need(len(s) == 3 and s[2] % L["heads"] == 0, "sdpa: [N, T, E], heads divide E")
    return s


def _shape_slice(L: Layer, s: Shape) -> Shape:
    d = L["dim"]
    _need(0 < d < len(s), "slice: a non-batch dim")
    _need(
        0 <= L["start"] and L["start"] + L["length"] <= s[d] and L["length"] >= 1,
        "slice: range",
    )
    out = list(s)
    out[d] = L["length"]
    return out


def _shape_matmul(L: Layer, s: Shape) -> Shape:
    _need(len(s) == 3, "matmul: [N, T, F]")
    return [s[0], s[1], s[1]]


def _shape_gap(L: Layer, s: Shape) -> Shape:
    _need(len(s) == 4, "global average pool: rank 4")
    return [s[0], s[1], 1, 1]


def _shape_binary(L: Layer, s: Shape) -> Shape:
    return s


_SHAPES: dict[str, Callable[[Layer, Shape], Shape]] = {
    "linear": _shape_linear,
    "conv": _shape_conv,
    "bn": _shape_bn,
    "layernorm": _shape_same,
    "groupnorm": _shape_groupnorm,
    "act": _shape_same,
    "softmax": _shape_softmax,
    "flatten": _shape_flatten,
    "reshape": _shape_reshape,
    "permute": _shape_permute,
    "transpose": _shape_transpose,
    "pool": _shape_pool,
    "mha": _shape_mha,
    "sdpa": _shape_sdpa,
    "rnn": _shape_rnn,
    "embedding": _shape_embedding,
    "reduce": _shape_reduce,
    "upsample": _shape_upsample,
    "pad": _shape_pad,
    "sort": _shape_sortlike,
    "argsort": _shape_sortlike,
    "topk": _shape_sortlike,
    "argmax": _shape_sortlike,
    "residual_add": _shape_body_block,
    "residual_mul": _shape_body_block,
    "concat": _shape_body_block,
    "split": _shape_split,
    "unary": _shape_same,
    "binary": _shape_binary,
    "slice": _shape_slice,
    "matmul": _shape_matmul,
    "gap": _shape_gap,
}

OPS = tuple(_SHAPES)


def layer_out_shape(L: Layer, s: Shape) -> Shape:
    fn = _SHAPES.get(L["op"])
    if fn is None:
        raise SpecError(f"unknown op {L['op']!r}")
    out = fn(L, list(s))
    _need(all(n >= 1 for n in out), f"{L['op']}: empty output {out}")
    _need(math.prod(out) <= 1 << 17, f"{L['op']}: output too large {out}")
    return out


def propagate_layers(layers: Sequence[Layer], s: Shape) -> Shape:
    for L in layers:
        if L["op"] == "embedding" and L is not layers[0]:
            raise SpecError("embedding: first layer only")
        s = layer_out_shape(L, s)
    return s


def propagate(spec: Spec) -> Shape:
    """Output shape of the main path; raises SpecError if the spec is invalid."""
    layers = spec["layers"]
    tok = spec["input"]["dtype"] == "i64"
    _need(
        tok == (bool(layers) and layers[0]["op"] == "embedding"),
        "integer input <=> embedding first",
    )
    _need(len(spec["input"]["shape"]) >= 2, "input rank >= 2")
    return propagate_layers(layers, list(spec["input"]["shape"]))


# ---------------------------------------------------------------------------
# Modules


_ACTS: dict[str, Callable[[Layer], nn.Module]] = {
    "relu": lambda L: nn.ReLU(),
    "relu6": lambda L: nn.ReLU6(),
    "hardtanh": lambda L: nn.Hardtanh(L.get("min", -1.0), L.get("max", 1.0)),
    "gelu": lambda L: nn.GELU(approximate=L.get("approximate", "none")),
    "silu": lambda L: nn.SiLU(),
    "hardswish": lambda L: nn.Hardswish(),
    "sigmoid": lambda L: nn.Sigmoid(),
    "tanh": lambda L: nn.Tanh(),
}
ACTS = tuple(_ACTS)


def _randomize_bn(bn: nn.Module, g: torch.Generator) -> None:
    """Running statistics and affine parameters away from identity, so that
    folding a batch norm into its producer changes the numbers."""
    n = bn.num_features
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(n, generator=g) * 0.5)
        bn.running_var.copy_(torch.rand(n, generator=g) * 1.5 + 0.25)
        if bn.affine:
            bn.weight.copy_(torch.rand(n, generator=g) * 1.5 + 0.25)
            bn.bias.copy_(torch.randn(n, generator=g) * 0.3)


class Act(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.f = _ACTS[L["fn"]](L)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.f(x)


class Softmax(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.dim = L["dim"]
        self.log = bool(L.get("log", False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (
            torch.log_softmax(x, self.dim) if self.log else torch.softmax(x, self.dim)
        )


class Flatten(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(x, 1)


class Reshape(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.to = list(L["to"])
        self.view = L.get("view", False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = [x.shape[0]] + self.to
        return x.view(shape) if self.view and x.is_contiguous() else x.reshape(shape)


class Permute(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.perm = list(L["perm"])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(self.perm)


class Transpose(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.a, self.b = L["dims"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(self.a, self.b)


def _pool(L: Layer) -> nn.Module:
    nd, kind = L["nd"], L["kind"]
    if kind == "max":
        cls = nn.MaxPool1d if nd == 1 else nn.MaxPool2d
        return cls(L["k"], L["stride"], L["padding"], ceil_mode=L.get("ceil", False))
    if kind == "avg":
        cls = nn.AvgPool1d if nd == 1 else nn.AvgPool2d
        return cls(
            L["k"],
            L["stride"],
            L["padding"],
            ceil_mode=L.get("ceil", False),
            count_include_pad=L.get("count_include_pad", True),
        )
    if kind == "adaptive_avg":
        return (nn.AdaptiveAvgPool1d if nd == 1 else nn.AdaptiveAvgPool2d)(L["size"])
    return (nn.AdaptiveMaxPool1d if nd == 1 else nn.AdaptiveMaxPool2d)(L["size"])


class Mha(nn.Module):
    def __init__(self, L: Layer, e: int) -> None:
        super().__init__()
        self.att = nn.MultiheadAttention(
            e, L["heads"], batch_first=True, bias=L.get("bias", True)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.att(x, x, x, need_weights=False)[0]


class Sdpa(nn.Module):
    """q, k, v projections, F.scaled_dot_product_attention over heads, output
    projection (the transformer block's attention written by hand)."""

    def __init__(self, L: Layer, e: int) -> None:
        super().__init__()
        self.heads = L["heads"]
        self.causal = bool(L.get("causal", False))
        self.qkv = nn.Linear(e, 3 * e)
        self.proj = nn.Linear(e, e)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, t, e = x.shape
        h = self.heads
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(n, t, h, e // h).transpose(1, 2)
        k = k.reshape(n, t, h, e // h).transpose(1, 2)
        v = v.reshape(n, t, h, e // h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.proj(y.transpose(1, 2).reshape(n, t, e))


class Rnn(nn.Module):
    def __init__(self, L: Layer, f: int) -> None:
        super().__init__()
        cls = nn.GRU if L["cell"] == "gru" else nn.LSTM
        self.rnn = cls(
            f,
            L["hidden"],
            num_layers=L.get("layers", 1),
            batch_first=True,
            bidirectional=L.get("bidirectional", False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)[0]


class Reduce(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.fn = L["fn"]
        self.dim = tuple(L["dim"]) if isinstance(L["dim"], list) else L["dim"]
        self.keepdim = L["keepdim"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fn == "sum":
            return x.sum(self.dim, keepdim=self.keepdim)
        return x.mean(self.dim, keepdim=self.keepdim)


class Upsample(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.scale = L["scale"]
        self.mode = L["mode"]
        self.align = (
            L.get("align_corners", False)
            if self.mode in ("bilinear", "linear")
            else None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(
            x, scale_factor=self.scale, mode=self.mode, align_corners=self.align
        )


class Pad(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.pad = list(L["pad"])
        self.mode = L["mode"]
        self.value = float(L.get("value", 0.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mode == "constant":
            return F.pad(x, self.pad, "constant", self.value)
        return F.pad(x, self.pad, self.mode)


class SortLike(nn.Module):
    """sort / argsort / topk / argmax. The main path continues with the
    values (argsort and argmax leave it unchanged); the indices are an extra
    output of the model, checked by what they select (compare.py)."""

    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.op = L["op"]
        self.dim = L["dim"]
        self.desc = bool(L.get("descending", False))
        self.k = L.get("k", 1)
        self.keepdim = bool(L.get("keepdim", False))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # (no stable= argument: torch.sort(x, stable=...) is aten.sort.stable,
        # which the exporter rejects as not core ATen; real programs call
        # the default overload)
        if self.op == "sort":
            v, i = torch.sort(x, dim=self.dim, descending=self.desc)
            return v, i
        if self.op == "argsort":
            return x, torch.argsort(x, dim=self.dim, descending=self.desc)
        if self.op == "topk":
            v, i = torch.topk(
                x, self.k, dim=self.dim, largest=not self.desc, sorted=True
            )
            return v, i
        return x, torch.argmax(x, dim=self.dim, keepdim=self.keepdim)


class Unary(nn.Module):
    """Elementwise functions (each kept inside its domain)."""

    def __init__(self, L: Layer, c: int) -> None:
        super().__init__()
        self.fn = L["fn"]
        self.prelu = nn.PReLU(c) if self.fn == "prelu" else None
        self.slope = float(L.get("slope", 0.1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.fn
        if f == "abs":
            return torch.abs(x)
        if f == "neg":
            return torch.neg(x)
        if f == "sqrt":
            return torch.sqrt(torch.abs(x) + 0.25)
        if f == "rsqrt":
            return torch.rsqrt(x * x + 0.25)
        if f == "log":
            return torch.log(torch.abs(x) + 0.5)
        if f == "exp":
            return torch.exp(torch.clamp(x, -8.0, 4.0))
        if f == "sin":
            return torch.sin(x)
        if f == "cos":
            return torch.cos(x)
        if f == "square":
            return torch.square(x)
        if f == "elu":
            return F.elu(x)
        if f == "leaky_relu":
            return F.leaky_relu(x, self.slope)
        if f == "prelu":
            assert self.prelu is not None
            return self.prelu(x)
        if f == "floor":
            return torch.floor(x * 2.0)
        if f == "ceil":
            return torch.ceil(x * 2.0)
        raise SpecError(f"unary {f}")


class Binary(nn.Module):
    """x op c, c a constant of the last dim's size."""

    def __init__(self, L: Layer, n: int, g: torch.Generator) -> None:
        super().__init__()
        self.fn = L["fn"]
        self.register_buffer("c", torch.randn(n, generator=g))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fn == "sub":
            return x - self.c
        if self.fn == "div":
            return x / (torch.abs(self.c) + 0.5)
        if self.fn == "maximum":
            return torch.maximum(x, self.c)
        return torch.minimum(x, self.c)


class Slice(nn.Module):
    def __init__(self, L: Layer) -> None:
        super().__init__()
        self.dim, self.start, self.length = L["dim"], L["start"], L["length"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.narrow(x, self.dim, self.start, self.length)


class MatMul(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, x.transpose(1, 2)) * (x.shape[-1] ** -0.5)


class Gap(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean((2, 3), keepdim=True)


class Seq(nn.Module):
    """A chain of layers; index outputs of sort-like layers are collected."""

    def __init__(self, mods: list[nn.Module]) -> None:
        super().__init__()
        self.mods = nn.ModuleList(mods)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        side: list[torch.Tensor] = []
        for m in self.mods:
            if isinstance(m, SortLike):
                x, i = m(x)
                side.append(i)
            elif isinstance(m, (Block, Split)):
                x, s = m(x)
                side.extend(s)
            else:
                x = m(x)
        return x, side


class Block(nn.Module):
    def __init__(self, L: Layer, body: Seq) -> None:
        super().__init__()
        self.how = L["op"]
        self.dim = L.get("dim", 1)
        self.gate = L.get("gate", "sigmoid")
        self.swap = bool(L.get("swap", False))  # residual_add: body(x) + x
        self.n = L.get("n", 2)
        self.body = body

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        y, side = self.body(x)
        if self.how == "residual_add":
            return (y + x if self.swap else x + y), side
        if self.how == "residual_mul":
            return (x * torch.sigmoid(y) if self.gate == "sigmoid" else x * y), side
        parts = [x, y, x, y, x][: self.n]
        return torch.cat(parts, dim=self.dim), side


class Split(nn.Module):
    def __init__(self, L: Layer, body: Seq, n: int) -> None:
        super().__init__()
        self.dim = L["dim"]
        self.sizes = [L["first"], n - L["first"]]
        self.chunk = L.get("chunk", False) and self.sizes[0] == self.sizes[1]
        self.merge = L["merge"]
        self.body = body

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        if self.chunk:
            a, b = x.chunk(2, dim=self.dim)
        else:
            a, b = torch.split(x, self.sizes, dim=self.dim)
        y, side = self.body(a)
        if self.merge == "cat":
            return torch.cat([y, b], dim=self.dim), side
        if self.merge == "add":
            return y + b, side
        return y * torch.sigmoid(b), side


def _make(L: Layer, s: Shape, g: torch.Generator) -> nn.Module:
    op = L["op"]
    if op == "linear":
        return nn.Linear(s[-1], L["out"], bias=L.get("bias", True))
    if op == "conv":
        nd, tr = L["nd"], L.get("transposed", False)
        if tr:
            cls = nn.ConvTranspose1d if nd == 1 else nn.ConvTranspose2d
            return cls(
                s[1],
                L["out"],
                L["k"],
                L["stride"],
                L["padding"],
                L["output_padding"],
                groups=L["groups"],
                bias=L.get("bias", True),
                dilation=L["dilation"],
            )
        cls = nn.Conv1d if nd == 1 else nn.Conv2d
        return cls(
            s[1],
            L["out"],
            L["k"],
            L["stride"],
            L["padding"],
            L["dilation"],
            L["groups"],
            bias=L.get("bias", True),
            padding_mode=L.get("padding_mode", "zeros"),
        )
    if op == "bn":
        bn = (nn.BatchNorm1d if L["nd"] == 1 else nn.BatchNorm2d)(
            s[1], affine=L.get("affine", True)
        )
        _randomize_bn(bn, g)
        return bn
    if op == "layernorm":
        ln = nn.LayerNorm(
            s[-L.get("dims", 1) :], elementwise_affine=L.get("affine", True)
        )
        if L.get("affine", True):
            with torch.no_grad():
                ln.weight.copy_(torch.rand(ln.weight.shape, generator=g) + 0.5)
                ln.bias.copy_(torch.randn(ln.bias.shape, generator=g) * 0.2)
        return ln
    if op == "groupnorm":
        gn = nn.GroupNorm(L["groups"], s[1])
        with torch.no_grad():
            gn.weight.copy_(torch.rand(s[1], generator=g) + 0.5)
            gn.bias.copy_(torch.randn(s[1], generator=g) * 0.2)
        return gn
    if op == "act":
        return Act(L)
    if op == "softmax":
        return Softmax(L)
    if op == "flatten":
        return Flatten()
    if op == "reshape":
        return Reshape(L)
    if op == "permute":
        return Permute(L)
    if op == "transpose":
        return Transpose(L)
    if op == "pool":
        return _pool(L)
    if op == "mha":
        return Mha(L, s[2])
    if op == "sdpa":
        return Sdpa(L, s[2])
    if op == "rnn":
        return Rnn(L, s[2])
    if op == "embedding":
        return nn.Embedding(L["vocab"], L["dim"])
    if op == "reduce":
        return Reduce(L)
    if op == "upsample":
        return Upsample(L)
    if op == "pad":
        return Pad(L)
    if op in ("sort", "argsort", "topk", "argmax"):
        return SortLike(L)
    if op == "unary":
        return Unary(L, s[1] if len(s) >= 2 else 1)
    if op == "binary":
        return Binary(L, s[-1], g)
    if op == "slice":
        return Slice(L)
    if op == "matmul":
        return MatMul()
    if op == "gap":
        return Gap()
    if op in ("residual_add", "residual_mul", "concat"):
        return Block(L, _make_seq(L["body"], s, g))
    if op == "split":
        d = L["dim"]
        a = list(s)
        a[d] = L["first"]
        return Split(L, _make_seq(L["body"], a, g), s[d])
    raise SpecError(f"unknown op {op!r}")


def _make_seq(layers: Sequence[Layer], s: Shape, g: torch.Generator) -> Seq:
    mods = []
    for L in layers:
        mods.append(_make(L, s, g))
        s = layer_out_shape(L, s)
    return Seq(mods)


class Net(nn.Module):
    def __init__(self, seq: Seq) -> None:
        super().__init__()
        self.seq = seq

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y, side = self.seq(x)
        return (y, *side)


def build(spec: Spec) -> Net:
    """The eager model of a valid spec, in eval mode, weights from spec['seed']."""
    propagate(spec)
    torch.manual_seed(spec["seed"])
    g = torch.Generator().manual_seed(spec["seed"] + 1)
    net = Net(_make_seq(spec["layers"], list(spec["input"]["shape"]), g))
    if spec.get("share"):
        share_weights(net)
    return net.eval()


def share_weights(net: nn.Module) -> None:
    """Every parameter takes the values of the first one of its shape (a
    repeated block's second instance, a Linear head of an embedding's shape):
    equal constants, which the exporter stores once, so several values of the
    program name the same bytes (cloned layer stacks, tied embeddings)."""
    first: dict[tuple[int, ...], torch.Tensor] = {}
    with torch.no_grad():
        for p in net.parameters():
            key = tuple(p.shape)
            if key in first:
                p.copy_(first[key])
            else:
                first[key] = p.detach().clone()


def make_input(spec: Spec) -> torch.Tensor:
    """The spec's input: uniform [-2, 2) floats, or token ids."""
    g = torch.Generator().manual_seed(spec["seed"] + 2)
    shape = spec["input"]["shape"]
    if spec["input"]["dtype"] == "i64":
        return torch.randint(
            0, spec["layers"][0]["vocab"], shape, generator=g, dtype=torch.int64
        )
    return torch.rand(shape, generator=g) * 4 - 2


def index_layers(layers: Sequence[Layer]) -> list[Layer]:
    """Sort-like layers in the order their index outputs appear."""
    out: list[Layer] = []
    for L in layers:
        if L["op"] in ("sort", "argsort", "topk", "argmax"):
            out.append(L)
        if "body" in L:
            out.extend(index_layers(L["body"]))
    return out


def capture_index_inputs(
    net: Net, x: torch.Tensor
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Eager outputs and, per index output, the tensor its layer sorted (the
    indices are checked by what they select from it)."""
    seen: list[torch.Tensor] = []
    hooks = []
    for m in net.modules():
        if isinstance(m, SortLike):
            hooks.append(
                m.register_forward_hook(
                    lambda mod, inp, out: seen.append(inp[0].detach())
                )
            )
    try:
        with torch.no_grad():
            outs = list(net(x))
    finally:
        for h in hooks:
            h.remove()
    return outs, seen
