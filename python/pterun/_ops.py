"""The operator registry pterun uses (the process's default registry)."""

from __future__ import annotations

from pterun import _pterun
from pterun._meta import Operator, split_operator


def ops() -> list[Operator]:
    """Every registered operator overload, sorted, with its component.

    ``kernels`` counts the kernels registered for the overload, as in
    ``pterun ops`` (one per overload since kernel ABI 2).
    """
    counts: dict[tuple[str, str, str], int] = {}
    for op, component in _pterun.kernels():
        name, overload = split_operator(op)
        k = (name, overload, component)
        counts[k] = counts.get(k, 0) + 1
    return [
        Operator(name=n, overload=o, component=c, kernels=count)
        for (n, o, c), count in sorted(counts.items())
    ]


def component_for_op(op: str) -> str | None:
    """The pterun component whose operator namespace covers ``op``
    (``"aten::add.out"``), whether or not it is loaded; ``None`` if none does.
    A namespace guess: the component may not implement ``op``."""
    return _pterun.component_for_op(op)


class OperatorRegistry:
    """``Runtime.get().operator_registry``: what this process can run."""

    @property
    def operator_names(self) -> set[str]:
        """``{"aten::add.out", ...}``"""
        return {op for op, _component in _pterun.kernels()}

    def ops(self) -> list[Operator]:
        return ops()
