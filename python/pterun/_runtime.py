"""Runtime, Program and Method: the API shaped like ``executorch.runtime``."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Union

from pterun import _pterun
from pterun._convert import to_numpy
from pterun._meta import MethodMeta
from pterun._ops import OperatorRegistry

#: A program or data file: a path (memory-mapped) or its bytes.
Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]

#: One output of ``Method.execute``: a NumPy array, an ``int``, ``float``,
#: ``bool``, ``str``, ``None`` or a list of those (typed ``Any`` so that
#: callers need no narrowing).
Output = Any


@dataclass(frozen=True)
class InstructionProfile:
    """Totals for one instruction (``op_name`` None: not a kernel call)."""

    chain: int
    instruction: int
    op_name: str | None
    calls: int
    total_ns: int
    min_ns: int
    max_ns: int
    slow_path: str | None


@dataclass(frozen=True)
class Profile:
    """What a method's profiler recorded."""

    method: str
    executes: int
    instructions: tuple[InstructionProfile, ...]
    runs: tuple[tuple[int, int], ...]  # (start_ns, end_ns) per kept execute
    events: tuple[
        tuple[int, int, int, int], ...
    ]  # (run, instruction, start_ns, end_ns)

    @staticmethod
    def from_native(d: dict[str, Any]) -> Profile:
        return Profile(
            method=d["method"],
            executes=d["executes"],
            instructions=tuple(InstructionProfile(*t) for t in d["instructions"]),
            runs=tuple(d["runs"]),
            events=tuple(d["events"]),
        )

    def per_operator(self) -> dict[str, tuple[int, int]]:
        """``{operator: (calls, total_ns)}``, most expensive first."""
        acc: dict[str, list[int]] = {}
        for i in self.instructions:
            if i.op_name is not None and i.calls:
                row = acc.setdefault(i.op_name, [0, 0])
                row[0] += i.calls
                row[1] += i.total_ns
        ordered = sorted(acc.items(), key=lambda kv: -kv[1][1])
        return {k: (v[0], v[1]) for k, v in ordered}


class Method:
    """A loaded method. ``execute`` may be called from several threads; calls
    on one method run one at a time, calls on different methods in parallel
    (the GIL is released while the runtime works)."""

    def __init__(self, native: _pterun.Method, metadata: MethodMeta) -> None:
        self._native = native
        self._metadata = metadata

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def metadata(self) -> MethodMeta:
        """Inputs, outputs (dtype, shape, dim order, dynamism), operators."""
        return self._metadata

    def execute(self, inputs: Sequence[Any]) -> list[Output]:
        """Runs the method once and returns its outputs.

        ``inputs``: one per method input, in order. Tensors may be anything
        with the buffer protocol (NumPy arrays, ``array``, ``memoryview``) or
        ``__dlpack__`` (``torch.Tensor``): the dtype and rank must match; the
        memory is used as it is when its layout fits the input's dim order,
        else copied once. Scalars are Python ``int``/``float``/``bool``.

        Returns NumPy arrays for tensors (copies of the method's output
        memory, which the next execute reuses), Python scalars for scalars.
        Raises :class:`pterun.Error` with the runtime's status and message.
        """
        return [to_numpy(v) for v in self._native.execute(inputs)]

    def execute_tensors(self, inputs: Sequence[Any]) -> list[Any]:
        """Like :meth:`execute`, but tensors come back as :class:`pterun.Tensor`
        (buffer protocol and DLPack: ``torch.from_dlpack(t)`` shares the
        memory). Needs no NumPy."""
        return self._native.execute(inputs)

    @property
    def last_input_copies(self) -> tuple[bool, ...]:
        """For each input of the last execute: whether the binding had to copy
        it (wrong layout, misaligned, read-only, or float32 for bfloat16)."""
        return self._native.last_input_copies

    def profile(self) -> Profile:
        """What the profiler recorded (the method must have been loaded with
        ``profile=True``): per-instruction totals, kept executes and their
        kernel-call events. Raises :class:`pterun.Error` ``INVALID_STATE``
        without a profiler."""
        return Profile.from_native(self._native.profile())

    def reset_profile(self) -> None:
        """Forgets every recorded execute (e.g. after warm-up)."""
        self._native.reset_profile()

    def write_trace(self, path: str | os.PathLike[str]) -> None:
        """Writes the kept executes as Chrome trace JSON (chrome://tracing)."""
        self._native.write_trace(path)

    def write_etdump(
        self,
        path: str | os.PathLike[str],
        *,
        debug_buffer_path: str | os.PathLike[str] | None = None,
    ) -> None:
        """Writes the kept executes as an ETDump for
        ``executorch.devtools.Inspector(etdump_path=..., etrecord=...)``.
        ``debug_buffer_path`` (needs ``record_outputs=True`` at load) also
        writes every kernel's output as an ETDump debug event, its bytes in
        that file (``Inspector(..., debug_buffer_path=...)``)."""
        self._native.write_etdump(path, debug_buffer_path)

    def memory(self) -> tuple[int, int]:
        """(runtime bytes, planned-buffer bytes) pterun allocated for the method."""
        return self._native.memory()

    def __call__(self, *inputs: Any) -> list[Output]:
        return self.execute(inputs)

    def __repr__(self) -> str:
        return f"<pterun.Method {self.name!r}>"


