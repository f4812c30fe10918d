#!/usr/bin/env python3
"""pterun vs ExecuTorch (portable and XNNPACK) vs ONNX Runtime, one command.

    python bench/compare.py [--pterun build/bin/pterun]
        [--bench-kernels build/bin/bench_kernels] [--only MODEL]... [--min-time 1.0]

For every model of bench/models/export_models.py (exported first if
bench/models/out/ lacks it) and for 1 thread and all CPUs this process may use:

* pterun      ``pterun bench model.pte --threads T`` (the CLI times
              pterun_method_execute alone, in C);
* et          ExecuTorch's runtime on the same non-delegated model.pte
              (``portable_lib._load_program`` + ``load_method``; its portable kernels are
              single-threaded whatever T is);
* et_xnnpack  ExecuTorch on model_xnnpack.pte (XnnpackPartitioner), its pool
              pinned with ``_unsafe_reset_threadpool(T)``;
* pterun_xnnpack  ``pterun bench model_xnnpack.pte`` (pterun's XNNPACK
              backend on the same lowered file: the comparison a user shipping
              lowered programs makes, reported as pterun_xnnpack / et_xnnpack);
* ort         ONNX Runtime on model.onnx, ``intra_op_num_threads = T``.

Each measurement runs in its own process: the Python engines call their
``forward``/``run`` from Python (a few microseconds of binding overhead per
call, negligible at these latencies). Reported: median latency, the
pterun / other ratios with geometric means, load time (program + method, or
session creation) and peak RSS (the process's high-water mark growth from just
before loading to the end of the timed runs; for pterun the growth the CLI
reports, from its resident set before loading to its high-water mark).
ExecuTorch's load is ``_load_program`` + ``load_method`` (its Module would
defer the method, and XNNPACK's packing, to the first call).
Every engine's output is checked against eager PyTorch first. Writes
bench/results/compare.md and compare.png; with --bench-kernels also a GEMM
micro-benchmark in GFLOP/s beside the measured FMA peak.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT / "bench" / "models" / "out"
RESULTS = ROOT / "bench" / "results"
MODEL_NAMES = [
    "mlp",
    "mobilenet",
    "resnet",
    "conv1d",
    "vit",
    "gru",
    "lstm",
    "attention",
    "kws",
    "resnet8",
    "mobilenetv1_025",
    "mobilenetv1",
]
# int8 models (bench/models/export_int8_models.py): PT2E-quantized programs,
# their XNNPACK-lowered forms and ONNX Runtime QDQ models.
INT8_MODEL_NAMES = ["qcnn", "qmlp", "qmbv2"]
ENGINES = ["pterun", "et", "et_xnnpack", "ort", "pterun_xnnpack"]
# pterun's own rows: ratios are pterun / each other engine, and
# pterun_xnnpack / et_xnnpack.
PTERUN_ENGINES = ("pterun", "pterun_xnnpack")


def cpus() -> int:
    return len(os.sched_getaffinity(0))


# ---- worker side (one process per measurement) -----------------------------------------


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> int:
    """Resets the high-water mark (Linux clear_refs 5); returns the current RSS in KiB."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    return _status_kb("VmRSS")


def _time_loop(call: Any, min_time: float) -> list[float]:
    for _ in range(3):
        call()
    times: list[float] = []
    start = time.perf_counter()
    while (time.perf_counter() - start < min_time or len(times) < 10) and len(
        times
    ) < 2000:
        t0 = time.perf_counter_ns()
        call()
        times.append((time.perf_counter_ns() - t0) / 1e6)
    return times


