"""The golden-case model and its one text format (described in tests/golden/README.md).

A golden file is a list of cases; a case is one kernel call: the operator, its
arguments in schema order (inputs, out tensors, the return slot), the status the
call must return, by name, and the expected contents of some arguments afterwards.
Every value is written exactly (floats as the shortest decimal that reads back to
the same bits in the tensor's dtype), so the files can be read by a person and
diffed, and the C driver (tests/golden/test_golden.c) needs no tolerance for
parsing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, Union

import torch

ROOT = Path(__file__).resolve().parents[2]


def _c_list(header: str, macro: str) -> list[tuple[str, ...]]:
    """The X(...) entries of an X-macro list in a public header."""
    text = (ROOT / "include" / "pterun" / header).read_text()
    body = text.split(f"#define {macro}(X)", 1)[1].split("\n\n", 1)[0]
    return [
        tuple(p.strip().strip('"') for p in m.split(","))
        for m in re.findall(r"X\(([^)]*)\)", body)
    ]


# dtype name (as pterun_dtype_name prints it) and code, from include/pterun/tensor.h
_DTYPE_CODES = {e[2]: int(e[1]) for e in _c_list("tensor.h", "PTERUN_DTYPE_LIST")}
# status names, from include/pterun/status.h
STATUS_NAMES = frozenset(e[0] for e in _c_list("status.h", "PTERUN_STATUS_LIST"))

_TORCH_NAME = {
    torch.uint8: "uint8",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.float16: "float16",
    torch.float32: "float32",
    torch.float64: "float64",
    torch.bool: "bool",
    torch.bfloat16: "bfloat16",
    torch.uint16: "uint16",
}
assert all(n in _DTYPE_CODES for n in _TORCH_NAME.values())


def dtype_name(dt: torch.dtype) -> str:
    return _TORCH_NAME[dt]


def dtype_code(dt: torch.dtype) -> int:
    """The pterun (= ExecuTorch ScalarType) number of a torch dtype."""
    return _DTYPE_CODES[_TORCH_NAME[dt]]


def dtype_size(dt: torch.dtype) -> int:
    return torch.empty(0, dtype=dt).element_size()


FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_BITS = {
    torch.float64: (torch.int64, 64, 0x7FF8000000000000),
    torch.float32: (torch.int32, 32, 0x7FC00000),
    torch.float16: (torch.int16, 16, 0x7E00),
    torch.bfloat16: (torch.int16, 16, 0x7FC0),
}


# ---- arguments -------------------------------------------------------------------
@dataclass
class Tensor:
    """An input tensor: its values, and its memory layout as a dim order."""

    t: torch.Tensor
    order: Sequence[int] | None = None


@dataclass
class Gen:
    """A float input the driver computes (keeps big inputs out of the files):
    element n (logical order) = ((n*7919 + seed*104729) % 2001 - 1000) / 1000."""

    dtype: torch.dtype
    sizes: Sequence[int]
    seed: int

    def tensor(self) -> torch.Tensor:
        n = torch.arange(math.prod(self.sizes), dtype=torch.int64)
        v = ((n * 7919 + self.seed * 104729) % 2001 - 1000).double() / 1000.0
        return v.to(self.dtype).reshape(list(self.sizes))


@dataclass
class Out:
    """An out tensor: its initial sizes, dim order and bounds, capacity in
    elements, and the byte it is filled with (so unwritten elements show)."""

    dtype: torch.dtype
    sizes: Sequence[int]
    cap: int
    order: Sequence[int] | None = None
    max_sizes: Sequence[int] | None = None  # None: the initial sizes
    bounded: bool = False  # False: unbounded (the kernel may grow it up to cap)
    fill: int = 0


@dataclass
class Ref:
    """The same value as argument k (the return slot of an out variant)."""

    k: int


@dataclass
class Refs:
    """A TensorList of arguments ks."""

    ks: Sequence[int]


@dataclass
class TensorList:
    """A TensorList (or, optional=True, a list of optional tensors) of items."""

    items: Sequence[Union[Tensor, Out, None]]
    optional: bool = False


@dataclass
class Double:
    """A Double argument (also for whole numbers)."""

    v: float


@dataclass
class Bools:
    items: Sequence[bool]


@dataclass
class Doubles:
    items: Sequence[float]


@dataclass
class Str:
    s: str


@dataclass
class Dtype:
    """A ScalarType argument (an Int holding the dtype's number)."""

    dtype: torch.dtype


# ---- expectations ------------------------------------------------------------------
@dataclass(frozen=True)
class Close:
    """|got - want| <= atol + rtol * |want|; NaN only matches NaN, inf only itself."""

    rtol: float
    atol: float


EXACT = "exact"  # equal values, the same sign of zero, NaN matches NaN
BITS = "bits"  # the same bits (every element)
Compare = Union[Close, str]


@dataclass
class Expect:
    """Argument k (item j of a list argument, or None) must equal t."""

    k: int
    t: torch.Tensor
    cmp: Compare
    item: int | None = None


@dataclass
class Case:
    id: str
    op: str
    args: list[Any]
    expects: list[Expect] = field(default_factory=list)
    status: str = "OK"


# ---- writing -----------------------------------------------------------------------
def _hex(bits: int, width: int) -> str:
    return "0x%0*x" % (width // 4, bits & ((1 << width) - 1))


def fmt_values(t: torch.Tensor) -> list[str]:
    """Elements in logical (row-major) order, each exact in t's dtype."""
    t = t.detach().contiguous().reshape(-1)
    dt = t.dtype
    if dt == torch.bool:
        return ["1" if v else "0" for v in t.tolist()]
    if dt not in FLOATS:
        return [str(int(v)) for v in t.tolist()]
    ity, width, qnan = _BITS[dt]
    bits = t.view(ity).tolist()
    if dt == torch.float64:
        vals = [repr(v) for v in t.tolist()]
    else:  # f16/bf16 values are exact in float32: its shortest form reads back exactly
        vals = [str(v) for v in t.float().numpy()]
    out = []
    for v, b in zip(vals, bits):
        ub = b & ((1 << width) - 1)
        if v == "nan":
            sign = ub >> (width - 1)
            if ub & ~(1 << (width - 1)) == qnan:
                v = "-nan" if sign else "nan"
            else:
                v = "nan:" + _hex(b, width)
        out.append(v)
    return out


def fmt_double(v: float) -> str:
    return fmt_values(torch.tensor([float(v)], dtype=torch.float64))[0]


def _shape(sizes: Sequence[int]) -> str:
    return "[" + ",".join(str(int(s)) for s in sizes) + "]"


def _order(order: Sequence[int] | None, rank: int) -> str:
    if order is None or list(order) == list(range(rank)):
        return ""
    return " order=" + _shape(order)


def _str(s: str) -> str:
    """A string as one token: %XX escapes for '%', space and non-printables."""
    out = "".join(c if "!" <= c <= "~" and c != "%" else "%%%02X" % ord(c) for c in s)
    return out or "%"  # a lone '%' is the empty string


def _tensor(t: torch.Tensor, order: Sequence[int] | None) -> str:
    vals = fmt_values(t)
    head = "tensor %s %s%s" % (
        dtype_name(t.dtype),
        _shape(t.shape),
        _order(order, t.dim()),
    )
    return head + (" : " + " ".join(vals) if vals else " :")


def fmt_arg(a: Any) -> str:
    if a is None:
        return "none"
    if isinstance(a, torch.Tensor):
        return _tensor(a, None)
    if isinstance(a, Tensor):
        return _tensor(a.t, a.order)
    if isinstance(a, Gen):
        return "gen %s %s seed=%d" % (dtype_name(a.dtype), _shape(a.sizes), a.seed)
    if isinstance(a, Out):
        s = "out %s %s%s" % (
            dtype_name(a.dtype),
            _shape(a.sizes),
            _order(a.order, len(a.sizes)),
        )
        if a.max_sizes is not None and list(a.max_sizes) != list(a.sizes):
            s += " max=" + _shape(a.max_sizes)
        s += " bounded" if a.bounded else " unbounded"
        return s + " cap=%d fill=0x%02x" % (a.cap, a.fill)
    if isinstance(a, Ref):
        return "ref %d" % a.k
    if isinstance(a, Refs):
        return "refs " + _shape(a.ks)
    if isinstance(a, bool):
        return "bool " + ("true" if a else "false")
    if isinstance(a, int):
        return "int %d" % a
    if isinstance(a, float):
        return "double " + fmt_double(a)
    if isinstance(a, Double):
        return "double " + fmt_double(float(a.v))
    if isinstance(a, Str):
        return "str " + _str(a.s)
    if isinstance(a, Dtype):
        return "dtype " + dtype_name(a.dtype)
    if isinstance(a, Bools):
        return "bools [" + ",".join("1" if b else "0" for b in a.items) + "]"
    if isinstance(a, Doubles):
        return "doubles [" + ",".join(fmt_double(v) for v in a.items) + "]"
    if isinstance(a, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in a
    ):
        return "ints " + _shape(a)
    raise TypeError("cannot write argument %r" % (a,))


def fmt_cmp(c: Compare) -> str:
    if isinstance(c, Close):
        return "close rtol=%s atol=%s" % (fmt_double(c.rtol), fmt_double(c.atol))
    assert c in (EXACT, BITS), c
    return c


_ID = re.compile(r"[A-Za-z0-9_.+~-]+")


def case_id(label: str) -> str:
    """A readable one-token id from a free-form label."""
    s = re.sub(r"[^A-Za-z0-9_.+-]+", "_", label).strip("_")
    return s or "case"


MAX_TOKEN = 1023  # tests/golden/test_golden.c: MAX_TOK - 1
MAX_LIST = 64  # items of an ints/doubles/bools/refs argument the driver reads


def _check_tokens(line: str) -> str:
    assert all(len(t) <= MAX_TOKEN for t in line.split(" ")), line[:200]
    return line


def render_case(c: Case) -> str:
    assert _ID.fullmatch(c.id), c.id
    for a in c.args:
        items = (
            a.items
            if isinstance(a, (Bools, Doubles))
            else a.ks
            if isinstance(a, Refs)
            else a
        )
        if isinstance(items, (list, tuple)):
            assert len(items) <= MAX_LIST, (c.id, len(items))
    assert c.status in STATUS_NAMES, c.status
    lines = ["case %s %s" % (c.id, c.op), "status " + c.status]
    for k, a in enumerate(c.args):
        if isinstance(a, TensorList):
            kind = "opttensors" if a.optional else "tensors"
            lines.append("arg %d %s %d" % (k, kind, len(a.items)))
            for j, it in enumerate(a.items):
                lines.append("  item %d %s" % (j, fmt_arg(it)))
        else:
            lines.append("arg %d %s" % (k, fmt_arg(a)))
    for e in c.expects:
        where = str(e.k) if e.item is None else "%d.%d" % (e.k, e.item)
        t = e.t.detach()
        cmp = e.cmp if t.dtype in FLOATS else EXACT  # integers always compare exactly
        vals = fmt_values(t)
        lines.append(
            "expect %s %s %s %s :%s"
            % (
                where,
                fmt_cmp(cmp),
                dtype_name(t.dtype),
                _shape(t.shape),
                (" " + " ".join(vals)) if vals else "",
            )
        )
    lines.append("end")
    return "\n".join(_check_tokens(x) for x in lines)


@dataclass
class GoldenFile:
    """One golden file: tests/golden/<name>.txt."""

    name: str
    source: str  # what computed the expected values
    cases: list[Case] = field(default_factory=list)

    def add(self, c: Case) -> Case:
        base, n = c.id, 2
        ids = {x.id for x in self.cases}
        while c.id in ids:  # labels need not be unique; ids are
            c.id = "%s~%d" % (base, n)
            n += 1
        self.cases.append(c)
        return c

    def render(self) -> str:
        head = [
            "# pterun golden cases: %s (%d cases)" % (self.name, len(self.cases)),
            "# expected values: %s" % self.source,
            "# written by tools/gen_goldens.py; format: tests/golden/README.md",
        ]
        return "\n".join(head + [render_case(c) for c in self.cases]) + "\n"
