#!/usr/bin/env python3
"""Export tiny random-weight llama programs with ExecuTorch's own LLM flow.

For each configuration below this script
  1. writes a seeded random checkpoint + params JSON (dim 64, 2 layers, 4 heads,
     2 kv heads (GQA), vocab 256, max_seq_len 128),
  2. runs the real flow `python -m executorch.examples.models.llama.export_llama`
     with that configuration's options,
  3. runs the program with ExecuTorch's runtime (pybindings, custom ops loaded)
     to record the reference: a prompt prefill then greedy decoding, storing the
     logits of every step and the token sequence.

Output, under tests/fixtures/llm_<name>/:
  model.pte           the exported program
  prompt.txt          prompt token ids (comma separated)
  et_tokens.txt       greedy tokens produced by ExecuTorch's runtime (one step a line)
  et_logits.npy       float32 [steps, vocab] logits ExecuTorch returned per step
                      (row 0 = prefill)
  ops.txt             the operators of the forward method
and the index tests/fixtures/llm_cases.txt (name, then the options used).

Configurations that the flow cannot export on this machine are reported with
the exporter's own error and listed in tests/fixtures/llm_unavailable.txt.

Usage: python tools/export_llama.py [--only NAME,...] [--steps N] [--large] [--stories]
  --large writes bench/llm_large/ (dim 1024, 4 layers, vocab 8192: 62 M
  parameters, 246 MB of float32 weights) for the decode benchmark instead of
  the fixtures (not committed).
  --stories writes bench/llm_stories/: a stories15M-sized llama (dim 288,
  6 layers, 6 heads, vocab 32000), model.pte (fp32) and model_8da4w.pte
  (`-X -qmode 8da4w --group_size 32`, the form LLM users ship), for
  bench/bench_llm.py (not committed).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "tests" / "fixtures"
sys.path.insert(0, str(REPO_ROOT / "tools"))
import fixturekit as fk

SEED = 20261201
PROMPT = [1, 17, 42, 99, 5, 200, 63]
STEPS = 40

SMALL = {
    "dim": 64,
    "n_layers": 2,
    "n_heads": 4,
    "n_kv_heads": 2,
    "vocab_size": 256,
    "hidden_dim": 128,
    "norm_eps": 1e-5,
    "rope_theta": 500000.0,
    "use_scaled_rope": False,
}
LARGE = {
    "dim": 1024,
    "n_layers": 4,
    "n_heads": 16,
    "n_kv_heads": 4,
    "vocab_size": 8192,
    "hidden_dim": 2816,
    "norm_eps": 1e-5,
    "rope_theta": 500000.0,
    "use_scaled_rope": False,
}

STORIES = {
    "dim": 288,
    "n_layers": 6,
    "n_heads": 6,
    "n_kv_heads": 6,
    "vocab_size": 32000,
    "hidden_dim": 768,
    "norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "use_scaled_rope": False,
}

BASE = [
    "--model",
    "llama3",
    "-kv",
    "--use_sdpa_with_kv_cache",
    "--max_seq_length",
    "128",
]
BASE += ["--max_context_length", "128"]
METADATA = '{"get_bos_id": 1, "get_eos_ids": [2]}'

# Not here: `-qmode int8` without -X exports the fp32 operator set (the int8
# weights are dequantized into float constants at export), so it adds no
# coverage; 8da4w/4w linears need XNNPACK (-X) on x86.
CONFIGS: dict[str, list[str]] = {
    "fp32": [],
    "kvq": ["--quantize_kv_cache"],
    "emb4": ["-E", "4,32"],
    "emb8": ["-E", "8,0"],
    # bfloat16 weights and activations (the KV cache and custom_sdpa in bf16).
    "bf16": ["-d", "bf16"],
    "spinquant": ["-sq", "native"],
    "sink": ["--use_attention_sink", "4,60"],
    "local": ["--local_global_attention", "[16, 0]"],
    # With static shapes (one token per forward) the two ring-buffer caches
    # export: update_cache_with_indices and custom_sdpa with a mask.
    "sink_static": ["--use_attention_sink", "4,60", "--disable_dynamic_shape"],
    "local_static": ["--local_global_attention", "[16, 0]", "--disable_dynamic_shape"],
}


def make_checkpoint(params: dict, out: Path, seed: int) -> None:
    """A random state dict with the names the llama Transformer loads."""
    g = torch.Generator().manual_seed(seed)
    dim, hidden = params["dim"], params["hidden_dim"]
    head_dim = dim // params["n_heads"]
    kv_dim = head_dim * params["n_kv_heads"]
    vocab = params["vocab_size"]

    def w(*shape: int) -> torch.Tensor:
        # Scale 1/sqrt(fan_in) keeps activations O(1) so the logits are not flat.
        return torch.randn(*shape, generator=g) / (shape[-1] ** 0.5)

    sd: dict[str, torch.Tensor] = {
        "tok_embeddings.weight": torch.randn(vocab, dim, generator=g)
    }
    for i in range(params["n_layers"]):
        p = f"layers.{i}."
        sd[p + "attention.wq.weight"] = w(dim, dim)
        sd[p + "attention.wk.weight"] = w(kv_dim, dim)
        sd[p + "attention.wv.weight"] = w(kv_dim, dim)
        sd[p + "attention.wo.weight"] = w(dim, dim)
        sd[p + "feed_forward.w1.weight"] = w(hidden, dim)
        sd[p + "feed_forward.w2.weight"] = w(dim, hidden)
        sd[p + "feed_forward.w3.weight"] = w(hidden, dim)
        sd[p + "attention_norm.weight"] = 1.0 + 0.1 * torch.randn(dim, generator=g)
        sd[p + "ffn_norm.weight"] = 1.0 + 0.1 * torch.randn(dim, generator=g)
    sd["norm.weight"] = 1.0 + 0.1 * torch.randn(dim, generator=g)
    sd["output.weight"] = 3.0 * w(vocab, dim)
    torch.save(sd, out)


def export(
    name: str, opts: list[str], params: dict, workdir: Path
) -> tuple[Path | None, str]:
    ckpt = workdir / "ckpt.pth"
    pjson = workdir / "params.json"
    if not ckpt.exists():
        make_checkpoint(params, ckpt, SEED)
        pjson.write_text(json.dumps(params))
    outdir = workdir / name
    outdir.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "executorch.examples.models.llama.export_llama"]
    cmd += ["--params", str(pjson), "--checkpoint", str(ckpt), *BASE, *opts]
    cmd += [
        "-m",
        METADATA,
        "--output-dir",
        str(outdir),
        "--output_name",
        str(outdir / "model.pte"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    pte = outdir / "model.pte"
    if proc.returncode != 0 or not pte.exists():
        # The exception line (torch.export appends advice after it).
        err = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        exc = [ln for ln in err if re.match(r"^[\w.]+(Error|Exception)\b", ln)]
        return None, (
            exc[-1] if exc else err[-1] if err else f"exit {proc.returncode}"
        )[:400]
    return pte, " ".join(opts)


def reference(
    pte: Path, steps: int, prompt: list[int] | None = None
) -> tuple[np.ndarray, list[int]]:
    """Prefill the prompt (default PROMPT) then decode greedily with
    ExecuTorch's runtime."""
    prompt = PROMPT if prompt is None else prompt
    from executorch.extension.pybindings import portable_lib  # noqa: F401

    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: kernels)
    import executorch.kernels.quantized  # noqa: F401
    from executorch.runtime import Runtime

    rt = Runtime.get()
    prog = rt.load_program(str(pte))
    fwd = prog.load_method("forward")
    logits_all: list[np.ndarray] = []
    tokens: list[int] = []
    if bool(prog.load_method("enable_dynamic_shape").execute([])[0]):
        out = fwd.execute([torch.tensor([prompt]), torch.tensor([0])])
    else:  # static shapes: one token per forward
        for i, t in enumerate(prompt):
            out = fwd.execute([torch.tensor([[t]]), torch.tensor([i])])
    pos = len(prompt)
    for step in range(steps):
        lg = out[0].to(torch.float32).reshape(-1).numpy().copy()
        logits_all.append(lg)
        tok = int(np.argmax(lg))
        tokens.append(tok)
        if step + 1 == steps:
            break
        out = fwd.execute(
            [
                torch.tensor([[tok]], dtype=torch.long),
                torch.tensor([pos], dtype=torch.long),
            ]
        )
        pos += 1
    return np.stack(logits_all).astype(np.float32), tokens