def worker(engine: str, model: str, threads: int, min_time: float) -> dict[str, Any]:
    import numpy as np

    d = MODELS_DIR / model
    inputs = [np.load(p) for p in sorted(d.glob("input_*.npy"))]
    eager = np.load(d / "eager_0.npy")
    if engine in ("et", "et_xnnpack"):
        import executorch.kernels.quantized  # noqa: F401  (int8 models' Q/DQ kernels)
        import torch
        from executorch.extension.pybindings import portable_lib as pl

        pl._unsafe_reset_threadpool(threads)
        tin = [torch.from_numpy(x) for x in inputs]
        base = _reset_peak()
        t0 = time.perf_counter()
        # Program, then the method, explicitly: _load_for_executorch defers
        # the method (and XNNPACK's weight packing) to the first forward, so
        # timing it alone would report a load of ~0.1 ms.
        prog = pl._load_program(
            str(d / ("model_xnnpack.pte" if engine == "et_xnnpack" else "model.pte"))
        )
        meth = prog.load_method("forward")
        load_ms = (time.perf_counter() - t0) * 1e3
        out = meth(tin)[0].numpy()
        times = _time_loop(lambda: meth(tin), min_time)
    elif engine == "ort":
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        base = _reset_peak()
        t0 = time.perf_counter()
        sess = ort.InferenceSession(
            str(d / "model.onnx"), so, providers=["CPUExecutionProvider"]
        )
        load_ms = (time.perf_counter() - t0) * 1e3
        feed = {i.name: x for i, x in zip(sess.get_inputs(), inputs)}
        out = sess.run(None, feed)[0]
        times = _time_loop(lambda: sess.run(None, feed), min_time)
    else:
        raise SystemExit(f"unknown engine {engine}")
    peak = _status_kb("VmHWM")
    return {
        "median_ms": statistics.median(times),
        "load_ms": load_ms,
        "rss_mb": max(0, peak - base) / 1024.0,
        "max_err": float(np.max(np.abs(out.astype(np.float64) - eager))),
        "iterations": len(times),
    }


# ---- pterun (the CLI) -------------------------------------------------------------------


BENCH_RE = re.compile(r"median ([0-9.]+)")
LOAD_RE = re.compile(r"loaded in ([0-9.]+) ms")
RSS_RE = re.compile(r"growth ([0-9.]+) MB")


def run_pterun(
    exe: str, model: str, threads: int, min_time: float, pte: str = "model.pte"
) -> dict[str, Any]:
    import numpy as np

    d = MODELS_DIR / model
    # Correctness first: the same inputs as everyone else, against eager PyTorch.
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            exe,
            "run",
            str(d / pte),
            "--threads",
            str(threads),
            "--quiet",
            "--output-dir",
            tmp,
        ]
        for p in sorted(d.glob("input_*.npy")):
            cmd += ["--input", str(p)]
        subprocess.run(cmd, check=True)
        out = np.load(Path(tmp) / "output_0.npy")
    err = float(np.max(np.abs(out.astype(np.float64) - np.load(d / "eager_0.npy"))))

    # Calibrate the iteration count to about min_time, then time.
    def bench_cmd(warmup: int, iterations: int) -> list[str]:
        return [exe, "bench", str(d / pte), "--threads", str(threads)] + [
            "--warmup",
            str(warmup),
            "--iterations",
            str(iterations),
        ]

    probe = subprocess.run(bench_cmd(2, 5), check=True, capture_output=True, text=True)
    per = float(BENCH_RE.search(probe.stdout).group(1))  # type: ignore[union-attr]
    iters = int(min(2000, max(3, min_time * 1e3 / max(per, 1e-3))))
    cmd = bench_cmd(3, iters)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd}: {proc.stderr}")
    stdout = proc.stdout
    loads = [float(x) for x in LOAD_RE.findall(stdout)]
    # Growth, as for the Python engines: the CLI reads its own resident set
    # before loading and its high-water mark at the end (/proc/self/status).
    growth = RSS_RE.search(stdout)
    return {
        "median_ms": float(BENCH_RE.search(stdout).group(1)),  # type: ignore[union-attr]
        "load_ms": sum(loads),
        "rss_mb": float(growth.group(1)) if growth else None,
        "max_err": err,
        "iterations": iters,
    }


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), or the machine type."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return os.uname().machine


def pterun_features(exe: str) -> str:
    """`pterun --version`'s "cpu features in use" (what dispatch chooses from)."""
    out = subprocess.run(
        [exe, "--version"], capture_output=True, text=True, check=True
    ).stdout
    m = re.search(r"cpu features in use: (.*)", out)
    return m.group(1).strip() if m else "?"


PROFILE_ROW_RE = re.compile(
    r"^(\S+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)%\s*(.*)$"
)


