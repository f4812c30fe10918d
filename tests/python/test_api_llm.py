"""pterun.llm.generate on the programs exported by ExecuTorch's LLM flow
(tests/fixtures/llm_<name>/, tools/export_llama.py): the greedy tokens equal
ExecuTorch's runtime's, the logits of every step are within the stated
tolerance of ExecuTorch's, and the CLI (`pterun generate`) produces the same
tokens and byte-identical logits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pterun
import pterun.llm
import pytest
from conftest import FIXTURES_DIR
from test_api_support import cli_path

# |got - want| <= ATOL + RTOL * |want| (logits are O(10); observed ~6e-6).
ATOL, RTOL = 1e-4, 1e-5
# bfloat16 logits: about one unit in the last place of the largest logits
# (observed 0.078), as tests/llm/CMakeLists.txt.
TOLERANCE = {"bf16": (1e-1, 1.6e-2)}

CASES = [
    line.split("\t")[0]
    for line in (FIXTURES_DIR / "llm_cases.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
]


def _ints(path: Path) -> list[int]:
    return [int(t) for t in path.read_text().replace(",", " ").split()]


def _case(name: str) -> tuple[Path, list[int], list[int], np.ndarray[Any, Any]]:
    d = FIXTURES_DIR / f"llm_{name}"
    return (
        d / "model.pte",
        _ints(d / "prompt.txt"),
        _ints(d / "et_tokens.txt"),
        np.load(d / "et_logits.npy"),
    )


def test_fixtures_present() -> None:
    assert {"fp32", "kvq", "emb4"} <= set(CASES), CASES


@pytest.mark.parametrize("name", CASES)
def test_greedy_matches_executorch(name: str) -> None:
    model, prompt, want, ref = _case(name)
    assert len(want) >= 32
    r = pterun.llm.generate(
        model, prompt, max_new_tokens=len(want), ignore_eos=True, return_logits=True
    )
    assert r.tokens == want
    assert r.stop == "steps"
    assert r.logits.shape == ref.shape
    atol, rtol = TOLERANCE.get(name, (ATOL, RTOL))
    assert np.all(np.abs(r.logits - ref) <= atol + rtol * np.abs(ref))
    assert r.metadata["bos_id"] == 1 and r.metadata["eos_ids"] == [2]
    assert r.metadata["vocab_size"] == ref.shape[1]


@pytest.mark.parametrize("name", CASES)
def test_cli_is_byte_identical(name: str, tmp_path: Path) -> None:
    model, prompt, want, _ = _case(name)
    npy = tmp_path / "logits.npy"
    out = subprocess.run(
        [
            str(cli_path()),
            "generate",
            str(model),
            "--prompt-tokens",
            ",".join(map(str, prompt)),
        ]
        + ["--steps", str(len(want)), "--ignore-eos", "--json", "--logits", str(npy)],
        check=True,
        capture_output=True,
        text=True,
    )
    cli = json.loads(out.stdout)
    r = pterun.llm.generate(
        model, prompt, max_new_tokens=len(want), ignore_eos=True, return_logits=True
    )
    assert cli["tokens"] == r.tokens == want
    assert cli["prompt_tokens"] == prompt
    assert np.load(npy).tobytes() == r.logits.tobytes()
    assert cli["decode_tokens_per_second"] > 0


def test_sampling_is_seeded_and_matches_cli() -> None:
    model, prompt, _, _ = _case("fp32")
    kw: dict[str, Any] = dict(max_new_tokens=12, temperature=0.8, top_k=20, top_p=0.9)
    a = pterun.llm.generate(model, prompt, seed=7, **kw).tokens
    b = pterun.llm.generate(model, prompt, seed=7, **kw).tokens
    c = pterun.llm.generate(model, prompt, seed=8, **kw).tokens
    assert a == b and a != c
    out = subprocess.run(
        [
            str(cli_path()),
            "generate",
            str(model),
            "--prompt-tokens",
            ",".join(map(str, prompt)),
        ]
        + ["--steps", "12", "--temperature", "0.8", "--top-k", "20", "--top-p", "0.9"]
        + ["--seed", "7"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert [int(t) for t in out.stdout.strip().split(",")] == a


def test_stop_tokens() -> None:
    model, prompt, want, _ = _case("fp32")
    r = pterun.llm.generate(model, prompt, max_new_tokens=32, stop_tokens=[want[3]])
    assert r.tokens == want[:4] and r.stop == "eos"


class _WordTokenizer:
    """Duck-typed like a transformers tokenizer: encode -> ids, decode(ids)."""

    def encode(self, text: str) -> list[int]:
        return [int(w) % 256 for w in text.split()]

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return " ".join(str(i) for i in ids)


def test_text_prompt_with_a_tokenizer() -> None:
    model, prompt, want, _ = _case("fp32")
    # A text prompt gets the program's BOS (get_bos_id 1, the fixture's first id).
    assert prompt[0] == 1
    r = pterun.llm.generate(
        model,
        " ".join(map(str, prompt[1:])),
        tokenizer=_WordTokenizer(),
        max_new_tokens=8,
        ignore_eos=True,
    )
    assert r.prompt_tokens == prompt and r.tokens == want[:8]
    assert r.text == " ".join(map(str, want[:8]))
    with pytest.raises(TypeError):
        pterun.llm.generate(model, "1 2 3")


@pytest.mark.torch
def test_huggingface_tokenizers_object() -> None:
    import tokenizers  # in the export toolchain (tools/requirements-export.txt)

    model, prompt, want, _ = _case("fp32")
    vocab = {str(i): i for i in range(256)}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="0"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    r = pterun.llm.generate(
        model,
        " ".join(map(str, prompt[1:])),  # the program's BOS goes first
        tokenizer=tok,
        max_new_tokens=8,
        ignore_eos=True,
    )
    assert r.prompt_tokens == prompt and r.tokens == want[:8]
    assert r.text is not None and r.text.split() == [str(t) for t in want[:8]]


def test_ops_lists_the_llm_component() -> None:
    llm_ops = {o.name for o in pterun.ops() if o.component == "kernels_llm"}
    for op in (
        "llama::update_cache",
        "llama::custom_sdpa",
        "llama::custom_quantized_sdpa",
    ):
        assert op in llm_ops, sorted(llm_ops)
    assert pterun.component_for_op("llama::custom_sdpa.out") == "kernels_llm"
