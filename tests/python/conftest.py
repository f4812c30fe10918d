"""Shared helpers for pterun's Python tests.

The fixture tests need the pinned export toolchain (torch + executorch, see
``tools/requirements-export.txt``).  A missing toolchain is a test failure,
not a skip: in this project a test that cannot run has not passed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_DIR = REPO_ROOT / "tests" / "fixtures"
INDEX_PATH = FIXTURES_DIR / "cases.txt"
EXPORT_TOOL = REPO_ROOT / "tools" / "export_fixtures.py"
REQUIREMENTS = REPO_ROOT / "tools" / "requirements-export.txt"
DEFAULT_CLI = REPO_ROOT / "build" / "bin" / "pterun"


@dataclass(frozen=True)
class CaseRow:
    """One line of ``tests/fixtures/cases.txt``."""

    name: str
    dir: str
    method: str
    n_inputs: int
    n_outputs: int
    rtol: float
    atol: float
    data: tuple[str, ...]
    ref: str = "et"  # which committed outputs are the reference: et or eager

    def inputs(self, root: Path = FIXTURES_DIR) -> list[Path]:
        return [
            root / self.dir / f"{self.method}_input_{k}.npy"
            for k in range(self.n_inputs)
        ]

    def outputs(self, kind: str, root: Path = FIXTURES_DIR) -> list[Path]:
        """``kind`` is ``et`` or ``eager``."""
        return [
            root / self.dir / f"{self.method}_{kind}_{k}.npy"
            for k in range(self.n_outputs)
        ]

    def model(self, root: Path = FIXTURES_DIR) -> Path:
        return root / self.dir / "model.pte"

    def data_files(self, root: Path = FIXTURES_DIR) -> list[Path]:
        return [root / self.dir / d for d in self.data]


def load_index(path: Path = INDEX_PATH) -> list[CaseRow]:
    """Parse the fixture index (whitespace separated, ``#`` comments)."""
    rows: list[CaseRow] = []
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) not in (8, 9):
            raise ValueError(
                f"{path}:{lineno}: expected 8 or 9 columns, got {len(fields)}"
            )
        name, dir_, method, n_in, n_out, rtol, atol, data = fields[:8]
        ref = fields[8] if len(fields) == 9 else "et"
        if ref not in ("et", "eager"):
            raise ValueError(
                f"{path}:{lineno}: reference must be et or eager, got {ref}"
            )
        rows.append(
            CaseRow(
                name=name,
                dir=dir_,
                method=method,
                n_inputs=int(n_in),
                n_outputs=int(n_out),
                rtol=float(rtol),
                atol=float(atol),
                data=() if data == "-" else tuple(data.split(",")),
                ref=ref,
            )
        )
    return rows


def require_export_toolchain() -> None:
    """Fail (never skip) when torch / executorch cannot be imported."""
    missing: list[str] = []
    for module in ("numpy", "torch", "executorch.exir", "executorch.runtime"):
        try:
            importlib.import_module(module)
        except Exception as exc:  # ImportError, or a broken native extension
            missing.append(f"{module}: {type(exc).__name__}: {exc}")
    if missing:
        pytest.fail(
            "the fixture export toolchain is not importable in "
            f"{sys.executable}:\n  "
            + "\n  ".join(missing)
            + f"\ninstall it with: {sys.executable} -m pip install -r {REQUIREMENTS}",
            pytrace=False,
        )


def load_export_tool() -> ModuleType:
    """Import ``tools/export_fixtures.py`` as a module."""
    require_export_toolchain()
    spec = importlib.util.spec_from_file_location("pterun_export_fixtures", EXPORT_TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


def pterun_cli_path() -> Path:
    """The pterun CLI: ``$PTERUN_CLI`` or ``build/bin/pterun``; fail if absent."""
    env = os.environ.get("PTERUN_CLI")
    path = Path(env) if env else DEFAULT_CLI
    if not path.is_absolute():
        path = REPO_ROOT / path
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(
            f"pterun CLI not found or not executable: {path}\n"
            "build it (cmake -S . -B build && cmake --build build) or point "
            "PTERUN_CLI at the binary",
            pytrace=False,
        )
    return path


def tensor_in_dim_order(t: Any, dim_order: Sequence[int]) -> Any:
    """Return a copy of torch tensor ``t`` laid out in ``dim_order``.

    ``.npy`` fixtures hold logical (C-order) values; a program input with a
    non-contiguous dim order (e.g. channels_last ``[0, 2, 3, 1]``) must be fed
    a tensor with matching strides.  ExecuTorch's Python runtime does not
    check this: a contiguous tensor given to a channels_last input is
    silently read as if it were channels_last.
    """
    order = list(dim_order)
    if order == sorted(order):
        return t.contiguous()
    inverse = [order.index(d) for d in range(len(order))]
    return t.permute(order).contiguous().permute(inverse)


def input_dim_orders(pte: bytes, method: str) -> list[list[int]]:
    """Dim order of each tensor input of ``method`` (``[]`` for non-tensors)."""
    from executorch.exir._serialize._program import (  # type: ignore[import-not-found]
        _flatbuffer_to_program,
        _get_extended_header,
    )

    eh = _get_extended_header(pte)
    size = eh.program_size if eh is not None and eh.is_valid() else len(pte)
    program = _flatbuffer_to_program(pte[:size])
    for plan in program.execution_plan:
        if plan.name == method:
            orders: list[list[int]] = []
            for idx in plan.inputs:
                val = plan.values[idx].val
                orders.append(list(val.dim_order) if hasattr(val, "dim_order") else [])
            return orders
    raise KeyError(f"method {method!r} not in program")


@pytest.fixture(scope="session")
def fixture_index() -> list[CaseRow]:
    return load_index()


@pytest.fixture(scope="session")
def export_tool() -> ModuleType:
    return load_export_tool()


@pytest.fixture(scope="session")
def fresh_exports(
    export_tool: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """Re-export every fixture case into a temporary directory (once)."""
    out = tmp_path_factory.mktemp("fresh_fixtures")
    rc = export_tool.main(["--out", str(out)])
    assert rc == 0, f"tools/export_fixtures.py failed with exit code {rc}"
    yield out


# ---- pterun Python API tests (tests/python/test_api*.py) ---------------------
# They import the *installed* pterun wheel; tools/run_tests.sh builds it,
# installs it into a fresh venv and runs them there (the torch-marked ones
# with the PYTHON interpreter, which has torch).


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "torch: needs PyTorch or another test requirement (run by tools/run_tests.sh with $PYTHON)",
    )
