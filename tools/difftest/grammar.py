"""Random, valid difftest specs from a grammar of the layers real programs use.

``generate(seed)`` is deterministic: the same seed gives the same spec (and,
through model.build, the same weights). A spec is a chain of 1-12 layers on a
random input (vectors [N, F], sequences [N, T, F], signals [N, C, L], images
[N, C, H, W], token ids [N, T]); blocks with a body make it a DAG (residual
add / mul, concat with a branch, split -> body -> merge), and a block
template is sometimes instantiated twice in a row with fresh widths (the
"same block repeated" case: Linear -> BatchNorm1d -> ReLU twice). A third of
the specs share weights ("share": parameters of equal shape get equal
values, which the exporter stores once; token models get a tied head).

Each generator below proposes one layer for the current shape; the spec is
checked by model.propagate, and a proposal whose preconditions fail is
dropped and another drawn.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from .model import ACTS, Layer, Shape, Spec, SpecError, layer_out_shape, propagate

Gen = Callable[[random.Random, Shape], Layer | None]

WIDTHS = (1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 24, 31, 32, 48, 64, 96, 128)


def _width(r: random.Random, big: bool = False) -> int:
    if big and r.random() < 0.25:
        return r.choice((160, 256, 300))
    return r.choice(WIDTHS[2:])


def g_linear(r: random.Random, s: Shape) -> Layer | None:
    if not 2 <= len(s) <= 4:
        return None
    return {
        "op": "linear",
        "out": _width(r, big=len(s) == 2),
        "bias": r.random() < 0.85,
    }


def g_conv(r: random.Random, s: Shape) -> Layer | None:
    if len(s) not in (3, 4):
        return None
    nd = len(s) - 2
    c = s[1]
    kind = r.choice(
        ("plain", "plain", "depthwise", "grouped", "pointwise", "transposed")
    )
    k = r.choice((1, 2, 3, 3, 5)) if kind != "pointwise" else 1
    stride = r.choice((1, 1, 1, 2, 3))
    dil = r.choice((1, 1, 1, 2))
    pad = r.choice((0, k // 2 * dil, 1))
    out = r.choice((4, 8, 12, 16, 24, 32))
    groups = 1
    if kind == "depthwise":
        groups = c
        out = c * r.choice((1, 1, 2))
    elif kind == "grouped":
        divs = [d for d in (2, 3, 4, 8) if c % d == 0]
        if not divs:
            return None
        groups = r.choice(divs)
        out = groups * r.choice((1, 2, 4))
    L: Layer = {
        "op": "conv",
        "nd": nd,
        "out": out,
        "k": k,
        "stride": stride,
        "padding": pad,
        "dilation": dil,
        "groups": groups,
        "bias": r.random() < 0.8,
    }
    if kind == "transposed":
        L["transposed"] = True
        L["dilation"] = 1
        L["stride"] = r.choice((1, 2, 2))
        L["padding"] = r.choice((0, k // 2))
        L["output_padding"] = r.choice((0, 1)) if L["stride"] > 1 else 0
        if r.random() < 0.3 and c % 2 == 0:
            L["groups"] = 2
            L["out"] = 2 * r.choice((2, 4, 8))
    elif r.random() < 0.1 and pad > 0:
        L["padding_mode"] = r.choice(("reflect", "replicate", "circular"))
    return L


def g_bn(r: random.Random, s: Shape) -> Layer | None:
    if len(s) in (2, 3):
        return {"op": "bn", "nd": 1, "affine": r.random() < 0.9}
    if len(s) == 4:
        return {"op": "bn", "nd": 2, "affine": r.random() < 0.9}
    return None


def g_layernorm(r: random.Random, s: Shape) -> Layer | None:
    return {
        "op": "layernorm",
        "dims": 2 if len(s) >= 3 and r.random() < 0.2 else 1,
        "affine": r.random() < 0.9,
    }


def g_groupnorm(r: random.Random, s: Shape) -> Layer | None:
    if len(s) < 3:
        return None
    divs = [d for d in (1, 2, 3, 4, 8) if s[1] % d == 0]
    return {"op": "groupnorm", "groups": r.choice(divs)}


def g_act(r: random.Random, s: Shape) -> Layer | None:
    fn = r.choice(ACTS + ("relu", "relu"))
    L: Layer = {"op": "act", "fn": fn}
    if fn == "hardtanh":
        L["min"], L["max"] = r.choice(((-1.0, 1.0), (0.0, 6.0), (-0.5, 2.0)))
    if fn == "gelu":
        L["approximate"] = r.choice(("none", "tanh"))
    return L


def g_softmax(r: random.Random, s: Shape) -> Layer | None:
    return {"op": "softmax", "dim": r.choice((-1, -1, 1)), "log": r.random() < 0.2}


def g_flatten(r: random.Random, s: Shape) -> Layer | None:
    return {"op": "flatten"} if len(s) >= 3 else None


def _factor(r: random.Random, n: int) -> tuple[int, int] | None:
    ds = [d for d in range(2, n) if n % d == 0]
    if not ds:
        return None
    a = r.choice(ds)
    return a, n // a


def g_reshape(r: random.Random, s: Shape) -> Layer | None:
    rest = math.prod(s[1:])
    view = r.random() < 0.5
    if len(s) == 2 or (len(s) >= 3 and r.random() < 0.3):
        f = _factor(r, rest)
        if f is None:
            return None
        if len(s) == 2 or r.random() < 0.5:
            return {"op": "reshape", "to": list(f), "view": view}
        g = _factor(r, f[1])
        if g is None:
            return {"op": "reshape", "to": list(f), "view": view}
        return {"op": "reshape", "to": [f[0], *g], "view": view}
    if len(s) == 4:
        return {"op": "reshape", "to": [s[1], s[2] * s[3]], "view": view}
    if len(s) == 3:
        return {"op": "reshape", "to": [s[1] * s[2]], "view": view}
    return None


def g_permute(r: random.Random, s: Shape) -> Layer | None:
    if len(s) < 3:
        return None
    p = list(range(1, len(s)))
    while p == sorted(p):
        r.shuffle(p)
    return {"op": "permute", "perm": [0, *p]}


def g_transpose(r: random.Random, s: Shape) -> Layer | None:
    if len(s) < 3:
        return None
    a, b = r.sample(range(1, len(s)), 2)
    return {"op": "transpose", "dims": [a, b]}


def g_pool(r: random.Random, s: Shape) -> Layer | None:
    if len(s) not in (3, 4):
        return None
    nd = len(s) - 2
    # adaptive max pooling exports as aten.adaptive_max_pool2d, not core ATen:
    # the exporter rejects it.
    kind = r.choice(("max", "max", "avg", "avg", "adaptive_avg"))
    if kind.startswith("adaptive"):
        return {"op": "pool", "nd": nd, "kind": kind, "size": r.choice((1, 1, 2, 3))}
    k = r.choice((2, 2, 3))
    L: Layer = {
        "op": "pool",
        "nd": nd,
        "kind": kind,
        "k": k,
        "stride": r.choice((1, 2, 2, k)),
        "padding": r.choice((0, 0, k // 2)),
        "ceil": r.random() < 0.2,
    }
    if kind == "avg":
        L["count_include_pad"] = r.random() < 0.7
    return L


def g_mha(r: random.Random, s: Shape) -> Layer | None:
    if len(s) != 3:
        return None
    hs = [h for h in (1, 2, 4) if s[2] % h == 0]
    return {"op": "mha", "heads": r.choice(hs)}


def g_sdpa(r: random.Random, s: Shape) -> Layer | None:
    if len(s) != 3:
        return None
    hs = [h for h in (1, 2, 4) if s[2] % h == 0]
    return {"op": "sdpa", "heads": r.choice(hs), "causal": r.random() < 0.4}


def g_rnn(r: random.Random, s: Shape) -> Layer | None:
    if len(s) != 3 or s[1] > 8:  # (the exporter unrolls the steps: slow to export)
        return None
    return {
        "op": "rnn",
        "cell": r.choice(("gru", "lstm")),
        "hidden": r.choice((4, 8, 12, 16, 32)),
        "layers": r.choice((1, 1, 2)),
        "bidirectional": r.random() < 0.2,
    }


def g_reduce(r: random.Random, s: Shape) -> Layer | None:
    keep = len(s) < 3 or r.random() < 0.5
    return {
        "op": "reduce",
        "fn": r.choice(("mean", "mean", "sum")),
        "dim": r.randrange(1, len(s)),
        "keepdim": keep,
    }


def g_upsample(r: random.Random, s: Shape) -> Layer | None:
    if len(s) not in (3, 4):
        return None
    mode = r.choice(("nearest", "nearest", "bilinear" if len(s) == 4 else "linear"))
    L: Layer = {"op": "upsample", "scale": 2, "mode": mode}
    if mode != "nearest":
        L["align_corners"] = r.random() < 0.3
    return L


def g_pad(r: random.Random, s: Shape) -> Layer | None:
    mode = r.choice(("constant", "constant", "reflect", "replicate"))
    nd = 1 if len(s) <= 3 or r.random() < 0.5 else 2
    if mode != "constant":
        if len(s) not in (3, 4):
            mode = "constant"
        else:
            nd = len(s) - 2  # ATen pads every spatial dim in these modes
    pad = [r.choice((0, 1, 2)) for _ in range(2 * nd)]
    if not any(pad):
        pad[0] = 1
    L: Layer = {"op": "pad", "pad": pad, "mode": mode}
    if mode == "constant":
        L["value"] = r.choice((0.0, 0.0, 0.5, -1.0))
    return L


def g_sortlike(r: random.Random, s: Shape) -> Layer | None:
    op = r.choice(("sort", "sort", "argsort", "topk", "argmax"))
    dim = r.choice((-1, -1, r.randrange(1, len(s))))
    L: Layer = {"op": op, "dim": dim, "descending": r.random() < 0.5}
    # stable=True exports as aten.sort.stable, which is not core ATen: the
    # exporter rejects it, so real programs use the default.
    if op == "topk":
        L["k"] = r.randint(1, min(s[dim], 8))
    if op == "argmax":
        del L["descending"]
        L["keepdim"] = r.random() < 0.5
    return L


UNARY = (
    "abs",
    "neg",
    "sqrt",
    "rsqrt",
    "log",
    "exp",
    "sin",
    "cos",
    "square",
    "elu",
    "leaky_relu",
    "prelu",
)


def g_unary(r: random.Random, s: Shape) -> Layer | None:
    L: Layer = {"op": "unary", "fn": r.choice(UNARY)}
    if L["fn"] == "leaky_relu":
        L["slope"] = r.choice((0.01, 0.1, 0.2))
    return L


def g_binary(r: random.Random, s: Shape) -> Layer | None:
    return {"op": "binary", "fn": r.choice(("sub", "div", "maximum", "minimum"))}


def g_slice(r: random.Random, s: Shape) -> Layer | None:
    d = r.randrange(1, len(s))
    if s[d] < 2:
        return None
    length = r.randint(1, s[d] - 1)
    return {
        "op": "slice",
        "dim": d,
        "start": r.randint(0, s[d] - length),
        "length": length,
    }


def g_matmul(r: random.Random, s: Shape) -> Layer | None:
    return {"op": "matmul"} if len(s) == 3 and s[1] <= 32 else None


def g_gap(r: random.Random, s: Shape) -> Layer | None:
    return {"op": "gap"} if len(s) == 4 else None


# (generator, weight): how often each layer is proposed.
GENERATORS: list[tuple[Gen, float]] = [
    (g_linear, 4),
    (g_conv, 4),
    (g_bn, 3),
    (g_layernorm, 1),
    (g_groupnorm, 0.7),
    (g_act, 5),
    (g_softmax, 0.7),
    (g_flatten, 0.7),
    (g_reshape, 0.7),
    (g_permute, 0.6),
    (g_transpose, 0.6),
    (g_pool, 1.5),
    (g_mha, 0.6),
    (g_sdpa, 0.6),
    (g_rnn, 0.5),
    (g_reduce, 0.6),
    (g_upsample, 0.6),
    (g_pad, 0.6),
    (g_sortlike, 0.6),
    (g_unary, 1.2),
    (g_binary, 0.6),
    (g_slice, 0.5),
    (g_matmul, 0.4),
    (g_gap, 0.5),
]

# Shape-keeping layers a residual body may use.
KEEPING: list[tuple[Gen, float]] = [
    (g_act, 4),
    (g_bn, 2),
    (g_layernorm, 1),
    (g_groupnorm, 0.5),
]


def _keep_linear(r: random.Random, s: Shape) -> Layer | None:
    return (
        {"op": "linear", "out": s[-1], "bias": r.random() < 0.85}
        if 2 <= len(s) <= 4
        else None
    )


def _keep_conv(r: random.Random, s: Shape) -> Layer | None:
    if len(s) not in (3, 4):
        return None
    k = r.choice((1, 3, 3, 5))
    dw = r.random() < 0.4
    return {
        "op": "conv",
        "nd": len(s) - 2,
        "out": s[1],
        "k": k,
        "stride": 1,
        "padding": k // 2,
        "dilation": 1,
        "groups": s[1] if dw else 1,
        "bias": r.random() < 0.8,
    }


KEEPING += [(_keep_linear, 3), (_keep_conv, 3), (g_sdpa, 0.3), (g_mha, 0.3)]


def _pick(r: random.Random, table: list[tuple[Gen, float]], s: Shape) -> Layer | None:
    gens, weights = zip(*table, strict=True)
    for _ in range(20):
        g = r.choices(gens, weights)[0]
        L = g(r, s)
        if L is None:
            continue
        try:
            layer_out_shape(L, s)
        except SpecError:
            continue
        return L
    return None


def _chain(
    r: random.Random, table: list[tuple[Gen, float]], s: Shape, n: int, keep: bool
) -> list[Layer]:
    out: list[Layer] = []
    for _ in range(n):
        L = _pick(r, table, s)
        if L is None:
            break
        t = layer_out_shape(L, s)
        if keep and t != s:
            continue
        out.append(L)
        s = t
    return out


def _block(r: random.Random, s: Shape) -> Layer | None:
    kind = r.choice(("residual_add", "residual_add", "residual_mul", "concat", "split"))
    if kind in ("residual_add", "residual_mul", "concat"):
        body = _chain(r, KEEPING, s, r.randint(1, 3), keep=True)
        if not body:
            return None
        L: Layer = {"op": kind, "body": body}
        if kind == "residual_mul":
            L["gate"] = r.choice(("sigmoid", "none"))
        if kind == "concat":
            L["dim"] = 1 if len(s) >= 3 and r.random() < 0.6 else len(s) - 1
            L["n"] = r.choice((2, 2, 3, 4, 5))
        return L
    d = 1 if len(s) >= 3 and r.random() < 0.5 else len(s) - 1
    n = s[d]
    if n < 2:
        return None
    merge = r.choice(("cat", "add", "glu"))
    first = n // 2 if merge != "cat" or r.random() < 0.5 else r.randint(1, n - 1)
    if merge != "cat" and n % 2:
        merge = "cat"
    a = list(s)
    a[d] = first
    body = _chain(r, KEEPING, a, r.randint(1, 2), keep=True)
    if not body:
        return None
    return {
        "op": "split",
        "dim": d,
        "first": first,
        "merge": merge,
        "chunk": r.random() < 0.5,
        "body": body,
    }


def _fresh_widths(r: random.Random, layers: list[Layer]) -> list[Layer]:
    """The same block with new output widths (the second Linear -> BN -> ReLU
    of an MLP narrows, like 64 -> 32 -> 16)."""
    out = []
    for L in layers:
        M = dict(L)
        if M["op"] == "linear" and r.random() < 0.7:
            M["out"] = _width(r)
        if M["op"] == "conv" and M.get("groups", 1) == 1 and r.random() < 0.7:
            M["out"] = r.choice((4, 8, 12, 16, 24, 32))
        out.append(M)
    return out


def _motif(r: random.Random, s: Shape) -> list[Layer] | None:
    """A block real programs are made of (and the fusion patterns target):
    Linear/Conv -> BatchNorm -> activation, Linear -> activation, a
    depthwise-separable pair, a pre-norm FFN."""
    act = r.choice(("relu", "relu", "relu6", "hardtanh", "gelu", "silu", "hardswish"))
    a: Layer = {"op": "act", "fn": act}
    if act == "hardtanh":
        a["min"], a["max"] = r.choice(((-1.0, 1.0), (0.0, 6.0)))
    lin = g_linear(r, s)
    conv = g_conv(r, s)
    bn = g_bn(r, s)
    choices: list[list[Layer]] = []
    if lin is not None:
        choices += [[lin, a], [lin, a]]
        if bn is not None and len(s) == 2:
            choices += [[lin, bn, a], [lin, bn, a], [lin, bn]]
        choices.append(
            [
                {"op": "layernorm", "dims": 1, "affine": True},
                lin,
                {"op": "act", "fn": "gelu"},
            ]
        )
    if conv is not None and bn is not None:
        choices += [[conv, bn, a], [conv, bn, a], [conv, bn], [conv, a]]
        if len(s) == 4:
            dw = {**conv, "groups": s[1], "out": s[1], "transposed": False}
            dw.pop("output_padding", None)
            dw.pop("padding_mode", None)
            pw = {
                "op": "conv",
                "nd": 2,
                "out": r.choice((8, 16, 24)),
                "k": 1,
                "stride": 1,
                "padding": 0,
                "dilation": 1,
                "groups": 1,
                "bias": False,
            }
            choices.append(
                [
                    dw,
                    {"op": "bn", "nd": 2, "affine": True},
                    {"op": "act", "fn": "relu6"},
                    pw,
                    {"op": "bn", "nd": 2, "affine": True},
                ]
            )
    if not choices:
        return None
    return [dict(x) for x in r.choice(choices)]


def _input(r: random.Random) -> tuple[Shape, str]:
    kind = r.choice(("vec", "vec", "seq", "sig", "img", "img", "img", "tok"))
    n = r.choice((1, 1, 2, 3, 4, 8, 16, 33))
    if kind == "vec":
        return [n, _width(r, big=True)], "f32"
    if kind == "seq":
        return [
            min(n, 4),
            r.choice((1, 3, 5, 8, 10)),
            r.choice((4, 8, 12, 16, 32, 64)),
        ], "f32"
    if kind == "sig":
        return [
            min(n, 4),
            r.choice((1, 2, 3, 4, 8, 16)),
            r.choice((5, 8, 16, 24, 33)),
        ], "f32"
    if kind == "img":
        hw = r.choice((3, 5, 8, 9, 12, 16, 20))
        return [
            min(n, 2),
            r.choice((1, 3, 4, 8, 16)),
            hw,
            r.choice((hw, hw, 7, 11)),
        ], "f32"
    return [min(n, 4), r.choice((1, 4, 7, 12))], "i64"


def generate(seed: int, max_layers: int = 12) -> Spec:
    """A random valid spec; the same seed gives the same spec."""
    r = random.Random(seed)
    while True:
        shape, dtype = _input(r)
        layers: list[Layer] = []
        s = list(shape)
        if dtype == "i64":
            L = {
                "op": "embedding",
                "vocab": r.choice((10, 50, 300)),
                "dim": r.choice((8, 16, 32)),
            }
            layers.append(L)
            s = layer_out_shape(L, s)
        target = r.randint(1, max_layers)
        if dtype == "f32" and r.random() < 0.05:
            # floor / ceil only on the exact input: anywhere else a last-bit
            # difference upstream moves a result by a whole step
            layers.append({"op": "unary", "fn": r.choice(("floor", "ceil"))})
        while len(layers) < target:
            u = r.random()
            if u < 0.3 and len(layers) + 4 <= max_layers:
                # the same block twice: a template of 2-5 layers, instantiated again
                if r.random() < 0.7:
                    tmpl = _motif(r, s) or []
                    try:
                        propagate_any(tmpl, s)
                    except SpecError:
                        continue
                else:
                    tmpl = _chain(r, GENERATORS, s, r.randint(2, 3), keep=False)
                if len(tmpl) < 2 or len(layers) + 2 * len(tmpl) > max_layers + 2:
                    continue
                if r.random() < 0.3:  # sometimes just once
                    layers += tmpl
                    s = propagate_any(tmpl, s)
                    continue
                second = _fresh_widths(r, tmpl)
                try:
                    t = propagate_any(tmpl + second, s)
                except SpecError:
                    try:
                        t = propagate_any(tmpl + tmpl, s)
                        second = tmpl
                    except SpecError:
                        continue
                layers += tmpl + [dict(x) for x in second]
                s = t
                continue
            if u < 0.35:
                L = _block(r, s)
            else:
                L = _pick(r, GENERATORS, s)
            if L is None:
                continue
            try:
                s = layer_out_shape(L, s)
            except SpecError:
                continue
            layers.append(L)
        spec: Spec = {
            "version": 1,
            "seed": seed,
            "input": {"shape": shape, "dtype": dtype},
            "layers": layers[: max_layers + 1],
        }
        # Shared weights from a second stream, so that the specs of earlier
        # seeds stay what they were (model.share_weights); token models get a
        # tied head (a Linear back to the vocabulary) when the shape allows.
        rs = random.Random(seed * 7919 + 17)
        if rs.random() < 0.3:
            spec["share"] = True
            first = spec["layers"][0]
            if dtype == "i64" and s[-1] == first["dim"] and len(s) == 3:
                spec["layers"].append(
                    {"op": "linear", "out": first["vocab"], "bias": False}
                )
        u = r.random()
        if dtype == "f32" and u < 0.3:
            # PT2E int8 (XNNPACKQuantizer): static or dynamic, on a shorter chain
            spec["quant"] = "q8s" if u < 0.18 else "q8d"
            # (index outputs are checked against the float model's inputs:
            # not in int8 programs)
            keep = [
                L
                for L in spec["layers"]
                if L["op"] not in ("sort", "argsort", "topk", "argmax")
            ]
            spec["layers"] = keep[:6]
            if not spec["layers"]:
                continue
            spec["per_tensor"] = r.random() < 0.3
        elif dtype == "f32" and r.random() < 0.1:
            spec["keep_linear"] = True
        try:
            propagate(spec)
            _runs_eagerly(spec)
        except SpecError:
            continue
        return spec


def _runs_eagerly(spec: Spec) -> None:
    """The spec's model must run in eager PyTorch (the grammar's shape rules
    do not know every ATen restriction)."""
    import torch

    from .model import build, make_input

    try:
        with torch.no_grad():
            build(spec)(make_input(spec))
    except (RuntimeError, ValueError, NotImplementedError, IndexError) as e:
        raise SpecError(f"eager: {e}") from e


def propagate_any(layers: list[Layer], s: Shape) -> Shape:
    for L in layers:
        s = layer_out_shape(L, s)
    return s


def walk(layers: list[Layer]) -> list[Layer]:
    """Every layer of a spec, bodies included (depth first)."""
    out: list[Layer] = []
    for L in layers:
        out.append(L)
        if "body" in L:
            out.extend(walk(L["body"]))
    return out


def layer_kind(L: Layer) -> str:
    """The grammar element a layer exercises (the CI coverage key)."""
    op = L["op"]
    if op == "linear":
        return "linear"
    if op == "conv":
        name = f"conv{L['nd']}d"
        if L.get("transposed"):
            return f"conv_transpose{L['nd']}d"
        return name
    if op == "bn":
        return f"batch_norm{L['nd']}d"
    if op == "act":
        return L["fn"]
    if op == "pool":
        return f"{L['kind']}_pool"
    if op == "rnn":
        return L["cell"]
    if op == "reduce":
        return L["fn"]
    if op == "split":
        return "chunk" if L.get("chunk") else "split"
    if op in ("unary", "binary"):
        return L["fn"]
    if op == "concat":
        return f"concat{L.get('n', 2)}"
    return op


def grammar_kinds() -> list[str]:
    """Every coverage key the grammar can produce."""
    base = [
        "linear",
        "conv1d",
        "conv2d",
        "conv_transpose1d",
        "conv_transpose2d",
        "batch_norm1d",
        "batch_norm2d",
    ]
    base += [
        "layernorm",
        "groupnorm",
        *ACTS,
        "softmax",
        "flatten",
        "reshape",
        "permute",
        "transpose",
    ]
    base += ["max_pool", "avg_pool", "adaptive_avg_pool", "mha", "sdpa", "gru", "lstm"]
    base += [
        "embedding",
        "mean",
        "sum",
        "upsample",
        "pad",
        "sort",
        "argsort",
        "topk",
        "argmax",
    ]
    base += [
        "residual_add",
        "residual_mul",
        "concat2",
        "concat3",
        "concat4",
        "concat5",
        "split",
        "chunk",
    ]
    base += [
        *UNARY,
        "floor",
        "ceil",
        "sub",
        "div",
        "maximum",
        "minimum",
        "slice",
        "matmul",
        "gap",
    ]
    return base


def describe(spec: Spec) -> str:
    """One line: input and layer chain."""

    def one(L: Layer) -> str:
        k = layer_kind(L)
        if "body" in L:
            return f"{k}[{' > '.join(one(b) for b in L['body'])}]"
        if L["op"] == "linear":
            return f"linear{L['out']}"
        if L["op"] == "conv":
            return f"{k}(o{L['out']} k{L['k']} s{L['stride']} p{L['padding']} d{L['dilation']} g{L['groups']})"
        return k

    shape = "x".join(map(str, spec["input"]["shape"]))
    if spec.get("quant", "fp32") != "fp32":
        shape = f"[{spec['quant']}] {shape}"
    return f"{shape}{'i' if spec['input']['dtype'] == 'i64' else ''}: " + " > ".join(
        one(L) for L in spec["layers"]
    )
