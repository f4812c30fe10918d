"""execute() releases the GIL: methods run from several threads at once, each
giving the same bytes as a single-threaded run."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
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


# Run in a child process: the binding starts one pool for the process, at the
# first method that wants threads (maybe an earlier test's), and the pool reads
# PTERUN_THREADPOOL_MIN_WORK_NS when it starts.
_IDENTICAL_BYTES_CHILD = """
import hashlib, sys
import numpy as np
import pterun
program = pterun.Runtime.get().load_program(sys.argv[1])
x = np.load(sys.argv[2])
for t in (1, None, 2, 3):
    out = program.load_method("forward", threads=t).execute([x])[0].tobytes()
    print(hashlib.sha256(out).hexdigest())
"""


def test_threads_option_gives_identical_bytes() -> None:
    """load_method(threads=...) caps the pool's threads per kernel; every value
    gives the same bytes (kernels never split a reduction by thread count).
    PTERUN_THREADPOOL_MIN_WORK_NS=1 makes the pool split every call, as the C
    tests do: at the default threshold this model's small calls would run on
    one thread whatever the cap."""
    env = dict(os.environ)
    env["PTERUN_THREADPOOL_MIN_WORK_NS"] = "1"
    # the child imports the same pterun as this process
    site = str(Path(pterun.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        [site] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    model = FIXTURES_DIR / "mobilenet"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _IDENTICAL_BYTES_CHILD,
            str(model / "model.pte"),
            str(model / "forward_input_0.npy"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    digests = r.stdout.split()
    assert len(digests) == 4 and all(d == digests[0] for d in digests), digests


def test_threads_option_rejects_negative() -> None:
    program = pterun.Runtime.get().load_program(FIXTURES_DIR / "mlp" / "model.pte")
    try:
        program.load_method("forward", threads=-1)
    except ValueError as e:
        assert "threads" in str(e)
    else:
        raise AssertionError("threads=-1 was accepted")
