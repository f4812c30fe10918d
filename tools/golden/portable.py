"""Golden cases of the portable kernels, one file per kernel family.

The case tables are tests/golden/cases/<family>.py, one module per
kernels/portable/<family>/ folder (eager PyTorch is the reference); each case
goes to tests/golden/portable_<family>.txt, where <family> is the folder whose
operator list (ops.inc) registers the case's operator. The folders are the one
source of the families: a new family folder gets its golden file without an
edit here.

A table draws its random inputs from a stream shared with the tables listed
before it in STREAMS (the groups the cases were first written in), so moving
a table between modules changes no committed value; a new table goes at the
end of a stream, or in a stream of its own.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import torch

from golden import math as golden_math
from golden.format import GoldenFile
from golden.nn import Golden

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "golden"))
from cases import (
    conv,
    copy,
    create,
    elementwise,
    index,
    linalg,
    norm,
    pad,
    pool,
    random,
    reduce,
    resample,
    shape,
)

# The math-style tables: one generator (golden.math.g, seeded 1234), in this
# order; each group its own file of ids (a repeated label gets a ~N suffix).
MATH_STREAM: list[tuple[str, Callable[[], list[golden_math.Case]]]] = [
    ("binary", elementwise.binary_cases),
    ("unary", elementwise.unary_cases),
    ("activation", elementwise.activation_cases),
    ("compare", elementwise.compare_cases),
    ("reduce", reduce.reduce_cases),
    ("norm", norm.norm_cases),
]

# The nn-style tables: torch's global generator, seeded per stream from its
# name; the streams run in name order, a stream's tables in list order.
NN_STREAMS: dict[str, list[Callable[[Golden], None]]] = {
    "concat": [shape.concat],
    "conv": [conv.conv],
    "copy": [copy.copy],
    "create": [create.create],
    "extra": [
        index.extra_index,
        resample.extra_resample,
        linalg.extra_linalg,
        conv.extra_conv,
        pool.extra_pool,
        random.extra_random,
        copy.extra_copy,
        shape.extra_hostile_shape,
        conv.extra_hostile_conv,
        pool.extra_hostile_pool,
    ],
    "fast": [
        shape.fast_shape,
        conv.fast_conv,
        elementwise.fast_elementwise,
        norm.fast_norm,
    ],
    "index": [index.index],
    "matmul": [linalg.matmul],
    "norm": [norm.norm],
    "pad": [pad.pad],
    "pool": [pool.pool],
    "shape": [shape.shape],
    "upsample": [resample.upsample],
}


def stream_files() -> Iterator[GoldenFile]:
    """Every stream's cases, one file per group, in the streams' order."""
    source = f"PyTorch {torch.__version__} (eager)"
    golden_math.g.manual_seed(1234)
    for group, table in MATH_STREAM:
        gfile = GoldenFile("math_" + group, source)
        for c in table():
            gfile.add(golden_math.to_golden(c))
        yield gfile
    for name in sorted(NN_STREAMS):
        torch.manual_seed(sum(map(ord, name)))
        g = Golden(name)
        for nn_table in NN_STREAMS[name]:
            nn_table(g)
        yield g.file


PORTABLE = Path(__file__).resolve().parents[2] / "kernels" / "portable"
_ROW = re.compile(r'^PK_OP(?:_PREPARED)?\("([^"]+)"', re.MULTILINE)


def family_of_ops() -> dict[str, str]:
    """Operator name -> the family folder whose ops.inc registers it."""
    fam: dict[str, str] = {}
    for inc in sorted(PORTABLE.glob("*/ops.inc")):
        for op in _ROW.findall(inc.read_text()):
            assert op not in fam, f"{op} is in two families"
            fam[op] = inc.parent.name
    return fam


def files() -> Iterator[GoldenFile]:
    fam = family_of_ops()
    source = f"PyTorch {torch.__version__} (eager)"
    out = {f: GoldenFile("portable_" + f, source) for f in sorted(set(fam.values()))}
    for gf in stream_files():
        for c in gf.cases:
            if c.op not in fam:
                raise KeyError(
                    f"{c.op} ({gf.name}): no kernels/portable/*/ops.inc lists it"
                )
            out[fam[c.op]].add(c)
    for gfile in out.values():
        if gfile.cases:
            yield gfile
