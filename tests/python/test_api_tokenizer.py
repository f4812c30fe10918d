"""pterun's tokenizers and text generation against the reference libraries.

* pterun.Tokenizer (the C tokenizers) on every fixture of
  tests/fixtures/tokenizers/ (tools/export_tokenizers.py): the corpus and
  seeded random texts encode to the library's ids, random id sequences decode
  to the library's text, the stream equals the decode.
* pterun.llm.generate on tests/fixtures/llm_text with tokenizer=PATH and with
  each library's own object: [BOS] + the library's ids, ExecuTorch's greedy
  tokens (text_cases.txt), the library's text; the CLI's --json output is
  byte-identical; pterun.llm.stream yields the same text.

The libraries (tokenizers, tiktoken, sentencepiece, transformers,
pytorch_tokenizers) are test requirements (tools/requirements-test.txt); a
missing one fails the test.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pterun
import pterun.llm
import pytest

REPO = Path(__file__).resolve().parents[2]
TOK_DIR = REPO / "tests" / "fixtures" / "tokenizers"
LLM_DIR = REPO / "tests" / "fixtures" / "llm_text"
FILES = [
    "hf_bytelevel.json",
    "hf_llama3.json",
    "hf_metaspace.json",
    "hf_legacy.json",
    "tiktoken.model",
    "spm_bpe.model",
    "spm_unigram.model",
]
# Also a real model from sentencepiece's repository (NFKC charsmap).
CODEC_FILES = [*FILES, "spm_real_nfkc.model"]

Codec = tuple[Callable[[str], list[int]], Callable[[Sequence[int]], str], int, Any]


def library(name: str) -> Codec:
    """encode (no BOS), decode, vocabulary size and the library's object."""
    path = str(TOK_DIR / name)
    if name.endswith(".json"):
        from tokenizers import Tokenizer

        t = Tokenizer.from_file(path)
        return (
            lambda s: t.encode(s, add_special_tokens=False).ids,
            lambda ids: t.decode(list(ids)),
            t.get_vocab_size(with_added_tokens=True),
            t,
        )
    if name.startswith("tiktoken"):
        from pytorch_tokenizers import TiktokenTokenizer

        k = TiktokenTokenizer(path)
        return (
            lambda s: k.encode(s, bos=False, eos=False, allowed_special="all"),
            lambda ids: k.decode(list(ids)),
            k.n_words,
            k.model,  # the tiktoken.Encoding
        )
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=path)
    return sp.encode, lambda ids: sp.decode(list(ids)), sp.get_piece_size(), sp


def corpus() -> list[str]:
    return list(json.loads((TOK_DIR / "corpus.json").read_text(encoding="utf-8")))


def random_texts(seed: int, count: int) -> list[str]:
    """Texts drawn from the corpus' characters plus whitespace, digits, emoji
    and special-token markers, in runs."""
    rng = random.Random(seed)
    chars = sorted({c for t in corpus() for c in t})
    extra = [
        " ",
        "  ",
        "\n",
        "\t",
        "0",
        "7",
        "🙂",
        "é",
        "中",
        "'s",
        "<|endoftext|>",
        "<s>",
    ]
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 30)):
            pool = extra if rng.random() < 0.3 else chars
            parts.append(
                rng.choice(pool) * (rng.randint(1, 4) if rng.random() < 0.1 else 1)
            )
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("name", CODEC_FILES)
def test_encode_equals_library(name: str) -> None:
    encode, _, _, _ = library(name)
    tok = pterun.Tokenizer(TOK_DIR / name)
    for text in corpus() + random_texts(sum(name.encode()), 300):
        assert tok.encode(text) == list(encode(text)), repr(text)


@pytest.mark.parametrize("name", CODEC_FILES)
def test_decode_and_stream_equal_library(name: str) -> None:
    _, decode, vocab, _ = library(name)
    tok = pterun.Tokenizer(TOK_DIR / name)
    assert tok.vocab_size == vocab
    rng = random.Random(99)
    for _ in range(300):
        ids = [rng.randrange(vocab) for _ in range(rng.randint(1, 20))]
        want = decode(ids)
        assert tok.decode(ids) == want, ids
        s = tok.stream()
        assert "".join(s.push(i) for i in ids) + s.finish() == want, ids


def test_bad_files_are_refused(tmp_path: Path) -> None:
    cases = {
        "bad.json": b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}',
        "truncated.json": (TOK_DIR / "hf_llama3.json").read_bytes()[:5000],
        "bad.model": b"\x0a\xff\xff\xff\xff\x0f",
        "bad.tiktoken": b"not base64!! 0\n",
    }
    for fname, data in cases.items():
        p = tmp_path / fname
        p.write_bytes(data)
        with pytest.raises(pterun.Error) as e:
            pterun.Tokenizer(p)
        assert e.value.status in ("INVALID_DATA", "NOT_SUPPORTED"), fname
    with pytest.raises(pterun.Error) as e:
        pterun.Tokenizer(tmp_path / "missing.json")
    assert e.value.status == "IO_ERROR"


