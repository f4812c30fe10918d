"""docs/kernels.md's coverage table is current, and every overload of
ExecuTorch's portable list (tools/data/portable-ops.txt) is registered by
libpterun_kernels_portable and named by at least one kernel test."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOL = REPO_ROOT / "tools" / "gen_coverage.py"


def _tool():
    spec = importlib.util.spec_from_file_location("gen_coverage", TOOL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_coverage"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_portable_ops_list_is_present() -> None:
    tool = _tool()
    assert tool.DEFAULT_OPS.is_file(), f"{tool.DEFAULT_OPS} is missing"


def test_all_207_registered_and_tested() -> None:
    tool = _tool()
    wanted = tool.read_wanted(tool.DEFAULT_OPS)
    assert len(wanted) == 207
    assert len(set(wanted)) == 207
    reg = tool.read_registered()
    missing = [n for n in wanted if n not in reg]
    assert not missing, f"not registered: {missing}"
    _, problems = tool.render(tool.DEFAULT_OPS)
    assert not problems, problems


def test_every_registered_function_is_defined() -> None:
    tool = _tool()
    reg = tool.read_registered()
    where = tool.find_sources(reg)
    undefined = sorted(fn for fn, _ in reg.values() if fn not in where)
    assert not undefined, f"PK_OP rows without a definition: {undefined}"


def test_doc_table_is_current() -> None:
    tool = _tool()
    assert tool.main(["--check"]) == 0, (
        "run tools/gen_coverage.py and commit docs/kernels.md"
    )
