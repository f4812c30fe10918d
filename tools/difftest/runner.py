"""Run an exported program in pterun in every mode: through the CLI
(``pterun run`` with .npy inputs and outputs) and through the Python API
(``pterun.Runtime``, in a subprocess per ISA mask, tools/difftest/pyrun.py).

A mode is (fusion, prepare, threads, isa). ISA masks (include/pterun/cpu.h
bits): ``portable`` = 0 (every scalar path), ``avx2`` = 0x1f (SSE4.1, AVX,
AVX2, FMA, F16C), ``avx512f`` = 0x3f (adds AVX512F alone: the f32 AVX-512
GEMM, vector math, convolutions, without the BW/VNNI int8 kernels),
``avx512bw`` = 0x1ff (AVX-512 F/BW/DQ/VL without VNNI: the variants a VNNI
CPU never picks by itself, e.g. the low-bit BW kernels), ``native`` = no mask (everything this CPU has). A mask wider than the CPU
changes nothing, so the set is right on any x86-64 machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ISAS: dict[str, str | None] = {
    "portable": "0",
    "avx2": "1f",
    "avx512f": "3f",
    "avx512bw": "1ff",
    "native": None,
}
THREADS = (1, 2, 3)


@dataclass(frozen=True)
class Mode:
    fusion: bool
    prepare: bool
    threads: int
    isa: str

    @property
    def name(self) -> str:
        return (
            f"{'fuse' if self.fusion else 'nofuse'}/{'prep' if self.prepare else 'noprep'}"
            f"/t{self.threads}/{self.isa}"
        )

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("PTERUN_ISA_MASK", None)
        mask = ISAS[self.isa]
        if mask is not None:
            env["PTERUN_ISA_MASK"] = mask
        if self.threads > 1:
            # every call split, however small: these programs are tiny, and
            # the thread comparison needs the splits (the pool's threshold off)
            env["PTERUN_THREADPOOL_MIN_WORK_NS"] = "1"
        return env


def features_in_use(cli: Path, isa: str) -> str:
    """The CLI's "cpu features in use" line under this ISA's mask: what the
    dispatcher will pick from (a mask wider than the CPU changes nothing)."""
    cp = subprocess.run(
        [str(cli), "--version"],
        env=Mode(True, True, 1, isa).env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for line in cp.stdout.splitlines():
        if line.startswith("cpu features in use:"):
            return line.split(":", 1)[1].strip()
    raise RuntimeError(f"{cli} --version names no cpu features")


def distinct_isas(cli: Path, isas: tuple[str, ...]) -> dict[str, list[str]]:
    """ISA names grouped by the feature set they leave on this CPU, keyed by
    the first of each group: on an AVX2-only machine avx512f, avx512bw and
    native dispatch exactly as avx2 does, so a campaign runs them once."""
    seen: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for isa in isas:
        feats = features_in_use(cli, isa)
        first = seen.setdefault(feats, isa)
        groups.setdefault(first, []).append(isa)
    return groups


def all_modes(
    isas: tuple[str, ...] = tuple(ISAS), threads: tuple[int, ...] = THREADS
) -> list[Mode]:
    return [
        Mode(f, p, t, i)
        for i in isas
        for f in (True, False)
        for p in (True, False)
        for t in threads
    ]


@dataclass
class RunResult:
    mode: Mode
    outputs: list[np.ndarray] | None
    error: str | None = None
    log: str = ""


def default_cli() -> Path:
    root = Path(__file__).resolve().parents[2]
    return Path(os.environ.get("PTERUN_CLI", root / "build" / "bin" / "pterun"))


def run_cli(
    cli: Path,
    pte: Path,
    inputs: list[Path],
    mode: Mode,
    out_dir: Path,
    n_outputs: int,
    extra: tuple[str, ...] = (),
    timeout: float = 120,
) -> RunResult:
    args = [
        str(cli),
        "run",
        str(pte),
        "--output-dir",
        str(out_dir),
        "--threads",
        str(mode.threads),
    ]
    for p in inputs:
        args += ["--input", str(p)]
    if not mode.fusion:
        args.append("--no-fusion")
    if not mode.prepare:
        args.append("--no-prepare")
    args += list(extra) if extra else ["--quiet"]
    try:
        cp = subprocess.run(
            args,
            env=mode.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return RunResult(mode, None, f"timeout after {timeout} s")
    log = cp.stdout + cp.stderr
    if cp.returncode != 0:
        msg = cp.stderr.strip().splitlines()
        return RunResult(
            mode, None, f"exit {cp.returncode}: {msg[-1] if msg else ''}"[:600], log
        )
    outs = []
    for k in range(n_outputs):
        p = out_dir / f"output_{k}.npy"
        if not p.exists():
            return RunResult(mode, None, f"output {k} not written", log)
        outs.append(np.load(p))
    return RunResult(mode, outs, None, log)


def run_python(
    pte: Path,
    inputs: list[Path],
    modes: list[Mode],
    n_outputs: int,
    pythonpath: str | None,
) -> list[RunResult]:
    """One subprocess per ISA (the mask is read once per process); each runs
    its modes through pterun.Runtime. Prepare is the API's default (it has
    no switch), so only prepare-on modes run here."""
    by_isa: dict[str, list[Mode]] = {}
    for m in modes:
        if m.prepare:
            by_isa.setdefault(m.isa, []).append(m)
    results: list[RunResult] = []
    script = Path(__file__).with_name("pyrun.py")
    for ms in by_isa.values():
        with tempfile.TemporaryDirectory(prefix="dtpy") as td:
            req = {
                "pte": str(pte),
                "inputs": [str(p) for p in inputs],
                "modes": [{"fusion": m.fusion, "threads": m.threads} for m in ms],
                "out": td,
            }
            env = ms[0].env()
            if pythonpath:
                env["PYTHONPATH"] = pythonpath
            try:
                cp = subprocess.run(
                    [sys.executable, str(script), json.dumps(req)],
                    check=False,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
            except subprocess.TimeoutExpired:
                results += [RunResult(m, None, "python: timeout") for m in ms]
                continue
            if cp.returncode != 0:
                err = (cp.stderr.strip().splitlines() or [""])[-1]
                results += [RunResult(m, None, f"python: {err}"[:600]) for m in ms]
                continue
            status = json.loads(cp.stdout.strip().splitlines()[-1])
            for j, m in enumerate(ms):
                if status[j] is not None:
                    results.append(RunResult(m, None, f"python: {status[j]}"[:600]))
                    continue
                outs = [np.load(Path(td) / f"m{j}_{k}.npy") for k in range(n_outputs)]
                results.append(RunResult(m, outs))
    return results