def pterun_hot(exe: str, model: str, top: int = 3) -> dict[str, Any]:
    """One thread: the operators taking most of the time (`pterun bench
    --profile`: name, share, slow-path note) and the microkernel variants
    that ran (`pterun run --verbose`: the compute families' report)."""
    d = MODELS_DIR / model
    ins: list[str] = []
    for p in sorted(d.glob("input_*.npy")):
        ins += ["--input", str(p)]
    prof = subprocess.run(
        [exe, "bench", str(d / "model.pte"), "--threads", "1", "--iterations", "50"]
        + ["--profile"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ops: list[tuple[str, float, str]] = []
    in_table = False
    for line in prof.splitlines():
        if line.startswith("operator "):
            in_table = True
            continue
        if in_table:
            m = PROFILE_ROW_RE.match(line.strip())
            if not m:
                break
            ops.append((m.group(1), float(m.group(5)), m.group(6).strip()))
    ops.sort(key=lambda o: -o[1])
    run = subprocess.run(
        [exe, "run", str(d / "model.pte"), "--threads", "1", "--quiet", "--verbose"]
        + ins,
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    m = re.search(r"compute variants: (.*)", run)
    ran = [
        v[: -len(":ran")]
        for v in (m.group(1).split() if m else [])
        if v.endswith(":ran")
    ]
    return {"ops": ops[:top], "variants": ran}


# ---- driver ---------------------------------------------------------------------------


def measure(
    args: argparse.Namespace, engine: str, model: str, threads: int
) -> dict[str, Any]:
    if engine in PTERUN_ENGINES:
        # A fresh interpreter so RUSAGE_CHILDREN only sees this CLI run.
        cmd = [
            sys.executable,
            __file__,
            "--pterun-worker",
            model,
            str(threads),
            "--pterun",
            args.pterun,
            "--min-time",
            str(args.min_time),
            "--pterun-file",
            "model_xnnpack.pte" if engine == "pterun_xnnpack" else "model.pte",
        ]
    else:
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            engine,
            model,
            str(threads),
            "--min-time",
            str(args.min_time),
        ]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("{")), None)
    if res.returncode != 0 or line is None:
        return {"error": (res.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(line)


def geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fmt(x: float | None, digits: int = 3) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x:.{digits}f}"


def gemm_microbench(exe: str, threads: list[int]) -> str:
    lines = [
        "| shape | "
        + " | ".join(f"{t} thread{'s' if t > 1 else ''} GFLOP/s" for t in threads)
        + " |",
        "|---|" + "---|" * len(threads),
    ]
    shapes = ["256x256x256", "512x512x512", "1024x1024x1024", "64x3136x576"]
    results: dict[int, dict[str, float]] = {}
    peak = float("nan")
    for t in threads:
        cmd = [exe, "--min-ms", "300", "--threads", str(t)]
        for s in shapes:
            cmd += ["--shape", s]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        m = re.search(r"measured FMA peak \(AVX2, one core\): ([0-9.]+)", out)
        if m:
            peak = (
                max(peak, float(m.group(1)))
                if math.isfinite(peak)
                else float(m.group(1))
            )
        default = re.search(r"default microkernel: (\S+)", out).group(1)  # type: ignore[union-attr]
        results[t] = {}
        for ln in out.splitlines():
            f = ln.split()
            if len(f) >= 6 and f[0] == default:
                results[t][f"{f[1]}x{f[2]}x{f[3]}"] = float(f[4])
    for s in shapes:
        row = [s] + [
            fmt(results[t].get(s), 1)
            + (
                f" ({results[t][s] / peak:.0%} of peak)"
                if t == 1 and s in results[t] and math.isfinite(peak)
                else ""
            )
            for t in threads
        ]
        lines.append("| " + " | ".join(row) + " |")
    return (
        f"Measured FMA peak, one core: {fmt(peak, 1)} GFLOP/s (AVX2, 12 independent FMA chains).\n\n"
        + "\n".join(lines)
    )


def tolerance(model: str) -> float:
    """How far from eager PyTorch an engine may be before its timing is void:
    float32 programs 1e-3 of the output's magnitude, int8 ones (whose
    engines round differently) 2e-2."""
    import numpy as np

    scale = max(1.0, float(np.max(np.abs(np.load(MODELS_DIR / model / "eager_0.npy")))))
    return (2e-2 if model in INT8_MODEL_NAMES else 1e-3) * scale


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pterun", default=str(ROOT / "build" / "bin" / "pterun"))
    ap.add_argument(
        "--bench-kernels", default=str(ROOT / "build" / "bin" / "bench_kernels")
    )
    ap.add_argument(
        "--only", action="append", default=[], choices=MODEL_NAMES + INT8_MODEL_NAMES
    )
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument(
        "--min-time",
        type=float,
        default=1.0,
        help="seconds of timed runs per measurement",
    )
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument(
        "--worker",
        nargs=3,
        metavar=("ENGINE", "MODEL", "THREADS"),
        help=argparse.SUPPRESS,
    )
    ap.add_argument(
        "--pterun-worker", nargs=2, metavar=("MODEL", "THREADS"), help=argparse.SUPPRESS
    )
    ap.add_argument("--pterun-file", default="model.pte", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(
            json.dumps(
                worker(
                    args.worker[0], args.worker[1], int(args.worker[2]), args.min_time
                )
            )
        )
        return 0
    if args.pterun_worker:
        print(
            json.dumps(
                run_pterun(
                    args.pterun,
                    args.pterun_worker[0],
                    int(args.pterun_worker[1]),
                    args.min_time,
                    args.pterun_file,
                )
            )
        )
        return 0

    models = args.only or MODEL_NAMES + INT8_MODEL_NAMES
    missing = [m for m in models if not (MODELS_DIR / m / "model.onnx").exists()]
    for script, names in (
        ("export_models.py", MODEL_NAMES),
        ("export_int8_models.py", INT8_MODEL_NAMES),
    ):
        if any(m in names for m in missing):
            cmd = [sys.executable, str(ROOT / "bench" / "models" / script)]
            for m in missing:
                if m in names:
                    cmd += ["--only", m]
            subprocess.run(cmd, check=True)
    engines = args.engines.split(",")
    thread_counts = sorted({1, cpus()})
    res: dict[tuple[str, str, int], dict[str, Any]] = {}
    wrong: list[str] = []
    for t in thread_counts:
        for m in models:
            for e in engines:
                if e == "et" and t != 1 and (m, e, 1) in res:
                    r = res[(m, e, 1)]  # portable kernels: one thread whatever T is
                else:
                    r = measure(args, e, m, t)
                res[(m, e, t)] = r
                if "error" not in r and r["max_err"] > tolerance(m):
                    wrong.append(f"{m} {e} {t} thr: max |err| {r['max_err']:.3g}")
                print(
                    f"{m:10s} {e:11s} {t} thr: "
                    + (
                        f"median {fmt(r['median_ms'])} ms, load {fmt(r['load_ms'], 1)} ms, "
                        f"rss {fmt(r['rss_mb'], 1)} MB, max |err| {r['max_err']:.2e}"
                        if "error" not in r
                        else r["error"]
                    ),
                    flush=True,
                )

    md = [
        f"# pterun vs ExecuTorch vs ONNX Runtime ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        (
            f"`python bench/compare.py` on {cpu_model()} ({os.uname().machine}), "
            f"{cpus()} CPUs usable; pterun's CPU features in use: "
            f"{pterun_features(args.pterun) if 'pterun' in engines else '-'}; "
            "median latency in ms (lower is better); "
            "ratio = pterun / other, and pterun_xnnpack / et_xnnpack: pterun's XNNPACK "
            "backend on the same lowered file (below 1: pterun faster)."
        ),
        "",
    ]
    # Ratio columns: (numerator engine, denominator engine).
    pairs = [("pterun", e) for e in engines if e not in PTERUN_ENGINES]
    if "pterun_xnnpack" in engines and "et_xnnpack" in engines:
        pairs.append(("pterun_xnnpack", "et_xnnpack"))
    for t in thread_counts:
        md += [
            f"## {t} thread{'s' if t > 1 else ''}",
            "",
            "| model | "
            + " | ".join(engines)
            + " | "
            + " | ".join(f"{a}/{b}" for a, b in pairs)
            + " |",
            "|---|" + "---|" * (len(engines) + len(pairs)),
        ]
        ratios: dict[tuple[str, str], list[float]] = {pr: [] for pr in pairs}
        for m in models:
            med = {e: res[(m, e, t)].get("median_ms") for e in engines}
            row = [m] + [fmt(med[e]) for e in engines]
            for a, b in pairs:
                r = med[a] / med[b] if med.get(a) and med.get(b) else None
                if r:
                    ratios[(a, b)].append(r)
                row.append(fmt(r, 2))
            md.append("| " + " | ".join(row) + " |")
        md.append(
            "| **geomean** | "
            + " | ".join("" for _ in engines)
            + " | "
            + " | ".join(f"**{fmt(geomean(ratios[pr]), 2)}**" for pr in pairs)
            + " |"
        )
        md.append("")
    if wrong:
        md += ["## Wrong answers (beyond `tolerance()`: these timings are void)", ""]
        md += [f"- {w}" for w in wrong] + [""]
    md += [
        "## Load time (ms) and peak RSS growth (MB), 1 thread",
        "",
        "| model | "
        + " | ".join(f"{e} load" for e in engines)
        + " | "
        + " | ".join(f"{e} RSS" for e in engines)
        + " |",
        "|---|" + "---|" * (2 * len(engines)),
    ]
    for m in models:
        rows = [res[(m, e, 1)] for e in engines]
        md.append(
            "| "
            + m
            + " | "
            + " | ".join(fmt(r.get("load_ms"), 1) for r in rows)
            + " | "
            + " | ".join(fmt(r.get("rss_mb"), 1) for r in rows)
            + " |"
        )
    md += [
        "",
        (
            "RSS growth: the Python engines' process from just before loading; "
            "pterun's CLI from before loading to its peak (`pterun bench` reads "
            "/proc/self/status). "
            "Load: program + method (ExecuTorch's `_load_program` + "
            "`load_method`), or session creation."
        ),
        "",
    ]
    if "pterun" in engines:
        md += [
            "## pterun's hot operators and the microkernel variants that ran (1 thread)",
            "",
            "| model | top operators (share of kernel time; slow path) | variants that ran |",
            "|---|---|---|",
        ]
        for m in models:
            try:
                h = pterun_hot(args.pterun, m)
            except (subprocess.CalledProcessError, OSError) as ex:
                md.append(f"| {m} | (profile failed: {ex}) | |")
                continue
            ops = "; ".join(
                f"`{n}` {share:.0f}%" + (f" ({note})" if note else "")
                for n, share, note in h["ops"]
            )
            md.append(f"| {m} | {ops} | {' '.join(h['variants']) or '(none)'} |")
        md.append("")
    md += [
        "## Thread scaling (1 thread / all CPUs, median ratio)",
        "",
        "| model | " + " | ".join(engines) + " |",
        "|---|" + "---|" * len(engines),
    ]
    for m in models:
        md.append(
            "| "
            + m
            + " | "
            + " | ".join(
                fmt(
                    res[(m, e, 1)].get("median_ms", float("nan"))
                    / res[(m, e, thread_counts[-1])].get("median_ms", float("nan")),
                    2,
                )
                if "median_ms" in res[(m, e, 1)]
                and "median_ms" in res[(m, e, thread_counts[-1])]
                else "–"
                for e in engines
            )
            + " |"
        )
    if args.bench_kernels and Path(args.bench_kernels).is_file():
        md += [
            "",
            "## f32 GEMM micro-benchmark (bench_kernels, M x N x K)",
            "",
            gemm_microbench(args.bench_kernels, thread_counts),
        ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(
            1, len(thread_counts), figsize=(7 * len(thread_counts), 4.5), squeeze=False
        )
        for ax, t in zip(axes[0], thread_counts):
            w = 0.8 / len(engines)
            for k, e in enumerate(engines):
                ys = [res[(m, e, t)].get("median_ms", 0) or 0 for m in models]
                ax.bar([i + k * w for i in range(len(models))], ys, w, label=e)
            ax.set_xticks(
                [i + 0.4 - w / 2 for i in range(len(models))], models, rotation=30
            )
            ax.set_yscale("log")
            ax.set_ylabel("median latency (ms, log)")
            ax.set_title(f"{t} thread{'s' if t > 1 else ''}")
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "compare.png", dpi=110)
        print(f"wrote {out / 'compare.md'} and {out / 'compare.png'}")
    except ImportError:
        print("matplotlib missing: no chart", file=sys.stderr)
    if wrong:
        # A fast wrong answer is not a result: say so, and fail.
        print("WRONG ANSWERS (timings above are void for these):", file=sys.stderr)
        for w in wrong:
            print(f"  {w}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
