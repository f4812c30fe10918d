#!/usr/bin/env python3
"""Trains the tokenizer fixtures of libpterun_textgen with the real libraries
and writes what they encode and decode (tests/fixtures/tokenizers/).

Every file is small (vocabularies of a few hundred to ~1000 tokens) and trained
on a seeded synthetic corpus, so rerunning this script regenerates the same
files:

  hf_bytelevel.json   tokenizers BpeTrainer, GPT-2 style: ByteLevel
                      pre-tokenizer (its GPT-2 regex) and decoder, added
                      special tokens
  hf_llama3.json      Llama 3 / Qwen style: Split(Llama 3 regex, isolated) +
                      ByteLevel(use_regex=False), ignore_merges, specials
  hf_metaspace.json   Metaspace pre-tokenizer (prepend_scheme "first") and
                      decoder, byte_fallback with <0xNN> tokens, <unk>
  hf_legacy.json      Llama 2 / Mistral style: Prepend + Replace normalizer,
                      decoder Replace, ByteFallback, Fuse, Strip
  tiktoken.model      a tiktoken rank file written from hf_llama3's byte-level
                      BPE (ranks = merge order), loaded with Llama 3's pattern
                      and special tokens as pytorch_tokenizers does
  spm_bpe.model       sentencepiece trainer, model_type=bpe, byte_fallback,
                      identity normalization, user-defined symbols
  spm_unigram.model   sentencepiece trainer, model_type=unigram,
                      remove_extra_whitespaces, identity normalization
  spm_real_nfkc.model not trained here: sentencepiece's own test model
                      (github.com/google/sentencepiece, python/test/
                      test_model.model at 2734490, Apache-2.0; unigram, 1000
                      pieces, nmt_nfkc precompiled charsmap), committed as
                      is; its expected ids are written like the others
  corpus.json         the texts the tests encode (ASCII, multilingual, emoji,
                      whitespace runs, digits, special tokens)
  expected.txt        per file: each corpus text's ids from the library, and
                      random id sequences with the library's decode, one
                      case a line (read by tests/textgen/test_tokenizer.c):
                        FILE encode HEX(text) IDS
                        FILE decode MODE IDS HEX(text)
                      IDS comma-separated ("-": none); MODE skip/keep (HF
                      skip_special_tokens) or default

With --llm it also writes tests/fixtures/llm_text/: a tiny random-weight
llama program exported by ExecuTorch's flow (tools/export_llama.py's recipe,
vocabulary 384 so that every tokenizer above covers its ids, and a prompt
whose ids are all below it; metadata
get_bos_id 1, get_eos_ids [2]) and text_cases.txt: per tokenizer file the
prompt text, [BOS] + the library's encoding of it, ExecuTorch's greedy tokens
(its runtime, 24 steps, cut after the first eos) and the library's decode of
those tokens (hex), one tab-separated line each:
  FILE  HEX(prompt)  PROMPT_IDS  TOKENS  HEX(text)
and prompt_text.txt (the prompt, for the CLI and example tests).

Usage: python tools/export_tokenizers.py [--check] [--llm]
  --check: regenerate into a temporary directory and compare (exit 1 if a
           committed file differs).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
OUT = REPO_ROOT / "tests" / "fixtures" / "tokenizers"

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

WORDS = (
    "the of and to in is was that for on with as by at from his her it an were are which "
    "this be or has had not but what all when we there can one been if more would who "
    "their will each about how up out them then she many some so these would other into "
    "model token tokenizer runtime program kernel tensor memory thread decode encode "
    "generation language running quickly slowly number value pterun executorch llama"
).split()

MULTI = [
    "Grüße aus München, ça va très bien.",
    "El niño comió piñata; ¿qué más?",
    "Привет, как дела? Всё хорошо.",
    "日本語のテキストと漢字。",
    "中文分词测试，你好世界。",
    "한국어 문장입니다.",
    "العربية نص قصير",
    "हिन्दी वाक्य",
    "Ελληνικά γράμματα",
    "emoji 🙂🚀👍🏽 and 👨‍👩‍👧 family",
]


def synthetic_corpus(seed: int = 7, lines: int = 1500) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(lines):
        n = rng.randint(4, 14)
        words = [rng.choice(WORDS) for _ in range(n)]
        if rng.random() < 0.3:
            words.insert(rng.randint(0, n), str(rng.randint(0, 99999)))
        if rng.random() < 0.2:
            words[0] = words[0].capitalize()
        s = " ".join(words)
        s += rng.choice([".", ",", "!", "?", "", " ...", "'s"])
        if rng.random() < 0.1:
            s = "  " + s + "\t"
        out.append(s)
        if i % 10 == 0:
            out.append(MULTI[(i // 10) % len(MULTI)])
    return out


SPECIALS_HF = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Texts an NFKC charsmap rewrites (full-width, compatibility characters).
NFKC_TEXTS = ["ｈｅｌｌｏ　ｗｏｒｌｄ", "①②③ ½ ﬁ ™ … ㍿", "ﾊﾟｶﾞ ＡＢＣ ﹏ x²"]
SPECIALS_LLAMA3 = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]


def corpus_texts() -> list[str]:
    return [
        "Hello world",
        "hello  world   with    runs of     spaces",
        " leading space and trailing space ",
        "\ttabs\tand\nnew\nlines\r\nwindows\n\n\nparagraphs",
        "The quick brown fox jumps over the lazy dog. It's 2024; we'll see.",
        "numbers 1 22 333 4444 55555 123456789 3.14159 -42 1,000,000",
        "CAPS Lower MiXeD don't DON'T I'M you're THEY'VE",
        "punctuation!!! ??? ... ;;; --- (brackets) [square] {curly} <angle>",
        "code: def f(x):\n    return x ** 2  # comment\n",
        "Grüße aus München, ça va très bien.",
        "Привет, как дела? Всё хорошо.",
        "日本語のテキストと漢字。中文分词测试，你好世界。",
        "한국어 문장입니다. العربية نص قصير हिन्दी वाक्य",
        "emoji 🙂🚀👍🏽 and 👨‍👩‍👧 family 🇫🇷",
        "mixed 中文 and English and 123 and 🙂",
        "          ",
        "a",
        " ",
        "\n",
        "",
        "<|endoftext|>special<|im_start|>user\nhi<|im_end|>",
        "<|begin_of_text|>Hello<|eot_id|> and <|end_of_text|>",
        "<s> sentencepiece </s> markers and <unk>",
        "non-breaking\u00a0space and\u2003em space and \u3000 ideographic",
        "zero\u200bwidth and combining e\u0301 and ﬁ ligature",
        "x" * 300,
        "word " * 60,
    ]


def train_hf(path: Path, kind: str, corpus: list[str]) -> Any:
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        trainers,
    )

    if kind == "bytelevel":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=700,
            special_tokens=SPECIALS_HF,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
    elif kind == "llama3":
        tok = Tokenizer(models.BPE(ignore_merges=True))
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=900,
            special_tokens=SPECIALS_LLAMA3,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
    elif kind in ("metaspace", "legacy"):
        tok = Tokenizer(
            models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True)
        )
        if kind == "metaspace":
            tok.pre_tokenizer = pre_tokenizers.Metaspace(
                replacement="▁", prepend_scheme="first"
            )
            tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
        else:
            tok.normalizer = normalizers.Sequence(
                [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
            )
            tok.decoder = decoders.Sequence(
                [
                    decoders.Replace("▁", " "),
                    decoders.ByteFallback(),
                    decoders.Fuse(),
                    decoders.Strip(" ", 1, 0),
                ]
            )
        trainer = trainers.BpeTrainer(
            vocab_size=600,
            special_tokens=["<unk>", "<s>", "</s>"],
            show_progress=False,
        )
        # Trained on the ASCII lines only: every other character is byte
        # fallback (a limited alphabet would pick among equally frequent
        # characters at random, and the file would not regenerate exactly).
        corpus = [line for line in corpus if line.isascii()]
    else:
        raise ValueError(kind)
    tok.train_from_iterator(corpus, trainer=trainer)
    if kind in ("metaspace", "legacy"):
        # Llama 2's vocabulary has the 256 byte tokens <0x00>..<0xFF> as normal
        # model tokens (byte fallback); append them after the trained ones.
        spec = json.loads(tok.to_str())
        vocab = spec["model"]["vocab"]
        for b in range(256):
            name = f"<0x{b:02X}>"
            if name not in vocab:
                vocab[name] = len(vocab)
        tok = Tokenizer.from_str(json.dumps(spec))
    path.write_text(tok.to_str(pretty=True) + "\n", encoding="utf-8")
    return Tokenizer.from_file(str(path))


def write_tiktoken(path: Path, hf_json: Path) -> None:
    """Ranks from a byte-level BPE: the 256 bytes first, then each merge's
    result in merge order (a BPE tiktoken file is exactly that)."""
    from tokenizers.pre_tokenizers import ByteLevel

    spec = json.loads(hf_json.read_text(encoding="utf-8"))
    alphabet = {}
    # ByteLevel's byte -> char table: inverted from its alphabet order.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    for b, c in zip(bs, cs):
        alphabet[chr(c)] = b
    assert set(alphabet) == set(ByteLevel.alphabet())

    def to_bytes(tok: str) -> bytes:
        return bytes(alphabet[ch] for ch in tok)

    ranks: dict[bytes, int] = {}
    for b in range(256):
        ranks[bytes([b])] = b
    for m in spec["model"]["merges"]:
        a, b = m if isinstance(m, list) else m.split(" ")
        merged = to_bytes(a) + to_bytes(b)
        if merged not in ranks:
            ranks[merged] = len(ranks)
    with path.open("w", encoding="ascii") as f:
        for tok, r in sorted(ranks.items(), key=lambda kv: kv[1]):
            f.write(f"{base64.b64encode(tok).decode()} {r}\n")


def tiktoken_encoding(path: Path) -> Any:
    from pytorch_tokenizers import TiktokenTokenizer

    return TiktokenTokenizer(str(path))


def train_spm(path: Path, kind: str, corpus: list[str]) -> Any:
    import io

    import sentencepiece as spm

    model = io.BytesIO()
    args: dict[str, Any] = dict(
        sentence_iterator=iter(corpus),
        model_writer=model,
        model_type=kind,
        vocab_size=500 if kind == "bpe" else 400,
        normalization_rule_name="identity",
        character_coverage=0.98,
        num_threads=1,
        seed_sentencepiece_size=20000,
        shuffle_input_sentence=False,
        minloglevel=2,
    )
    if kind == "bpe":
        args.update(
            byte_fallback=True,
            remove_extra_whitespaces=False,
            user_defined_symbols=["<|user|>", "<|bot|>"],
            split_digits=True,
        )
    else:
        args.update(remove_extra_whitespaces=True, unk_surface=" ⁇ ")
    spm.SentencePieceTrainer.train(**args)
    path.write_bytes(model.getvalue())
    return spm.SentencePieceProcessor(model_file=str(path))


def random_ids(
    rng: random.Random, vocab: int, count: int, length: int
) -> list[list[int]]:
    return [
        [rng.randrange(vocab) for _ in range(rng.randint(1, length))]
        for _ in range(count)
    ]


def generate(out: Path) -> None:
    import shutil

    import sentencepiece as spm

    out.mkdir(parents=True, exist_ok=True)
    corpus = synthetic_corpus()
    texts = corpus_texts()
    expected: dict[str, Any] = {}
    rng = random.Random(1234)

    for kind in ("bytelevel", "llama3", "metaspace", "legacy"):
        name = f"hf_{kind}.json"
        tok = train_hf(out / name, kind, corpus)
        vocab = tok.get_vocab_size(with_added_tokens=True)
        seqs = random_ids(rng, vocab, 100, 16)
        expected[name] = {
            "format": "hf",
            "encode": [tok.encode(t, add_special_tokens=False).ids for t in texts],
            "decode": [
                {
                    "ids": s,
                    "skip": tok.decode(s).encode("utf-8").hex(),
                    "keep": tok.decode(s, skip_special_tokens=False)
                    .encode("utf-8")
                    .hex(),
                }
                for s in seqs
            ],
        }

    write_tiktoken(out / "tiktoken.model", out / "hf_llama3.json")
    tk = tiktoken_encoding(out / "tiktoken.model")
    seqs = random_ids(rng, tk.n_words, 100, 16)
    expected["tiktoken.model"] = {
        "format": "tiktoken",
        "encode": [
            tk.encode(t, bos=False, eos=False, allowed_special="all") for t in texts
        ],
        "decode": [
            {"ids": s, "default": tk.decode(s).encode("utf-8").hex()} for s in seqs
        ],
    }

    for kind in ("bpe", "unigram"):
        name = f"spm_{kind}.model"
        sp = train_spm(out / name, kind, corpus)
        seqs = random_ids(rng, sp.get_piece_size(), 100, 16)
        expected[name] = {
            "format": "sentencepiece",
            "encode": [sp.encode(t) for t in texts],
            "decode": [
                {"ids": s, "default": sp.decode(s).encode("utf-8").hex()} for s in seqs
            ],
        }

    # A real model shipped by sentencepiece's repository (committed, not
    # trained): copied into `out` when regenerating elsewhere.
    real = out / "spm_real_nfkc.model"
    if not real.exists():
        shutil.copy(OUT / real.name, real)
    sp = spm.SentencePieceProcessor(model_file=str(real))
    seqs = random_ids(rng, sp.get_piece_size(), 100, 16)
    expected[real.name] = {
        "format": "sentencepiece",
        "encode": [sp.encode(t) for t in texts + NFKC_TEXTS],
        "decode": [
            {"ids": s, "default": sp.decode(s).encode("utf-8").hex()} for s in seqs
        ],
    }

    (out / "corpus.json").write_text(
        json.dumps(texts, ensure_ascii=False, indent=0) + "\n", encoding="utf-8"
    )
    lines = []

    def ids_s(ids: list[int]) -> str:
        return ",".join(str(i) for i in ids) or "-"

    for name, e in expected.items():
        for text, ids in zip(texts + NFKC_TEXTS, e["encode"]):
            lines.append(
                f"{name} encode {text.encode('utf-8').hex() or '-'} {ids_s(ids)}"
            )
        for d in e["decode"]:
            for mode in ("skip", "keep", "default"):
                if mode in d:
                    lines.append(
                        f"{name} decode {mode} {ids_s(d['ids'])} {d[mode] or '-'}"
                    )
    (out / "expected.txt").write_text("\n".join(lines) + "\n", encoding="ascii")


LLM_DIR = REPO_ROOT / "tests" / "fixtures" / "llm_text"
LLM_VOCAB = 384
LLM_STEPS = 24
LLM_PROMPT = "to the"
LLM_BOS, LLM_EOS = 1, 2


def library_codec(path: Path) -> tuple[Any, Any]:
    """encode(text) -> ids (no BOS) and decode(ids) -> str of the reference library."""
    if path.suffix == ".json":
        from tokenizers import Tokenizer

        t = Tokenizer.from_file(str(path))
        return (lambda s: t.encode(s, add_special_tokens=False).ids), t.decode
    if path.name.startswith("tiktoken"):
        k = tiktoken_encoding(path)
        return (
            lambda s: k.encode(s, bos=False, eos=False, allowed_special="all")
        ), k.decode
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(path))
    return sp.encode, sp.decode


def generate_llm(tok_dir: Path, out: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import export_llama as el
    import shutil

    out.mkdir(parents=True, exist_ok=True)
    params = dict(el.SMALL, vocab_size=LLM_VOCAB)
    with tempfile.TemporaryDirectory() as td:
        pte, msg = el.export("text", [], params, Path(td))
        if pte is None:
            raise SystemExit(f"llm_text: export failed: {msg}")
        shutil.copy(pte, out / "model.pte")
    (out / "ops.txt").write_text("\n".join(el.forward_ops(out / "model.pte")) + "\n")
    lines = []
    for name in TOKENIZER_FILES:
        encode, decode = library_codec(tok_dir / name)
        prompt = [LLM_BOS] + [int(i) for i in encode(LLM_PROMPT)]
        assert max(prompt) < LLM_VOCAB, (name, prompt)
        _, toks = el.reference(out / "model.pte", LLM_STEPS, prompt)
        if LLM_EOS in toks:
            toks = toks[: toks.index(LLM_EOS) + 1]
        text = decode(toks)
        lines.append(
            "\t".join(
                [
                    name,
                    LLM_PROMPT.encode().hex(),
                    ",".join(map(str, prompt)),
                    ",".join(map(str, toks)),
                    text.encode("utf-8").hex() or "-",
                ]
            )
        )
    (out / "text_cases.txt").write_text("\n".join(lines) + "\n", encoding="ascii")
    (out / "prompt_text.txt").write_text(LLM_PROMPT + "\n", encoding="utf-8")


TOKENIZER_FILES = [
    "hf_bytelevel.json",
    "hf_llama3.json",
    "hf_metaspace.json",
    "hf_legacy.json",
    "tiktoken.model",
    "spm_bpe.model",
    "spm_unigram.model",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument(
        "--llm", action="store_true", help="also write tests/fixtures/llm_text"
    )
    args = ap.parse_args(argv)
    if not args.check:
        generate(OUT)
        print(f"wrote {OUT}")
        if args.llm:
            generate_llm(OUT, LLM_DIR)
            print(f"wrote {LLM_DIR}")
        return 0
    with tempfile.TemporaryDirectory() as d:
        generate(Path(d))
        bad = [
            p.name
            for p in sorted(Path(d).iterdir())
            if not (OUT / p.name).is_file()
            or (OUT / p.name).read_bytes() != p.read_bytes()
        ]
    if bad:
        print(f"stale: {', '.join(bad)}", file=sys.stderr)
        return 1
    print("tokenizer fixtures are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
