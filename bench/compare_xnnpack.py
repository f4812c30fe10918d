#!/usr/bin/env python3
"""Time pterun (libpterun_backend_xnnpack) against ExecuTorch+XNNPACK on the
same XNNPACK-lowered files (tests/fixtures/xnnpack_cases.txt).

For every case: ``pterun bench model.pte`` (median execute time and the load
times the CLI prints) and ExecuTorch's runtime in this process (median of
``method.execute`` with the fixture inputs, load = load_program + load_method
wall time), with ExecuTorch's thread pool reset to 1 and then 2 threads and
pterun run with ``--threads 1`` and ``--threads 2``.
Benchmark, not a test: run from the repository root with the venv's Python:

    python bench/compare_xnnpack.py --pterun build/bin/pterun
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_executorch import time_executorch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
LOAD_RE = re.compile(r"loaded in ([0-9.]+) ms")
MEDIAN_RE = re.compile(r"median ([0-9.]+)")


def read_rows(path: str) -> list[tuple[str, str, int, list[str]]]:
    rows = []
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            f = line.split()
            rows.append((f[0], f[1], int(f[3]), [] if f[7] == "-" else f[7].split(",")))
    return rows


def pterun_times(
    exe: str, model: str, data: list[str], warmup: int, iters: int, threads: int
):
    cmd = [exe, "bench", model, "--warmup", str(warmup), "--iterations", str(iters)]
    cmd += ["--threads", str(threads)]
    for d in data:
        cmd += ["--data", d]
    p = subprocess.run(cmd, check=False, capture_output=True, text=True)
    med = MEDIAN_RE.search(p.stdout)
    loads = [float(x) for x in LOAD_RE.findall(p.stdout)]
    if p.returncode != 0 or med is None:
        return None, None
    return float(med.group(1)), sum(loads)


def et_load_ms(runtime, model: str, data: list[str], d: str) -> float:
    kw = {"data_path": os.path.join(d, data[0])} if data else {}
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter_ns()
        runtime.load_program(model, **kw).load_method("forward")
        best = min(best, (time.perf_counter_ns() - t0) / 1e6)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pterun", default=os.path.join(ROOT, "build", "bin", "pterun"))
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=200)
    args = ap.parse_args()
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    print(
        "| case | pterun 1T ms | pterun 2T ms | ET+XNNPACK 1T ms | ET+XNNPACK 2T ms | ratio 1T "
        "| ratio 2T | pterun load ms | ET load ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rel, n_in, data in read_rows(os.path.join(FIXTURES, "xnnpack_cases.txt")):
        d = os.path.join(FIXTURES, rel)
        model = os.path.join(d, "model.pte")
        files = [os.path.join(d, x) for x in data]
        pt, pt_load = pterun_times(
            args.pterun, model, files, args.warmup, args.iterations, 1
        )
        pt2, _ = pterun_times(
            args.pterun, model, files, args.warmup, args.iterations, 2
        )
        et = {}
        for threads in (1, 2):
            portable_lib._unsafe_reset_threadpool(threads)
            et[threads], _ = time_executorch(
                runtime, model, "forward", n_in, data, d, args.warmup, args.iterations
            )
        et_load = et_load_ms(runtime, model, data, d)
        ratio = f"{pt / et[1]:.2f}" if pt else "-"
        ratio2 = f"{pt2 / et[2]:.2f}" if pt2 else "-"
        pts = f"{pt:.4f}" if pt else "failed"
        pts2 = f"{pt2:.4f}" if pt2 else "failed"
        ptl = f"{pt_load:.3f}" if pt_load is not None else "-"
        print(
            f"| {name} | {pts} | {pts2} | {et[1]:.4f} | {et[2]:.4f} | {ratio} | {ratio2} "
            f"| {ptl} | {et_load:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
