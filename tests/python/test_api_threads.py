"""execute() releases the GIL: methods run from several threads at once, each
giving the same bytes as a single-threaded run."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pterun
from conftest import FIXTURES_DIR

ITERATIONS = 300


def _two_methods() -> list[tuple[pterun.Method, np.ndarray[Any, Any]]]:
    program = pterun.Runtime.get().load_program(
        FIXTURES_DIR / "two_methods" / "model.pte"
    )
    return [
        (
            program.load_method(name),
            np.load(FIXTURES_DIR / "two_methods" / f"{name}_input_0.npy"),
        )
        for name in ("forward", "encode")
    ]


def _loop(method: pterun.Method, x: np.ndarray[Any, Any], expected: bytes) -> int:
    bad = 0
    for _ in range(ITERATIONS):
        if method.execute([x])[0].tobytes() != expected:
            bad += 1
    return bad


def test_two_methods_from_two_threads() -> None:
    cases = _two_methods()
    expected = [m.execute([x])[0].tobytes() for m, x in cases]
    start = threading.Barrier(len(cases))

    def work(k: int) -> int:
        start.wait()
        m, x = cases[k]
        return _loop(m, x, expected[k])

    with ThreadPoolExecutor(len(cases)) as pool:
        assert list(pool.map(work, range(len(cases)))) == [0, 0]


def test_one_method_from_many_threads() -> None:
    """Calls on one method are serialised by the binding, never interleaved."""
    m, x = _two_methods()[0]
    inputs = [x * (k + 1) for k in range(4)]
    expected = [m.execute([i])[0].tobytes() for i in inputs]
    with ThreadPoolExecutor(4) as pool:
        assert (
            list(pool.map(lambda k: _loop(m, inputs[k], expected[k]), range(4)))
            == [0] * 4
        )


def test_other_threads_run_python_meanwhile() -> None:
    """A Python thread keeps running while another executes methods."""
    m, x = _two_methods()[0]
    expected = m.execute([x])[0].tobytes()
    stop = threading.Event()
    ticks = [0]

    def spin() -> None:
        while not stop.is_set():
            ticks[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        assert _loop(m, x, expected) == 0
    finally:
        stop.set()
        spinner.join()
    assert ticks[0] > 0


def test_threads_option_gives_identical_bytes() -> None:
    """load_method(threads=...) caps the pool's threads per kernel; every value
    gives the same bytes (kernels never split a reduction by thread count)."""
    program = pterun.Runtime.get().load_program(
        FIXTURES_DIR / "mobilenet" / "model.pte"
    )
    x = np.load(FIXTURES_DIR / "mobilenet" / "forward_input_0.npy")
    outs = [
        program.load_method("forward", threads=t).execute([x])[0].tobytes()
        for t in (1, None, 2, 3)
    ]
    assert all(o == outs[0] for o in outs)


def test_threads_option_rejects_negative() -> None:
    program = pterun.Runtime.get().load_program(FIXTURES_DIR / "mlp" / "model.pte")
    try:
        program.load_method("forward", threads=-1)
    except ValueError as e:
        assert "threads" in str(e)
    else:
        raise AssertionError("threads=-1 was accepted")
