#!/usr/bin/env python3
"""Export pterun's test fixtures with the real ExecuTorch exporter.

Every fixture case is a tiny PyTorch model that is exported with
``torch.export`` + ``executorch.exir.to_edge_transform_and_lower`` into a
``.pte`` program (plus ``.ptd`` data files where the case keeps its weights
outside the program).  For each method of each case the script writes, under
``OUT/<case>/``:

* ``model.pte`` and any ``*.ptd`` data files,
* ``<method>_input_<k>.npy``  - the inputs (logical, C-contiguous order),
* ``<method>_eager_<k>.npy``  - eager PyTorch outputs, flattened in order,
* ``<method>_et_<k>.npy``     - outputs of ExecuTorch's own runtime,
* ``ops.txt``                 - the operator table of every method,
* ``program.txt``             - a readable summary of the serialized program.

It then writes the index ``OUT/cases.txt``.  Everything is deterministic:
fixed seeds, tiny models, CPU only.

The models are in ``tools/fixture_models.py``, the case table in
``tools/fixture_cases.py``; the files are written with ``tools/fixturekit``,
the fixture writer every exporter shares.

Requires the pinned toolchain in ``tools/requirements-export.txt``.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from torch.export import ExportedProgram, export

TOOLS = Path(__file__).resolve().parent
if str(TOOLS) not in sys.path:  # imported by path (tests/python/conftest.py)
    sys.path.insert(0, str(TOOLS))

import fixturekit as fk
from fixture_cases import CASES, Case, MethodSpec
from fixturekit.describe import describe_program, describe_ptd

REPO_ROOT = TOOLS.parent
DEFAULT_OUT = REPO_ROOT / "tests" / "fixtures"
SEED = 20240611

__all__ = ["CASES", "Case", "MethodSpec", "export_case", "main", "write_case"]

# ---------------------------------------------------------------------------
# Export and run
# ---------------------------------------------------------------------------


@dataclass
class ExportResult:
    """What an export produced, kept in memory."""

    pte: bytes
    data_files: dict[str, bytes]
    operators: dict[str, list[str]]
    program: Any  # executorch.exir.schema.Program as serialized


def export_case(case: Case, specs: dict[str, MethodSpec]) -> ExportResult:
    """Export all methods of ``case`` into one ExecuTorch program in memory."""
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower

    eps: dict[str, ExportedProgram] = {}
    for name, spec in specs.items():
        # Export a copy so that nothing export does can touch the eager model.
        module = copy.deepcopy(spec.module)
        eps[name] = export(
            module, spec.example_inputs, dynamic_shapes=spec.dynamic_shapes, strict=True
        )
    edge = to_edge_transform_and_lower(
        eps if len(eps) > 1 else next(iter(eps.values()))
    )
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    passes: list[Any] = []
    if case.init_buffers:
        passes.append(InitializedMutableBufferPass(case.init_buffers))
    config = ExecutorchBackendConfig(
        passes=passes, external_constants=case.external_constants
    )
    et_program = edge.to_executorch(config)

    pte = bytes(et_program.buffer)
    data_files: dict[str, bytes] = {}
    tensor_data = et_program._tensor_data  # filename (no extension) -> Cord
    if tensor_data:
        for stem, cord in tensor_data.items():
            data_files[f"{stem}.ptd"] = bytes(cord)
    operators = fk.method_operators(et_program)
    return ExportResult(pte, data_files, operators, fk.parse_program(pte))


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


@dataclass
class MethodReport:
    """Per-method results for the index and the console report."""

    case: Case
    method: str
    n_inputs: int
    n_outputs: int
    data: list[str]
    eager_vs_et: float


def write_case(case: Case, out_dir: Path) -> list[MethodReport]:
    """Export ``case`` into ``out_dir/<case>``; return per-method reports."""
    # One seed per case, stable across runs and independent of --only.
    fk.seed_case(SEED, case.name, numpy_seed=SEED)
    specs = case.build()
    result = export_case(case, specs)
    case_dir = fk.case_dir(out_dir, case.name, stale=(".pte", ".ptd", ".npy", ".txt"))
    pte_path, data_paths = fk.write_program(case_dir, result.pte, result.data_files)
    (case_dir / "ops.txt").write_text(fk.ops_table(result.operators), encoding="utf-8")
    summary = describe_program(result.program, result.pte)
    for fname, blob in sorted(result.data_files.items()):
        summary += "\n" + describe_ptd(fname, blob)
    (case_dir / "program.txt").write_text(summary)

    reports: list[MethodReport] = []
    for method, spec in specs.items():
        inputs = spec.inputs
        eager = [fk.to_numpy(t) for t in fk.run_eager(spec.module, inputs)]
        et_out = [
            fk.to_numpy(t)
            for t in fk.run_executorch(pte_path, data_paths, method, inputs)
        ]
        fk.save_arrays(case_dir, method, "input", inputs)
        fk.save_arrays(case_dir, method, "eager", eager)
        fk.save_arrays(case_dir, method, "et", et_out)
        diff = fk.max_abs_diff(eager, et_out)
        for a, b in zip(eager, et_out, strict=True):
            if case.reference == "eager":
                break  # ExecuTorch is known to differ here; eager is the reference
            if not np.allclose(b, a, rtol=case.rtol, atol=case.atol):
                raise AssertionError(
                    f"{case.name}/{method}: eager vs ExecuTorch differ by {diff:g} "
                    f"(rtol {case.rtol:g}, atol {case.atol:g})"
                )
        reports.append(
            MethodReport(
                case,
                method,
                len(inputs),
                len(et_out),
                [p.name for p in data_paths],
                diff,
            )
        )
    return reports


def write_index(out_dir: Path, reports: Sequence[MethodReport]) -> None:
    """Write ``cases.txt``; rows of cases not re-exported now are kept."""
    fresh: dict[str, list[str]] = {}  # case (dir) -> rows
    for r in reports:
        fresh.setdefault(r.case.name, []).append(
            fk.index_row(
                fk.row_name(r.case.name, r.method),
                r.case.name,
                r.method,
                r.n_inputs,
                r.n_outputs,
                r.case.rtol,
                r.case.atol,
                r.data,
                r.case.reference,
            )
        )
    header = [
        "# pterun fixture index, generated by tools/export_fixtures.py - do not edit.",
        "# Columns: name dir method n_inputs n_outputs rtol atol data ref",
        "#   name:   unique row name (case, or case.method for non-forward methods)",
        "#   dir:    directory under tests/fixtures",
        "#   method: the program method; files are <method>_input_<k>.npy,",
        "#           <method>_eager_<k>.npy, <method>_et_<k>.npy",
        "#   data:   comma-separated .ptd files in dir, or -",
        "#   ref:    the reference pterun must match: et (ExecuTorch's runtime) or",
        "#           eager (where ExecuTorch's runtime is wrong; see the case note)",
        "# Tolerances compare a runtime's outputs with the committed reference:",
        "#   |got - ref| <= atol + rtol * |ref|. All cases are float32 with outputs of",
        "#   magnitude below 10, so rtol 1e-5 / atol 1e-6 allows for a different",
        "#   summation order in conv/matmul/softmax kernels and not much more.",
    ]
    fk.update_index(
        out_dir / "cases.txt",
        "".join(line + "\n" for line in header),
        fresh,
        [c.name for c in CASES],
        key_column=1,  # rows of cases not exported now are kept
        keep_unknown=True,
        columns=(8, 9),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Cases: " + ", ".join(c.name for c in CASES),
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"output directory (default: {os.path.relpath(DEFAULT_OUT, Path.cwd())})",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="export only these cases (default: all)",
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)

    if args.list:
        for c in CASES:
            print(f"{c.name:20s} {c.note}")
        return 0
    selected = CASES
    if args.only:
        known = {c.name for c in CASES}
        unknown = [n for n in args.only if n not in known]
        if unknown:
            parser.error(f"unknown case(s): {', '.join(unknown)}")
        selected = [c for c in CASES if c.name in args.only]

    fk.single_thread(deterministic_algorithms=True)
    args.out.mkdir(parents=True, exist_ok=True)
    reports: list[MethodReport] = []
    for case in selected:
        case_reports = write_case(case, args.out)
        reports.extend(case_reports)
        for r in case_reports:
            print(
                f"{case.name:20s} {r.method:10s} "
                f"eager-vs-et max|diff| = {r.eager_vs_et:.3g}"
            )
    write_index(args.out, reports)
    return 0


if __name__ == "__main__":
    sys.exit(main())
