"""Tensors to ``.npy`` fixture files, and flattening a model's outputs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """Logical-order, C-contiguous copy (never a Fortran-order .npy)."""
    return np.ascontiguousarray(t.detach().cpu().contiguous().numpy())


def save_arrays(
    directory: Path,
    method: str,
    kind: str,
    values: Iterable[torch.Tensor | np.ndarray],
) -> None:
    """Write ``<method>_<kind>_<k>.npy`` for every value, in order.

    A tensor is saved as :func:`to_numpy` gives it; an array as it is.
    ``kind`` is ``input`` for the inputs, else the reference's name
    (``et``, ``eager``, ``pyref``, ``plain``).
    """
    for k, v in enumerate(values):
        a = to_numpy(v) if isinstance(v, torch.Tensor) else v
        np.save(directory / f"{method}_{kind}_{k}.npy", a)


def flatten_outputs(out: Any) -> list[torch.Tensor]:
    """Flatten a (possibly nested) output structure into a list of tensors;
    Python scalars become 0-d tensors, anything else is an error."""
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    result: list[torch.Tensor] = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            result.append(leaf)
        elif isinstance(leaf, (bool, int, float)):
            result.append(torch.tensor(leaf))
        else:
            raise TypeError(f"unsupported output leaf {type(leaf).__name__}")
    return result


def tensor_leaves(out: Any) -> list[torch.Tensor]:
    """The tensors of a (possibly nested) output structure, in order; other
    leaves are left out."""
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    return [t for t in leaves if isinstance(t, torch.Tensor)]


def max_abs_diff(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> float:
    """Largest absolute difference over matching output lists."""
    if len(a) != len(b):
        raise ValueError(f"output count differs: {len(a)} vs {len(b)}")
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if x.shape != y.shape or x.dtype != y.dtype:
            raise ValueError(
                f"output mismatch: {x.shape}/{x.dtype} vs {y.shape}/{y.dtype}"
            )
        if x.size:
            worst = max(
                worst,
                float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))),
            )
    return worst
