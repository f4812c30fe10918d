"""Running a program in ExecuTorch's runtime, and a model eagerly."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from fixturekit.arrays import flatten_outputs


def run_executorch(
    pte_path: Path,
    data_paths: Sequence[Path],
    method: str,
    inputs: Sequence[torch.Tensor],
) -> list[torch.Tensor]:
    """Run one method once, in a freshly loaded program, in ExecuTorch's runtime."""
    from executorch.runtime import Runtime  # type: ignore[import-untyped]

    if len(data_paths) > 1:
        raise ValueError("ExecuTorch's Python runtime accepts a single data file")
    data_path = str(data_paths[0]) if data_paths else None
    program = Runtime.get().load_program(str(pte_path), data_path=data_path)
    loaded = program.load_method(method)
    if loaded is None:
        raise RuntimeError(f"cannot load method {method}")
    outputs = loaded.execute(
        [t.clone(memory_format=torch.preserve_format) for t in inputs]
    )
    return flatten_outputs(list(outputs))


def run_eager(
    module: nn.Module,
    inputs: Sequence[torch.Tensor],
    *,
    fresh_copy: bool = True,
    flatten: Callable[[Any], list[torch.Tensor]] = flatten_outputs,
) -> list[torch.Tensor]:
    """Run the eager model on clones of the inputs, without autograd; with
    ``fresh_copy`` on a deep copy (so buffer state starts fresh). The outputs
    are flattened with ``flatten`` (:func:`~fixturekit.arrays.tensor_leaves`
    keeps only the tensors)."""
    if fresh_copy:
        module = copy.deepcopy(module)
    with torch.no_grad():
        return flatten(module(*[t.clone() for t in inputs]))