class Program:
    """A verified ``.pte`` program (and its external data files)."""

    def __init__(self, native: _pterun.Program) -> None:
        self._native = native

    @property
    def method_names(self) -> tuple[str, ...]:
        """The program's methods, in program order."""
        return self._native.method_names

    def metadata(self, method_name: str) -> MethodMeta:
        """Describes a method without loading it."""
        return MethodMeta.from_dict(self._native.method_meta(method_name))

    def load_method(
        self,
        name: str = "forward",
        *,
        profile: bool | int = False,
        record_outputs: bool = False,
        threads: int | None = None,
        no_fusion: bool = False,
    ) -> Method:
        """Loads a method, resolving every operator it uses.

        ``profile``: attach a profiler (``True`` keeps 16 executes event by
        event, an ``int`` that many; later executes only add to the totals);
        see :meth:`Method.profile`, :meth:`Method.write_etdump`. Without it
        execute reads no clock. ``record_outputs``: the profiler also copies
        every kernel's output (for ETDump debug events).

        ``threads`` caps the threads each kernel of this method may use: None
        (default) uses the process's pool, sized to the CPUs this process may
        use (affinity mask and cgroup quota) and started by the first method
        that asks for threads; 1 runs on the calling thread only. Outputs are
        bit-identical for any value.

        ``no_fusion``: keep the program's operators as they are (the load-time
        fusion pass off, as the CLI's ``--no-fusion``): the reference path,
        bit-exact with ExecuTorch's kernels where the fused integer kernels
        differ by float rounding (docs/quantized.md).

        Raises :class:`pterun.Error`: ``NOT_FOUND`` (no such method),
        ``OPERATOR_MISSING`` (the message names each missing operator and the
        component that ships it), ``BACKEND_UNAVAILABLE`` (delegated method),
        ``INVALID_EXTERNAL_DATA`` (a data file is missing or does not match).
        """
        runs = int(profile) if not isinstance(profile, bool) else (16 if profile else 0)
        if runs < 0:
            raise ValueError("profile must be a bool or a non-negative int")
        if record_outputs and runs == 0:
            runs = 16
        native = self._native.load_method(
            name, runs, record_outputs, 0 if threads is None else threads, no_fusion
        )
        return Method(native, self.metadata(name))

    def method_memory(self, name: str = "forward") -> dict[str, int]:
        """The bytes :meth:`load_method` would allocate for method ``name``,
        before loading it: ``runtime_bytes`` and ``planned_bytes`` (what
        :meth:`Method.memory` reports after the load) and, of the runtime
        bytes, ``prepared_bytes`` (packed and folded weights),
        ``delegate_bytes``, ``folded_bytes``, ``scratch_bytes`` and
        ``fused_result_bytes`` (fused results given memory of their own); plus
        ``load_peak_bytes``, the most the load holds at once. Measured by a
        trial load that is undone (it costs one load's time)."""
        return self._native.method_memory(name)

    def info(self) -> dict[str, Any]:
        """Container facts: sizes, segments, constants, counts."""
        return self._native.info()

    def __repr__(self) -> str:
        return f"<pterun.Program {self._native.origin!r} methods={self.method_names}>"


class Runtime:
    """The entry point: ``pterun.Runtime.get().load_program(path)``."""

    _instance: Runtime | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.operator_registry = OperatorRegistry()

    @staticmethod
    def get() -> Runtime:
        """The process's runtime (every kernel library the wheel ships is
        registered when ``pterun`` is imported)."""
        with Runtime._lock:
            if Runtime._instance is None:
                Runtime._instance = Runtime()
            return Runtime._instance

    def load_program(
        self, data: Source, *, data_files: Sequence[Source] = ()
    ) -> Program:
        """Loads and verifies a program.

        ``data``: a path (``str`` or ``os.PathLike``; the file is
        memory-mapped) or the program's bytes (``bytes`` are used in place
        when suitably aligned, other buffers are copied).
        ``data_files``: external data (``.ptd``) files the program's methods
        read, as paths or bytes.

        Raises :class:`pterun.Error` (``IO_ERROR``, ``INVALID_PROGRAM``,
        ``INCOMPATIBLE_VERSION``, ``INVALID_DATA``, ...).
        """
        if isinstance(data, os.PathLike):
            data = os.fspath(data)
        files = [os.fspath(f) if isinstance(f, os.PathLike) else f for f in data_files]
        return Program(_pterun.load_program(data, files))
