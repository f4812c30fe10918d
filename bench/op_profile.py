#!/usr/bin/env python3
"""Per-operator times: pterun against ExecuTorch+XNNPACK on one benchmark model.

    python bench/op_profile.py MODEL [--threads 1] [--runs 30] [--pterun build/bin/pterun] [--ort]

MODEL is a directory name under bench/models/out (kws, mobilenetv1, qmbv2, ...).
Prints two tables, in execution order, both in microseconds (min and median over
the timed runs):

* pterun: ``pterun bench model.pte --trace`` (the Chrome trace's per-instruction
  spans; the trace adds a clock read per instruction, so the sum runs a little
  above ``pterun bench``'s own figure);
* ExecuTorch+XNNPACK: model_xnnpack.pte run through ExecuTorch's Python
  bindings with an ETDump (``enable_etdump=True``), read back with
  ``executorch.devtools.Inspector``: the XNNPACK delegate's per-operator events
  (its operator names, e.g. "Convolution (NHWC, F32) DWConv #2");
* with ``--ort``, ONNX Runtime on model.onnx (the benchmark's session options,
  ``intra_op_num_threads = T``) with its profiler on: each graph node's kernel
  time (``Node`` events, after ORT's graph optimisations, so fused nodes such
  as ``FusedMatMul`` or a whole ``GRU`` appear as one), in execution order.

The two lists are not joined automatically (XNNPACK fuses and names operators its
own way; pterun's instructions are the program's, after its load-time fusion);
read them side by side. This is the profile the benchmark's notes cite where a
model is slower than ExecuTorch+XNNPACK (docs/performance.md).

Run it on a quiet machine; it reads stdout and stderr from files, never from a
pipe, so no Python process competes with the timed one for a CPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent / "models" / "out"


def pterun_ops(
    exe: str, pte: Path, threads: int, runs: int
) -> list[tuple[str, float, float]]:
    """(instruction, min us, median us) in execution order from a --trace run."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.json"
        with open(Path(tmp) / "out.txt", "w") as out:
            subprocess.run(
                [
                    exe,
                    "bench",
                    str(pte),
                    "--threads",
                    str(threads),
                    "--iterations",
                    str(runs),
                    "--trace",
                    str(trace),
                ],
                check=True,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        data = json.loads(trace.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    spans: dict[tuple[int, str], list[float]] = defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or str(e.get("name", "")).startswith("execute"):
            continue
        args = e.get("args", {})
        key = (
            int(args.get("chain", 0)) * 1_000_000 + int(args.get("instruction", 0)),
            e["name"],
        )
        spans[key].append(float(e["dur"]))
    rows = []
    for (order, name), durs in sorted(spans.items()):
        label = f"{order % 1_000_000:>4} {name}"
        rows.append((label, min(durs), statistics.median(durs)))
    return rows


def executorch_ops(
    pte: Path, threads: int, runs: int
) -> list[tuple[str, float, float]]:
    """(event, min us, median us) from an ETDump of ExecuTorch+XNNPACK."""
    import numpy as np
    import torch
    from executorch.devtools import Inspector
    from executorch.extension.pybindings import portable_lib as pl

    pl._unsafe_reset_threadpool(threads)
    inputs = [
        torch.from_numpy(np.load(p)) for p in sorted(pte.parent.glob("input_*.npy"))
    ]
    module = pl._load_for_executorch(str(pte), enable_etdump=True, debug_buffer_size=0)
    for _ in range(3 + runs):
        module.forward(tuple(inputs))
    with tempfile.TemporaryDirectory() as tmp:
        etdump = Path(tmp) / "run.etdp"
        module.write_etdump_result_to_file(str(etdump))
        frame = Inspector(etdump_path=str(etdump)).to_dataframe()
    rows = []
    for _, r in frame.iterrows():
        name = str(r["event_name"])
        if name in ("Method::init", "Program::load_method"):
            continue
        raw = [float(v) * 1000.0 for v in r["raw"]]  # ms -> us
        rows.append((name, min(raw), statistics.median(raw)))
    return rows


def ort_ops(onnx: Path, threads: int, runs: int) -> list[tuple[str, float, float]]:
    """(node, min us, median us) from ONNX Runtime's profiler, execution order."""
    import numpy as np
    import onnxruntime as ort

    inputs = [np.load(p) for p in sorted(onnx.parent.glob("input_*.npy"))]
    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.enable_profiling = True
        so.profile_file_prefix = str(Path(tmp) / "ort")
        sess = ort.InferenceSession(str(onnx), so, providers=["CPUExecutionProvider"])
        feed = {i.name: x for i, x in zip(sess.get_inputs(), inputs)}
        for _ in range(3 + runs):
            sess.run(None, feed)
        events = json.loads(Path(sess.end_profiling()).read_text())
    order: dict[str, int] = {}
    spans: dict[str, list[float]] = defaultdict(list)
    for e in events:
        name = str(e.get("name", ""))
        if e.get("cat") != "Node" or not name.endswith("_kernel_time"):
            continue
        node = name[: -len("_kernel_time")]
        op = e.get("args", {}).get("op_name", "")
        key = f"{node} ({op})" if op else node
        order.setdefault(key, len(order))
        spans[key].append(float(e["dur"]))
    rows = []
    for key in sorted(spans, key=lambda k: order[k]):
        durs = spans[key][3:] or spans[key]  # without the warm-up runs
        rows.append((key, min(durs), statistics.median(durs)))
    return rows


def table(title: str, rows: list[tuple[str, float, float]]) -> str:
    lines = [f"### {title}", "", "| operator | min us | median us |", "|---|---|---|"]
    lines += [f"| {n} | {lo:.1f} | {med:.1f} |" for n, lo, med in rows]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a directory under bench/models/out")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30, help="timed executes (default 30)")
    ap.add_argument("--pterun", default="build/bin/pterun")
    ap.add_argument(
        "--ort",
        action="store_true",
        help="also ONNX Runtime's per-node times (model.onnx)",
    )
    args = ap.parse_args()
    d = MODELS_DIR / args.model
    if not (d / "model.pte").is_file() or not (d / "model_xnnpack.pte").is_file():
        print(
            f"op_profile: {d} lacks model.pte or model_xnnpack.pte "
            "(python bench/models/export_models.py makes them)",
            file=sys.stderr,
        )
        return 2
    print(f"{args.model}, {args.threads} thread(s), {args.runs} timed runs\n")
    print(
        table(
            "pterun (model.pte)",
            pterun_ops(args.pterun, d / "model.pte", args.threads, args.runs),
        )
    )
    print(
        table(
            "ExecuTorch+XNNPACK (model_xnnpack.pte)",
            executorch_ops(d / "model_xnnpack.pte", args.threads, args.runs),
        )
    )
    if args.ort:
        if not (d / "model.onnx").is_file():
            print(f"op_profile: {d} lacks model.onnx", file=sys.stderr)
            return 2
        print(
            table(
                "ONNX Runtime (model.onnx)",
                ort_ops(d / "model.onnx", args.threads, args.runs),
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
