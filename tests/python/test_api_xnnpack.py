"""XNNPACK-lowered programs through the Python API (the wheel registers
libpterun_backend_xnnpack): each matches ExecuTorch+XNNPACK on the same file
and pterun's run of the same model exported without a partitioner, within
the tolerance of tests/fixtures/xnnpack_cases.txt (fp32: rtol 1e-5; fp16: rtol
2e-3, about 2 fp16 ulps, see docs/xnnpack.md; quantized:
one output quantization step, with the fraction of differing elements
reported)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pterun
import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
INDEX = FIXTURES / "xnnpack_cases.txt"


@dataclass(frozen=True)
class XRow:
    name: str
    dir: Path
    n_inputs: int
    n_outputs: int
    rtol: float
    atol: float
    data: tuple[str, ...]
    kind: str


def _rows() -> list[XRow]:
    rows = []
    for line in INDEX.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        assert len(f) == 9, line
        data = () if f[7] == "-" else tuple(f[7].split(","))
        rows.append(
            XRow(
                f[0],
                FIXTURES / f[1],
                int(f[3]),
                int(f[4]),
                float(f[5]),
                float(f[6]),
                data,
                f[8],
            )
        )
    return rows


ROWS = _rows()


def _run(row: XRow, model: str, data: tuple[str, ...]) -> list[np.ndarray[Any, Any]]:
    program = pterun.Runtime.get().load_program(
        row.dir / model, data_files=[str(row.dir / d) for d in data]
    )
    inputs = [np.load(row.dir / f"forward_input_{k}.npy") for k in range(row.n_inputs)]
    return [np.asarray(o) for o in program.load_method("forward").execute(inputs)]


def _compare(
    row: XRow,
    got: list[np.ndarray[Any, Any]],
    ref: list[np.ndarray[Any, Any]],
    what: str,
) -> None:
    assert len(got) == len(ref) == row.n_outputs
    for k, (a, b) in enumerate(zip(got, ref, strict=True)):
        assert a.shape == b.shape and a.dtype == b.dtype, f"{row.name}[{k}] vs {what}"
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        frac = float(np.mean(diff > 0)) if diff.size else 0.0
        print(
            f"{row.name}[{k}] vs {what}: max |diff| {diff.max(initial=0):.3g}, differing {frac:.2%}"
        )
        np.testing.assert_allclose(
            a, b, rtol=row.rtol, atol=row.atol, err_msg=f"{row.name}[{k}] vs {what}"
        )


def test_index_is_complete() -> None:
    """Every fixture directory is in the index, with both programs."""
    dirs = {p.name for p in (FIXTURES / "xnnpack").iterdir() if p.is_dir()}
    assert dirs == {r.dir.name for r in ROWS}
    for r in ROWS:
        assert (r.dir / "model.pte").is_file() and (r.dir / "plain.pte").is_file()
        assert b"XnnpackBackend" in (r.dir / "model.pte").read_bytes()


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_matches_executorch_xnnpack(row: XRow) -> None:
    ref = [np.load(row.dir / f"forward_et_{k}.npy") for k in range(row.n_outputs)]
    _compare(row, _run(row, "model.pte", row.data), ref, "ExecuTorch+XNNPACK")


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_matches_nondelegated_export(row: XRow) -> None:
    _compare(
        row,
        _run(row, "model.pte", row.data),
        _run(row, "plain.pte", ()),
        "plain export",
    )


LLM = FIXTURES / "xnnpack_llm"


def _greedy(
    method: Any, prompt: list[int], steps: int
) -> tuple[list[int], np.ndarray[Any, Any]]:
    """As tools/export_xnnpack.py's greedy(): prefill, then one token a call."""
    toks, logits = list(prompt), []
    out = method.execute(
        [np.array([prompt], dtype=np.int64), np.array([0], dtype=np.int64)]
    )
    for pos in range(len(prompt), len(prompt) + steps):
        row = np.asarray(out[0], dtype=np.float32).reshape(-1)
        logits.append(row)
        toks.append(int(np.argmax(row)))
        out = method.execute(
            [np.array([[toks[-1]]], dtype=np.int64), np.array([pos], dtype=np.int64)]
        )
    return toks, np.stack(logits)


def test_llm_greedy_tokens_match_executorch_xnnpack() -> None:
    """export_llama -X -qmode 8da4w (KV cache, custom SDPA): the same greedy
    tokens as ExecuTorch+XNNPACK over 40 steps, logits within 1e-4."""
    ref_tokens = np.load(LLM / "et_tokens.npy").tolist()
    ref_logits = np.load(LLM / "et_logits.npy")
    prompt_len = len(ref_tokens) - len(ref_logits)
    method = pterun.Runtime.get().load_program(LLM / "model.pte").load_method("forward")
    toks, logits = _greedy(method, ref_tokens[:prompt_len], len(ref_logits))
    diff = np.abs(logits - ref_logits)
    print(f"llm: max |logit diff| {diff.max():.3g}, differing {np.mean(diff > 0):.2%}")
    assert toks == ref_tokens
    np.testing.assert_allclose(logits, ref_logits, rtol=1e-4, atol=1e-4)
