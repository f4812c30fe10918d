#!/usr/bin/env python3
"""Exports the one-operator fixtures of libpterun_kernels_llm that need a real
program (tests/fixtures/llm_op_cases.txt) with the real exporter
(torch.export -> to_edge -> to_executorch) and runs them with ExecuTorch's
runtime (portable_lib pybindings, whose kernel library registers the LLM
custom ops). Seeded and deterministic: rerun it to regenerate every file.

Cases:
  moe   llama::quantized_moe_ffn.out twice: 4-bit weights, sigmoid routing
        with an expert bias and route_scale 2.5 (top 2 of 4 experts), then
        8-bit weights with softmax routing (top 3 of 4); 5 tokens, dim 64,
        hidden 32, group size 32. The experts are quantized as ExecuTorch's
        source transform does (torchao symmetric per-group qparams) and packed
        in torchao's universal layout by pterun.lowbit.pack_linear (torchao's
        own packing op is not built for x86-64 in the torchao wheel; ExecuTorch's
        kernel unpacks the same bytes). References: ExecuTorch's runtime
        (et) and the op's eager CPU kernel (eager); both agree to ~1e-6.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
INDEX = FIXTURES / "llm_op_cases.txt"


sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixturekit as fk

LB = fk.load_lowbit()  # pterun.lowbit, loaded from the tree


def quantize(
    w: torch.Tensor, group_size: int, nbit: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """ExecuTorch's moe source transform: symmetric per-group torchao qparams."""
    from executorch.examples.models.llama.source_transformation.moe import (
        _symmetric_quantize_per_group,
    )

    return _symmetric_quantize_per_group(w, group_size, n_bit=nbit)


def pack_experts(w: torch.Tensor, group_size: int, nbit: int) -> torch.Tensor:
    """[E, N, K] float weights -> [E, packed_bytes] uint8, one blob per expert."""
    blobs = []
    for e in range(w.shape[0]):
        q, s = quantize(w[e], group_size, nbit)
        blobs.append(
            LB.pack_linear(q, s, None, group_size, None, nbit).view(torch.uint8)
        )
    return torch.stack(blobs)


class MoE(torch.nn.Module):
    def __init__(
        self,
        gen: torch.Generator,
        *,
        nbit: int,
        score: str,
        k: int,
        bias: bool,
        route_scale: float,
        e: int = 4,
        d: int = 64,
        f: int = 32,
        gs: int = 32,
    ):
        super().__init__()
        self.args = (k, e, f, d, gs, nbit, score, route_scale)
        w1 = torch.randn(e, f, d, generator=gen) * 0.2
        w3 = torch.randn(e, f, d, generator=gen) * 0.2
        w2 = torch.randn(e, d, f, generator=gen) * 0.2
        self.register_buffer("gate", torch.randn(e, d, generator=gen) * 0.3)
        self.register_buffer(
            "ebias", torch.randn(e, generator=gen) * 0.1 if bias else torch.empty(0)
        )
        self.register_buffer("w13", pack_experts(torch.cat([w1, w3], 1), gs, nbit))
        self.register_buffer("w2", pack_experts(w2, gs, nbit))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.llama.quantized_moe_ffn(
            x, self.gate, self.ebias, self.w13, self.w2, *self.args
        )


class MoECase(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(11)
        self.a = MoE(gen, nbit=4, score="sigmoid", k=2, bias=True, route_scale=2.5)
        self.b = MoE(gen, nbit=8, score="softmax", k=3, bias=False, route_scale=1.0)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        return [self.a(x), self.b(x)]


def moe_case():
    gen = torch.Generator().manual_seed(12)
    return MoECase(), (torch.randn(5, 64, generator=gen),), 1e-5, 1e-5


CASES = {"moe": moe_case}


def export_one(name: str) -> str:
    from executorch.exir import EdgeCompileConfig, to_edge
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401

    module, inputs, rtol, atol = CASES[name]()
    eager = fk.run_eager(module, inputs, fresh_copy=False, flatten=fk.tensor_leaves)
    ep = torch.export.export(module, inputs, strict=True)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    prog = edge.to_executorch()
    ops = fk.operator_set(prog)
    out_dir = fk.case_dir(FIXTURES, f"llm_op_{name}")
    pte, _ = fk.write_program(out_dir, bytes(prog.buffer))
    (out_dir / "ops.txt").write_text("".join(o + "\n" for o in ops))  # names only
    et = fk.run_executorch(pte, [], "forward", inputs)
    fk.save_arrays(out_dir, "forward", "input", inputs)
    fk.save_arrays(out_dir, "forward", "eager", eager)
    fk.save_arrays(out_dir, "forward", "et", et)
    worst = 0.0
    for a, b in zip(eager, et, strict=False):
        worst = max(worst, float((a - b).abs().max()))
    print(f"{name}: ops {ops}; max |eager - et| {worst:.3g}")
    if worst > atol:
        raise RuntimeError(f"{name}: eager and ExecuTorch differ by {worst}")
    dirname = f"llm_op_{name}"
    return fk.index_row(
        name, dirname, "forward", len(inputs), len(eager), rtol, atol, ref="et"
    )


HEADER = """\
# pterun LLM-operator fixture index, generated by tools/export_llm_ops.py - do not edit.
# Columns: name dir method n_inputs n_outputs rtol atol data ref (as tests/fixtures/cases.txt)
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    torch.manual_seed(0)
    fresh = {
        name: [export_one(name)]
        for name in CASES
        if not args.only or name in args.only.split(",")
    }
    # rows of the cases not exported now are kept
    fk.update_index(INDEX, HEADER, fresh, list(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
