"""Readable summaries of a serialized program and its data files (``program.txt``).

For humans and the docs; nothing parses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fixturekit.programs import op_name

_SCALAR_NAMES = {
    0: "u8",
    1: "i8",
    2: "i16",
    3: "i32",
    4: "i64",
    5: "f16",
    6: "f32",
    7: "f64",
    11: "bool",
    15: "bf16",
}


def _dtype_name(scalar_type: Any) -> str:
    return _SCALAR_NAMES.get(int(scalar_type), str(int(scalar_type)))


def _describe_value(val: Any) -> str:
    kind = type(val).__name__
    if kind == "Tensor":
        info = val.extra_tensor_info
        alloc = val.allocation_info
        parts = [
            f"Tensor {_dtype_name(val.scalar_type)}",
            f"sizes={list(val.sizes)}",
            f"dim_order={list(val.dim_order)}",
            f"dyn={int(val.shape_dynamism)}",
            f"buf={val.data_buffer_idx}",
        ]
        if alloc is not None:
            offset = (alloc.memory_offset_high << 32) | alloc.memory_offset_low
            parts.append(f"mem={alloc.memory_id}@{offset}")
        if info is not None:
            loc = "EXTERNAL" if int(info.location) == 1 else "SEGMENT"
            parts.append(f"loc={loc}")
            if info.fully_qualified_name:
                parts.append(f"fqn={info.fully_qualified_name}")
        return " ".join(parts)
    if kind in ("Int", "Bool", "Double", "String"):
        field_name = {"Int": "int_val", "Bool": "bool_val", "Double": "double_val"}.get(
            kind, "string_val"
        )
        return f"{kind} {getattr(val, field_name)!r}"
    if kind in (
        "IntList",
        "TensorList",
        "DoubleList",
        "BoolList",
        "OptionalTensorList",
    ):
        return f"{kind} {list(val.items)}"
    return kind


def _describe_instr(instr: Any, operators: Sequence[Any]) -> str:
    args = instr.instr_args
    kind = type(args).__name__
    if kind == "KernelCall":
        return f"KernelCall {op_name(operators[args.op_index])} args={list(args.args)}"
    if kind == "JumpFalseCall":
        dest = args.destination_instruction
        return f"JumpFalse cond={args.cond_value_index} dest={dest}"
    if kind == "MoveCall":
        return f"Move {args.move_from} -> {args.move_to}"
    if kind == "FreeCall":
        return f"Free {args.value_index}"
    if kind == "DelegateCall":
        return f"DelegateCall {args.delegate_index} args={list(args.args)}"
    return kind


def describe_program(program: Any, pte: bytes) -> str:
    """Readable dump of the serialized program (for humans, not parsed)."""
    lines = [
        f"# file size {len(pte)} bytes; version {program.version}",
        f"segments: {[(s.offset, s.size) for s in program.segments]}",
        (
            f"constant_segment: index={program.constant_segment.segment_index} "
            f"offsets={list(program.constant_segment.offsets)}"
        ),
        f"constant_buffer entries: {len(program.constant_buffer)}",
    ]
    mds = program.mutable_data_segments or []
    lines.append(
        "mutable_data_segments: "
        + str([(m.segment_index, list(m.offsets)) for m in mds])
    )
    named = program.named_data or []
    lines.append(f"named_data: {[(n.key, n.segment_index) for n in named]}")
    for plan in program.execution_plan:
        lines.append("")
        lines.append(f"method {plan.name}")
        lines.append(f"  inputs={list(plan.inputs)} outputs={list(plan.outputs)}")
        lines.append(f"  non_const_buffer_sizes={list(plan.non_const_buffer_sizes)}")
        lines.append(f"  delegates={len(plan.delegates)}")
        for i, op in enumerate(plan.operators):
            lines.append(f"  op[{i}] name={op.name!r} overload={op.overload!r}")
        for i, ev in enumerate(plan.values):
            lines.append(f"  v[{i}] {_describe_value(ev.val)}")
        for c, chain in enumerate(plan.chains):
            lines.append(
                f"  chain {c} inputs={list(chain.inputs)} outputs={list(chain.outputs)}"
            )
            for i, instr in enumerate(chain.instructions):
                lines.append(f"    [{i}] {_describe_instr(instr, plan.operators)}")
    return "\n".join(lines) + "\n"


def describe_ptd(fname: str, blob: bytes) -> str:
    """Readable dump of a .ptd (FlatTensor) file."""
    from executorch.extension.flat_tensor.serialize.serialize import (  # type: ignore[import-untyped]
        FlatTensorHeader,
        _deserialize_to_flat_tensor,
    )

    header = FlatTensorHeader.from_bytes(blob[8:])
    start = header.flatbuffer_offset
    flat = _deserialize_to_flat_tensor(blob[: start + header.flatbuffer_size])
    lines = [
        f"data file {fname}: {len(blob)} bytes, identifier {blob[4:8].decode()!r}",
        (
            f"  header: magic={header.magic.decode()!r} length={header.length} "
            f"flatbuffer_offset={header.flatbuffer_offset} "
            f"flatbuffer_size={header.flatbuffer_size} "
            f"segment_base_offset={header.segment_base_offset} "
            f"segment_data_size={header.segment_data_size}"
        ),
        f"  version={flat.version}",
        f"  segments={[(seg.offset, seg.size) for seg in flat.segments]}",
    ]
    for nd in flat.named_data:
        layout = nd.tensor_layout
        desc = "no layout"
        if layout is not None:
            desc = (
                f"{_dtype_name(layout.scalar_type)} "
                f"sizes={list(layout.sizes)} dim_order={list(layout.dim_order)}"
            )
        lines.append(f"  key={nd.key!r} segment={nd.segment_index} {desc}")
    return "\n".join(lines) + "\n"
