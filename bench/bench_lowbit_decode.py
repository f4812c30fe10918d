#!/usr/bin/env python3
"""Decode tokens/s of a low-bit LLM in pterun next to the same checkpoint as
ExecuTorch+XNNPACK 8da4w, at 1 and 2 threads, in one run.

Both programs come from ExecuTorch's own LLM exporter (export_llama: llama3
architecture, KV cache, sdpa_with_kv_cache) and one seeded random checkpoint
(tools/export_llama.py's make_checkpoint):

  et_8da4w    `-X -qmode 8da4w --group_size 32`: ExecuTorch's x86 path for
              4-bit weights (XNNPACK), run by ExecuTorch's runtime (and by
              pterun's XnnpackBackend, for reference);
  lowbit_4    the same export without XNNPACK, every linear replaced by
              torchao::_linear_8bit_act_4bit_weight (pterun.lowbit.quantize_,
              group 32, no zero points): 8-bit dynamic activations x 4-bit
              weights, the same scheme. ExecuTorch's x86-64 wheel has no
              kernels for these operators, so only pterun runs it.

Decode = greedy tokens one at a time after a 7-token prompt; each figure is
the best of --repeat runs, interleaved (every repetition runs every runtime
at 1 and 2 threads once, each in a fresh process, so load from other
processes hits all of them alike). CPU/wall = process CPU time over wall time
while decoding: at most ~1 proves a 1-thread run used one CPU (ExecuTorch's
pool is reset to the thread count before the program loads; pterun's pool
is created with it; both pools may spin while waiting). The fastest single
decode step of all runs (the call alone: pterun_llm_forward; ExecuTorch's
Method.execute through its Python binding, which adds a little) is the
figure least disturbed by other processes. Bandwidth = bytes of packed linear weights one
token reads (every linear and the output head; the embedding row is
negligible) x decode tokens/s, next to the machine's read bandwidth
(bench_lowbit). The programs are cached in bench/lowbit_decode/.

Usage: python bench/bench_lowbit_decode.py [--size small|medium|large] [--steps N] [--repeat R] [--threads 1,2]
       [--with-pterun-xnnpack]
Needs build/bin/bench_decode (-DPTERUN_BUILD_BENCH=ON).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(
    os.environ.get("PTERUN_BENCH_DECODE", ROOT / "build" / "bin" / "bench_decode")
)
PROMPT = [1, 17, 42, 99, 5, 200, 63]
SEED = 20261201


def load_tool(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


MEDIUM = {"dim": 512, "n_layers": 4, "n_heads": 8, "n_kv_heads": 2, "vocab_size": 4096,
          "hidden_dim": 1536}  # fmt: skip


def params_for(size: str) -> dict:
    """tools/export_llama.py's SMALL and LARGE, or MEDIUM (LARGE's other
    settings): 10.6 MB of 4-bit linear weights, exported in minutes."""
    el = load_tool("pt_export_llama", ROOT / "tools" / "export_llama.py")
    if size == "medium":
        return {**el.LARGE, **MEDIUM}
    return dict(el.LARGE if size == "large" else el.SMALL)


def linear_bytes(p: dict, gs: int = 32) -> int:
    """Packed bytes of every linear at 4 bits, group gs, no zeros, no bias
    (torchao's universal layout: 64-byte header, 8-column tiles, per group
    gs * 4 / 8 code bytes per column plus a float scale and an int32 sum)."""
    dim, hidden, vocab = p["dim"], p["hidden_dim"], p["vocab_size"]
    kv = dim // p["n_heads"] * p["n_kv_heads"]
    shapes = [(dim, dim), (kv, dim), (kv, dim), (dim, dim)]
    shapes += [(hidden, dim), (dim, hidden), (hidden, dim)]
    total = 0
    for n, k in shapes * p["n_layers"] + [(vocab, dim)]:
        total += 64 + (n + 7) // 8 * (k // gs) * (gs * 4 + 64)
    return total


def export(kind: str, size: str, out: Path) -> None:
    """Runs in a child process (the exporter keeps global state)."""
    import torch
    from executorch.examples.models.llama import export_llama_lib as ell

    el = load_tool("pt_export_llama", ROOT / "tools" / "export_llama.py")
    params = params_for(size)
    out.parent.mkdir(parents=True, exist_ok=True)
    ckpt, pjson = out.parent / "ckpt.pth", out.parent / "params.json"
    if not ckpt.exists():
        el.make_checkpoint(params, ckpt, SEED)
        pjson.write_text(json.dumps(params))
    argv = ["--params", str(pjson), "--checkpoint", str(ckpt), *el.BASE]
    argv += ["-m", el.METADATA, "--output_name", str(out)]
    if kind == "et_8da4w":
        argv += ["-X", "-qmode", "8da4w", "--group_size", "32"]
    else:
        lb = load_tool("pterun_lowbit", ROOT / "python" / "pterun" / "lowbit.py")
        lb.register()
        orig = ell._get_source_transforms

        def with_lowbit(*a, **kw):
            return [
                *orig(*a, **kw),
                lambda m: lb.quantize_(m, bits=4, group_size=32, embeddings=False),
            ]

        ell._get_source_transforms = with_lowbit
    torch.manual_seed(SEED)
    ell.export_llama(ell.build_args_parser().parse_args(argv))


def et_decode(model: Path, steps: int, threads: int) -> dict:
    """In this process: ExecuTorch's runtime with its pool reset to `threads`
    before the program loads (XNNPACK takes the pool at delegate init)."""
    import torch
    from executorch.extension.pybindings import portable_lib

    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401
    import executorch.kernels.quantized  # noqa: F401
    from executorch.runtime import Runtime

    portable_lib._unsafe_reset_threadpool(threads)
    fwd = Runtime.get().load_program(str(model)).load_method("forward")
    out = fwd.execute([torch.tensor([PROMPT]), torch.tensor([0])])
    vocab = out[0].shape[-1]
    tok, pos, toks = int(torch.argmax(out[0].reshape(-1, vocab)[-1])), len(PROMPT), []
    toks.append(tok)
    t0, c0 = time.perf_counter(), time.process_time()
    step_min = float("inf")
    for _ in range(steps - 1):
        args = [torch.tensor([[tok]]), torch.tensor([pos])]
        s0 = time.perf_counter()
        out = fwd.execute(args)
        step_min = min(step_min, time.perf_counter() - s0)
        tok = int(torch.argmax(out[0].reshape(-1, vocab)[-1]))
        toks.append(tok)
        pos += 1
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "tps": (steps - 1) / wall,
        "cpu": cpu / wall,
        "step_ms": 1e3 * step_min,
        "tokens": toks,
    }


def et_run(model: Path, steps: int, threads: int) -> dict:
    """et_decode in a fresh process: each run creates its pool from scratch
    and no state (pool, caches, torch's threads) carries over between runs."""
    r = subprocess.run(
        [sys.executable, __file__, "--et-child", str(model), str(threads), str(steps)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(r.stdout.strip().splitlines()[-1])


def pt_run(model: Path, steps: int, threads: int) -> dict:
    r = subprocess.run(
        [str(BENCH), str(model), str(threads), str(steps)],
        check=True,
        capture_output=True,
        text=True,
    )
    j = json.loads(r.stdout.strip().splitlines()[-1])
    assert j["threads"] == threads, j["threads"]
    return {
        "tps": j["decode_tokens_per_second"],
        "cpu": j["decode_cpu_per_wall"],
        "step_ms": j["decode_step_min_ms"],
        "tokens": j["tokens"],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=["small", "medium", "large"], default="medium")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--threads", default="1,2", help="comma-separated thread counts (default 1,2)"
    )
    ap.add_argument("--export", choices=["et_8da4w", "lowbit_4"])
    ap.add_argument("--out")
    ap.add_argument("--et-child", nargs=3, metavar=("MODEL", "THREADS", "STEPS"))
    ap.add_argument(
        "--with-pterun-xnnpack",
        action="store_true",
        help="also pterun running the XNNPACK program",
    )
    args = ap.parse_args()
    if args.et_child:
        m, t, n = args.et_child
        print(json.dumps(et_decode(Path(m), int(n), int(t))))
        return 0
    if args.export:
        export(args.export, args.size, Path(args.out))
        return 0
    work = ROOT / "bench" / "lowbit_decode" / args.size
    progs = {k: work / f"{k}.pte" for k in ("et_8da4w", "lowbit_4")}
    for kind, pte in progs.items():
        if not pte.exists():
            print(f"exporting {pte.relative_to(ROOT)} ...", flush=True)
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--export",
                    kind,
                    "--size",
                    args.size,
                    "--out",
                    str(pte),
                ],
                check=True,
                capture_output=True,
            )
    p = params_for(args.size)
    wb = linear_bytes(p)
    print(
        f"model: llama3 dim {p['dim']}, {p['n_layers']} layers, hidden {p['hidden_dim']},"
        f" vocab {p['vocab_size']}; {wb / 1e6:.1f} MB of 4-bit linear weights per token;"
        f" {args.steps} decode steps, best of {args.repeat} interleaved runs (each in"
        f" a fresh process); load average"
        f" {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print()
    print(
        "| runtime | program | threads | decode tok/s (best run) | all runs | CPU/wall"
        " | fastest step ms (tok/s) | weight GB/s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rows = [
        ("ExecuTorch+XNNPACK", "et_8da4w", et_run),
        ("pterun (kernels_lowbit)", "lowbit_4", pt_run),
    ]
    if args.with_pterun_xnnpack:
        rows.append(("pterun (backend_xnnpack)", "et_8da4w", pt_run))
    # Interleaved: every repetition runs every (threads, runtime) once, so a
    # burst of load from other processes hits all of them alike; the best
    # run of each is reported.
    thread_counts = [int(t) for t in args.threads.split(",")]
    runs: dict[tuple[str, int], list[dict]] = {}
    for _ in range(args.repeat):
        for threads in thread_counts:
            for name, prog, fn in rows:
                runs.setdefault((name, threads), []).append(
                    fn(progs[prog], args.steps, threads)
                )
    for threads in thread_counts:
        for name, prog, _ in rows:
            rs = runs[(name, threads)]
            best = max(rs, key=lambda r: r["tps"])
            allr = " ".join(f"{r['tps']:.0f}" for r in rs)
            step = min(r["step_ms"] for r in rs)
            print(
                f"| {name} | {prog} | {threads} | {best['tps']:.1f} | {allr}"
                f" | {best['cpu']:.2f} | {step:.3f} ({1e3 / step:.0f})"
                f" | {wb * best['tps'] / 1e9:.2f} |",
                flush=True,
            )
    print()
    for name, _, _ in rows:
        seqs = [r["tokens"] for t in thread_counts for r in runs[(name, t)]]
        print(
            f"{name}: tokens identical in every run: {all(q == seqs[0] for q in seqs)}"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
