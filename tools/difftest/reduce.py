"""Automatic reduction of a failing program: drop layers, inline blocks,
shrink the input and the layer widths while the same failure (kind and
flavour, in the modes that showed it) remains."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import check, export, grammar, model, runner

Spec = dict[str, Any]


@dataclass
class Reduced:
    spec: Spec
    kind: str
    flavour: str
    modes: list[str]
    message: str
    original_seed: int
    steps: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)


def _paths(
    layers: list[dict[str, Any]], prefix: tuple[int, ...] = ()
) -> Iterator[tuple[int, ...]]:
    for i, L in enumerate(layers):
        yield (*prefix, i)
        if "body" in L:
            yield from _paths(L["body"], (*prefix, i))


def _container(spec: Spec, path: tuple[int, ...]) -> list[dict[str, Any]]:
    layers = spec["layers"]
    for i in path[:-1]:
        layers = layers[i]["body"]
    return layers


def candidates(spec: Spec) -> Iterator[Spec]:
    """Smaller variants of spec, most promising first (not all valid)."""
    paths = list(_paths(spec["layers"]))
    # drop a run of layers at the end, then single layers
    n = len(spec["layers"])
    for cut in range(1, n):
        s = copy.deepcopy(spec)
        s["layers"] = s["layers"][: n - cut]
        yield s
    for path in reversed(paths):
        s = copy.deepcopy(spec)
        c = _container(s, path)
        L = c.pop(path[-1])
        if L.get("body"):  # inline the block's body instead
            s2 = copy.deepcopy(spec)
            c2 = _container(s2, path)
            b = c2.pop(path[-1])["body"]
            c2[path[-1] : path[-1]] = b
            yield s2
        yield s
    # shrink the input
    shape = spec["input"]["shape"]
    for d in range(len(shape)):
        for new in (1, shape[d] // 2, shape[d] - 1):
            if 1 <= new < shape[d]:
                s = copy.deepcopy(spec)
                s["input"]["shape"][d] = new
                yield s
    # shrink widths
    for path in paths:
        L = _container(spec, path)[path[-1]]
        for key in ("out", "hidden", "dim"):
            v = L.get(key)
            if (
                isinstance(v, int)
                and v > 1
                and not (key == "dim" and L["op"] != "embedding")
            ):
                for new in sorted({max(1, v // 2), 1} - {v}):
                    s = copy.deepcopy(spec)
                    M = _container(s, path)[path[-1]]
                    M[key] = new
                    if M["op"] == "conv" and M["groups"] > 1 and new % M["groups"]:
                        continue
                    yield s


def _modes_of(fails: list[check.Failure]) -> list[runner.Mode]:
    out: list[runner.Mode] = []
    for f in fails:
        for name in f.mode.split(" vs "):
            if name == "-":
                continue
            fu, pr, t, isa = name.split("/")
            m = runner.Mode(fu == "fuse", pr == "prep", int(t[1:]), isa)
            if m not in out:
                out.append(m)
    return out


def reduce(spec: Spec, opts: dict[str, Any], budget_s: float = 900.0) -> Reduced:
    cli = Path(opts["cli"])
    modes = [runner.Mode(**m) for m in opts["modes"]]
    v = check.check(spec, cli, modes)
    fails = v.pterun_failures
    if not fails:
        return Reduced(spec, "none", "-", [], "does not fail", spec["seed"])
    target = fails[0]
    key = target.key()
    fmodes = _modes_of([f for f in fails if f.key() == key])
    if key[0] == "bitid":  # keep the whole group the claim is about
        fmodes = [m for m in modes if any(m.isa == f.isa for f in fmodes)]
    if not fmodes:
        fmodes = modes[:1]
    flavours = (key[1],) if key[1] in export.FLAVOURS else export.FLAVOURS
    best, msg, steps = spec, target.message, 0
    deadline = time.monotonic() + budget_s
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for cand in candidates(best):
            if time.monotonic() > deadline:
                break
            try:
                model.propagate(cand)
                grammar._runs_eagerly(cand)
            except model.SpecError:
                continue
            try:
                cv = check.check(cand, cli, fmodes, flavours)
            except Exception:  # noqa: BLE001, S112 (a candidate the exporter refuses is skipped)
                continue
            same = [f for f in cv.pterun_failures if f.key() == key]
            if same:
                best, msg, steps = cand, same[0].message, steps + 1
                fails = same
                improved = True
                break
    return Reduced(
        best,
        key[0],
        key[1],
        sorted({f.mode for f in fails})[:8],
        msg,
        spec["seed"],
        steps,
        [f.as_dict() for f in fails[:8]],
    )
