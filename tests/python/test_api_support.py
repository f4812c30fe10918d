"""Helpers shared by the pterun API tests (test_api_*.py); holds no tests.

The API tests import the *installed* pterun wheel (tools/run_tests.sh builds
it and installs it into a fresh venv); they never import the source tree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pterun
from conftest import REPO_ROOT, CaseRow, load_index

ROWS: list[CaseRow] = load_index()
ROW_IDS: list[str] = [r.name for r in ROWS]


def installed_package_dir() -> Path:
    """pterun's directory; fails unless it is an installed copy."""
    pkg = Path(pterun.__file__).resolve().parent
    if (
        pkg == (REPO_ROOT / "python" / "pterun").resolve()
        or not (pkg / "lib" / "libpterun.so").is_file()
    ):
        raise AssertionError(
            f"pterun was imported from {pkg}, not from an installed wheel; install "
            "it (tools/run_tests.sh does) and run the API tests with that interpreter"
        )
    return pkg


def load_program(row: CaseRow) -> pterun.Program:
    return pterun.Runtime.get().load_program(
        row.model(), data_files=[str(p) for p in row.data_files()]
    )


def load_inputs(row: CaseRow) -> list[np.ndarray[Any, Any]]:
    return [np.load(p) for p in row.inputs()]


def run_row(row: CaseRow, program: pterun.Program | None = None) -> list[Any]:
    """Executes ``row`` once on a freshly loaded method."""
    method = (program or load_program(row)).load_method(row.method)
    return method.execute(load_inputs(row))


def cli_path() -> Path:
    """The C CLI shipped in the same wheel."""
    exe = installed_package_dir() / "bin" / "pterun"
    assert exe.is_file(), f"the wheel has no CLI at {exe}"
    return exe
