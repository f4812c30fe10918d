"""torch.Tensor inputs (through DLPack) and torch views of outputs."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pterun
import pytest
from conftest import FIXTURES_DIR

pytestmark = pytest.mark.torch


def test_torch_inputs_match_numpy() -> None:
    torch: Any = importlib.import_module("torch")

    program = pterun.Runtime.get().load_program(FIXTURES_DIR / "mlp" / "model.pte")
    m = program.load_method("forward")
    x = np.load(FIXTURES_DIR / "mlp" / "forward_input_0.npy")
    from_numpy = m.execute([x])[0]
    from_torch = m.execute([torch.from_numpy(x.copy())])[0]
    assert m.last_input_copies == (False,)
    assert from_torch.tobytes() == from_numpy.tobytes()
    strided = torch.from_numpy(x.copy()).t().contiguous().t()  # column-major memory
    assert m.execute([strided])[0].tobytes() == from_numpy.tobytes()
    assert m.last_input_copies == (True,)


def test_torch_channels_last_is_zero_copy() -> None:
    torch: Any = importlib.import_module("torch")

    case = FIXTURES_DIR / "cnn_channels_last"
    m = pterun.Runtime.get().load_program(case / "model.pte").load_method("forward")
    x = torch.from_numpy(np.load(case / "forward_input_0.npy"))
    expected = m.execute([x.numpy()])[0]
    out = m.execute([x.contiguous(memory_format=torch.channels_last)])[0]
    assert m.last_input_copies == (False,)
    assert out.tobytes() == expected.tobytes()


def test_outputs_to_torch_without_copy() -> None:
    torch: Any = importlib.import_module("torch")

    m = (
        pterun.Runtime.get()
        .load_program(FIXTURES_DIR / "mlp" / "model.pte")
        .load_method()
    )
    x = torch.from_numpy(np.load(FIXTURES_DIR / "mlp" / "forward_input_0.npy"))
    (t,) = m.execute_tensors([x])
    y = torch.from_dlpack(t)
    assert y.dtype == torch.float32 and tuple(y.shape) == t.shape
    assert y.numpy().tobytes() == t.tobytes()
    y.add_(1)  # shares memory with t
    assert np.asarray(t).tobytes() == y.numpy().tobytes()


def test_wrong_torch_dtype_and_grad() -> None:
    torch: Any = importlib.import_module("torch")

    m = (
        pterun.Runtime.get()
        .load_program(FIXTURES_DIR / "mlp" / "model.pte")
        .load_method()
    )
    x = torch.from_numpy(np.load(FIXTURES_DIR / "mlp" / "forward_input_0.npy"))
    with pytest.raises(pterun.Error) as info:
        m.execute([x.double()])
    assert info.value.status == "INPUT_MISMATCH"
    with pytest.raises(BufferError):  # torch refuses to export a tensor needing grad
        m.execute([x.clone().requires_grad_()])
