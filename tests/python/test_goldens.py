"""The committed golden files (tests/golden/*.txt) equal a fresh regeneration.

``tools/gen_goldens.py --check`` rebuilds every file in memory from the pinned
references (torch, executorch, torchao: tools/requirements-export.txt) and
fails on any difference, on a missing file and on a file no generator writes.
A missing toolchain is a failure, not a skip.

The check runs with the caller's environment asking for other CPU code paths
than the pinned ones (ATen's scalar "default" kernels, every oneDNN and MKL
ISA): the script's pin (tools/gen_goldens.py, PINNED_CPU_ENV) must win, so the
result does not depend on the CPU or environment PyTorch runs in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import REPO_ROOT, require_export_toolchain

FAMILIES = ("portable", "quantized", "llm")  # as tools/gen_goldens.py
TIMEOUT_S = 1800  # the quantized references export and run small programs


@pytest.mark.parametrize("family", FAMILIES)
def test_goldens_match_regeneration(family: str) -> None:
    require_export_toolchain()
    r = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "tools" / "gen_goldens.py"),
            "--check",
            family,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=dict(
            os.environ,
            ATEN_CPU_CAPABILITY="default",
            ONEDNN_MAX_CPU_ISA="ALL",
            MKL_ENABLE_INSTRUCTIONS="AVX512",
        ),
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]


def test_no_stray_golden_files() -> None:
    """Every tests/golden/*.txt belongs to a family's generator (by its name)."""
    names = sorted(
        p.name
        for p in (REPO_ROOT / "tests" / "golden").glob("*.txt")
        if p.name != "CMakeLists.txt"
    )
    assert names, "tests/golden has no golden files"
    stray = [n for n in names if not n.startswith(tuple(f + "_" for f in FAMILIES))]
    assert not stray, stray


def _gen_goldens() -> Any:
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import gen_goldens

    return gen_goldens


CLOSE = "expect 2 close rtol=0.0001 atol=0.0001 float32 [3] : 1.0 -0.5 nan"
BITS = "expect 2 bits float32 [3] : 1.0 -0.5 nan"


@pytest.mark.parametrize(
    ("committed", "fresh", "ok"),
    [
        (CLOSE, CLOSE, True),
        # within a quarter of atol + rtol * |value| (1e-4 + 1e-4): kept
        (CLOSE, CLOSE.replace("1.0 ", "1.00004 "), True),
        # beyond it: out of date
        (CLOSE, CLOSE.replace("1.0 ", "1.0001 "), False),
        # a NaN only matches a NaN
        (CLOSE, CLOSE.replace("nan", "0.0"), False),
        # the tolerance itself, the shape, "bits" values and inputs match exactly
        (CLOSE, CLOSE.replace("rtol=0.0001", "rtol=0.001"), False),
        (CLOSE, CLOSE.replace("[3]", "[1,3]"), False),
        (BITS, BITS.replace("1.0 ", "1.0000001 "), False),
        (
            "arg 0 tensor float32 [1] : 1.0",
            "arg 0 tensor float32 [1] : 1.0000001",
            False,
        ),
        (CLOSE + "\nend", CLOSE, False),
    ],
)
def test_close_references_compare_within_a_share_of_their_tolerance(
    committed: str, fresh: str, ok: bool
) -> None:
    got, _ = _gen_goldens()._close_enough(committed, fresh)
    assert got is ok
