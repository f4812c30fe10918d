"""Operator names and tables of exported programs, and parsing a ``.pte``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OPS_HEADER = (
    "# method index operator\n"
    "# operator = Operator.name + '.' + Operator.overload, or only\n"
    "# Operator.name when the overload is empty (the runtime lookup name).\n"
)


def op_name(op: Any) -> str:
    """Registry lookup name: ``name.overload``, or ``name`` if overload is empty."""
    return f"{op.name}.{op.overload}" if op.overload else str(op.name)


def method_operators(et_program: Any) -> dict[str, list[str]]:
    """Method name -> its operator table (lookup names, in table order) of an
    ``ExecutorchProgramManager``."""
    return {
        plan.name: [op_name(op) for op in plan.operators]
        for plan in et_program.executorch_program.execution_plan
    }


def operator_set(et_program: Any) -> list[str]:
    """The sorted operator names of every method of a lowered program."""
    return sorted({o for ops in method_operators(et_program).values() for o in ops})


def ops_table(operators: Mapping[str, list[str]]) -> str:
    """The text of ``ops.txt``: ``method index operator`` lines under
    :data:`OPS_HEADER`."""
    return OPS_HEADER + "".join(
        f"{method} {i} {op}\n"
        for method, ops in operators.items()
        for i, op in enumerate(ops)
    )


def parse_program(pte: bytes) -> Any:
    """Parse the flatbuffer part of a .pte exactly as serialized."""
    from executorch.exir._serialize._program import (  # type: ignore[import-untyped]
        _flatbuffer_to_program,
        _get_extended_header,
    )

    eh = _get_extended_header(pte)
    size = eh.program_size if eh is not None and eh.is_valid() else len(pte)
    return _flatbuffer_to_program(pte[:size])
