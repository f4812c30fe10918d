#!/usr/bin/env python3
"""Decode tokens/s: pterun (`pterun generate`) vs ExecuTorch's runtime
(pybindings, llama custom ops loaded) on the same LLM-flow program, at the
same thread count. Also the weight-streaming bandwidth of decoding against
the machine's single-thread read bandwidth.

Usage:
  python bench/bench_llm.py [MODEL.pte ...] [--steps N] [--threads T] [--repeat R]
Default models: the committed fixtures (tests/fixtures/llm_*/model.pte) and,
when present, bench/llm_large/model.pte (python tools/export_llama.py --large).
Prints a markdown table (docs/llm.md keeps the last one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CLI = Path(os.environ.get("PTERUN_CLI", ROOT / "build" / "bin" / "pterun"))
PROMPT = [1, 17, 42, 99, 5, 200, 63]


def et_decode(model: Path, steps: int, threads: int) -> tuple[float, float, list[int]]:
    """(prefill tokens/s, decode tokens/s, greedy tokens) with ExecuTorch's runtime."""
    import torch
    from executorch.extension.pybindings import portable_lib

    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401
    import executorch.kernels.quantized  # noqa: F401
    from executorch.runtime import Runtime

    portable_lib._unsafe_reset_threadpool(threads)
    fwd = Runtime.get().load_program(str(model)).load_method("forward")
    t0 = time.perf_counter()
    out = fwd.execute([torch.tensor([PROMPT]), torch.tensor([0])])
    t1 = time.perf_counter()
    pos = len(PROMPT)
    tok = int(torch.argmax(out[0]))
    toks = [tok]
    t2 = time.perf_counter()
    for _ in range(steps - 1):
        out = fwd.execute([torch.tensor([[tok]]), torch.tensor([pos])])
        tok = int(torch.argmax(out[0]))
        toks.append(tok)
        pos += 1
    t3 = time.perf_counter()
    return len(PROMPT) / (t1 - t0), (steps - 1) / (t3 - t2), toks


def pterun_decode(
    model: Path, steps: int, threads: int
) -> tuple[float, float, list[int]]:
    out = subprocess.run(
        [
            str(CLI),
            "generate",
            str(model),
            "--prompt-tokens",
            ",".join(map(str, PROMPT)),
        ]
        + ["--steps", str(steps), "--ignore-eos", "--json", "--threads", str(threads)],
        check=True,
        capture_output=True,
        text=True,
    )
    r = json.loads(out.stdout)
    return (
        r["prefill_tokens_per_second"],
        r["decode_tokens_per_second"],
        list(r["tokens"]),
    )


def _same_prefix(a: list[int], b: list[int]) -> int:
    """How many leading greedy tokens two runs share (random-weight models
    have near-flat logits: another float summation order may flip a near
    tie, and every later token follows from it)."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def streamed_bytes(model: Path) -> int:
    """float32 bytes of the weights one decode step reads (every linear and
    the lm head; one row of the embedding table is negligible), from the
    checkpoint parameters of tools/export_llama.py."""
    sys.path.insert(0, str(ROOT / "tools"))
    import export_llama

    p = {"llm_large": export_llama.LARGE, "llm_stories": export_llama.STORIES}.get(
        model.parent.name, export_llama.SMALL
    )
    dim, hidden = p["dim"], p["hidden_dim"]
    kv = dim // p["n_heads"] * p["n_kv_heads"]
    per_layer = 2 * dim * dim + 2 * kv * dim + 3 * dim * hidden
    return 4 * (p["n_layers"] * per_layer + p["vocab_size"] * dim)


def read_bandwidth() -> float:
    """Read bandwidth in GB/s: a float32 dot product over a 512 MiB array
    (one stream, far beyond the caches), best of 3."""
    a = np.ones(128 << 20, dtype=np.float32)
    float(np.dot(a, a))
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        float(np.dot(a, a))
        best = max(best, a.nbytes / (time.perf_counter() - t) / 1e9)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    models = [Path(m) for m in args.models] or sorted(
        ROOT.glob("tests/fixtures/llm_*/model.pte")
    )
    large = ROOT / "bench" / "llm_large" / "model.pte"
    if not args.models and large.exists():
        models.append(large)
    bw = read_bandwidth()
    print(
        f"single-thread read bandwidth (numpy dot): {bw:.1f} GB/s; threads: {args.threads}"
    )
    print()
    print(
        "| program | weights | ExecuTorch decode tok/s | pterun decode tok/s | ratio"
        " | pterun weight stream GB/s (% of read bw) | ExecuTorch prefill tok/s"
        " | pterun prefill tok/s | same greedy tokens (leading) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for m in models:
        et = max(
            (et_decode(m, args.steps, args.threads) for _ in range(args.repeat)),
            key=lambda r: r[1],
        )
        pt = max(
            (pterun_decode(m, args.steps, args.threads) for _ in range(args.repeat)),
            key=lambda r: r[1],
        )
        wb = streamed_bytes(m)
        gbs = wb * pt[1] / 1e9
        print(
            f"| {m.parent.name} | {wb / 1e6:.1f} MB | {et[1]:.1f} | {pt[1]:.1f}"
            f" | {pt[1] / et[1]:.2f}x | {gbs:.1f} ({100 * gbs / bw:.0f} %)"
            f" | {et[0]:.0f} | {pt[0]:.0f} | {_same_prefix(et[2], pt[2])} of {len(et[2])} |"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
