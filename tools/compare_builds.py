#!/usr/bin/env python3
"""Same bits from every compiler and build type (docs/performance.md,
"Bit-exactness").

Runs every fixture program of the fixture indexes (tests/fixtures/*cases.txt,
the 8/9-column ones) with the CLI of each build directory given, on the
committed inputs, in four modes: the dispatched kernels and the scalar ones
(PTERUN_ISA=none), each on 1 and on 3 threads. Fails unless

* every build gives the reference build's output bytes in every mode (one
  ISA variant, compiled by GCC or Clang at any optimisation level, computes
  the same IEEE operations in the same order), and
* within each build, 3 threads give the bits of 1 thread.

Usage: python tools/compare_builds.py REFERENCE_BUILD BUILD... [--jobs N]
Prints one line per build (runs, same as the reference, different, errors)
and every difference.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
MODES: tuple[tuple[str, int], ...] = (("", 1), ("", 3), ("none", 1), ("none", 3))
TIMEOUT_S = 300


@dataclass(frozen=True)
class Row:
    """A fixture row: a method of a program and its committed inputs."""

    index: str
    name: str
    dir: str
    method: str
    n_inputs: int
    data: tuple[str, ...]

    def args(self) -> list[str]:
        d = FIXTURES / self.dir
        a = [str(d / "model.pte"), "--method", self.method]
        for k in range(self.n_inputs):
            a += ["--input", str(d / f"{self.method}_input_{k}.npy")]
        for f in self.data:
            a += ["--data", str(d / f)]
        return a


def load_rows() -> list[Row]:
    rows: list[Row] = []
    for index in sorted(FIXTURES.glob("*cases.txt")):
        for raw in index.read_text(encoding="utf-8").splitlines():
            f = raw.split("#", 1)[0].split()
            if len(f) < 8 or not (f[3].isdigit() and f[4].isdigit()):
                continue  # another layout (llm_cases.txt: generation flags)
            if not (FIXTURES / f[1] / "model.pte").exists():
                continue  # a bundled-only or data-only row
            data = () if f[7] == "-" else tuple(f[7].split(","))
            rows.append(Row(index.name, f[0], f[1], f[2], int(f[3]), data))
    return rows


def digest(cli: Path, row: Row, isa: str, threads: int) -> str:
    """SHA-256 of the output .npy files, or 'error: ...'."""
    env = dict(os.environ, PTERUN_ISA=isa, PTERUN_ISA_MASK="")
    if threads > 1:  # every call split, however small (the pool's threshold off)
        env["PTERUN_THREADPOOL_MIN_WORK_NS"] = "1"
    with tempfile.TemporaryDirectory(prefix="pterun-cmp-") as tmp:
        cmd = [str(cli), "run", *row.args(), "--threads", str(threads), "--quiet"]
        cmd += ["--output-dir", tmp]
        r = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT_S, check=False
        )
        if r.returncode != 0:
            return "error: exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
        h = hashlib.sha256()
        outs = sorted(Path(tmp).glob("output_*.npy"), key=lambda p: int(p.stem[7:]))
        if not outs:
            return "error: no outputs"
        for p in outs:
            h.update(p.read_bytes())
        return h.hexdigest()


def mode_name(isa: str, threads: int) -> str:
    return "%s, %d thread%s" % (
        "PTERUN_ISA=" + isa if isa else "dispatched",
        threads,
        "" if threads == 1 else "s",
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builds", nargs="+", type=Path, help="the first is the reference")
    ap.add_argument("--jobs", type=int, default=2)
    ns = ap.parse_args(argv)
    clis = [b / "bin" / "pterun" for b in ns.builds]
    missing = [str(c) for c in clis if not c.is_file()]
    if missing:
        print("compare_builds.py: no CLI at " + ", ".join(missing), file=sys.stderr)
        return 1
    rows = load_rows()
    if not rows:
        print("compare_builds.py: no fixture rows found", file=sys.stderr)
        return 1
    jobs = [(b, r, m) for b in range(len(clis)) for r in rows for m in MODES]
    with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as ex:
        got = list(ex.map(lambda j: digest(clis[j[0]], j[1], *j[2]), jobs))
    res = {
        (b, r.name + "@" + r.index, m): d
        for (b, r, m), d in zip(jobs, got, strict=True)
    }
    problems: list[str] = []
    print("%-40s %6s %8s %8s %7s" % ("build", "runs", "same", "differ", "errors"))
    for b, build in enumerate(ns.builds):
        same = differ = errors = 0
        for r in rows:
            key = r.name + "@" + r.index
            for isa, threads in MODES:
                d, ref = res[(b, key, (isa, threads))], res[(0, key, (isa, threads))]
                mode = mode_name(isa, threads)
                if d.startswith("error"):
                    errors += 1
                    problems.append(f"{build}: {key} ({mode}): {d}")
                elif d != ref:
                    differ += 1
                    problems.append(
                        f"{build}: {key} ({mode}): other bits than {ns.builds[0]}"
                    )
                else:
                    same += 1
                one = res[(b, key, (isa, 1))]
                if threads != 1 and not d.startswith("error") and d != one:
                    problems.append(
                        f"{build}: {key} ({mode}): other bits than 1 thread"
                    )
        print(
            "%-40s %6d %8d %8d %7d"
            % (build, same + differ + errors, same, differ, errors)
        )
    for p in problems:
        print("  " + p)
    print(
        "%d programs x %d modes x %d builds: %s"
        % (
            len(rows),
            len(MODES),
            len(clis),
            "same bits" if not problems else "%d problems" % len(problems),
        )
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
