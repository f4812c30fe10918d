"""One differential test: spec -> eager reference -> real exports -> pterun in
every mode -> verdict (failures, coverage facts)."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import subprocess
import tempfile
from collections import Counter
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
    kind: str  # export missing_op unsupported error mismatch bitid python upstream
    flavour: str
    mode: str
    message: str

    def key(self) -> tuple[str, str]:
        return (self.kind, self.flavour)

    def as_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "flavour": self.flavour,
            "mode": self.mode,
            "message": self.message,
        }


@dataclass
class Verdict:
    spec: dict[str, Any]
    failures: list[Failure] = field(default_factory=list)
    runs: int = 0  # pterun runs compared (program x mode)
    programs: int = 0  # exported programs run
    operators: dict[str, list[str]] = field(default_factory=dict)  # flavour -> ops
    missing: list[str] = field(default_factory=list)
    fusions: set[int] = field(default_factory=set)  # fusion patterns applied (rows)
    fusion_names: dict[int, str] = field(default_factory=dict)
    fusion_total: int = 0
    variants: set[str] = field(default_factory=set)  # microkernel variants that ran
    variants_available: set[str] = field(default_factory=set)  # built and runnable here
    xnn_nodes: set[str] = field(default_factory=set)  # XNNPACK node types executed
    layouts: set[str] = field(default_factory=set)  # load-time layout choices made
    cells: set[str] = field(
        default_factory=set
    )  # recurrent cells fused (their operators)
    kinds: set[str] = field(default_factory=set)  # grammar elements
    max_err: float = 0.0

    @property
    def pterun_failures(self) -> list[Failure]:
        return [f for f in self.failures if f.kind not in NOT_PTERUN]


# Failure kinds that are not pterun's: the exporter refused the model, the
# program it wrote computes something else than eager PyTorch and
# ExecuTorch's own runtime gives pterun's answer (_upstream), or pterun
# refused the program with an error and ExecuTorch's runtime refuses it too
# or runs it wrong (_refused_by_both). Reported and counted, never failing.
NOT_PTERUN = ("export", "upstream", "refused")


def et_run(pte: Path, x: torch.Tensor) -> tuple[list[np.ndarray] | None, str]:
    """The program's outputs from ExecuTorch's runtime, or None and what it
    said when it refuses to load or run the program."""
    try:
        from executorch.runtime import Runtime

        method = Runtime.get().load_program(str(pte)).load_method("forward")
        return [np.asarray(o.detach().numpy()) for o in method.execute([x])], ""
    except Exception as ex:  # noqa: BLE001 (any refusal is an answer here)
        return None, f"{type(ex).__name__}: {str(ex).strip()[:200]}"


def et_outputs(pte: Path, x: torch.Tensor) -> list[np.ndarray] | None:
    """The program's outputs from ExecuTorch's runtime (None: it fails)."""
    return et_run(pte, x)[0]


def _refused_by_both(
    v: Verdict, fl: str, pte: Path, x: torch.Tensor, ref: compare.Reference
) -> None:
    """Errors of flavour fl (pterun refused to load or run the program, with a
    status and a message, in some mode) where ExecuTorch's runtime refuses
    the same program too, or runs it and differs from eager PyTorch by over
    10 times the tolerance: the exported program is invalid (or computes
    something else), and a clean refusal is the right answer. Those become kind "refused", with
    ExecuTorch's words or its mismatch appended. A program ExecuTorch runs
    right keeps its errors."""
    bad = [f for f in v.failures if f.flavour == fl and f.kind == "error"]
    if not bad:
        return
    outs, why = et_run(pte, x)
    if outs is None:
        note = f"ExecuTorch's runtime refuses it too: {why}"
    elif len(outs) != len(ref.outputs):
        note = (
            f"ExecuTorch's runtime gives {len(outs)} outputs"
            f" where eager PyTorch gives {len(ref.outputs)}"
        )
    else:
        # Grossly wrong only (10 times the tolerance): a refusal of a program
        # ExecuTorch runs nearly right stays pterun's error.
        loose = dataclasses.replace(
            ref,
            rel=10 * ref.rel,
            err64=[10 * e for e in ref.err64],
            steps=None if ref.steps is None else [10 * q for q in ref.steps],
        )
        wrong = [
            (k, msg)
            for k, o in enumerate(outs)
            if (msg := compare.compare_output(loose, k, o)) is not None
        ]
        if not wrong:
            return  # ExecuTorch runs it (nearly) right: the refusal is pterun's
        note = (
            "ExecuTorch's runtime runs it and differs from eager PyTorch by"
            f" over 10 times the tolerance: output {wrong[0][0]}: {wrong[0][1]}"
        )
    for f in bad:
        f.kind = "refused"
        f.message += f" ({note})"


def _upstream(
    v: Verdict,
    fl: str,
    pte: Path,
    x: torch.Tensor,
    ref: compare.Reference,
    results: list[runner.RunResult],
) -> None:
    """Mismatches of flavour fl where ExecuTorch's runtime, on the same
    program, also differs from eager and every mismatching run gives
    ExecuTorch's outputs (within the reference's tolerance): the exported
    program is wrong, not pterun. Those become kind "upstream"."""
    bad = [f for f in v.failures if f.flavour == fl and f.kind == "mismatch"]
    if not bad:
        return
    et = et_outputs(pte, x)
    if et is None or len(et) != len(ref.outputs):
        return
    if all(compare.compare_output(ref, k, o) is None for k, o in enumerate(et)):
        return  # ExecuTorch matches eager: the mismatch is pterun's
    et_ref = dataclasses.replace(ref, outputs=et)
    by_mode = {r.mode.name: r for r in results if r.outputs is not None}
    for f in bad:
        r = by_mode.get(f.mode)
        if r is None or any(
            compare.compare_output(et_ref, k, o) is not None
            for k, o in enumerate(r.outputs)
        ):
            return
    for f in bad:
        f.kind = "upstream"
        f.message += " (ExecuTorch's runtime gives the same outputs)"


def _output_steps(gm: Any) -> list[float]:
    """Per output of a PT2E-converted graph: the scale of the dequantize that
    makes it (one quantization step), or 0 when a float op makes it."""
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    steps = []
    for a in out_node.args[0]:
        sc = 0.0
        if getattr(a, "op", "") == "call_function" and "dequantize" in str(a.target):
            s = a.args[1]
            if isinstance(s, float):
                sc = s
            elif getattr(s, "op", "") == "get_attr":
                t = getattr(gm, s.target)
                sc = float(t.max()) if t.numel() else 0.0
        steps.append(sc)
    return steps


def quant_reference(
    spec: dict[str, Any], gm: Any, x: torch.Tensor
) -> compare.Reference:
    """Eager PyTorch on the PT2E-converted model (its quantize / dequantize
    run as float ops). Tolerance: one quantization step of the output
    (docs/difftest.md), or the float rule when a float op makes it."""
    with torch.no_grad():
        outs = list(gm(x))
    steps = _output_steps(gm)
    ref = compare.Reference(
        [o.numpy() for o in outs], [0.0] * len(outs), [], [], compare.REL_QUANT
    )
    ref.steps = steps
    return ref


def reference(
    spec: dict[str, Any], net: torch.nn.Module, x: torch.Tensor
) -> compare.Reference:
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


_FUSED = re.compile(r"fusion: pattern (\d+) of (\d+) \((.*?)\) at")
_UNFUSED = re.compile(r"fusion: pattern (\d+) undone")
_CELL = re.compile(r"fusion: cell \d+ of \d+ \(\d+ instructions => (\S+)\) at")
_VARIANTS = re.compile(r"compute variants: ([^\n]*)")
# A load that fails because pterun does not implement what the exporter
# wrote (an XNNPACK node/dtype pair): reported as "unsupported", apart from
# wrong answers and crashes.
_UNSUPPORTED = re.compile(
    r"is not implemented|is implemented for .* only|not supported by this build"
)
_XNODE = re.compile(r"xnnpack: node types: ([^\n]*)")
_LAYOUT = re.compile(r"layout: \d+ tensors channels-last \((\d+) in wide-plane")


def parse_log(v: Verdict, log: str) -> None:
    """Coverage facts from one `pterun run --verbose` log."""
    applied: Counter[int] = Counter()
    for m in _FUSED.finditer(log):
        applied[int(m.group(1))] += 1
        v.fusion_names[int(m.group(1))] = m.group(3)
        v.fusion_total = int(m.group(2))
    for m in _UNFUSED.finditer(log):
        applied[int(m.group(1))] -= 1
    v.fusions.update(p for p, n in applied.items() if n > 0)
    v.cells.update(m.group(1) for m in _CELL.finditer(log))
    for m in _XNODE.finditer(log):
        v.xnn_nodes.update(m.group(1).split())
    for m in _LAYOUT.finditer(log):
        v.layouts.add("channels-last")
        if int(m.group(1)) > 0:
            v.layouts.add("channels-last, wide planes")
    for m in _VARIANTS.finditer(log):
        for tok in m.group(1).split():
            name, _, state = tok.rpartition(":")
            if state == "ran":
                v.variants.add(name)
            if state in ("ran", "idle"):
                v.variants_available.add(name)


def missing_ops(cli: Path, pte: Path) -> list[str]:
    cp = subprocess.run(
        [str(cli), "inspect", str(pte), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if cp.returncode != 0:
        return [f"inspect failed: {cp.stderr.strip()}"]
    info = json.loads(cp.stdout)
    out = []
    for m in info["methods"]:
        for op in m["operators"]:
            if op["provided_by"] is None:
                out.append(
                    f"{op['name']}.{op['overload']}" if op["overload"] else op["name"]
                )
    return out


def _groups(
    results: Iterable[runner.RunResult],
) -> dict[tuple[Any, ...], list[runner.RunResult]]:
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
    keep: Path | None = None,
) -> Verdict:
    v = Verdict(spec)
    v.kinds = {grammar.layer_kind(L) for L in grammar.walk(spec["layers"])}
    net = model.build(spec)
    x = model.make_input(spec)
    quant = spec.get("quant", "fp32")
    if quant != "fp32":
        try:
            net = export.quantize(
                net, x, quant, spec["seed"], per_tensor=spec.get("per_tensor", False)
            )
        except Exception as ex:  # noqa: BLE001 (any exporter failure is recorded)
            v.failures.append(
                Failure(
                    "export",
                    "quantize",
                    "-",
                    f"{type(ex).__name__}: {str(ex).strip()[:300]}",
                )
            )
            return v
        ref = quant_reference(spec, net, x)
    else:
        ref = reference(spec, net, x)
    with tempfile.TemporaryDirectory(prefix="difftest") as tds:
        td = Path(tds) if keep is None else keep
        td.mkdir(parents=True, exist_ok=True)
        xin = td / "input_0.npy"
        np.save(xin, x.numpy())
        for fl in flavours:
            try:
                e = export.export(
                    net,
                    x,
                    fl,
                    dynamic_quant=quant == "q8d",
                    keep_linear=spec.get("keep_linear", False),
                )
            except Exception as ex:  # noqa: BLE001 (the exporter's limits are not pterun's)
                v.failures.append(
                    Failure(
                        "export",
                        fl,
                        "-",
                        f"{type(ex).__name__}: {str(ex).strip()[:300]}",
                    )
                )
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
                r = runner.run_cli(
                    cli, pte, [xin], m, od, len(ref.outputs), ("--quiet", "--verbose")
                )
                results.append(r)
                v.runs += 1
                parse_log(v, r.log)
                if r.outputs is None:
                    kind = (
                        "unsupported" if _UNSUPPORTED.search(r.error or "") else "error"
                    )
                    v.failures.append(Failure(kind, fl, m.name, r.error or "?"))
                    continue
                for k, got in enumerate(r.outputs):
                    msg = compare.compare_output(ref, k, got)
                    if msg is not None:
                        v.failures.append(Failure("mismatch", fl, m.name, msg))
                        break
                err = compare.max_error(ref, r.outputs)
                if np.isfinite(err):
                    v.max_err = max(v.max_err, err)
            _upstream(v, fl, pte, x, ref, results)
            _refused_by_both(v, fl, pte, x, ref)
            for key, rs in _groups(results).items():
                for r in rs[1:]:
                    if not compare.bit_identical(rs[0].outputs or [], r.outputs or []):
                        v.failures.append(
                            Failure(
                                "bitid",
                                fl,
                                f"{rs[0].mode.name} vs {r.mode.name}",
                                f"{key[0]}: outputs differ",
                            )
                        )
            if python_modes:
                by_name = {r.mode: r for r in results if r.outputs is not None}
                # A mode whose CLI run was classified upstream: the same
                # outputs through the Python API are the program's fault too.
                upstream_modes = {
                    f.mode
                    for f in v.failures
                    if f.flavour == fl and f.kind == "upstream"
                }
                # ... and one the CLI refused along with ExecuTorch's runtime.
                refused_modes = {
                    f.mode
                    for f in v.failures
                    if f.flavour == fl and f.kind == "refused"
                }
                for pr in runner.run_python(
                    pte, [xin], python_modes, len(ref.outputs), pythonpath
                ):
                    v.runs += 1
                    if pr.outputs is None:
                        kind = "refused" if pr.mode.name in refused_modes else "python"
                        v.failures.append(
                            Failure(kind, fl, pr.mode.name, pr.error or "?")
                        )
                        continue
                    twin = by_name.get(pr.mode)
                    same = twin is not None and compare.bit_identical(
                        twin.outputs or [], pr.outputs
                    )
                    if twin is not None and not same:
                        v.failures.append(
                            Failure(
                                "python",
                                fl,
                                pr.mode.name,
                                "Python API outputs differ from the CLI's",
                            )
                        )
                    for k, got in enumerate(pr.outputs):
                        msg = compare.compare_output(ref, k, got)
                        if msg is not None:
                            if same and pr.mode.name in upstream_modes:
                                v.failures.append(
                                    Failure(
                                        "upstream",
                                        fl,
                                        pr.mode.name,
                                        msg + " (Python API; the CLI's outputs, "
                                        "which are ExecuTorch's)",
                                    )
                                )
                            else:
                                v.failures.append(
                                    Failure("python", fl, pr.mode.name, msg)
                                )
                            break
    return v
