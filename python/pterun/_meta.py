"""Typed descriptions of methods, their inputs/outputs, and operators."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ValueInfo:
    """One input or output of a method, as the program declares it.

    For tensors ``kind`` is ``"Tensor"`` and ``dtype`` (``"float32"``),
    ``shape`` (exact, or the upper bound when ``dynamism`` is ``"bounded"``),
    ``dim_order``, ``dynamism`` (``"static"``, ``"bounded"``, ``"unbounded"``),
    ``planned`` (the runtime copies the input into its own memory) and
    ``nbytes`` are set.  For scalars (``"Int"``, ``"Double"``, ``"Bool"``,
    ``"None"``) those are ``None`` and ``value`` is the value compiled into
    the program.
    """

    kind: str
    dtype: str | None
    shape: tuple[int, ...] | None
    dim_order: tuple[int, ...] | None
    dynamism: str | None
    planned: bool | None
    nbytes: int | None
    value: int | float | bool | None

    @property
    def is_tensor(self) -> bool:
        return self.kind == "Tensor"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ValueInfo:
        return cls(
            kind=d["kind"],
            dtype=d["dtype"],
            shape=d["shape"],
            dim_order=d["dim_order"],
            dynamism=d["dynamism"],
            planned=d["planned"],
            nbytes=d["nbytes"],
            value=d["value"],
        )


@dataclass(frozen=True)
class MethodMeta:
    """What a method takes and returns, and what it needs to run."""

    name: str
    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    operators: tuple[str, ...]
    """Operator table, ``"aten::add.out"`` style (name, then ``.overload``)."""
    planned_buffer_sizes: tuple[int, ...]
    value_count: int
    instruction_count: int
    delegate_count: int

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.outputs)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MethodMeta:
        ops = tuple(f"{name}.{ov}" if ov else name for name, ov in d["operators"])
        return cls(
            name=d["name"],
            inputs=tuple(ValueInfo.from_dict(x) for x in d["inputs"]),
            outputs=tuple(ValueInfo.from_dict(x) for x in d["outputs"]),
            operators=ops,
            planned_buffer_sizes=tuple(d["planned_buffer_sizes"]),
            value_count=d["value_count"],
            instruction_count=d["instruction_count"],
            delegate_count=d["delegate_count"],
        )


@dataclass(frozen=True)
class Operator:
    """One registered operator overload (as ``pterun ops`` lists it)."""

    name: str
    """``"aten::add"``"""
    overload: str
    """``"out"``, or ``""`` when the operator has no overload name"""
    component: str
    """The pterun component providing it (``"runtime"`` for prim ops)."""
    kernels: int
    """Number of dtype-specialised kernels registered for it."""

    @property
    def qualified_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name


def split_operator(op: str) -> tuple[str, str]:
    """``"ns::name.overload"`` -> ``("ns::name", "overload")``."""
    head, sep, rest = op.partition("::")
    base = rest if sep else head
    name, _, overload = base.partition(".")
    return (f"{head}::{name}" if sep else name), overload
