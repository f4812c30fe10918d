"""The CI set's coverage gate: every fusion pattern of
src/optimize/method_fuse_patterns.inc applied, every XNNPACK-backend node type
executed, every microkernel variant this build dispatches (and this CPU
runs) ran, every grammar element generated. Prints one table per axis and
returns 1 when something was never hit.

Fusion patterns are numbered by their row; ``pterun run --verbose`` logs
``fusion: pattern N of M (...)`` for each fused chain (src/optimize/method_fuse.c).
Recurrent cells (src/optimize/method_fuse_cell.c) log ``fusion: cell N of M
(K instructions => op) at``. Node types come from ``xnnpack: node types: ...`` (backends/xnnpack/xb_compile.c),
variants from ``compute variants: ...`` (pterun_compute_variants_report()),
layouts from ``layout: N tensors channels-last`` (src/optimize/method_layout.c).
Some rows are reached only by programs outside the grammar (torchao's
affine and per-token quantized linears): ``EXTRA_PROGRAMS`` lists committed
fixtures from the real exporter that the CI stage runs for them.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from .grammar import grammar_kinds

REPO = Path(__file__).resolve().parents[2]
PATTERNS = REPO / "src" / "optimize" / "method_fuse_patterns.inc"
CELLS = REPO / "src" / "optimize" / "method_fuse_cell.c"
XNN_NAMES = REPO / "backends" / "xnnpack" / "xb_payload.c"

# Node types the backend parses but no exporter path of torch 2.13 /
# executorch 1.5.1 emits for a float32 or int8 model of the grammar (each
# checked: the partitioner lowers the ATen op to another node, or not at all).
XNN_NOT_EMITTED: dict[str, str] = {
    "ELU": "XnnpackPartitioner has no ELU rule (executorch 1.5.1 ships a node "
    "visitor, op_elu.py, but no partitioner config): aten.elu stays outside the delegate",
}

# Fusion rows the pinned exporter's programs do not reach, by row and fused
# operator (a row that moves or is hit fails the gate, so the list stays
# true). XNNPACKQuantizer (executorch 1.5.1) annotates conv/linear/mm with a
# following relu as one quantized pattern but quantizes a hardtanh on its own
# (a quantize/dequantize pair between them: row 12 after a convolution, row 45
# or the unfused op otherwise), so the static int8 op -> hardtanh chains come
# only from other quantizers.
_Q8_HARDTANH = (
    "XNNPACKQuantizer quantizes hardtanh on its own (a Q/DQ pair after the conv/"
    "linear), so no program of the pinned exporter has this chain"
)
NOT_REACHED: dict[int, tuple[str, str]] = {
    13: ("pterun_quantized::conv2d_hardtanh_q8.out", _Q8_HARDTANH),
    16: ("pterun_quantized::linear_hardtanh_q8.out", _Q8_HARDTANH),
    22: ("pterun_quantized::mm_hardtanh_q8.out", _Q8_HARDTANH),
    25: ("pterun_quantized::mm_hardtanh_q8.out", _Q8_HARDTANH),
    28: ("pterun_quantized::linear_hardtanh_q8.out", _Q8_HARDTANH),
    41: (
        "pterun_quantized::add_relu_q8.out",
        "the int8 add -> relu whose chain operand is the add's second argument: no "
        "CI program fuses it yet (spec 9104's swapped residual does not): a known gap",
    ),
}


# The layout pass's choices (src/optimize/method_layout.c logs "layout: N
# tensors channels-last (M in wide-plane depthwise groups)"): any, and the
# wide-plane groups (LAYOUT_WIDE_MIN_C) among them.
LAYOUTS = ("channels-last", "channels-last, wide planes")


def pattern_rows() -> list[str]:
    """One readable name per row of method_fuse_patterns.inc, in row order."""
    text = PATTERNS.read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    # N(namespace, operator, overload) names "namespace::operator.overload".
    text = re.sub(r"\bN\((\w+), (\w+), (\w+)\)", r'"\1::\2.\3"', text)
    rows = []
    for m in re.finditer(
        r"\{\.ops = \{([^}]*)\}(.*?)\.fused = \"([^\"]+)\"", text, flags=re.DOTALL
    ):
        ops = " > ".join(o.strip().strip('"') for o in m.group(1).split(","))
        rows.append(f"{ops} => {m.group(3)}")
    return rows


def cell_operators() -> list[str]:
    """The fused operators of the recurrent cells (method_fuse_cell.c's table,
    logged as ``fusion: cell N of M (K instructions => op) at``)."""
    text = CELLS.read_text()
    return [
        f"{ns}::{op}.{ovl}"
        for ns, op, ovl in re.findall(
            r"\.fused = PT_FUSE_N\((\w+), (\w+), (\w+)\)", text
        )
    ]


def xnn_node_types() -> list[str]:
    """The node types backends/xnnpack executes (a case in xb_run*.c), by
    their display names (kNodeNames, indexed by the XB_N_* enum)."""
    text = XNN_NAMES.read_text()
    m = re.search(r"kNodeNames\[[^\]]*\]\s*=\s*\{(.*?)\};", text, flags=re.DOTALL)
    enum = (XNN_NAMES.parent / "xb_internal.h").read_text()
    e = re.search(r"XB_N_ADD = 1,(.*?)XB_N_COUNT", enum, flags=re.DOTALL)
    if m is None or e is None:
        return []
    names = re.findall(r'"([^"]+)"', m.group(1))
    tags = ["XB_N_ADD", *re.findall(r"(XB_N_[A-Z0-9_]+)", e.group(1))]
    ops = "".join(f.read_text() for f in sorted(XNN_NAMES.parent.glob("xb_run*.c")))
    done = set(re.findall(r"case (XB_N_[A-Z0-9_]+)", ops))
    return [
        names[i + 1] for i, t in enumerate(tags) if t in done and i + 1 < len(names)
    ]


def _table(title: str, rows: list[tuple[str, int]]) -> int:
    missed = [n for n, c in rows if c == 0]
    print(f"\n{title}: {len(rows) - len(missed)} of {len(rows)} hit")
    w = max((len(n) for n, _ in rows), default=10)
    for n, c in rows:
        print(f"  {n:<{w}}  {c if c else 'NEVER'}")
    return len(missed)


def report(results: list[dict[str, Any]]) -> int:
    fus: Counter[int] = Counter()
    var: Counter[str] = Counter()
    avail: set[str] = set()
    xnn: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    layouts: Counter[str] = Counter()
    cells: Counter[str] = Counter()
    total = 0
    for r in results:
        fus.update(r.get("fusions", []))
        var.update(r.get("variants", []))
        avail.update(r.get("variants_available", []))
        xnn.update(r.get("xnn_nodes", []))
        kinds.update(r.get("kinds", []))
        layouts.update(r.get("layouts", []))
        cells.update(r.get("cells", []))
        total = max(total, r.get("fusion_total", 0))
    names = pattern_rows()
    if total and total != len(names):
        print(
            f"difftest: the log says {total} fusion patterns, {PATTERNS.name} parses as {len(names)}"
        )
        return 1
    missed = _table(
        "fusion patterns (row: programs that fused it)",
        [(f"{i:2d} {n}", fus[i]) for i, n in enumerate(names) if i not in NOT_REACHED],
    )
    print("  not reached by the pinned exporter's programs (coverage.NOT_REACHED):")
    for i, (fused, why) in sorted(NOT_REACHED.items()):
        ok = i < len(names) and names[i].endswith("=> " + fused)
        print(
            f"  {i:2d} {fused}: {why}"
            + ("" if ok else "  <- NOT THIS ROW: update the list")
        )
        if not ok or fus[i]:
            print(
                f"  {i:2d} is {'hit' if fus[i] else 'another row'}: update NOT_REACHED"
            )
            missed += 1
    missed += _table(
        "microkernel variants this build dispatches on this CPU (programs that ran it)",
        [(v, var[v]) for v in sorted(avail)],
    )
    xrows = [(n, xnn[n]) for n in xnn_node_types() if n not in XNN_NOT_EMITTED]
    for n, why in XNN_NOT_EMITTED.items():
        print(
            f"  XNNPACK node type {n} not emitted: {why}"
            + (" (HIT: update the list)" if xnn[n] else "")
        )
        missed += 1 if xnn[n] else 0
    missed += _table("XNNPACK node types (programs that ran one)", xrows)
    cell_ops = cell_operators()
    if not cell_ops:
        print(f"difftest: no recurrent cell parsed from {CELLS.name}")
        return 1
    missed += _table(
        "recurrent cells fused (programs that fused one)",
        [(c, cells[c]) for c in cell_ops],
    )
    missed += _table(
        "load-time layouts (programs whose method chose one)",
        [(k, layouts[k]) for k in LAYOUTS],
    )
    missed += _table(
        "grammar elements (programs that used one)",
        [(k, kinds[k]) for k in grammar_kinds()],
    )
    if missed:
        print(f"\ndifftest coverage: {missed} items never hit: FAIL")
        return 1
    print("\ndifftest coverage: everything hit")
    return 0
