#!/usr/bin/env python3
"""Prints the operators that ExecuTorch programs (.pte) call, one per line, sorted.

    python3 tools/select_ops.py model.pte [more.pte ...] > ops.txt

The list is what a selective build keeps (-DPTERUN_SELECT_OPS=..., see
docs/packaging.md): every entry of every method's operator table, spelt as the
runtime looks it up (`name.overload`, or `name` when the overload is empty).
Standard library only: it reads the program's flatbuffer directly (Program.
execution_plan[i].operators[j].{name, overload}; schema/program.fbs), with
every offset checked. Exit status 1 and one message on a file it cannot read.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path


class BadProgram(Exception):
    pass


class _Buf:
    def __init__(self, data: bytes) -> None:
        self.d = data

    def u32(self, at: int) -> int:
        if at < 0 or at + 4 > len(self.d):
            raise BadProgram(f"offset {at} out of range")
        return int(struct.unpack_from("<I", self.d, at)[0])

    def i32(self, at: int) -> int:
        if at < 0 or at + 4 > len(self.d):
            raise BadProgram(f"offset {at} out of range")
        return int(struct.unpack_from("<i", self.d, at)[0])

    def u16(self, at: int) -> int:
        if at < 0 or at + 2 > len(self.d):
            raise BadProgram(f"offset {at} out of range")
        return int(struct.unpack_from("<H", self.d, at)[0])

    def field(self, table: int, index: int) -> int | None:
        """Absolute position of a table's field, or None when absent."""
        vtable = table - self.i32(table)
        vsize = self.u16(vtable)
        slot = 4 + 2 * index
        if slot + 2 > vsize:
            return None
        off = self.u16(vtable + slot)
        return table + off if off else None

    def deref(self, at: int) -> int:
        return at + self.u32(at)

    def vector(self, at: int) -> list[int]:
        """Positions of the offset elements of the vector referenced at `at`."""
        v = self.deref(at)
        n = self.u32(v)
        if n > (len(self.d) - v - 4) // 4:
            raise BadProgram(f"vector of {n} elements at {v} overruns the file")
        return [v + 4 + 4 * k for k in range(n)]

    def string(self, at: int) -> str:
        s = self.deref(at)
        n = self.u32(s)
        if n > len(self.d) - s - 4:
            raise BadProgram(f"string of {n} bytes at {s} overruns the file")
        try:
            return self.d[s + 4 : s + 4 + n].decode("utf-8")
        except UnicodeDecodeError as e:
            raise BadProgram(f"operator name is not UTF-8 ({e.reason})") from None


def program_ops(data: bytes) -> set[str]:
    if len(data) < 8 or data[4:8] != b"ET12":
        raise BadProgram("not an ExecuTorch program (no 'ET12' identifier)")
    b = _Buf(data)
    program = b.deref(0)
    ops: set[str] = set()
    plans = b.field(program, 1)  # Program.execution_plan
    for plan_at in b.vector(plans) if plans is not None else []:
        plan = b.deref(plan_at)
        table = b.field(plan, 6)  # ExecutionPlan.operators
        for op_at in b.vector(table) if table is not None else []:
            op = b.deref(op_at)
            name_at, overload_at = b.field(op, 0), b.field(op, 1)
            if name_at is None:
                raise BadProgram("an operator has no name")
            name = b.string(name_at)
            overload = b.string(overload_at) if overload_at is not None else ""
            if not name.isprintable() or not overload.isprintable():
                raise BadProgram("an operator name holds unprintable characters")
            ops.add(f"{name}.{overload}" if overload else name)
    return ops


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    ops: set[str] = set()
    for path in argv:
        try:
            ops |= program_ops(Path(path).read_bytes())
        except (OSError, BadProgram) as e:
            print(f"select_ops.py: {path}: {e}", file=sys.stderr)
            return 1
    for op in sorted(ops):
        print(op)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
