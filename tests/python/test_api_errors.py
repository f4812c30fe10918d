"""Failures raise pterun.Error with the status name and the runtime's message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pterun
import pytest
from conftest import FIXTURES_DIR

MLP = FIXTURES_DIR / "mlp" / "model.pte"


@pytest.fixture(scope="module")
def forward() -> pterun.Method:
    return pterun.Runtime.get().load_program(MLP).load_method("forward")


def _x() -> np.ndarray[Any, Any]:
    return np.asarray(np.load(FIXTURES_DIR / "mlp" / "forward_input_0.npy"), np.float32)


def test_error_type() -> None:
    assert issubclass(pterun.Error, RuntimeError)
    assert pterun.Error.__module__ == "pterun"


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.pte"
    with pytest.raises(pterun.Error) as info:
        pterun.Runtime.get().load_program(missing)
    e = info.value
    assert (e.status, e.code) == ("IO_ERROR", 8)
    assert str(missing) in e.message and "No such file" in e.message
    assert e.log == (e.message,)
    assert str(e).endswith("(IO_ERROR)")


@pytest.mark.parametrize("blob", [b"", b"garbage" * 20, bytes(4096)])
def test_not_a_program(blob: bytes) -> None:
    with pytest.raises(pterun.Error) as info:
        pterun.Runtime.get().load_program(blob)
    assert info.value.status == "INVALID_PROGRAM"
    assert info.value.message


def test_truncated_program() -> None:
    raw = MLP.read_bytes()
    with pytest.raises(pterun.Error) as info:
        pterun.Runtime.get().load_program(raw[: len(raw) // 2])
    assert info.value.status == "INVALID_PROGRAM"


def test_bad_data_file(tmp_path: Path) -> None:
    with pytest.raises(pterun.Error) as info:
        pterun.Runtime.get().load_program(MLP, data_files=[b"not a ptd file" * 4])
    assert info.value.status == "INVALID_DATA"


def test_unknown_method() -> None:
    program = pterun.Runtime.get().load_program(MLP)
    with pytest.raises(pterun.Error) as info:
        program.load_method("nope")
    assert info.value.status == "NOT_FOUND"
    with pytest.raises(pterun.Error):
        program.metadata("nope")


def test_wrong_dtype(forward: pterun.Method) -> None:
    with pytest.raises(pterun.Error) as info:
        forward.execute([_x().astype(np.float64)])
    e = info.value
    assert e.status == "INPUT_MISMATCH"
    assert "expected float32 (2, 16), got float64 (2, 16)" in e.message


def test_wrong_shape(forward: pterun.Method) -> None:
    with pytest.raises(pterun.Error) as info:
        forward.execute([_x()[:1]])
    e = info.value
    assert e.status == "INPUT_MISMATCH"
    assert "[1,16]" in e.message and e.log, e  # the runtime's own line


def test_wrong_rank(forward: pterun.Method) -> None:
    with pytest.raises(pterun.Error) as info:
        forward.execute([_x().reshape(-1)])
    assert info.value.status == "INPUT_MISMATCH"


@pytest.mark.parametrize("count", [0, 2])
def test_input_count(forward: pterun.Method, count: int) -> None:
    with pytest.raises(pterun.Error) as info:
        forward.execute([_x()] * count)
    assert info.value.status == "INPUT_MISMATCH"
    assert "has 1 input" in info.value.message


@pytest.mark.parametrize("bad", ["text", 3.5, None, object()])
def test_not_a_tensor(forward: pterun.Method, bad: object) -> None:
    with pytest.raises(TypeError):
        forward.execute([bad])


def test_inputs_must_be_a_sequence(forward: pterun.Method) -> None:
    with pytest.raises(TypeError):
        forward.execute(_x())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        forward.execute("x")


def test_big_endian_is_refused(forward: pterun.Method) -> None:
    with pytest.raises(TypeError, match="byte order"):
        forward.execute([_x().astype(">f4")])


def test_method_still_works_after_errors(forward: pterun.Method) -> None:
    for bad in ([_x().astype(np.int64)], [_x()[:1]], []):
        with pytest.raises(pterun.Error):
            forward.execute(bad)
    expected = np.load(FIXTURES_DIR / "mlp" / "forward_et_0.npy")
    np.testing.assert_allclose(
        forward.execute([_x()])[0], expected, rtol=1e-5, atol=1e-6
    )
