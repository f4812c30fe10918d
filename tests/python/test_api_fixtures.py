"""Every committed fixture through the Python API: ExecuTorch's outputs within
tolerance, byte-identical to the C CLI, the same from a path or from bytes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pterun
import pytest
from conftest import CaseRow
from test_api_support import (
    ROW_IDS,
    ROWS,
    cli_path,
    load_inputs,
    load_program,
    run_row,
)

CLI_TIMEOUT_S = 120


def _as_array(value: Any) -> np.ndarray[Any, Any]:
    assert isinstance(value, np.ndarray | int | float | bool), type(value)
    return np.asarray(value)


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_matches_reference(row: CaseRow) -> None:
    """Within the row's tolerance of its reference (ExecuTorch's runtime, or
    eager PyTorch where cases.txt says ExecuTorch's runtime is wrong)."""
    outputs = run_row(row)
    expected_paths = row.outputs(row.ref)
    assert len(outputs) == len(expected_paths)
    for k, (got, path) in enumerate(zip(outputs, expected_paths, strict=True)):
        actual, expected = _as_array(got), np.load(path)
        assert actual.shape == expected.shape, f"{row.name} output {k}"
        assert actual.dtype == expected.dtype, f"{row.name} output {k}"
        np.testing.assert_allclose(
            actual, expected, rtol=row.rtol, atol=row.atol, err_msg=f"{row.name}[{k}]"
        )


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_byte_identical_to_cli(row: CaseRow, tmp_path: Path) -> None:
    """``pterun run --output-dir`` (the wheel's C CLI) writes the same bytes."""
    cmd = [str(cli_path()), "run", str(row.model()), "--method", row.method]
    cmd += [a for p in row.inputs() for a in ("--input", str(p))]
    cmd += [a for p in row.data_files() for a in ("--data", str(p))]
    cmd += ["--output-dir", str(tmp_path), "--quiet"]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False
    )
    assert proc.returncode == 0, f"{cmd}\n{proc.stderr}"
    outputs = run_row(row)
    for k, got in enumerate(outputs):
        cli_out = np.load(tmp_path / f"output_{k}.npy")
        actual = _as_array(got)
        assert (actual.dtype, actual.shape) == (cli_out.dtype, cli_out.shape)
        assert actual.tobytes() == cli_out.tobytes(), f"{row.name} output {k}"


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview"])
def test_bytes_load_like_path(row: CaseRow, kind: str) -> None:
    raw = row.model().read_bytes()
    sources: dict[str, bytes | bytearray | memoryview] = {
        "bytes": raw,
        "bytearray": bytearray(raw),
        "memoryview": memoryview(raw),
    }
    source = sources[kind]
    data = [p.read_bytes() for p in row.data_files()]
    program = pterun.Runtime.get().load_program(source, data_files=data)
    assert program.method_names == load_program(row).method_names
    from_bytes = run_row(row, program)
    from_path = run_row(row)
    for a, b in zip(from_bytes, from_path, strict=True):
        assert _as_array(a).tobytes() == _as_array(b).tobytes()


def test_external_data_is_required() -> None:
    (row,) = [r for r in ROWS if r.data]
    program = pterun.Runtime.get().load_program(row.model())
    with pytest.raises(pterun.Error) as info:
        program.load_method(row.method)
    assert info.value.status == "INVALID_EXTERNAL_DATA"
    assert "no data file" in info.value.message


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_metadata_matches_cli_inspect(row: CaseRow) -> None:
    import json

    proc = subprocess.run(
        [str(cli_path()), "inspect", str(row.model()), "--json"]
        + [a for p in row.data_files() for a in ("--data", str(p))],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=True,
    )
    (cli_method,) = [
        m for m in json.loads(proc.stdout)["methods"] if m["name"] == row.method
    ]
    meta = load_program(row).metadata(row.method)
    assert meta.name == row.method
    for infos, cli_infos in (
        (meta.inputs, cli_method["inputs"]),
        (meta.outputs, cli_method["outputs"]),
    ):
        assert len(infos) == len(cli_infos)
        for info, c in zip(infos, cli_infos, strict=True):
            assert info.kind == c["kind"]
            if info.is_tensor:
                assert (
                    info.dtype,
                    list(info.shape or ()),
                    list(info.dim_order or ()),
                ) == (
                    c["dtype"],
                    c["shape"],
                    c["dim_order"],
                )
                assert (info.dynamism, info.planned, info.nbytes) == (
                    c["dynamism"],
                    c["planned"],
                    c["nbytes"],
                )
    assert list(meta.operators) == [
        f"{o['name']}.{o['overload']}" if o["overload"] else o["name"]
        for o in cli_method["operators"]
    ]
    assert list(meta.planned_buffer_sizes) == cli_method["planned_buffer_sizes"]
    assert len(load_inputs(row)) == meta.num_inputs
