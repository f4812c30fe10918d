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
