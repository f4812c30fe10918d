"""tools/variant_table.py: reads every variant from src/compute, fails on a
variant no run recorded, on emulated bits that differ from the native run's,
and on a record that names no variant."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOL = REPO_ROOT / "tools" / "variant_table.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("variant_table", TOOL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["variant_table"] = mod
    spec.loader.exec_module(mod)
    return mod


def _all_records(tool: ModuleType) -> list[str]:
    return [f"{v.family} {v.name} exact" for v in tool.manifest_variants(REPO_ROOT)]


def test_manifests_parse() -> None:
    tool = _tool()
    vs = tool.manifest_variants(REPO_ROOT)
    names = {(v.family, v.name) for v in vs}
    assert ("f32_gemm", "pc_f32_gemm_ukernel__avx512f_12x32") in names
    assert ("lowbit", "pc_lowbit_dot__neondot") in names
    assert ("dwconv_nchw", "avx512f") in names
    assert ("qdwconv", "avx2") in names
    assert ("qdwconv_nhwc", "avx512f") in names
    assert ("f32_gemm", "pc_f32_gemm_ukernel__avx512f_12x16") in names
    assert ("f32_igemm", "pc_f32_gemm_ukernel__avx512f_12x32") in names
    assert ("minmax", "avx512f") in names
    assert ("qb4w", "pc_qb4w_tiles__avx512vnni") in names
    # the int8 indirect entries: the rows whose manifest column says so only
    assert ("qs8_igemm", "pc_qs8_gemm_ukernel__avx512vnni_8x32") in names
    assert ("qs8_igemm", "pc_qs8_gemm_ukernel__avx2_6x8") not in names
    fams = {v.family for v in vs}
    assert fams == {
        "f32_gemm",
        "f32_igemm",
        "qs8_gemm",
        "qs8_igemm",
        "lowbit",
        "qb4w",
        "vmath",
        "vmath_rowops",
        "dwconv_nhwc",
        "dwconv_nchw",
        "conv2d",
        "qdwconv",
        "qdwconv_nhwc",
        "minmax",
    }
    avx512 = [v for v in vs if "X86_AVX512F" in v.features]
    assert len(avx512) >= 10


def _run(
    tool: ModuleType, tmp_path: Path, native: list[str], emulated: list[str]
) -> int:
    (tmp_path / "n.log").write_text("".join(r + "\n" for r in native))
    (tmp_path / "e.log").write_text("".join(r + "\n" for r in emulated))
    (tmp_path / "isa.txt").write_text("avx512f;avx512bw;avx512vnni\n")
    return int(
        tool.main(
            [
                "--native",
                str(tmp_path / "n.log"),
                "--emulated",
                str(tmp_path / "e.log"),
                "--emulated-isa",
                str(tmp_path / "isa.txt"),
            ]
        )
    )


def test_every_variant_recorded_passes(tmp_path: Path) -> None:
    tool = _tool()
    assert _run(tool, tmp_path, _all_records(tool), []) == 0


def test_missing_variant_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = _tool()
    recs = [r for r in _all_records(tool) if "neondot" not in r]
    assert _run(tool, tmp_path, recs, []) == 1
    assert "NOT RUN" in capsys.readouterr().out


def test_emulated_bits_must_match_native(tmp_path: Path) -> None:
    tool = _tool()
    key = "f32_gemm pc_f32_gemm_ukernel__avx512f_12x32"
    native = [r for r in _all_records(tool) if not r.startswith(key)]
    native.append(f"{key} bits=0123456789abcdef")
    assert _run(tool, tmp_path, native, [f"{key} bits=0123456789abcdef"]) == 0
    assert _run(tool, tmp_path, native, [f"{key} bits=fedcba9876543210"]) == 1


def test_unknown_or_malformed_record_fails(tmp_path: Path) -> None:
    tool = _tool()
    recs = _all_records(tool)
    assert _run(tool, tmp_path, recs, ["f32_gemm pc_no_such_kernel exact"]) == 1
    with pytest.raises(SystemExit):
        _run(tool, tmp_path, recs, ["f32_gemm"])


def test_native_only_reasons() -> None:
    tool = _tool()
    vs = {(v.family, v.name): v for v in tool.manifest_variants(REPO_ROOT)}
    asm = vs[("qs8_gemm", "pc_qs8_gemm_ukernel__avx2_6x8")]
    assert tool.native_only_reason(REPO_ROOT, asm) == "native only: inline assembly"
    avx2 = vs[("vmath", "avx2")]
    assert (
        tool.native_only_reason(REPO_ROOT, avx2) == "native only: AVX2 is not emulated"
    )
    assert tool.native_only_reason(REPO_ROOT, vs[("vmath", "avx512f")]) == ""
    assert (
        tool.native_only_reason(REPO_ROOT, vs[("lowbit", "pc_lowbit_dot__neondot")])
        == ""
    )


def test_haswell_run_counts_only_emulated_variants(tmp_path: Path) -> None:
    tool = _tool()
    vs = tool.manifest_variants(REPO_ROOT)
    (tmp_path / "h.log").write_text(
        "vmath avx2 exact\nvmath avx512f exact\n"  # avx2 ran under QEMU: not native
    )
    (tmp_path / "isa.txt").write_text("avx512f,avx512bw,avx512vnni\n")
    errors = tool.build(
        vs, None, None, ["avx512f", "avx512bw", "avx512vnni"], None, tmp_path / "h.log"
    )
    assert not errors
    by = {(v.family, v.name): v for v in vs}
    assert not by[("vmath", "avx2")].native and not by[("vmath", "avx2")].haswell
    assert by[("vmath", "avx512f")].haswell == {"exact"}
