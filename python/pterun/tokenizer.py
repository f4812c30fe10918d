"""Tokenizers: pterun's own (C, ``pterun/tokenizer.h``) and the reference
libraries' objects behind one small interface.

>>> tok = pterun.Tokenizer("tokenizer.json")      # or tiktoken / .model files
>>> ids = tok.encode("Hello world")               # no BOS: generation adds it
>>> tok.decode(ids)
'Hello world'

:func:`as_tokenizer` turns what :func:`pterun.llm.generate` accepts as
``tokenizer=`` into a :class:`TextCodec`: a path (the C tokenizer), a
:class:`Tokenizer`, or an object from ``tokenizers``, ``transformers``,
``sentencepiece``, ``tiktoken`` or ``pytorch_tokenizers`` (ExecuTorch's, whose
``encode`` takes ``bos=``/``eos=``). pterun never imports those packages.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pterun import _pterun

SPECIAL_DEFAULT = 0
"""Decode special tokens as the file's reference library does by default."""
SPECIAL_SKIP = 1
SPECIAL_KEEP = 2


def _require() -> None:
    if not hasattr(_pterun, "tokenizer_load"):
        raise RuntimeError("this pterun build does not include the textgen component")


class Tokenizer:
    """A tokenizer file read by pterun's C tokenizers (Hugging Face
    tokenizer.json BPE, tiktoken rank files with Llama 3's pattern and special
    tokens, sentencepiece .model): the same ids and text as the reference
    library, from C, the CLI and Python."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        _require()
        self._cap = _pterun.tokenizer_load(os.fspath(path))
        info = _pterun.tokenizer_info(self._cap)
        self.path = os.fspath(path)
        self.format: str = info["format"]
        """"hf_json", "tiktoken" or "sentencepiece"."""
        self.vocab_size: int = info["vocab_size"]
        self.bos_id: int = info["bos_id"]
        """The file's BOS id (sentencepiece, tiktoken's <|begin_of_text|>), or -1."""
        self.eos_id: int = info["eos_id"]

    def encode(self, text: str) -> list[int]:
        """Ids of ``text``; no BOS/EOS, no post-processor."""
        return list(_pterun.tokenizer_encode(self._cap, text))

    def decode(self, ids: Sequence[int], special: int = SPECIAL_DEFAULT) -> str:
        return str(
            _pterun.tokenizer_decode(self._cap, [int(i) for i in ids], int(special))
        )

    def token_id(self, text: str) -> int:
        """The id of a token given by its text (special tokens too), or -1."""
        return int(_pterun.tokenizer_token_id(self._cap, text))

    def stream(self, special: int = SPECIAL_DEFAULT) -> DecodeStream:
        """A streaming decoder: :meth:`DecodeStream.push` one id at a time."""
        return DecodeStream(self, special)

    def __repr__(self) -> str:
        return f"Tokenizer({self.path!r}, format={self.format!r}, vocab_size={self.vocab_size})"


class DecodeStream:
    """Tokens in one at a time, complete text out (a character split over
    tokens is held back); the pieces joined equal the whole decode."""

    def __init__(self, tokenizer: Tokenizer, special: int = SPECIAL_DEFAULT) -> None:
        self._cap = _pterun.tokenizer_stream(tokenizer._cap, int(special))

    def push(self, token: int) -> str:
        return str(_pterun.tokenizer_stream_push(self._cap, int(token)))

    def finish(self) -> str:
        return str(_pterun.tokenizer_stream_finish(self._cap))


class TextCodec(Protocol):
    """What generation needs of a tokenizer."""

    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    def stream(self) -> Any: ...


class _CTokenizerCodec:
    def __init__(self, tok: Tokenizer) -> None:
        self.tok = tok

    def encode(self, text: str) -> list[int]:
        return self.tok.encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tok.decode(ids)

    def stream(self) -> DecodeStream:
        return self.tok.stream()


class _PrefixStream:
    """Streaming over any decode(ids) -> str: the text of all ids so far,
    handed out once it stops ending in U+FFFD (a cut character)."""

    def __init__(self, decode: Callable[[Sequence[int]], str]) -> None:
        self._decode = decode
        self._ids: list[int] = []
        self._sent = ""

    def push(self, token: int) -> str:
        self._ids.append(int(token))
        text = self._decode(self._ids)
        if text.endswith("\ufffd") or not text.startswith(self._sent):
            return ""
        new, self._sent = text[len(self._sent) :], text
        return new

    def finish(self) -> str:
        text = self._decode(self._ids)
        new = text[len(self._sent) :] if text.startswith(self._sent) else ""
        self._sent = text
        return new


def _keywords(fn: Any) -> set[str]:
    try:
        return set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # builtins without a signature
        return set()


class _ObjectCodec:
    """A reference library's tokenizer object, each called as its own
    documentation says, without BOS/EOS (generation adds the program's BOS):
    tokenizers.Tokenizer (add_special_tokens=False; decode skips special
    tokens by default), transformers (add_special_tokens=False),
    sentencepiece (no BOS by default), tiktoken (allowed_special="all", as the
    C tokenizer matches special tokens written in the text) and
    pytorch_tokenizers (bos=False, eos=False)."""

    def __init__(self, obj: Any) -> None:
        if not (hasattr(obj, "encode") and hasattr(obj, "decode")):
            raise TypeError(
                "tokenizer= must be a path, a pterun.Tokenizer, or an object with "
                f"encode/decode (tokenizers, transformers, sentencepiece, tiktoken, "
                f"pytorch_tokenizers); got {type(obj).__name__}"
            )
        self.obj = obj
        mod = type(obj).__module__.split(".")[0]
        kw = _keywords(obj.encode)
        if mod == "tiktoken" or "allowed_special" in kw and "bos" not in kw:
            self._enc_kw: dict[str, Any] = {"allowed_special": "all"}
        elif "bos" in kw and "eos" in kw:  # pytorch_tokenizers' Python classes
            self._enc_kw = {"bos": False, "eos": False}
            if (
                "allowed_special" in kw
            ):  # special tokens in the text, as ExecuTorch's C++
                self._enc_kw["allowed_special"] = "all"
        elif mod in ("tokenizers", "transformers") or "add_special_tokens" in kw:
            self._enc_kw = {"add_special_tokens": False}
        else:  # sentencepiece and plain objects
            self._enc_kw = {}
        if mod == "tokenizers":
            self._enc_kw = {"add_special_tokens": False}

    def encode(self, text: str) -> list[int]:
        try:
            enc = self.obj.encode(text, **self._enc_kw)
        except TypeError:
            if not self._enc_kw:
                raise
            enc = self.obj.encode(text)
        ids = getattr(enc, "ids", enc)  # tokenizers.Encoding or a list
        return [int(t) for t in ids]

    def decode(self, ids: Sequence[int]) -> str:
        ids = [int(t) for t in ids]
        try:
            return str(self.obj.decode(ids))
        except TypeError:
            # pytorch_tokenizers' C++ classes decode one token at a time (as
            # ExecuTorch's runner prints them).
            return "".join(str(self.obj.decode(t)) for t in ids)

    def stream(self) -> _PrefixStream:
        return _PrefixStream(self.decode)


def as_tokenizer(tokenizer: Any) -> TextCodec:
    """A path, a :class:`Tokenizer` or a library object -> a :class:`TextCodec`."""
    if isinstance(tokenizer, (str, os.PathLike)):
        return _CTokenizerCodec(Tokenizer(tokenizer))
    if isinstance(tokenizer, Tokenizer):
        return _CTokenizerCodec(tokenizer)
    return _ObjectCodec(tokenizer)


__all__ = [
    "SPECIAL_DEFAULT",
    "SPECIAL_KEEP",
    "SPECIAL_SKIP",
    "DecodeStream",
    "TextCodec",
    "Tokenizer",
    "as_tokenizer",
]
