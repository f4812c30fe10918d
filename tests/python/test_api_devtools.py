"""Developer tools from Python: bundled programs (load, verify, the wrong
case named), the profiler, Chrome traces and ETDump files that ExecuTorch's
own Inspector reads (with the ETRecord made at export)."""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pterun
import pytest
from conftest import FIXTURES_DIR
from test_api_support import cli_path

DEV = FIXTURES_DIR / "devtools"
CLI_TIMEOUT_S = 120


def test_fixtures_present() -> None:
    for name in (
        "multi.bpte",
        "multi_wrong.bpte",
        "executorch_sample.bpte",
        "cnn.pte",
        "cnn.etrecord",
        "cnn_ops.txt",
    ):
        assert (DEV / name).is_file(), f"missing fixture {name}"


def test_bundled_program_verifies() -> None:
    bundle = pterun.load_bundled(DEV / "multi.bpte")
    assert bundle.test_suites == {"forward": 3, "int_ops": 2, "half_ops": 2}
    assert set(bundle.method_names) == {"forward", "int_ops", "half_ops"}
    report = pterun.verify(bundle)
    assert report.passed and len(report.cases) == 7
    by_method = {(c.method, c.case): c for c in report.cases}
    # float32 within tolerance, int64 and float16 (exact on both sides) equal
    assert 0 < by_method[("forward", 0)].max_abs_error < 1e-5
    assert by_method[("int_ops", 1)].max_abs_error == 0
    assert all(c.outputs_compared == 1 and c.message == "" for c in report.cases)


def test_executorch_sample_bundle() -> None:
    report = pterun.verify(DEV / "executorch_sample.bpte")
    assert report.passed and len(report.cases) == 10


def test_wrong_expectation_is_named() -> None:
    report = pterun.verify((DEV / "multi_wrong.bpte").read_bytes())
    assert not report.passed
    assert [(c.method, c.case) for c in report.failures] == [("forward", 1)]
    bad = report.failures[0]
    assert bad.mismatched == 8 and 0.49 < bad.max_abs_error < 0.51
    assert "output 0" in bad.message
    # a looser absolute tolerance accepts it, as in ExecuTorch
    assert pterun.verify(DEV / "multi_wrong.bpte", atol=0.6).passed
    only = pterun.verify(DEV / "multi_wrong.bpte", methods=["int_ops"])
    assert only.passed and len(only.cases) == 2


def test_cli_verify_agrees() -> None:
    out = subprocess.run(
        [str(cli_path()), "verify", str(DEV / "multi_wrong.bpte"), "--json"],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert out.returncode == 1
    assert "method 'forward' case 1" in out.stderr
    doc = json.loads(out.stdout)
    py = pterun.verify(DEV / "multi_wrong.bpte")
    assert [(c["method"], c["case"], c["passed"]) for c in doc["cases"]] == [
        (c.method, c.case, c.passed) for c in py.cases
    ]


def test_plain_program_is_not_a_bundle() -> None:
    with pytest.raises(ValueError, match="not a bundled program"):
        pterun.load_bundled(DEV / "cnn.pte")
    damaged = bytearray((DEV / "multi.bpte").read_bytes())[:3000]
    with pytest.raises(pterun.Error):
        pterun.load_bundled(bytes(damaged))


def _cnn_input() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((1, 3, 8, 8), dtype=np.float32)


def test_profile_and_trace(tmp_path: Path) -> None:
    program = pterun.Runtime.get().load_program(DEV / "cnn.pte")
    plain = program.load_method("forward")
    with pytest.raises(pterun.Error, match="without a profiler"):
        plain.profile()
    m = program.load_method("forward", profile=2)
    x = _cnn_input()
    for _ in range(3):
        out = m.execute([x])
    np.testing.assert_array_equal(out[0], plain.execute([x])[0])
    prof = m.profile()
    assert prof.executes == 3 and len(prof.runs) == 2
    ops = (DEV / "cnn_ops.txt").read_text().split()
    kernels = [i for i in prof.instructions if i.op_name is not None and i.calls]
    assert all(i.calls == 3 and i.min_ns <= i.max_ns for i in kernels)
    # the program's operators, or a pterun:: operator that load-time fusion
    # runs in place of a chain of them (docs/architecture.md)
    assert all(o in ops or o.startswith("pterun::") for o in prof.per_operator())
    assert len(prof.events) == 2 * len(kernels)
    trace = tmp_path / "t.json"
    m.write_trace(trace)
    names = {e["name"] for e in json.loads(trace.read_text())["traceEvents"]}
    assert set(prof.per_operator()) <= names
    m.reset_profile()
    assert m.profile().executes == 0


@pytest.mark.torch
def test_executorch_runtime_agrees_on_bundles() -> None:
    """ExecuTorch's own verification gives the same verdict per case."""
    from executorch.extension.pybindings import portable_lib

    for name in ("multi.bpte", "multi_wrong.bpte", "executorch_sample.bpte"):
        ours = pterun.verify(DEV / name)
        et = portable_lib._load_bundled_program_from_buffer((DEV / name).read_bytes())
        for c in ours.cases:
            try:
                et.verify_result_with_bundled_expected_output(c.method, c.case)
                et_passed = True
            except RuntimeError:
                et_passed = False
            assert et_passed == c.passed, f"{name} {c.method} case {c.case}"


@pytest.mark.torch
def test_inspector_reads_etdump(tmp_path: Path) -> None:
    """ExecuTorch's Inspector loads pterun's ETDump with the ETRecord made at
    export: per-operator times for the operators `pterun inspect` lists, and
    the intermediate outputs as debug data."""
    from executorch.devtools import Inspector

    program = pterun.Runtime.get().load_program(DEV / "cnn.pte")
    m = program.load_method("forward", profile=4, record_outputs=True)
    x = _cnn_input()
    for _ in range(4):
        out = m.execute([x])
    etdp, dbg = tmp_path / "cnn.etdp", tmp_path / "cnn.debug"
    m.write_etdump(etdp, debug_buffer_path=dbg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inspector = Inspector(
            etdump_path=str(etdp),
            etrecord=str(DEV / "cnn.etrecord"),
            debug_buffer_path=str(dbg),
        )
    (block,) = inspector.event_blocks
    df = block.to_dataframe()
    names = [n for n in df["event_name"] if n != "Method::execute"]
    assert all(n.startswith("native_call_") for n in names)
    inspected = json.loads(
        subprocess.run(
            [str(cli_path()), "inspect", str(DEV / "cnn.pte"), "--json"],
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            check=True,
        ).stdout
    )
    listed = {
        f"{op['name'].split('::')[-1]}.{op['overload']}"
        for op in inspected["methods"][0]["operators"]
    }
    executed = {n.removeprefix("native_call_") for n in names}
    # every executed operator is one the program lists (folded layout ops
    # run at load and are not timed)
    assert executed and executed <= listed
    assert len(listed - executed) <= 1
    for event in block.events:
        assert event.perf_data is not None and len(event.perf_data.raw) == 4
        assert event.perf_data.min >= 0
    # op types from the ETRecord are attached to the timed operators
    conv = [e for e in block.events if e.name == "native_call_convolution.out"]
    assert conv and all("aten.convolution.default" in e.op_types for e in conv)
    # intermediate outputs: the last kernel's output is the method's output
    last_kernel = [e for e in block.events if e.name.startswith("native_call_")][-1]
    np.testing.assert_array_equal(last_kernel.debug_data[0].numpy(), out[0])
