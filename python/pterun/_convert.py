"""Method outputs as NumPy arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pterun._pterun import Tensor

if TYPE_CHECKING:
    import numpy as np


def tensor_to_numpy(t: Tensor) -> np.ndarray[Any, Any]:
    """A NumPy view of an output tensor (no copy: the array keeps ``t`` alive).

    bfloat16, which NumPy lacks, becomes float32 (exactly), as the CLI's
    ``.npy`` files have it.
    """
    import numpy as np

    if t.dtype == "bfloat16":
        raw = np.frombuffer(t.tobytes(), dtype=np.uint16).astype(np.uint32)
        return (raw << 16).view(np.float32).reshape(t.shape)
    return np.asarray(t)


def to_numpy(value: Any) -> Any:
    """Converts every pterun.Tensor in an output (or list of outputs)."""
    if isinstance(value, Tensor):
        return tensor_to_numpy(value)
    if isinstance(value, list):
        return [to_numpy(v) for v in value]
    return value
