"""torchao's low-bit (1..8-bit weight) operators without torchao's C++ extension.

pterun's ``libpterun_kernels_lowbit`` runs ``torchao::_linear_8bit_act_{n}bit_weight``,
``torchao::_embedding_{n}bit`` and ``torchao::_shared_embedding_{n}bit`` on any CPU.
This module is the export side, in pure PyTorch (it imports only torch and
numpy, not pterun's extension):

* :func:`pack_linear` / :func:`pack_embedding` write torchao's packed-weights
  format byte for byte (64-byte header; universal linear layout with 8-column
  tiles and 16-value k-chunks; the embedding layout);
* :func:`register` defines the functional and ``.out`` schemas with
  ``torch.library`` (reference implementations + fake kernels), so a model
  using them exports on x86-64 with the real exporter;
* :func:`quantize_` replaces ``nn.Linear`` / ``nn.Embedding`` layers.

The references reproduce the C kernels' arithmetic exactly (docs/lowbit.md),
including the two documented departures from torchao: the activation zero
point is not wrapped to int8, and a constant activation row is quantized over
``[min(x, 0), max(x, 0)]``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

__all__ = [
    "LowbitEmbedding",
    "LowbitLinear",
    "pack_embedding",
    "pack_linear",
    "quantize_",
    "quantize_activations",
    "register",
    "unpack_chunks",
]

MAGIC = 6712
HEADER_BYTES = 64
NR, KR, SR = 8, 16, 2


# ---- bit layouts --------------------------------------------------------------------
# torchao packs 32-, 64- or 128-value chunks of unsigned n-bit values with
# width-specific layouts (torchao/csrc/cpu/torch_free_kernels/fallback/bitpacking).
# Each is a bit permutation; _pack_scalar writes it, and the (byte, bit) map of
# every value bit is derived from it once, for vectorised packing/unpacking.


def _pack_scalar(nbit: int, u: list[int]) -> list[int]:
    count = len(u)
    out = [0] * (count * nbit // 8)
    if nbit == 8:
        return list(u)
    if nbit == 1:
        if count == 128:
            for i in range(16):
                out[i] = sum(u[i + 16 * t] << (7 - t) for t in range(8))
        elif count == 64:
            for i in range(8):
                lo = sum(u[i + 16 * t] << (3 - t) for t in range(4))
                hi = sum(u[i + 8 + 16 * t] << (3 - t) for t in range(4))
                out[i] = lo | hi << 4
        else:
            for i in range(32):
                out[i >> 3] |= u[i] << (7 - (i & 7))
        return out
    if nbit == 2:
        st = 8 if count == 32 else 16
        for blk in range(2 if count == 128 else 1):
            for i in range(st):
                out[16 * blk + i] = sum(
                    u[64 * blk + i + st * t] << (6 - 2 * t) for t in range(4)
                )
        return out
    if nbit == 3:

        def pack8(base_o: int, base_u: int, st: int) -> None:
            v = [u[base_u + st * t] for t in range(8)]
            out[base_o] = (v[6] & 3) << 6 | v[0] << 3 | v[1]
            out[base_o + st] = (v[7] & 3) << 6 | v[2] << 3 | v[3]
            out[base_o + 2 * st] = (v[6] & 4) << 5 | (v[7] & 4) << 4 | v[4] << 3 | v[5]

        if count == 32:
            for i in range(4):
                pack8(3 * i, 8 * i, 1)
        else:
            for i in range(count // 8):
                pack8(i, i, count // 8)
        return out
    if nbit == 4:
        for blk in range(count // 32):
            for i in range(16):
                out[16 * blk + i] = u[32 * blk + i] | u[32 * blk + i + 16] << 4
        return out
    if nbit == 5:

        def pack8_5(o: int, b: int) -> None:
            v = u[b : b + 8]
            for j in range(4):
                out[o + j] = (v[2 * j] | v[2 * j + 1] << 5) & 255
            out[o + 4] = sum((v[2 * j + 1] >> 3) << (2 * j) for j in range(4))

        if count == 32:
            for i in range(4):
                pack8_5(5 * i, 8 * i)
        elif count == 64:
            for i in range(16):
                out[i] = (u[i] | u[i + 16] << 5) & 255
                out[i + 16] = (u[i + 32] | u[i + 48] << 5) & 255
            for i in range(8):
                out[32 + i] = (
                    (u[16 + i] >> 3)
                    | (u[24 + i] >> 3) << 2
                    | (u[48 + i] >> 3) << 4
                    | (u[56 + i] >> 3) << 6
                )
        else:
            for i in range(16):
                for r in range(4):
                    out[i + 16 * r] = (u[i + 32 * r] | u[i + 32 * r + 16] << 5) & 255
                out[64 + i] = sum(
                    (u[16 + 32 * r + i] >> 3) << (2 * r) for r in range(4)
                )
        return out
    if nbit == 6:
        st = 8 if count == 32 else 16
        for blk in range(2 if count == 128 else 1):
            o, b = 48 * blk, 64 * blk
            for i in range(st):
                u3 = u[b + i + 3 * st]
                out[o + i] = u[b + i] | (u3 & 3) << 6
                out[o + i + st] = u[b + i + st] | (u3 & 12) << 4
                out[o + i + 2 * st] = u[b + i + 2 * st] | (u3 & 48) << 2
        return out
    # nbit == 7: rows of `st` values; row 7 is spread over the other rows' MSBs
    blocks, st = (4, 1) if count == 32 else (1, count // 8)
    for blk in range(blocks):
        o, b = 7 * st * blk, 8 * st * blk
        for j in range(st):
            top = u[b + 7 * st + j]
            for r in range(7):
                out[o + r * st + j] = u[b + r * st + j] | ((top >> r) & 1) << 7
    return out


@functools.cache
def _bit_map(nbit: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(byte index, bit index) of bit b of value i, arrays [count, nbit]."""
    nbytes = count * nbit // 8
    byte = np.zeros((count, nbit), np.int64)
    bit = np.zeros((count, nbit), np.int64)
    for i in range(count):
        for b in range(nbit):
            u = [0] * count
            u[i] = 1 << b
            packed = _pack_scalar(nbit, u)
            hits = [(j, v) for j, v in enumerate(packed) if v]
            assert len(hits) == 1 and hits[0][1] & (hits[0][1] - 1) == 0, (nbit, count)
            byte[i, b], bit[i, b] = hits[0][0], hits[0][1].bit_length() - 1
    assert len(set(zip(byte.ravel().tolist(), bit.ravel().tolist()))) == nbytes * 8
    return byte, bit


