"""Golden cases of the portable kernels, one file per kernel family.

The cases are made by golden.math and golden.nn (eager PyTorch is the
reference); each goes to tests/golden/portable_<family>.txt, where <family> is
the kernels/portable/<family>/ folder whose operator list (ops.inc) registers
the case's operator. The folders are the one source of the families: a new
family folder gets its golden file without an edit here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import torch

from golden import math as golden_math
from golden import nn as golden_nn
from golden.format import GoldenFile

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
    for gf in (*golden_math.files(), *golden_nn.files()):
        for c in gf.cases:
            if c.op not in fam:
                raise KeyError(
                    f"{c.op} ({gf.name}): no kernels/portable/*/ops.inc lists it"
                )
            out[fam[c.op]].add(c)
    for gfile in out.values():
        if gfile.cases:
            yield gfile
