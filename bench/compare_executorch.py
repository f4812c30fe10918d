#!/usr/bin/env python3
"""Time pterun against ExecuTorch's runtime on the same .pte files.

For every row of tests/fixtures/cases.txt (or the --case names given):

* pterun: runs ``pterun bench MODEL.pte --method M --warmup W --iterations N``
  (the CLI times ``pterun_method_execute`` alone; inputs are random and bound
  outside the timed region) and reads its median and minimum;
* ExecuTorch: loads the same file with ``executorch.runtime.Runtime`` in this
  process, runs ``method.execute(inputs)`` W times untimed, then N timed
  calls with the fixture's own inputs (``<method>_input_<k>.npy``), each timed
  with ``time.perf_counter_ns``. That includes the Python binding's input and
  output handling, a few microseconds per call, which dominates the smallest
  programs.

Prints one row per case: medians, minimums and the ratio
pterun / ExecuTorch (below 1: pterun is faster). Single-threaded on both
sides. Run from the repository root with the venv's Python, e.g.

    python bench/compare_executorch.py --pterun build-perf/bin/pterun
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def read_cases(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cols = line.split()
            name, d, method, n_in = cols[0], cols[1], cols[2], int(cols[3])
            data = [] if cols[7] == "-" else cols[7].split(",")
            rows.append((name, d, method, n_in, data))
    return rows


BENCH_RE = re.compile(r"median ([0-9.]+)\s+p90 ([0-9.]+)\s+min ([0-9.]+)")


def time_pterun(exe, model, method, data, warmup, iters, env):
    cmd = [
        exe,
        "bench",
        model,
        "--method",
        method,
        "--warmup",
        str(warmup),
        "--iterations",
        str(iters),
    ]
    for d in data:
        cmd += ["--data", d]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    m = BENCH_RE.search(p.stdout)
    if p.returncode != 0 or m is None:
        err = (p.stderr.strip().splitlines() or ["?"])[-1]
        return None, None, err
    return float(m.group(1)), float(m.group(3)), None


def time_executorch(runtime, model, method, n_in, data, d, warmup, iters):
    import numpy as np
    import torch

    kw = {}
    if data:
        kw["data_path"] = os.path.join(d, data[0])
    prog = runtime.load_program(model, **kw)
    meth = prog.load_method(method)
    inputs = [
        torch.from_numpy(np.load(os.path.join(d, f"{method}_input_{k}.npy")))
        for k in range(n_in)
    ]
    for _ in range(warmup):
        meth.execute(inputs)
    samples = []
    for _ in range(iters):
        t0 = time.perf_counter_ns()
        meth.execute(inputs)
        samples.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(samples), min(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--pterun", default=os.path.join(ROOT, "build-perf", "bin", "pterun")
    )
    ap.add_argument(
        "--case", action="append", help="case name from cases.txt (repeatable)"
    )
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--isa-mask", help="PTERUN_ISA_MASK for pterun (e.g. 0 = scalar)")
    args = ap.parse_args()

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    from executorch.runtime import Runtime

    runtime = Runtime.get()

    env = dict(os.environ)
    if args.isa_mask is not None:
        env["PTERUN_ISA_MASK"] = args.isa_mask
    rows = read_cases(os.path.join(FIXTURES, "cases.txt"))
    if args.case:
        rows = [r for r in rows if r[0] in args.case]

    print(
        f"{'case':<22} {'pterun med':>11} {'ET med':>10} {'ratio':>7}   "
        f"{'pterun min':>11} {'ET min':>10} {'ratio':>7}   (ms; ratio = pterun / ExecuTorch)"
    )
    ratios = []
    for name, dname, method, n_in, data in rows:
        d = os.path.join(FIXTURES, dname)
        model = os.path.join(d, "model.pte")
        pm, pmin, err = time_pterun(
            args.pterun,
            model,
            method,
            [os.path.join(d, x) for x in data],
            args.warmup,
            args.iterations,
            env,
        )
        try:
            em, emin = time_executorch(
                runtime, model, method, n_in, data, d, args.warmup, args.iterations
            )
        except Exception as e:  # ExecuTorch cannot run some programs
            em = emin = None
            err = (
                (err + "; " if err else "")
                + "ExecuTorch: "
                + str(e).splitlines()[0][:60]
            )
        if pm is None or em is None:
            print(f"{name:<22} n/a ({err})")
            continue
        ratios.append(pm / em)
        print(
            f"{name:<22} {pm:11.4f} {em:10.4f} {pm / em:7.2f}   "
            f"{pmin:11.4f} {emin:10.4f} {pmin / emin:7.2f}"
        )
        sys.stdout.flush()
    if ratios:
        geo = 1.0
        for r in ratios:
            geo *= r
        geo **= 1.0 / len(ratios)
        print(
            f"geometric mean of the median ratios over {len(ratios)} cases: {geo:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
