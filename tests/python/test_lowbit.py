"""pterun.lowbit: torchao's packed format and the PyTorch references.

The packer is checked against quantized-ops.md 8.2 and against an independent
reading of the layout (unpack), the references against the documented
activation-quantization vectors. The C kernels are compared with these
references operator by operator in the lowbit fixture cases (ctest
fixture.ops_*bit / fixture.tfm_*bit, from tools/export_lowbit.py).
"""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch  # a missing torch is a failure, not a skip

pytestmark = pytest.mark.torch

REPO_ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    path = REPO_ROOT / "python" / "pterun" / "lowbit.py"
    spec = importlib.util.spec_from_file_location("pterun_lowbit_test", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["pterun_lowbit_test"] = mod
    spec.loader.exec_module(mod)
    return mod


LB = _load()


def test_chunk_vectors() -> None:
    q4 = np.array([(i % 16) - 8 for i in range(32)])
    assert (
        LB.pack_chunks(4, 32, q4).tobytes().hex() == "00112233445566778899aabbccddeeff"
    )
    q2 = np.array([(i % 4) - 2 for i in range(32)])
    assert LB.pack_chunks(2, 32, q2).tobytes().hex() == "0055aaff0055aaff"
    q1 = np.array([-1 if (i // 16) % 2 == 0 else 0 for i in range(128)])
    assert LB.pack_chunks(1, 128, q1).tobytes() == b"\x55" * 16


@pytest.mark.parametrize("nbit", range(1, 9))
def test_chunk_round_trip(nbit: int) -> None:
    rng = np.random.default_rng(nbit)
    for count in (32, 64, 128):
        q = rng.integers(-(1 << (nbit - 1)), 1 << (nbit - 1), size=(5, count))
        packed = LB.pack_chunks(nbit, count, q)
        assert packed.shape == (5, count * nbit // 8)
        assert (LB.unpack_chunks(nbit, count, packed) == q).all()


def test_linear_header_and_layout() -> None:
    gen = torch.Generator().manual_seed(0)
    q = torch.randint(-8, 8, (10, 64), generator=gen, dtype=torch.int8)
    s = torch.rand(10, 2, generator=gen)
    z = torch.randint(-3, 3, (10, 2), generator=gen, dtype=torch.int8)
    b = torch.randn(10, generator=gen)
    p = LB.pack_linear(q, s, z, 32, b, 4)
    raw = p.numpy().view(np.uint8)
    assert raw[:32].tobytes().hex() == (
        "381a000001000000040000000100000001000000080000001000000002000000"
    )
    assert raw[32:64].tobytes() == bytes(32)
    # 64 + ceil(N/8)*8*(K*n/8 + 8G + 4G + 4)
    assert raw.size == 64 + 2 * 8 * (64 * 4 // 8 + 8 * 2 + 4 * 2 + 4)
    # first chunk: column 0..7 codes 0..7 then 8..15, biased by 8, 4-bit layout
    first = LB.unpack_chunks(4, 128, raw[64 : 64 + 64])
    want = q[:8, :16].reshape(8, 2, 8).permute(1, 0, 2).reshape(128).numpy()
    assert (first == want).all()
    scales = struct.unpack("<8f", raw[64 + 128 : 64 + 160].tobytes())
    assert scales == tuple(float(v) for v in s[:8, 0])
    sums = struct.unpack("<8i", raw[64 + 160 : 64 + 192].tobytes())
    assert sums == tuple(int(v) for v in q[:8, :32].sum(1, dtype=torch.int32))
    u = LB.unpack_linear(p, 4, 10, 64, 32)
    assert torch.equal(u["codes"], q.long())
    assert torch.equal(u["scales"], s)
    assert torch.equal(u["zeros"], z.long())
    assert torch.equal(u["bias"], b)


def test_embedding_header() -> None:
    q = torch.zeros(3, 96, dtype=torch.int8)
    p = LB.pack_embedding(q, 4).numpy().view(np.uint8)
    assert p[:24].tobytes().hex() == "381a00000200000001000000040000002000000080000000"
    assert p.size == 64 + 3 * 96 * 4 // 8


def test_activation_quantization_vectors() -> None:
    codes, scale, zero = LB.quantize_activations(
        torch.tensor(
            [[-1.0, 0.5, 2.0, 0.25], [1.0, 2.0, 3.0, 4.0], [0.75, 0.75, 0.75, 0.75]]
        )
    )
    assert codes[0].tolist() == [-128, 0, 127, -22] and int(zero[0]) == -43
    assert float(scale[0]) == float(np.float32(3.0) / np.float32(255.0))
    # torchao would store -213 as int8 43 and quantize every value to 127
    assert int(zero[1]) == -213 and codes[1].tolist() == [-128, -43, 42, 127]
    # constant row: quantized over [0, 0.75], exact
    assert codes[2].tolist() == [127] * 4 and int(zero[2]) == -128


def test_fma_emulation_is_single_rounding() -> None:
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.standard_normal(20000).astype(np.float32))
    y = torch.from_numpy((rng.standard_normal(20000) * 100).astype(np.float32))
    z = torch.from_numpy(rng.integers(-128, 128, 20000).astype(np.float32))
    got = LB._fma_f32(x, y, z).numpy()
    from fractions import Fraction

    for i in range(0, 20000, 97):
        exact = Fraction(float(x[i])) * Fraction(float(y[i])) + Fraction(float(z[i]))
        r = np.float32(got[i])
        lo, hi = (
            np.nextafter(r, np.float32(-np.inf)),
            np.nextafter(r, np.float32(np.inf)),
        )
        err = abs(Fraction(float(r)) - exact)
        assert err <= abs(Fraction(float(lo)) - exact) and err <= abs(
            Fraction(float(hi)) - exact
        )


def test_quantize_replaces_layers_and_exports() -> None:
    LB.register()
    model = torch.nn.Sequential(torch.nn.Embedding(16, 64), torch.nn.Linear(64, 12))
    ref = model(torch.tensor([[1, 5, 7]]))
    LB.quantize_(model, bits=4, group_size=32)
    assert isinstance(model[0], LB.LowbitEmbedding) and isinstance(
        model[1], LB.LowbitLinear
    )
    out = model(torch.tensor([[1, 5, 7]]))
    assert out.shape == ref.shape
    assert float((out - ref).abs().max()) < 0.25 * float(
        ref.abs().max()
    )  # 4-bit weights
    ep = torch.export.export(model, (torch.tensor([[1, 5, 7]]),), strict=False)
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "torchao._embedding_4bit.default" in targets
    assert "torchao._linear_8bit_act_4bit_weight.default" in targets