def _bias(nbit: int) -> int:
    return 0 if nbit == 8 else 1 << (nbit - 1)


def pack_chunks(nbit: int, count: int, codes: np.ndarray) -> np.ndarray:
    """Packs signed codes [..., count] into torchao's chunk layout [..., count*nbit/8]."""
    u = (codes.astype(np.int64) + _bias(nbit)) & 255
    byte, bit = _bit_map(nbit, count)
    out = np.zeros(codes.shape[:-1] + (count * nbit // 8,), np.int64)
    for b in range(nbit):
        contrib = ((u >> b) & 1) << bit[:, b]
        for i in range(count):
            out[..., byte[i, b]] |= contrib[..., i]
    return out.astype(np.uint8)


def unpack_chunks(nbit: int, count: int, packed: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pack_chunks`: signed codes [..., count] (int64)."""
    byte, bit = _bit_map(nbit, count)
    p = packed.astype(np.int64)
    u = np.zeros(packed.shape[:-1] + (count,), np.int64)
    for b in range(nbit):
        u |= ((p[..., byte[:, b]] >> bit[:, b]) & 1) << b
    if nbit == 8:
        return np.where(u >= 128, u - 256, u)
    return u - _bias(nbit)


# ---- packers --------------------------------------------------------------------------


def _header(words: list[int]) -> np.ndarray:
    return np.array(words + [0] * (16 - len(words)), "<i4").view(np.uint8)


def _bytes(a: np.ndarray, dtype: str) -> np.ndarray:
    return np.ascontiguousarray(a.astype(dtype)).view(np.uint8)


def _np(t: torch.Tensor | np.ndarray) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)


def pack_linear(
    weight_qvals: torch.Tensor,
    weight_scales: torch.Tensor,
    weight_zeros: torch.Tensor | None,
    group_size: int,
    bias: torch.Tensor | None,
    nbit: int,
) -> torch.Tensor:
    """torchao's universal linear layout (format type 1) as an int8 1-D tensor.

    ``weight_qvals`` int8 [N, K] in [-2^(n-1), 2^(n-1)); ``weight_scales`` float32
    [N, K/group_size] (or flat); ``weight_zeros`` int8 like the scales or None;
    ``bias`` float32 [N] or None. Same bytes as torchao's
    ``_pack_8bit_act_{n}bit_weight``.
    """
    q = _np(weight_qvals).astype(np.int64)
    n, k = q.shape
    if not 1 <= nbit <= 8 or group_size % 16 or k % group_size:
        raise ValueError(
            "need 1 <= nbit <= 8, group_size % 16 == 0, k % group_size == 0"
        )
    lo, hi = -(1 << (nbit - 1)), (1 << (nbit - 1)) - 1
    if q.min() < lo or q.max() > hi:
        raise ValueError(f"weight_qvals outside [{lo}, {hi}]")
    g = k // group_size
    sc = _np(weight_scales).astype(np.float32).reshape(n, g)
    zp = (
        None
        if weight_zeros is None
        else _np(weight_zeros).astype(np.int64).reshape(n, g)
    )
    bs = None if bias is None else _np(bias).astype(np.float32).reshape(n)
    tiles = (n + NR - 1) // NR
    npad = tiles * NR
    qp = np.zeros((npad, k), np.int64)
    qp[:n] = q
    scp = np.zeros((npad, g), np.float32)
    scp[:n] = sc
    # chunks [tile, group, chunk, 128]: first 8 k-values of the 8 columns, then the last 8
    c = qp.reshape(tiles, NR, g, group_size // 16, SR, 8).transpose(0, 2, 3, 4, 1, 5)
    codes = pack_chunks(nbit, 128, c.reshape(tiles, g, group_size // 16, 128))
    codes = codes.reshape(tiles, g, group_size * nbit)
    sums = qp.reshape(tiles, NR, g, group_size).sum(-1).transpose(0, 2, 1)
    parts = [
        codes,
        _bytes(scp.reshape(tiles, NR, g).transpose(0, 2, 1), "<f4"),
        _bytes(sums, "<i4"),
    ]
    if zp is not None:
        zpp = np.zeros((npad, g), np.int64)
        zpp[:n] = zp
        parts.append(_bytes(zpp.reshape(tiles, NR, g).transpose(0, 2, 1), "<i4"))
    body = np.concatenate([np.ascontiguousarray(p) for p in parts], axis=2).reshape(
        tiles, -1
    )
    if bs is not None:
        bp = np.zeros(npad, np.float32)
        bp[:n] = bs
        body = np.concatenate([body, _bytes(bp.reshape(tiles, NR), "<f4")], 1)
    head = _header(
        [MAGIC, 1, nbit, int(zp is not None), int(bs is not None), NR, KR, SR]
    )
    out = np.concatenate([head, body.reshape(-1)])
    return torch.from_numpy(out.view(np.int8).copy())


def pack_embedding(weight_qvals: torch.Tensor, nbit: int) -> torch.Tensor:
    """torchao's embedding layout (format type 2): each row in chunks of 128
    values, then one of 64 and one of 32 as needed (D a multiple of 32)."""
    q = _np(weight_qvals).astype(np.int64)
    _, d = q.shape
    if d % 32:
        raise ValueError("embedding_dim must be a multiple of 32")
    rows, j = [], 0
    while j < d:
        cnt = 128 if d - j >= 128 else (64 if d - j >= 64 else 32)
        rows.append(pack_chunks(nbit, cnt, q[:, j : j + cnt]))
        j += cnt
    body = np.concatenate(rows, axis=1).reshape(-1)
    out = np.concatenate([_header([MAGIC, 2, 1, nbit, 32, 128]), body])
    return torch.from_numpy(out.view(np.int8).copy())


# ---- readers of the packed formats (used by the references) ----------------------------


def _words(packed: torch.Tensor) -> list[int]:
    b = _np(packed).view(np.uint8)
    if b.size < HEADER_BYTES:
        raise ValueError("packed weights shorter than the 64-byte header")
    return b[:HEADER_BYTES].view("<i4").tolist()


@functools.lru_cache(maxsize=64)
def _unpack_linear_cached(
    key: bytes, nbit: int, n: int, k: int, group_size: int
) -> tuple[np.ndarray, ...]:
    b = np.frombuffer(key, np.uint8)
    w = b[:HEADER_BYTES].view("<i4").tolist()
    if w[:3] != [MAGIC, 1, nbit] or w[5:8] != [NR, KR, SR]:
        raise ValueError(f"not a universal {nbit}-bit linear buffer")
    hz, hb = w[3], w[4]
    g, tiles = k // group_size, (n + NR - 1) // NR
    per_group = group_size * nbit + 64 + 32 * hz
    tile_bytes = g * per_group + 32 * hb
    if b.size != HEADER_BYTES + tiles * tile_bytes:
        raise ValueError("packed weights size does not match n, k, group_size")
    t = b[HEADER_BYTES:].reshape(tiles, tile_bytes)
    grp = t[:, : g * per_group].reshape(tiles, g, per_group)
    codes = unpack_chunks(
        nbit,
        128,
        grp[:, :, : group_size * nbit].reshape(tiles, g, group_size // 16, 16 * nbit),
    )  # [tiles, g, chunk, 128] -> [tiles*8, k]
    codes = codes.reshape(tiles, g, group_size // 16, SR, NR, 8).transpose(
        0, 4, 1, 2, 3, 5
    )
    codes = codes.reshape(tiles * NR, k)
    off = group_size * nbit
    scales = np.ascontiguousarray(grp[:, :, off : off + 32]).view(
        "<f4"
    )  # [tiles, g, 8]
    sums = np.ascontiguousarray(grp[:, :, off + 32 : off + 64]).view("<i4")
    zeros = (
        np.ascontiguousarray(grp[:, :, off + 64 : off + 96]).view("<i4")
        if hz
        else np.zeros_like(sums)
    )
    bias = (
        np.ascontiguousarray(t[:, g * per_group :]).view("<f4").reshape(-1)
        if hb
        else np.zeros(tiles * NR, np.float32)
    )

    def cols(a: np.ndarray) -> np.ndarray:
        return a.transpose(0, 2, 1).reshape(tiles * NR, g)[:n]

    return (
        codes[:n],
        cols(scales),
        cols(sums),
        cols(zeros),
        bias[:n],
        np.array([hz, hb]),
    )


def unpack_linear(
    packed: torch.Tensor, nbit: int, n: int, k: int, group_size: int
) -> dict[str, torch.Tensor]:
    """Decodes a universal linear buffer: codes [n, k], scales/sums/zeros
    [n, k/group_size] (as stored), bias [n] (zeros when absent)."""
    raw = _np(packed).view(np.uint8).tobytes()
    codes, scales, sums, zeros, bias, flags = _unpack_linear_cached(
        raw, nbit, n, k, group_size
    )
    return {
        "codes": torch.from_numpy(codes.copy()),
        "scales": torch.from_numpy(scales.copy()),
        "sums": torch.from_numpy(sums.astype(np.int64)),
        "zeros": torch.from_numpy(zeros.astype(np.int64)),
        "bias": torch.from_numpy(bias.copy()),
        "has_zeros": torch.tensor(bool(flags[0])),
        "has_bias": torch.tensor(bool(flags[1])),
    }


# ---- activation quantization (exact float32 emulation of the C kernel) -----------------


def _round_half_away(x: torch.Tensor) -> torch.Tensor:
    t = torch.trunc(x)
    return torch.where((x - t).abs() >= 0.5, t + torch.sign(x), t)


def _fma_f32(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """float32 fma(x, y, z) rounded once, computed exactly in float64: x*y is
    exact in double; TwoSum gives hi + lo == x*y + z exactly; hi is then
    rounded to float32 with lo breaking float32 ties."""
    p = x.double() * y.double()
    zd = z.double()
    hi = p + zd
    bb = hi - p
    lo = (p - (hi - bb)) + (zd - bb)
    r = hi.float()
    d = hi - r.double()
    toward = torch.where(
        d > 0, torch.full_like(r, float("inf")), torch.full_like(r, -float("inf"))
    )
    nb = torch.nextafter(r, toward)
    mid = (d != 0) & ((nb.double() - r.double()) == 2 * d)
    return torch.where(mid & (lo * d > 0), nb, r)


def quantize_activations(
    x: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-row int8 quantization of float32 [m, k]: (codes int64 [m, k],
    scale float32 [m], zero int64 [m]), as libpterun_kernels_lowbit does it."""
    x = x.float()
    vmin = x.amin(dim=1)
    vmax = x.amax(dim=1)
    degenerate = ~(vmin < vmax)
    vmin = torch.where(degenerate, torch.clamp(vmin, max=0.0), vmin)
    vmax = torch.where(degenerate, torch.clamp(vmax, min=0.0), vmax)
    zero_row = ~(vmin < vmax)
    scale = (vmax - vmin) / 255.0
    safe = torch.where(zero_row, torch.ones_like(scale), scale)
    r = _round_half_away((vmin / safe).double()).clamp(-(2.0**30), 2.0**30)
    zero = torch.where(zero_row, torch.zeros_like(r), -128 - r).to(torch.int64)
    scale = torch.where(zero_row, torch.zeros_like(scale), scale)
    inv = (1.0 / (scale.double() + 1e-16)).float()
    v = _fma_f32(x, inv[:, None].expand_as(x), zero.float()[:, None].expand_as(x))
    v = torch.nan_to_num(v, nan=-128.0).clamp(-128.0, 127.0)
    return torch.round(v).to(torch.int64), scale, zero


# ---- reference implementations -------------------------------------------------------------


def linear_reference(
    activations: torch.Tensor,
    packed: torch.Tensor,
    group_size: int,
    n: int,
    k: int,
    nbit: int,
) -> torch.Tensor:
    """The C kernel's arithmetic in PyTorch (bit-identical float32 output)."""
    w = unpack_linear(packed, nbit, n, k, group_size)
    m, g = activations.shape[0], k // group_size
    qa, a_scale, a_zero = quantize_activations(activations)
    qa3 = qa.reshape(m, g, group_size)
    dot = torch.einsum("mgk,ngk->mng", qa3, w["codes"].reshape(n, g, group_size))
    asum = qa3.sum(-1)  # [m, g]
    za = a_zero[:, None, None]
    t = dot - za * w["sums"][None]
    if bool(w["has_zeros"]):
        wz = w["zeros"][None]
        t = t - wz * asum[:, None, :] + group_size * wz * za
    sf = w["scales"][None] * a_scale[:, None, None]  # float32 [m, n, g]
    res = torch.zeros(m, n, dtype=torch.float32)
    for gi in range(g):
        res = res + sf[:, :, gi] * t[:, :, gi].to(torch.float32)
    if bool(w["has_bias"]):
        res = res + w["bias"][None]
    return res


def embedding_reference(
    packed: torch.Tensor,
    num_embeddings: int,
    embedding_dim: int,
    weight_scales: torch.Tensor,
    weight_zeros: torch.Tensor,
    indices: torch.Tensor,
    nbit: int,
) -> torch.Tensor:
    b = _np(packed).view(np.uint8)
    if _words(packed)[:6] != [MAGIC, 2, 1, nbit, 32, 128]:
        raise ValueError(f"not a {nbit}-bit torchao embedding buffer")
    d = embedding_dim
    rows = b[HEADER_BYTES:].reshape(num_embeddings, d * nbit // 8)
    idx = _np(indices).astype(np.int64)
    sel = rows[idx]
    parts, j = [], 0
    while j < d:
        cnt = 128 if d - j >= 128 else (64 if d - j >= 64 else 32)
        parts.append(
            unpack_chunks(nbit, cnt, sel[:, j * nbit // 8 : (j + cnt) * nbit // 8])
        )
        j += cnt
    codes = torch.from_numpy(np.concatenate(parts, axis=1)).float()
    g = weight_scales.shape[1]
    gi = torch.arange(d) // (d // g)
    s = weight_scales[torch.from_numpy(idx)][:, gi].float()
    z = weight_zeros[torch.from_numpy(idx)][:, gi].float()
    return (codes - z) * s


def shared_embedding_reference(
    packed: torch.Tensor,
    group_size: int,
    n: int,
    k: int,
    indices: torch.Tensor,
    nbit: int,
) -> torch.Tensor:
    w = unpack_linear(packed, nbit, n, k, group_size)
    idx = indices.long()
    gi = torch.arange(k) // group_size
    s = w["scales"][idx][:, gi]
    z = w["zeros"][idx][:, gi].float() if bool(w["has_zeros"]) else torch.zeros(1)
    return (w["codes"][idx].float() - z) * s


# ---- torch.library registration ----------------------------------------------------------

_LIB: Any = None


def _copy_out(out: torch.Tensor, res: torch.Tensor) -> torch.Tensor:
    out.resize_(res.shape)
    out.copy_(res)
    return out


def register() -> None:
    """Defines torchao::_linear_8bit_act_{n}bit_weight, _embedding_{n}bit,
    _shared_embedding_{n}bit (functional and .out, n = 1..8) with the
    reference implementations and fake kernels. Idempotent; ops that already
    exist (torchao's own C++ extension) are left alone."""
    global _LIB
    if _LIB is not None:
        return
    _LIB = torch.library.Library("torchao", "FRAGMENT")
    for nbit in range(1, 9):
        _register_width(_LIB, nbit)


def _exists(name: str) -> bool:
    try:
        torch._C._dispatch_find_schema_or_throw(f"torchao::{name}", "")
        return True
    except RuntimeError:
        return False


def _register_width(lib: Any, nbit: int) -> None:
    lin = f"_linear_8bit_act_{nbit}bit_weight"
    emb = f"_embedding_{nbit}bit"
    sh = f"_shared_embedding_{nbit}bit"
    lin_args = "Tensor activations, Tensor packed_weights, int group_size, int n, int k"
    emb_args = (
        "Tensor packed_weight_qvals, int num_embeddings, int embedding_dim, "
        "Tensor weight_scales, Tensor weight_zeros, Tensor indices"
    )
    sh_args = "Tensor packed_weights, int group_size, int n, int k, Tensor indices"

    def lin_ref(
        a: torch.Tensor, p: torch.Tensor, gs: int, n: int, k: int
    ) -> torch.Tensor:
        return linear_reference(a, p, gs, n, k, nbit)

    def emb_ref(p: torch.Tensor, v: int, d: int, s: torch.Tensor, z: torch.Tensor,
                i: torch.Tensor) -> torch.Tensor:  # fmt: skip
        return embedding_reference(p, v, d, s, z, i, nbit)

    def sh_ref(
        p: torch.Tensor, gs: int, n: int, k: int, i: torch.Tensor
    ) -> torch.Tensor:
        return shared_embedding_reference(p, gs, n, k, i, nbit)

    def lin_fake(
        a: torch.Tensor, p: torch.Tensor, gs: int, n: int, k: int
    ) -> torch.Tensor:
        return a.new_empty((a.shape[0], n), dtype=torch.float32)

    def emb_fake(p: torch.Tensor, v: int, d: int, s: torch.Tensor, z: torch.Tensor,
                 i: torch.Tensor) -> torch.Tensor:  # fmt: skip
        return s.new_empty((i.shape[0], d), dtype=torch.float32)

    def sh_fake(
        p: torch.Tensor, gs: int, n: int, k: int, i: torch.Tensor
    ) -> torch.Tensor:
        return p.new_empty((i.shape[0], k), dtype=torch.float32)

    for name, args, ref, fake in (
        (lin, lin_args, lin_ref, lin_fake),
        (emb, emb_args, emb_ref, emb_fake),
        (sh, sh_args, sh_ref, sh_fake),
    ):
        if not _exists(name):
            lib.define(f"{name}({args}) -> Tensor")
            lib.impl(name, ref, "CompositeExplicitAutograd")
            torch.library.register_fake(f"torchao::{name}", fake, lib=lib)
        if not _exists(f"{name}.out"):
            lib.define(f"{name}.out({args}, *, Tensor(a!) out) -> Tensor(a!)")

            def out_impl(*a: Any, out: torch.Tensor, _ref: Any = ref) -> torch.Tensor:
                return _copy_out(out, _ref(*a))

            def out_fake(*a: Any, out: torch.Tensor) -> torch.Tensor:
                return out

            lib.impl(f"{name}.out", out_impl, "CompositeExplicitAutograd")
            torch.library.register_fake(f"torchao::{name}.out", out_fake, lib=lib)


# ---- modules and quantize_ ------------------------------------------------------------------


def _quantize_groups(
    w: torch.Tensor, nbit: int, group_size: int, has_zeros: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Group-wise weight quantization to n bits: symmetric (scale = amax / (2^(n-1) - 0.5),
    as torchao) or asymmetric with int8 zero points."""
    rows, cols = w.shape
    g = w.float().reshape(rows, cols // group_size, group_size)
    qmin, qmax = -(1 << (nbit - 1)), (1 << (nbit - 1)) - 1
    eps = torch.finfo(torch.float32).eps
    if has_zeros:
        lo = g.amin(-1).clamp(max=0.0)
        hi = g.amax(-1).clamp(min=0.0)
        scale = ((hi - lo) / (qmax - qmin)).clamp(min=eps)
        zero = (qmin - torch.round(lo / scale)).clamp(qmin, qmax)
        q = torch.clamp(torch.round(g / scale[..., None]) + zero[..., None], qmin, qmax)
        return q.reshape(rows, cols).to(torch.int8), scale, zero.to(torch.int8)
    amax = g.abs().amax(-1)
    scale = (amax / ((qmax - qmin) / 2)).clamp(min=eps)
    q = torch.clamp(torch.round(g / scale[..., None]), qmin, qmax)
    return q.reshape(rows, cols).to(torch.int8), scale, None


class LowbitLinear(torch.nn.Module):
    """nn.Linear replaced by torchao::_linear_8bit_act_{n}bit_weight (packed weights
    in a buffer; activations of any rank, flattened to 2-D around the op)."""

    def __init__(self, linear: torch.nn.Linear, bits: int, group_size: int,
                 has_zeros: bool) -> None:  # fmt: skip
        super().__init__()
        self.bits, self.group_size = bits, group_size
        self.out_features, self.in_features = linear.weight.shape
        q, s, z = _quantize_groups(linear.weight.detach(), bits, group_size, has_zeros)
        b = None if linear.bias is None else linear.bias.detach().float()
        self.register_buffer(
            "packed_weights", pack_linear(q, s, z, group_size, b, bits)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        op = getattr(torch.ops.torchao, f"_linear_8bit_act_{self.bits}bit_weight")
        y = op(x.reshape(-1, self.in_features), self.packed_weights, self.group_size,
               self.out_features, self.in_features)  # fmt: skip
        return y.reshape(*x.shape[:-1], self.out_features)


class LowbitEmbedding(torch.nn.Module):
    """nn.Embedding replaced by torchao::_embedding_{n}bit."""

    def __init__(self, emb: torch.nn.Embedding, bits: int, group_size: int,
                 has_zeros: bool) -> None:  # fmt: skip
        super().__init__()
        self.bits = bits
        self.num_embeddings, self.embedding_dim = emb.weight.shape
        q, s, z = _quantize_groups(emb.weight.detach(), bits, group_size, has_zeros)
        self.register_buffer("packed_weight_qvals", pack_embedding(q, bits))
        self.register_buffer("weight_scales", s.float())
        self.register_buffer(
            "weight_zeros", torch.zeros_like(s, dtype=torch.int8) if z is None else z
        )

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        op = getattr(torch.ops.torchao, f"_embedding_{self.bits}bit")
        y = op(self.packed_weight_qvals, self.num_embeddings, self.embedding_dim,
               self.weight_scales, self.weight_zeros, idx.reshape(-1))  # fmt: skip
        return y.reshape(*idx.shape, self.embedding_dim)


def quantize_(
    model: torch.nn.Module,
    bits: int = 4,
    group_size: int = 32,
    *,
    has_zeros: bool = False,
    embeddings: bool = True,
    embedding_group_size: int | None = None,
) -> torch.nn.Module:
    """Replaces, in place, every nn.Linear whose in_features is a multiple of
    group_size (and, with ``embeddings``, every nn.Embedding whose dim is a
    multiple of the embedding group size, a multiple of 32) by the low-bit
    modules above. Returns ``model``."""
    register()
    egs = embedding_group_size or max(32, group_size)
    for name, child in list(model.named_children()):
        if isinstance(child, torch.nn.Linear) and child.in_features % group_size == 0:
            setattr(model, name, LowbitLinear(child, bits, group_size, has_zeros))
        elif (
            embeddings
            and isinstance(child, torch.nn.Embedding)
            and egs % 32 == 0
            and child.embedding_dim % egs == 0
        ):
            setattr(model, name, LowbitEmbedding(child, bits, egs, has_zeros))
        else:
            quantize_(child, bits, group_size, has_zeros=has_zeros, embeddings=embeddings,
                      embedding_group_size=embedding_group_size)  # fmt: skip
    return model
