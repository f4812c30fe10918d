"""Inputs: zero copy when the layout allows, one copy otherwise; outputs are
independent copies; pterun.Tensor speaks the buffer protocol and DLPack."""

from __future__ import annotations

import array
from typing import Any

import numpy as np
import pterun
import pytest
from conftest import FIXTURES_DIR

RT = pterun.Runtime.get()


def _case(
    name: str,
) -> tuple[pterun.Method, np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    method = RT.load_program(FIXTURES_DIR / name / "model.pte").load_method("forward")
    x = np.load(FIXTURES_DIR / name / "forward_input_0.npy")
    return method, x, np.load(FIXTURES_DIR / name / "forward_et_0.npy")


def test_contiguous_input_is_not_copied() -> None:
    m, x, et = _case("mlp")
    np.testing.assert_allclose(m.execute([x])[0], et, rtol=1e-5, atol=1e-6)
    assert m.last_input_copies == (False,)


def test_strided_input_is_copied_once() -> None:
    m, x, et = _case("mlp")
    wide = np.zeros((x.shape[0], x.shape[1] * 2), np.float32)
    wide[:, ::2] = x
    view = wide[:, ::2]
    assert not view.flags.c_contiguous
    np.testing.assert_allclose(m.execute([view])[0], et, rtol=1e-5, atol=1e-6)
    assert m.last_input_copies == (True,)
    fortran = np.asfortranarray(x)
    np.testing.assert_allclose(m.execute([fortran])[0], et, rtol=1e-5, atol=1e-6)
    assert m.last_input_copies == (True,)


def test_read_only_input() -> None:
    m, x, et = _case("mlp")
    x.setflags(write=False)
    np.testing.assert_allclose(m.execute([x])[0], et, rtol=1e-5, atol=1e-6)


def test_channels_last_input() -> None:
    """Logical (row-major) values go in; pterun lays them out in the input's dim
    order. Memory already in that order is used as it is."""
    m, x, et = _case("cnn_channels_last")
    assert m.metadata.inputs[0].dim_order == (0, 2, 3, 1)
    logical = m.execute([x])[0]
    assert m.last_input_copies == (True,)
    np.testing.assert_allclose(logical, et, rtol=1e-5, atol=1e-6)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    assert m.execute([nhwc])[0].tobytes() == logical.tobytes()
    assert m.last_input_copies == (False,)


def test_other_buffer_objects() -> None:
    m, x, et = _case("mlp")
    mv = memoryview(array.array("f", x.ravel().tolist())).cast("B").cast("f", x.shape)
    np.testing.assert_allclose(m.execute([mv])[0], et, rtol=1e-5, atol=1e-6)

    ew = RT.load_program(FIXTURES_DIR / "elementwise" / "model.pte").load_method(
        "forward"
    )
    a, b = (
        np.load(FIXTURES_DIR / "elementwise" / f"forward_input_{k}.npy") for k in (0, 1)
    )
    (t,) = ew.execute_tensors([a, b])
    assert isinstance(t, pterun.Tensor)
    # a pterun.Tensor is an input too (zero copy: it is writable and row-major)
    assert (
        ew.execute([t, b])[0].tobytes() == ew.execute([np.asarray(t), b])[0].tobytes()
    )
    assert ew.last_input_copies == (False, False)


def test_bounded_dynamic_shape() -> None:
    m, x, et = _case("dynamic_dim")
    info = m.metadata.inputs[0]
    assert info.dynamism == "bounded"
    assert info.shape is not None and x.shape[0] <= info.shape[0]
    out = m.execute([x])[0]
    np.testing.assert_allclose(out, et, rtol=1e-5, atol=1e-6)
    too_big = np.zeros((info.shape[0] + 1,) + tuple(info.shape[1:]), np.float32)
    with pytest.raises(pterun.Error) as e:
        m.execute([too_big])
    assert e.value.status == "INPUT_MISMATCH"


def test_outputs_are_copies() -> None:
    m, x, _ = _case("mlp")
    first = m.execute([x])[0]
    kept = first.copy()
    m.execute([x * 2])
    assert first.tobytes() == kept.tobytes()
    assert first.flags.writeable
    first[...] = 0  # writing a result never touches the runtime's memory
    assert m.execute([x])[0].tobytes() == kept.tobytes()


def test_tensor_output_protocols() -> None:
    m, x, et = _case("mlp")
    (t,) = m.execute_tensors([x])
    assert isinstance(t, pterun.Tensor)
    assert (t.dtype, t.shape, t.ndim, t.nbytes) == ("float32", et.shape, 2, et.nbytes)
    view = memoryview(t)
    assert (view.format, view.shape, view.readonly) == ("f", et.shape, False)
    assert t.__dlpack_device__() == (1, 0)
    assert np.from_dlpack(t).tobytes() == np.asarray(t).tobytes() == t.tobytes()
    assert "float32" in repr(t)
    with pytest.raises(TypeError):
        pterun.Tensor()


def test_scalar_outputs_are_python_scalars() -> None:
    """sym_ops returns tensors; every output of every fixture is a tensor or a
    Python scalar, never a 0-d array wrapper of a scalar."""
    m, x, _ = _case("sym_ops")
    for value, info in zip(m.execute([x]), m.metadata.outputs, strict=True):
        if info.is_tensor:
            assert isinstance(value, np.ndarray)
        else:
            assert isinstance(value, int | float | bool)


def test_mutable_buffer_state_persists() -> None:
    m, x, et = _case("mutable_buffer")
    first = m.execute([x])[0]
    np.testing.assert_allclose(first, et, rtol=1e-5, atol=1e-6)
    second = m.execute([x])[0]  # the method's buffer changed: so does the result
    assert second.shape == first.shape and second.tobytes() != first.tobytes()
    fresh = _case("mutable_buffer")[0].execute([x])[0]  # a new method starts over
    assert fresh.tobytes() == first.tobytes()


def test_call_and_memory() -> None:
    m, x, et = _case("mlp")
    np.testing.assert_allclose(m(x)[0], et, rtol=1e-5, atol=1e-6)
    runtime_bytes, planned_bytes = m.memory()
    assert runtime_bytes > 0 and planned_bytes == sum(m.metadata.planned_buffer_sizes)


@pytest.mark.parametrize("name", ["mlp", "mobilenet_bn", "quantized_cnn"])
def test_method_memory_before_load(name: str) -> None:
    # The trial load's figures are the load's (packed, folded, int8 weights).
    program = RT.load_program(FIXTURES_DIR / name / "model.pte")
    before = program.method_memory("forward")
    after = program.load_method("forward").memory()
    assert (before["runtime_bytes"], before["planned_bytes"]) == after
    assert before["prepared_bytes"] > 0
    parts = (
        "prepared_bytes",
        "delegate_bytes",
        "folded_bytes",
        "scratch_bytes",
        "fused_result_bytes",
    )
    assert sum(before[k] for k in parts) <= before["runtime_bytes"]
    assert (
        before["load_peak_bytes"] >= before["runtime_bytes"] + before["planned_bytes"]
    )
    with pytest.raises(pterun.Error):
        program.method_memory("nope")
