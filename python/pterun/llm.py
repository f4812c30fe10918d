"""Text generation with programs exported by ExecuTorch's LLM flow.

>>> import pterun.llm
>>> result = pterun.llm.generate("model.pte", [1, 17, 42], max_new_tokens=32)
>>> result.tokens
[102, 161, ...]

Generation runs in libpterun_textgen (``pterun/llm.h``): the prompt is
prefilled, then one token per step with ``input_pos``, the KV cache kept in the
program's mutable buffers. The same C code serves the CLI
(``pterun generate``), so C, the CLI and Python give the same tokens.

Text in and out: give ``prompt`` as a ``str`` and ``tokenizer=`` a tokenizer
file (pterun's C tokenizers: Hugging Face tokenizer.json, tiktoken,
sentencepiece .model) or an object from ``tokenizers``, ``transformers``,
``sentencepiece``, ``tiktoken`` or ``pytorch_tokenizers`` (optional packages,
never imported by pterun itself). The program's BOS goes first; the text
streams through ``on_text`` or :func:`stream`.

>>> r = pterun.llm.generate("model.pte", "Once upon a time", tokenizer="tokenizer.json")
>>> r.text
'...'
>>> for piece in pterun.llm.stream("model.pte", "Hi", tokenizer="tokenizer.model"):
...     print(piece, end="", flush=True)
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pterun import _pterun
from pterun._runtime import Program, Runtime
from pterun.tokenizer import TextCodec, as_tokenizer


@dataclass
class GenerationResult:
    """What :func:`generate` returns."""

    tokens: list[int]
    """Generated token ids (the prompt not included)."""
    prompt_tokens: list[int]
    stop: str
    """Why generation ended: "steps", "eos", "context", "callback" or "stop_string"."""
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
    bos: int | bool | None = None,
    stop: Sequence[str] = (),
    on_text: Callable[[str], Any] | None = None,
    on_token: Callable[[int, int], Any] | None = None,
    return_logits: bool = False,
) -> GenerationResult:
    """Generates up to ``max_new_tokens`` tokens after ``prompt``.

    ``prompt``: token ids, or text encoded with ``tokenizer`` (a tokenizer
    file path, a :class:`pterun.Tokenizer`, or a library object). ``bos``: the
    id put before the prompt; by default the program's ``get_bos_id`` for a
    text prompt (none if the program has none) and nothing for ids;
    ``False`` for none. ``temperature`` 0 is greedy; otherwise tokens are
    sampled from softmax(logits / temperature) within the ``top_k`` most
    likely (0: all) and the ``top_p`` probability mass, with pterun's own
    generator seeded by ``seed`` (the same seed gives the same tokens
    everywhere). Generation stops at the program's eos ids (unless
    ``ignore_eos``), ``stop_tokens``, or once the text contains one of
    ``stop``. ``on_text(piece)`` receives the text as it becomes complete,
    ``on_token(index, token)`` every token (return True to stop).

    Raises :class:`pterun.Error` when the program cannot run (for example
    ``OPERATOR_MISSING`` without the LLM kernel library).
    """
    if not hasattr(_pterun, "llm_generate"):
        raise RuntimeError("this pterun build does not include the textgen component")
    codec: TextCodec | None = as_tokenizer(tokenizer) if tokenizer is not None else None
    if isinstance(prompt, str):
        if codec is None:
            raise TypeError(
                "a text prompt needs tokenizer= (a tokenizer file or a tokenizer object)"
            )
        prompt_ids = codec.encode(prompt)
        bos_arg = -2 if bos is None or bos is True else -1 if bos is False else int(bos)
    else:
        prompt_ids = [int(t) for t in prompt]
        bos_arg = -1 if bos is None or bos is False else -2 if bos is True else int(bos)
    if (stop or on_text is not None) and codec is None:
        raise TypeError("stop= and on_text= need tokenizer=")
    dec = codec.stream() if codec is not None else None
    seen: list[str] = []
    stop_hit = [False]
    longest = max((len(s) for s in stop), default=0)

    def step(index: int, token: int) -> bool:
        halt = bool(on_token(index, token)) if on_token is not None else False
        if dec is not None:
            piece = dec.push(token)
            if piece:
                seen.append(piece)
                if on_text is not None:
                    on_text(piece)
                if stop:
                    tail = "".join(seen)[-(longest + len(piece)) :]
                    if any(s and s in tail for s in stop):
                        stop_hit[0] = True
                        halt = True
        return halt

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
        bos_arg,
        step if (dec is not None or on_token is not None) else None,
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
        prompt_tokens=list(r["prompt_tokens"]),
        stop="stop_string" if stop_hit[0] else r["stop"],
        prefill_seconds=r["prefill_seconds"],
        decode_seconds=r["decode_seconds"],
        metadata=r["metadata"],
        logits=logits,
    )
    if codec is not None and dec is not None:
        rest = dec.finish()
        if rest and on_text is not None:
            on_text(rest)
        # The library's decode of the tokens (what was streamed, held bytes included).
        result.text = codec.decode(result.tokens)
    return result


def stream(
    model: str | os.PathLike[str] | Program,
    prompt: Sequence[int] | str,
    *,
    tokenizer: Any,
    **kwargs: Any,
) -> Iterator[str]:
    """:func:`generate` as an iterator of text pieces (as ExecuTorch's runner
    streams through its callback). Generation runs on a thread; leaving the
    loop early stops it after the current token. The last item is followed
    by nothing: the result's text is the pieces joined."""
    pieces: queue.Queue[Any] = queue.Queue()
    done = object()
    cancel = threading.Event()
    user_on_token = kwargs.pop("on_token", None)

    def on_token(index: int, token: int) -> bool:
        halt = bool(user_on_token(index, token)) if user_on_token is not None else False
        return halt or cancel.is_set()

    def run() -> None:
        try:
            generate(
                model,
                prompt,
                tokenizer=tokenizer,
                on_text=pieces.put,
                on_token=on_token,
                **kwargs,
            )
            pieces.put(done)
        except BaseException as e:  # noqa: BLE001  (re-raised in the consumer)
            pieces.put(e)

    worker = threading.Thread(target=run, name="pterun-generate", daemon=True)
    worker.start()
    try:
        while True:
            item = pieces.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        cancel.set()
        worker.join()


__all__ = ["GenerationResult", "generate", "stream"]
