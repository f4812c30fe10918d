"""One differential test: spec -> eager reference -> real exports -> pterun in
every mode -> verdict (failures, coverage facts)."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import compare, export, grammar, model, runner
from .runner import Mode


@dataclass
class Failure:
    kind: str  # export | missing_op | error | mismatch | bitid | python
    flavour: str
    mode: str
    message: str

    def key(self) -> tuple[str, str]:
        return (self.kind, self.flavour)

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "flavour": self.flavour, "mode": self.mode, "message": self.message}


@dataclass
class Verdict:
    spec: dict[str, Any]
    failures: list[Failure] = field(default_factory=list)
    runs: int = 0  # pterun runs compared (program x mode)
    programs: int = 0  # exported programs run
    operators: dict[str, list[str]] = field(default_factory=dict)  # flavour -> ops
    missing: list[str] = field(default_factory=list)
    fusions: set[str] = field(default_factory=set)  # fusion patterns applied
    variants: set[str] = field(default_factory=set)  # microkernel variants that ran
    xnn_nodes: set[str] = field(default_factory=set)  # XNNPACK node types executed
    kinds: set[str] = field(default_factory=set)  # grammar elements
    max_err: float = 0.0

    @property
    def pterun_failures(self) -> list[Failure]:
        return [f for f in self.failures if f.kind != "export"]


def reference(spec: dict[str, Any], net: torch.nn.Module, x: torch.Tensor) -> compare.Reference:
    outs, seen = model.capture_index_inputs(net, x)
    net64 = copy.deepcopy(net).double()
    x64 = x.double() if x.dtype.is_floating_point else x
    with torch.no_grad():
        outs64 = list(net64(x64))
    err64 = []
    for a, b in zip(outs, outs64, strict=True):
        if a.dtype.is_floating_point:
            d = (a.double() - b).abs()
            d = d[torch.isfinite(d)]
            err64.append(float(d.max()) if d.numel() else 0.0)
        else:
            err64.append(0.0)
    kinds = {grammar.layer_kind(L) for L in grammar.walk(spec["layers"])}
    rel = compare.REL_TRANSCENDENTAL if kinds & compare.TRANSCENDENTAL else compare.REL
    return compare.Reference(
        [o.numpy() for o in outs],
        err64,
        [s.numpy() for s in seen],
        model.index_layers(spec["layers"]),
        rel,
    )


_FUSED = re.compile(r"fusion: pattern (\d+) \(([^)]*)\)")
_VARIANT = re.compile(r'"variant": "([^"]+)"')
_XNODE = re.compile(r"xnnpack: node types: ([^\n]*)")


def missing_ops(cli: Path, pte: Path) -> list[str]:
    cp = subprocess.run([str(cli), "inspect", str(pte), "--json"], capture_output=True, text=True)
    if cp.returncode != 0:
        return [f"inspect failed: {cp.stderr.strip()}"]
    info = json.loads(cp.stdout)
    out = []
    for m in info["methods"]:
        for op in m["operators"]:
            if op["provided_by"] is None:
                out.append(f"{op['name']}.{op['overload']}" if op["overload"] else op["name"])
    return out


def _groups(results: Iterable[runner.RunResult]) -> dict[tuple[Any, ...], list[runner.RunResult]]:
    """Runs whose outputs the docs claim are bit-identical: the same fusion,
    prepare and ISA at any thread count; and, with fusion off, prepare on and
    off."""
    g: dict[tuple[Any, ...], list[runner.RunResult]] = {}
    for r in results:
        if r.outputs is None:
            continue
        m = r.mode
        g.setdefault(("threads", m.fusion, m.prepare, m.isa), []).append(r)
        if not m.fusion:
            g.setdefault(("prepare", m.threads, m.isa), []).append(r)
    return g


def check(
    spec: dict[str, Any],
    cli: Path,
    modes: list[Mode],
    flavours: tuple[str, ...] = export.FLAVOURS,
    python_modes: list[Mode] | None = None,
    pythonpath: str | None = None,
    coverage: bool = False,
    keep: Path | None = None,
) -> Verdict:
    v = Verdict(spec)
    v.kinds = {grammar.layer_kind(L) for L in grammar.walk(spec["layers"])}
    net = model.build(spec)
    x = model.make_input(spec)
    ref = reference(spec, net, x)
    with tempfile.TemporaryDirectory(prefix="difftest") as tds:
        td = Path(tds) if keep is None else keep
        td.mkdir(parents=True, exist_ok=True)
        xin = td / "input_0.npy"
        np.save(xin, x.numpy())
        for fl in flavours:
            try:
                e = export.export(net, x, fl)
            except Exception as ex:  # the exporter's own limits are not pterun's failures
                v.failures.append(Failure("export", fl, "-", f"{type(ex).__name__}: {str(ex).strip()[:300]}"))
                continue
            pte = td / f"{fl}.pte"
            pte.write_bytes(e.pte)
            v.operators[fl] = e.operators
            v.programs += 1
            miss = missing_ops(cli, pte)
            if miss:
                v.missing += [m for m in miss if m not in v.missing]
                v.failures.append(Failure("missing_op", fl, "-", ", ".join(miss)))
                continue
            results = []
            for j, m in enumerate(modes):
                od = td / f"{fl}_out{j}"
                extra: tuple[str, ...] = ()
                trace = td / f"{fl}_trace{j}.json"
                if coverage and m.threads == 1 and m.prepare == (j % 2 == 0) or (coverage and not m.prepare):
                    extra = ("--verbose", "--trace", str(trace))
                r = runner.run_cli(cli, pte, [xin], m, od, len(ref.outputs), extra)
                results.append(r)
                v.runs += 1
                if extra:
                    for pat in _FUSED.finditer(r.log):
                        v.fusions.add(pat.group(2))
                    for node in _XNODE.finditer(r.log):
                        v.xnn_nodes.update(node.group(1).split())
                    if trace.exists():
                        v.variants.update(_VARIANT.findall(trace.read_text()))
                if r.outputs is None:
                    v.failures.append(Failure("error", fl, m.name, r.error or "?"))
                    continue
                for k, got in enumerate(r.outputs):
                    msg = compare.compare_output(ref, k, got)
                    if msg is not None:
                        v.failures.append(Failure("mismatch", fl, m.name, msg))
                        break
                err = compare.max_error(ref, r.outputs)
                if np.isfinite(err):
                    v.max_err = max(v.max_err, err)
            for key, rs in _groups(results).items():
                for r in rs[1:]:
                    if not compare.bit_identical(rs[0].outputs or [], r.outputs or []):
                        v.failures.append(
                            Failure("bitid", fl, f"{rs[0].mode.name} vs {r.mode.name}", f"{key[0]}: outputs differ")
                        )
            if python_modes:
                by_name = {r.mode: r for r in results if r.outputs is not None}
                for pr in runner.run_python(pte, [xin], python_modes, len(ref.outputs), pythonpath):
                    v.runs += 1
                    if pr.outputs is None:
                        v.failures.append(Failure("python", fl, pr.mode.name, pr.error or "?"))
                        continue
                    twin = by_name.get(pr.mode)
                    if twin is not None and not compare.bit_identical(twin.outputs or [], pr.outputs):
                        v.failures.append(Failure("python", fl, pr.mode.name, "Python API outputs differ from the CLI's"))
                    for k, got in enumerate(pr.outputs):
                        msg = compare.compare_output(ref, k, got)
                        if msg is not None:
                            v.failures.append(Failure("python", fl, pr.mode.name, msg))
                            break
    return v
