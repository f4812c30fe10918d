"""Differential testing of pterun against eager PyTorch (docs/difftest.md).

    python -m tools.difftest --count 10000 --jobs 1            # a campaign
    python -m tools.difftest --ci                               # the CI set + coverage
    python -m tools.difftest --seed 123 --count 1 --reduce      # one program, reduced
    python -m tools.difftest --spec tests/fixtures/difftest/X/spec.json

Each program is generated from its seed (grammar.py), exported non-delegated
and XNNPACK-lowered, run by ``pterun run`` in every mode (fusion on/off,
prepare on/off, 1/2/3 threads, every ISA mask) and compared with eager
PyTorch and, where the docs claim bit-identity, between modes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "tools") not in sys.path:
    sys.path.insert(0, str(REPO / "tools"))

from difftest import check, ci, coverage, fixtures, grammar, reduce, runner

CI_SEEDS_FILE = REPO / "tests" / "fixtures" / "difftest" / "ci_seeds.txt"


def _modes(args: argparse.Namespace) -> list[runner.Mode]:
    isas = tuple(args.isa.split(",")) if args.isa else tuple(runner.ISAS)
    if args.distinct_isas:
        groups = runner.distinct_isas(args.cli, isas)
        for first, names in groups.items():
            if len(names) > 1 and not args.quiet:
                print(
                    f"difftest: {', '.join(names)} dispatch alike on this CPU: "
                    f"run as {first}"
                )
        isas = tuple(groups)
    threads = (
        tuple(int(t) for t in args.threads.split(","))
        if args.threads
        else runner.THREADS
    )
    return runner.all_modes(isas, threads)


def _one(job: tuple[int | dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    seed_or_spec, opts = job
    spec = (
        grammar.generate(seed_or_spec)
        if isinstance(seed_or_spec, int)
        else seed_or_spec
    )
    modes = [runner.Mode(**m) for m in opts["modes"]]
    pmodes = (
        [runner.Mode(**m) for m in opts["python_modes"]]
        if opts["python_modes"]
        else None
    )
    t0 = time.monotonic()
    try:
        v = check.check(
            spec,
            Path(opts["cli"]),
            modes,
            python_modes=pmodes,
            pythonpath=opts["pythonpath"],
        )
    except Exception as e:  # noqa: BLE001 (a generator or harness bug: reported as such)
        return {
            "spec": spec,
            "crash": f"{type(e).__name__}: {e}",
            "secs": time.monotonic() - t0,
        }
    return {
        "spec": spec,
        "failures": [f.as_dict() for f in v.failures],
        "runs": v.runs,
        "programs": v.programs,
        "missing": v.missing,
        "fusions": sorted(v.fusions),
        "fusion_names": {str(k): n for k, n in v.fusion_names.items()},
        "fusion_total": v.fusion_total,
        "variants": sorted(v.variants),
        "variants_available": sorted(v.variants_available),
        "xnn_nodes": sorted(v.xnn_nodes),
        "layouts": sorted(v.layouts),
        "cells": sorted(v.cells),
        "kinds": sorted(v.kinds),
        "operators": v.operators,
        "max_err": v.max_err,
        "secs": time.monotonic() - t0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.difftest", description=__doc__.split("\n")[0]
    )
    ap.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    ap.add_argument("--count", type=int, default=20, help="programs to generate")
    ap.add_argument("--jobs", type=int, default=1, help="programs checked in parallel")
    ap.add_argument(
        "--ci", action="store_true", help="the fixed CI seed set with its coverage gate"
    )
    ap.add_argument(
        "--spec", type=Path, help="check one spec file (a fixture's spec.json)"
    )
    ap.add_argument("--isa", help="comma-separated subset of " + ",".join(runner.ISAS))
    ap.add_argument(
        "--distinct-isas",
        action="store_true",
        help="run each ISA mask once per feature set it leaves on this CPU "
        "(campaigns: masks wider than the CPU repeat a mode)",
    )
    ap.add_argument("--threads", help="comma-separated thread counts (default 1,2,3)")
    ap.add_argument(
        "--python", action="store_true", help="also run through the Python API"
    )
    ap.add_argument(
        "--pythonpath", help="PYTHONPATH for the Python API runs (an installed wheel)"
    )
    ap.add_argument("--reduce", action="store_true", help="reduce failing programs")
    ap.add_argument(
        "--save", action="store_true", help="save reduced failures as fixtures"
    )
    ap.add_argument("--cli", type=Path, default=runner.default_cli())
    ap.add_argument("--log", type=Path, help="append one JSON line per program")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    if not args.cli.exists():
        print(f"difftest: pterun CLI not found: {args.cli}", file=sys.stderr)
        return 2
    modes = _modes(args)
    pmodes = None
    if args.python or args.ci:
        pmodes = [m for m in modes if m.prepare and m.threads in (1, 3)]
    jobs: list[int | dict[str, Any]]
    if args.spec:
        jobs = [json.loads(args.spec.read_text())]
    elif args.ci:
        jobs = []
        for line in CI_SEEDS_FILE.read_text().splitlines():
            fields = line.split("#", 1)[0].split()
            if fields:
                jobs.append(int(fields[0]))
        jobs += ci.CI_SPECS
    else:
        jobs = list(range(args.seed, args.seed + args.count))
    opts = {
        "modes": [m.__dict__ for m in modes],
        "python_modes": [m.__dict__ for m in pmodes] if pmodes else None,
        "pythonpath": args.pythonpath,
        "cli": str(args.cli),
        "coverage": args.ci,
    }
    totals: Counter[str] = Counter()
    failing: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    t0 = time.monotonic()
    work = [(j, opts) for j in jobs]
    if args.jobs > 1:
        pool = multiprocessing.get_context("spawn").Pool(args.jobs)
        it = pool.imap(_one, work)
    else:
        pool = None
        it = map(_one, work)
    logf = args.log.open("a") if args.log else None
    for n, res in enumerate(it, 1):
        results.append(res)
        if logf:
            logf.write(json.dumps(res) + "\n")
            logf.flush()
        totals["programs"] += 1
        totals["exported"] += res.get("programs", 0)
        totals["runs"] += res.get("runs", 0)
        fails = [
            f for f in res.get("failures", []) if f["kind"] not in check.NOT_PTERUN
        ]
        if res.get("crash"):
            totals["harness_crash"] += 1
        for f in res.get("failures", []):
            totals[f"fail_{f['kind']}"] += 1
        if fails:
            totals["failing_programs"] += 1
            failing.append(res)
        if not args.quiet or fails or res.get("crash"):
            desc = grammar.describe(res["spec"])
            state = "FAIL" if fails else ("CRASH" if res.get("crash") else "ok")
            print(
                f"[{n}/{len(work)} {time.monotonic() - t0:.0f}s] seed {res['spec']['seed']} {state}"
                f" runs {res.get('runs', 0)} {res.get('secs', 0):.1f}s: {desc[:150]}",
                flush=True,
            )
            shown = set()
            for f in res.get("failures", []):
                k = (f["kind"], f["flavour"], f["message"][:50])
                if k in shown:
                    continue
                shown.add(k)
                print(
                    f"    {f['kind']} {f['flavour']} {f['mode']}: {f['message'][:240]}",
                    flush=True,
                )
            if res.get("crash"):
                print(f"    harness: {res['crash'][:300]}", flush=True)
    if pool:
        pool.close()
    if logf:
        logf.close()
    print(
        f"difftest: {totals['programs']} programs, {totals['exported']} exported, {totals['runs']} runs"
        f" (program x mode), {totals['failing_programs']} failing;"
        + "".join(
            f" {k}={v}"
            for k, v in sorted(totals.items())
            if k.startswith("fail_") or k == "harness_crash"
        )
    )
    missing = sorted({m for r in results for m in r.get("missing", [])})
    if missing:
        print(
            "difftest: operators the exporter emits that no pterun library provides: "
            + ", ".join(missing)
        )
    rc = 0
    if args.ci:
        extras = ci.run_extras(args.cli)
        for res in extras:
            fails = res["failures"]
            print(
                f"extra fixture {res['spec']['seed']}: {'FAIL' if fails else 'ok'} runs {res['runs']}"
            )
            for f in fails[:4]:
                print(f"    {f['kind']} {f['mode']}: {f['message'][:240]}")
            if fails:
                failing.append(res)
        rc |= coverage.report(results + extras)
    if args.reduce or args.save:
        for res in failing:
            red = reduce.reduce(res["spec"], opts)
            print(
                f"reduced seed {res['spec']['seed']}: {grammar.describe(red.spec)}  ({red.message})"
            )
            if args.save:
                d = fixtures.save(red)
                print(f"  saved {d.relative_to(REPO)}")
    known = fixtures.known_failures()
    unexpected = [r for r in failing if not fixtures.is_known(r, known)]
    if totals["harness_crash"] or unexpected:
        rc |= 1
    if failing and not unexpected:
        print(
            f"difftest: {len(failing)} failing programs, all known defects (tests/fixtures/difftest/*/xfail)"
        )
    return rc


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