def text_cases() -> dict[str, tuple[list[int], list[int], str]]:
    out = {}
    for line in (LLM_DIR / "text_cases.txt").read_text().splitlines():
        name, _, prompt, tokens, text = line.split("\t")
        out[name] = (
            [int(t) for t in prompt.split(",")],
            [int(t) for t in tokens.split(",")],
            "" if text == "-" else bytes.fromhex(text).decode("utf-8"),
        )
    return out


PROMPT = (LLM_DIR / "prompt_text.txt").read_text(encoding="utf-8").splitlines()[0]
STEPS = 24


def cli(name: str) -> dict[str, Any]:
    exe = os.environ.get("PTERUN_CLI", str(REPO / "build" / "bin" / "pterun"))
    if not Path(exe).exists():  # the wheel's own CLI
        exe = str(Path(pterun.__file__).parent / "bin" / "pterun")
    out = subprocess.run(
        [
            exe,
            "generate",
            str(LLM_DIR / "model.pte"),
            "--tokenizer",
            str(TOK_DIR / name),
            "--prompt",
            PROMPT,
            "--steps",
            str(STEPS),
            "--json",
        ],
        capture_output=True,
        check=True,
    )
    return dict(json.loads(out.stdout))


@pytest.mark.parametrize("name", FILES)
def test_generate_text_c_tokenizer_cli_and_library(name: str) -> None:
    prompt_ids, tokens, text = text_cases()[name]
    r = pterun.llm.generate(
        LLM_DIR / "model.pte", PROMPT, tokenizer=TOK_DIR / name, max_new_tokens=STEPS
    )
    assert r.prompt_tokens == prompt_ids
    assert r.tokens == tokens  # ExecuTorch's greedy tokens
    assert r.text == text  # the library's decode
    # The library's own object gives the same.
    obj = library(name)[3]
    r2 = pterun.llm.generate(
        LLM_DIR / "model.pte", PROMPT, tokenizer=obj, max_new_tokens=STEPS
    )
    assert (r2.prompt_tokens, r2.tokens, r2.text) == (prompt_ids, tokens, text)
    # Streaming: the pieces are the text.
    pieces: list[str] = []
    r3 = pterun.llm.generate(
        LLM_DIR / "model.pte",
        PROMPT,
        tokenizer=TOK_DIR / name,
        max_new_tokens=STEPS,
        on_text=pieces.append,
    )
    assert "".join(pieces) == r3.text == text
    streamed = list(
        pterun.llm.stream(
            LLM_DIR / "model.pte",
            PROMPT,
            tokenizer=TOK_DIR / name,
            max_new_tokens=STEPS,
        )
    )
    assert "".join(streamed) == text
    # The CLI: byte-identical ids and text.
    j = cli(name)
    assert (j["prompt_tokens"], j["tokens"], j["text"]) == (prompt_ids, tokens, text)


def test_other_tokenizer_objects() -> None:
    """transformers and pytorch_tokenizers objects (ExecuTorch's) as tokenizer=."""
    from pytorch_tokenizers import (
        HuggingFaceTokenizer,
        Llama2cTokenizer,
        TiktokenTokenizer,
    )
    from transformers import PreTrainedTokenizerFast

    cases = text_cases()
    objs: list[tuple[str, Any]] = [
        (
            "hf_llama3.json",
            PreTrainedTokenizerFast(tokenizer_file=str(TOK_DIR / "hf_llama3.json")),
        ),
        ("hf_metaspace.json", HuggingFaceTokenizer(str(TOK_DIR / "hf_metaspace.json"))),
        ("tiktoken.model", TiktokenTokenizer(str(TOK_DIR / "tiktoken.model"))),
        ("spm_bpe.model", Llama2cTokenizer(str(TOK_DIR / "spm_bpe.model"))),
    ]
    for name, obj in objs:
        prompt_ids, tokens, _ = cases[name]
        r = pterun.llm.generate(
            LLM_DIR / "model.pte", PROMPT, tokenizer=obj, max_new_tokens=STEPS
        )
        assert r.prompt_tokens == prompt_ids, name
        assert r.tokens == tokens, name
        assert r.text == obj.decode(tokens), name


def test_bos_stop_and_token_prompts() -> None:
    name = "spm_bpe.model"
    prompt_ids, tokens, text = text_cases()[name]
    model = LLM_DIR / "model.pte"
    r = pterun.llm.generate(
        model, PROMPT, tokenizer=TOK_DIR / name, bos=False, max_new_tokens=4
    )
    assert r.prompt_tokens == prompt_ids[1:]
    r = pterun.llm.generate(
        model, PROMPT, tokenizer=TOK_DIR / name, bos=5, max_new_tokens=4
    )
    assert r.prompt_tokens == [5] + prompt_ids[1:]
    # Token prompts: no BOS added, as before.
    r = pterun.llm.generate(model, prompt_ids, max_new_tokens=STEPS)
    assert r.prompt_tokens == prompt_ids and r.tokens == tokens and r.text is None
    # A stop string: generation ends once the text contains it.
    stop = text[len(text) // 2 : len(text) // 2 + 2]
    if stop.strip():
        r = pterun.llm.generate(
            model, PROMPT, tokenizer=TOK_DIR / name, max_new_tokens=STEPS, stop=[stop]
        )
        assert (
            r.stop == "stop_string" and stop in r.text and len(r.tokens) < len(tokens)
        )
