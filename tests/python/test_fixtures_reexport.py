"""Re-export the fixtures with the real exporter and check them end to end.

For every row of ``tests/fixtures/cases.txt``:

* the case is exported afresh (``tools/export_fixtures.py --out TMP``),
* ExecuTorch's own runtime runs the fresh ``model.pte`` on the committed
  inputs and must reproduce the committed ``<method>_et_<k>.npy`` within the
  row's tolerance,
* pterun's CLI runs the fresh export on the same inputs and must match the
  committed ExecuTorch outputs within the same tolerance.

The toolchain (torch, executorch) and the pterun CLI are required: when
either is missing the tests fail with a message saying how to provide it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest
from conftest import (
    FIXTURES_DIR,
    CaseRow,
    input_dim_orders,
    load_index,
    pterun_cli_path,
    require_export_toolchain,
    tensor_in_dim_order,
)

if TYPE_CHECKING:
    import numpy as np

ROWS: list[CaseRow] = load_index()
ROW_IDS = [r.name for r in ROWS]
CASE_DIRS = sorted({r.dir for r in ROWS})
CLI_TIMEOUT_S = 120


def _assert_outputs_close(
    got: list[np.ndarray], expected_paths: list[Path], row: CaseRow, who: str
) -> None:
    import numpy as np

    n_got, n_exp = len(got), len(expected_paths)
    assert n_got == n_exp, (
        f"{row.name}: {who} produced {n_got} outputs, expected {n_exp}"
    )
    for k, (actual, path) in enumerate(zip(got, expected_paths, strict=True)):
        expected = np.load(path)
        assert actual.shape == expected.shape, (
            f"{row.name}: {who} output {k} has shape {actual.shape}, "
            f"expected {expected.shape}"
        )
        assert actual.dtype == expected.dtype, (
            f"{row.name}: {who} output {k} has dtype {actual.dtype}, "
            f"expected {expected.dtype}"
        )
        np.testing.assert_allclose(
            actual,
            expected,
            rtol=row.rtol,
            atol=row.atol,
            err_msg=f"{row.name}: {who} output {k} vs {path.name}",
        )


def test_export_toolchain_is_importable() -> None:
    """torch + executorch must be installed (the other tests need them too)."""
    require_export_toolchain()


def test_index_covers_every_case(
    fixture_index: list[CaseRow], export_tool: ModuleType
) -> None:
    """cases.txt lists every exported case and every file it names exists."""
    exported = {c.name for c in export_tool.CASES}
    indexed = {r.dir for r in fixture_index}
    assert exported == indexed, f"cases.txt out of date: {sorted(exported ^ indexed)}"
    assert len({r.name for r in fixture_index}) == len(fixture_index), "duplicate names"
    for row in fixture_index:
        files = [row.model(), *row.data_files(), *row.inputs()]
        files += row.outputs("et") + row.outputs("eager")
        missing = [str(p.relative_to(FIXTURES_DIR)) for p in files if not p.is_file()]
        assert not missing, f"{row.name}: missing fixture files {missing}"
        ops = FIXTURES_DIR / row.dir / "ops.txt"
        assert ops.is_file(), f"{row.name}: missing ops.txt"


@pytest.mark.parametrize("case_dir", CASE_DIRS)
def test_fresh_export_is_byte_identical(fresh_exports: Path, case_dir: str) -> None:
    """The pinned exporter is deterministic: a re-export reproduces the files.

    A failure means the committed fixtures are stale (regenerate them with
    tools/export_fixtures.py) or the toolchain differs from
    tools/requirements-export.txt.
    """
    import executorch  # type: ignore[import-not-found]
    import torch

    committed = FIXTURES_DIR / case_dir
    fresh = fresh_exports / case_dir
    names = sorted(
        p.name
        for p in committed.iterdir()
        if p.suffix in (".pte", ".ptd") or p.name == "ops.txt"
    )
    fresh_names = sorted(
        p.name
        for p in fresh.iterdir()
        if p.suffix in (".pte", ".ptd") or p.name == "ops.txt"
    )
    assert names == fresh_names
    et_version = getattr(executorch, "__version__", "?")
    versions = f"torch {torch.__version__}, executorch {et_version}"
    for name in names:
        assert (committed / name).read_bytes() == (fresh / name).read_bytes(), (
            f"{case_dir}/{name} differs from a fresh export ({versions}); "
            "regenerate with tools/export_fixtures.py"
        )


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_executorch_runs_fresh_export(fresh_exports: Path, row: CaseRow) -> None:
    """ExecuTorch's runtime on the fresh export reproduces the committed outputs."""
    import numpy as np
    import torch
    from executorch.runtime import Runtime  # type: ignore[import-not-found]

    model = row.model(fresh_exports)
    data = row.data_files(fresh_exports)
    assert len(data) <= 1, "ExecuTorch's Python runtime takes a single .ptd"
    orders = input_dim_orders(model.read_bytes(), row.method)
    inputs = []
    for k, path in enumerate(row.inputs()):
        t = torch.from_numpy(np.load(path))
        inputs.append(tensor_in_dim_order(t, orders[k]) if orders[k] else t)
    program = Runtime.get().load_program(
        str(model), data_path=str(data[0]) if data else None
    )
    method = program.load_method(row.method)
    assert method is not None, f"cannot load method {row.method}"
    outputs = method.execute(inputs)
    got = [np.ascontiguousarray(o.contiguous().numpy()) for o in outputs]
    _assert_outputs_close(got, row.outputs("et"), row, "ExecuTorch (fresh export)")


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_pterun_cli_runs_fresh_export(
    fresh_exports: Path, row: CaseRow, tmp_path: Path
) -> None:
    """pterun's CLI on the fresh export matches the row's reference outputs
    (ExecuTorch's runtime, or eager PyTorch where ExecuTorch is wrong)."""
    require_export_toolchain()  # numpy, and the re-export itself
    import numpy as np

    pterun_cli = pterun_cli_path()  # fails (not errors) when the CLI is absent
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    cmd = [
        str(pterun_cli),
        "run",
        str(row.model(fresh_exports)),
        "--method",
        row.method,
    ]
    for data in row.data_files(fresh_exports):
        cmd += ["--data", str(data)]
    for path in row.inputs():
        cmd += ["--input", str(path)]
    cmd += ["--output-dir", str(out_dir)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
    assert proc.returncode == 0, (
        f"{row.name}: pterun exited with {proc.returncode}\n"
        f"command: {' '.join(cmd)}\nstdout:\n{proc.stdout[-4000:]}\n"
        f"stderr:\n{proc.stderr[-4000:]}"
    )
    produced = sorted(out_dir.glob("output_*.npy"))
    assert len(produced) == row.n_outputs, (
        f"{row.name}: pterun wrote {[p.name for p in produced]}, "
        f"expected {row.n_outputs} outputs"
    )
    got = [np.load(out_dir / f"output_{k}.npy") for k in range(row.n_outputs)]
    _assert_outputs_close(got, row.outputs(row.ref), row, "pterun CLI")
