#!/usr/bin/env python3
"""Exports the low-bit fixtures (tests/fixtures/lowbit_cases.txt) with the real
exporter (torch.export -> to_edge -> to_executorch) and pterun.lowbit's
torch.library registrations of torchao's low-bit operators. Seeded and
deterministic: rerun it to regenerate every file.

Cases:
  ops_{n}bit   one program per bit width n = 1..8 with every
               torchao::_linear_8bit_act_{n}bit_weight combination of group
               size (16, 32, 64), weight zero points (no/yes) and bias
               (no/yes) -- 12 linears with n = 20 (a partial 8-column tile),
               k = 64 -- plus _embedding_{n}bit (group sizes 32 and 64, with
               zero points) and _shared_embedding_{n}bit on int64 indices.
               Also rows that are constant, all positive and all negative
               (the activation zero-point cases of docs/lowbit.md).
               Reference: pterun.lowbit's PyTorch implementation, which
               mirrors the C arithmetic: outputs must be byte-identical
               (rtol 0, atol 0).
  wide_{n}bit  n = 3, 4, 8: k = 1024 with group sizes 128 (no zeros) and
               1024 (zeros), bias: many k-chunks per group. Byte-identical.
  tfm_{b}bit   a small transformer (embedding, 2 blocks of attention + MLP,
               tied-free head) quantized with pterun.lowbit.quantize_ at
               b = 2, 3, 4, 8 bits, group size 32. Reference: eager PyTorch on
               the same quantized model (the low-bit ops are the references
               above; layer norm, softmax and the float matmuls differ from
               pterun's portable kernels by float32 summation order, and a
               last-bit difference may move one activation code):
               rtol 1e-4, atol 1e-4.

ExecuTorch's own runtime has no kernels for these operators on x86-64 (they
are built only for arm64), so every reference is eager.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import torch

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
INDEX = FIXTURES / "lowbit_cases.txt"

sys.path.insert(0, str(REPO_ROOT / "tools"))
import fixturekit as fk

LB = fk.load_lowbit()
LINEAR_COMBOS = [(gs, hz, hb) for gs in (16, 32, 64) for hz in (0, 1) for hb in (0, 1)]


class OpsModel(torch.nn.Module):
    """Every operator combination of one bit width, on packed constants."""

    def __init__(self, nbit: int, gen: torch.Generator) -> None:
        super().__init__()
        self.nbit, self.n, self.k = nbit, 20, 64
        lo, hi = -(1 << (nbit - 1)), 1 << (nbit - 1)
        for i, (gs, hz, hb) in enumerate(LINEAR_COMBOS):
            g = self.k // gs
            q = torch.randint(lo, hi, (self.n, self.k), generator=gen, dtype=torch.int8)
            s = torch.rand(self.n, g, generator=gen) * 0.1 + 0.01
            z = (
                torch.randint(lo, hi, (self.n, g), generator=gen, dtype=torch.int8)
                if hz
                else None
            )
            b = torch.randn(self.n, generator=gen) if hb else None
            self.register_buffer(f"w{i}", LB.pack_linear(q, s, z, gs, b, nbit))
        self.vocab, self.dim = 10, 96  # 96 = a 64-value and a 32-value chunk
        q = torch.randint(
            lo, hi, (self.vocab, self.dim), generator=gen, dtype=torch.int8
        )
        self.register_buffer("emb", LB.pack_embedding(q, nbit))
        for gs in (32, 96):
            g = self.dim // gs
            self.register_buffer(
                f"es{gs}", torch.rand(self.vocab, g, generator=gen) + 0.1
            )
            self.register_buffer(
                f"ez{gs}",
                torch.randint(lo, hi, (self.vocab, g), generator=gen, dtype=torch.int8),
            )

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> list[torch.Tensor]:
        ops = torch.ops.torchao
        lin = getattr(ops, f"_linear_8bit_act_{self.nbit}bit_weight")
        emb = getattr(ops, f"_embedding_{self.nbit}bit")
        sh = getattr(ops, f"_shared_embedding_{self.nbit}bit")
        outs = [
            lin(x, getattr(self, f"w{i}"), gs, self.n, self.k)
            for i, (gs, _, _) in enumerate(LINEAR_COMBOS)
        ]
        for gs in (32, 96):
            outs.append(
                emb(
                    self.emb,
                    self.vocab,
                    self.dim,
                    getattr(self, f"es{gs}"),
                    getattr(self, f"ez{gs}"),
                    idx,
                )
            )
        # tied embedding: rows of the group-size-32 linear with zeros and bias
        outs.append(sh(self.w7, 32, self.n, self.k, idx * 2 + 1))
        outs.append(sh(self.w4, 32, self.n, self.k, idx))
        return outs


def ops_case(nbit: int):
    gen = torch.Generator().manual_seed(100 + nbit)
    model = OpsModel(nbit, gen)
    x = torch.randn(6, 64, generator=gen)
    x[3] = 0.75  # constant row
    x[4] = x[4].abs() + 0.5  # all positive (torchao's int8 zero point would wrap)
    x[5] = -x[5].abs() - 0.5  # all negative
    idx = torch.tensor([3, 0, 9, 5], dtype=torch.int64)
    return model, (x, idx), 0.0, 0.0


class WideModel(torch.nn.Module):
    """Long k (many 16-value chunks per group): group sizes 128 and 1024."""

    def __init__(self, nbit: int, gen: torch.Generator) -> None:
        super().__init__()
        self.nbit, self.n, self.k = nbit, 24, 1024
        lo, hi = -(1 << (nbit - 1)), 1 << (nbit - 1)
        for i, gs in enumerate((128, 1024)):
            g = self.k // gs
            q = torch.randint(lo, hi, (self.n, self.k), generator=gen, dtype=torch.int8)
            s = torch.rand(self.n, g, generator=gen) * 0.01 + 0.001
            z = torch.randint(lo, hi, (self.n, g), generator=gen, dtype=torch.int8)
            b = torch.randn(self.n, generator=gen)
            self.register_buffer(
                f"w{i}", LB.pack_linear(q, s, z if i else None, gs, b, nbit)
            )

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        lin = getattr(torch.ops.torchao, f"_linear_8bit_act_{self.nbit}bit_weight")
        return [
            lin(x, self.w0, 128, self.n, self.k),
            lin(x, self.w1, 1024, self.n, self.k),
        ]


def wide_case(nbit: int):
    gen = torch.Generator().manual_seed(200 + nbit)
    x = torch.randn(3, 1024, generator=gen) * 4
    return WideModel(nbit, gen), (x,), 0.0, 0.0


class Block(torch.nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (
            a.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
            for a in (q, k, v)
        )
        att = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class TinyTransformer(torch.nn.Module):
    def __init__(
        self, vocab: int = 64, dim: int = 64, layers: int = 2, heads: int = 4
    ) -> None:
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, dim)
        self.blocks = torch.nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def tfm_case(bits: int):
    torch.manual_seed(7)
    model = TinyTransformer().eval()
    LB.quantize_(model, bits=bits, group_size=32, has_zeros=bits in (3, 8))
    gen = torch.Generator().manual_seed(11)
    idx = torch.randint(0, 64, (1, 12), generator=gen)
    return model, (idx,), 1e-4, 1e-4


CASES = {f"ops_{n}bit": (lambda n=n: ops_case(n)) for n in range(1, 9)}
CASES.update({f"wide_{n}bit": (lambda n=n: wide_case(n)) for n in (3, 4, 8)})
CASES.update({f"tfm_{b}bit": (lambda b=b: tfm_case(b)) for b in (2, 3, 4, 8)})


def export_one(name: str) -> tuple[str, int, int, float, float]:
    from executorch.exir import EdgeCompileConfig, to_edge

    module, inputs, rtol, atol = CASES[name]()
    eager = fk.run_eager(module, inputs, fresh_copy=False, flatten=fk.tensor_leaves)
    ep = torch.export.export(copy.deepcopy(module), inputs, strict=False)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    prog = edge.to_executorch()
    ops = fk.operator_set(prog)
    out_dir = fk.case_dir(FIXTURES / "lowbit", name)
    fk.write_program(out_dir, bytes(prog.buffer))
    fk.save_arrays(out_dir, "forward", "input", inputs)
    fk.save_arrays(out_dir, "forward", "eager", eager)
    print(f"{name}: {len(eager)} outputs, ops {[o for o in ops if 'torchao' in o]}")
    if not any("torchao::_" in o for o in ops):
        raise RuntimeError(f"{name}: no low-bit operator in the program: {ops}")
    return name, len(inputs), len(eager), rtol, atol


HEADER = """\
# pterun low-bit fixture index, generated by tools/export_lowbit.py - do not edit.
# Columns: name dir method n_inputs n_outputs rtol atol data ref (as tests/fixtures/cases.txt)
#   ops_*: libpterun_kernels_lowbit against pterun.lowbit's PyTorch references
#          (same arithmetic): byte-identical, rtol 0 atol 0.
#   tfm_*: a quantized transformer against eager PyTorch; float32 summation
#          order in layer norm/softmax/matmul may move one activation code.
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    fresh: dict[str, list[str]] = {}
    for name in names:
        n, nin, nout, rtol, atol = export_one(name)
        row = fk.index_row(
            n, f"lowbit/{n}", "forward", nin, nout, rtol, atol, ref="eager"
        )
        fresh[n] = [row]
    # rows of the cases not exported now are kept
    fk.update_index(INDEX, HEADER, fresh, list(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
