"""Text generation with programs exported by ExecuTorch's LLM flow.

>>> import pterun.llm
>>> result = pterun.llm.generate("model.pte", [1, 17, 42], max_new_tokens=32)
>>> result.tokens
[102, 161, ...]

Generation runs in libpterun_textgen (``pterun/llm.h``): the prompt is
prefilled, then one token per step with ``input_pos``, the KV cache kept in the
program's mutable buffers. The same C code serves the CLI
(``pterun generate``), so C, the CLI and Python give the same tokens.

Text in and out needs a tokenizer object from the ``tokenizers`` or
``transformers`` packages (optional; never imported by pterun itself): pass it
as ``tokenizer=`` and give ``prompt`` as a ``str``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pterun import _pterun
from pterun._runtime import Program, Runtime


@dataclass
class GenerationResult:
    """What :func:`generate` returns."""

    tokens: list[int]
    """Generated token ids (the prompt not included)."""
    prompt_tokens: list[int]
    stop: str
    """Why generation ended: "steps", "eos", "context" or "callback"."""
    prefill_seconds: float
    decode_seconds: float
    metadata: dict[str, Any]
    """What the export flow wrote: max_seq_len, bos_id, eos_ids, vocab_size, ..."""
    logits: Any = None
    """float32 numpy array [len(tokens), vocab] when ``return_logits``."""
    text: str | None = None
    """The decoded tokens when a tokenizer was given."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def decode_tokens_per_second(self) -> float:
        n = max(len(self.tokens) - 1, 0)
        return n / self.decode_seconds if self.decode_seconds > 0 and n else 0.0

    @property
    def prefill_tokens_per_second(self) -> float:
        n = len(self.prompt_tokens)
        return n / self.prefill_seconds if self.prefill_seconds > 0 else 0.0


def _encode(tokenizer: Any, text: str) -> list[int]:
    enc = tokenizer.encode(text)
    ids = getattr(enc, "ids", enc)  # tokenizers.Encoding or a list (transformers)
    return [int(t) for t in ids]


def _decode(tokenizer: Any, ids: list[int]) -> str:
    try:
        return str(tokenizer.decode(ids, skip_special_tokens=True))
    except TypeError:
        return str(tokenizer.decode(ids))


def generate(
    model: str | os.PathLike[str] | Program,
    prompt: Sequence[int] | str,
    *,
    max_new_tokens: int = 32,
    temperature: float = 0.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
    stop_tokens: Sequence[int] = (),
    ignore_eos: bool = False,
    tokenizer: Any = None,
    return_logits: bool = False,
) -> GenerationResult:
    """Generates up to ``max_new_tokens`` tokens after ``prompt``.

    ``temperature`` 0 is greedy; otherwise tokens are sampled from
    softmax(logits / temperature) within the ``top_k`` most likely (0: all)
    and the ``top_p`` probability mass, with pterun's own generator seeded by
    ``seed`` (the same seed gives the same tokens everywhere). Generation stops
    at the program's eos ids (unless ``ignore_eos``) or ``stop_tokens``.

    Raises :class:`pterun.Error` when the program cannot run (for example
    ``OPERATOR_MISSING`` without the LLM kernel library).
    """
    if not hasattr(_pterun, "llm_generate"):
        raise RuntimeError(
            "this pterun build does not include the textgen component"
        )
    if isinstance(prompt, str):
        if tokenizer is None:
            raise TypeError(
                "a text prompt needs tokenizer= (from tokenizers or transformers)"
            )
        prompt_ids = _encode(tokenizer, prompt)
    else:
        prompt_ids = [int(t) for t in prompt]
    program = model if isinstance(model, Program) else Runtime.get().load_program(model)
    r = _pterun.llm_generate(
        program._native,
        prompt_ids,
        int(max_new_tokens),
        float(temperature),
        int(top_k),
        float(top_p),
        int(seed) & 0xFFFFFFFFFFFFFFFF,
        bool(ignore_eos),
        [int(t) for t in stop_tokens],
        bool(return_logits),
    )
    logits = None
    if r["logits"] is not None:
        import numpy as np

        logits = (
            np.frombuffer(r["logits"], dtype=np.float32)
            .reshape(-1, r["vocab_size"])
            .copy()
        )
    result = GenerationResult(
        tokens=list(r["tokens"]),
        prompt_tokens=prompt_ids,
        stop=r["stop"],
        prefill_seconds=r["prefill_seconds"],
        decode_seconds=r["decode_seconds"],
        metadata=r["metadata"],
        logits=logits,
    )
    if tokenizer is not None:
        result.text = _decode(tokenizer, result.tokens)
    return result


__all__ = ["GenerationResult", "generate"]
