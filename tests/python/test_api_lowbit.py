"""The low-bit fixtures (tests/fixtures/lowbit_cases.txt, torchao's low-bit
operators run by libpterun_kernels_lowbit, which the wheel registers) through
the Python API: equal to the PyTorch reference within the row's tolerance
(0 for the one-operator programs) and byte-identical to the C CLI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pterun
import pytest
from conftest import FIXTURES_DIR, CaseRow, load_index
from test_api_support import cli_path, run_row

ROWS: list[CaseRow] = load_index(FIXTURES_DIR / "lowbit_cases.txt")


def test_component_is_registered() -> None:
    assert "kernels_lowbit" in pterun.COMPONENTS
    assert pterun.component_for_op("torchao::_linear_8bit_act_4bit_weight.out") == (
        "kernels_lowbit"
    )


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_matches_reference_and_cli(row: CaseRow, tmp_path: Path) -> None:
    outputs = [np.asarray(o) for o in run_row(row)]
    expected = [np.load(p) for p in row.outputs(row.ref)]
    assert len(outputs) == len(expected) == row.n_outputs
    for k, (got, ref) in enumerate(zip(outputs, expected, strict=True)):
        assert (got.dtype, got.shape) == (ref.dtype, ref.shape), f"{row.name}[{k}]"
        np.testing.assert_allclose(
            got, ref, rtol=row.rtol, atol=row.atol, err_msg=row.name
        )
    cmd = [str(cli_path()), "run", str(row.model()), "--method", row.method]
    cmd += [a for p in row.inputs() for a in ("--input", str(p))]
    cmd += ["--output-dir", str(tmp_path), "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"{cmd}\n{proc.stderr}"
    for k, got in enumerate(outputs):
        assert got.tobytes() == np.load(tmp_path / f"output_{k}.npy").tobytes(), (
            row.name
        )