def forward_ops(pte: Path) -> list[str]:
    from executorch.exir._serialize._program import deserialize_pte_binary

    prog = deserialize_pte_binary(pte.read_bytes())
    prog = getattr(prog, "program", prog)
    names: list[str] = []
    for plan in prog.execution_plan:
        if plan.name != "forward":
            continue
        for op in plan.operators:
            n = fk.op_name(op)
            if n not in names:
                names.append(n)
    return names


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--stories", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(SEED)

    if args.stories:
        dest = REPO_ROOT / "bench" / "llm_stories"
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as td:
            for name, opts in (
                ("model", []),
                ("model_8da4w", ["-X", "-qmode", "8da4w", "--group_size", "32"]),
            ):
                pte, msg = export(name, opts, STORIES, Path(td))
                if pte is None:
                    print(f"stories {name}: export failed: {msg}")
                    return 1
                shutil.copy(pte, dest / f"{name}.pte")
                print(f"wrote {dest / name}.pte")
        return 0

    if args.large:
        dest = REPO_ROOT / "bench" / "llm_large"
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as td:
            pte, msg = export("fp32", [], LARGE, Path(td))
            if pte is None:
                print(f"large: export failed: {msg}")
                return 1
            shutil.copy(pte, dest / "model.pte")
        print(f"wrote {dest / 'model.pte'}")
        return 0

    only = [s for s in args.only.split(",") if s]
    cases, unavailable = [], []
    with tempfile.TemporaryDirectory() as td:
        for name, opts in CONFIGS.items():
            if only and name not in only:
                continue
            pte, msg = export(name, opts, SMALL, Path(td))
            if pte is None:
                print(f"{name}: cannot export: {msg}")
                unavailable.append(f"{name}\t{' '.join(opts)}\t{msg}")
                continue
            dest = FIXTURES / f"llm_{name}"
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy(pte, dest / "model.pte")
            (dest / "prompt.txt").write_text(",".join(map(str, PROMPT)) + "\n")
            (dest / "ops.txt").write_text("\n".join(forward_ops(pte)) + "\n")
            try:
                logits, toks = reference(dest / "model.pte", args.steps)
            except Exception as e:  # the runtime refusing the program is a finding
                print(f"{name}: ExecuTorch runtime failed: {e}")
                unavailable.append(f"{name}\t{' '.join(opts)}\tExecuTorch runtime: {e}")
                shutil.rmtree(dest)
                continue
            np.save(dest / "et_logits.npy", logits)
            (dest / "et_tokens.txt").write_text("\n".join(map(str, toks)) + "\n")
            cases.append(f"{name}\t{' '.join(opts)}")
            print(
                f"{name}: {(dest / 'model.pte').stat().st_size} bytes, tokens {toks[:8]}..."
            )
    if only:  # keep the other rows of the index
        old = (FIXTURES / "llm_cases.txt").read_text().splitlines()
        cases = [c for c in old if c.split("\t")[0] not in only] + cases
        old = (FIXTURES / "llm_unavailable.txt").read_text().splitlines()
        unavailable = [u for u in old if u.split("\t")[0] not in only] + unavailable
    (FIXTURES / "llm_cases.txt").write_text("\n".join(cases) + "\n")
    (FIXTURES / "llm_unavailable.txt").write_text("\n".join(unavailable) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
