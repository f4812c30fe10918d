"""Bundled programs (``.bpte``): a program plus test cases, made by
``executorch.devtools.bundled_program``; :func:`verify` runs them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from pterun import _pterun
from pterun._runtime import Method, Program, Source

#: ExecuTorch's defaults (``verify_method_outputs``).
DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 1e-8


@dataclass(frozen=True)
class CaseResult:
    """One test case: ExecuTorch's comparison of outputs and expectations."""

    method: str
    case: int
    passed: bool
    outputs_compared: int
    failed_output: int
    mismatched: int
    max_abs_error: float
    max_rel_error: float
    message: str


@dataclass(frozen=True)
class VerifyReport:
    """Every case that ran; ``passed`` when all did."""

    cases: tuple[CaseResult, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cases)

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        return tuple(c for c in self.cases if not c.passed)


class BundledProgram(Program):
    """A verified bundled program: its embedded program (used in place) and
    its test suites."""

    @property
    def test_suites(self) -> dict[str, int]:
        """``{method name: number of test cases}``."""
        return dict(self._native.bundle_suites() or [])

    def run_case(
        self,
        method: Method,
        case: int,
        *,
        rtol: float = DEFAULT_RTOL,
        atol: float = DEFAULT_ATOL,
    ) -> CaseResult:
        """Binds test case ``case`` of ``method``'s suite, executes, compares."""
        d = method._native.run_bundled_case(case, rtol, atol)
        return CaseResult(method=method.name, case=case, **d)

    def verify(
        self,
        *,
        methods: Sequence[str] | None = None,
        rtol: float = DEFAULT_RTOL,
        atol: float = DEFAULT_ATOL,
    ) -> VerifyReport:
        """Runs every test case of every suite (or of ``methods``)."""
        results = []
        for name, count in self.test_suites.items():
            if methods is not None and name not in methods:
                continue
            m = self.load_method(name)
            for case in range(count):
                results.append(self.run_case(m, case, rtol=rtol, atol=atol))
        return VerifyReport(tuple(results))

    def __repr__(self) -> str:
        return (
            f"<pterun.BundledProgram {self._native.origin!r} suites={self.test_suites}>"
        )


def load_bundled(source: Source) -> BundledProgram:
    """Loads and verifies a bundled program (path, memory-mapped, or bytes).
    Raises :class:`pterun.Error` (``INVALID_PROGRAM``: malformed) or
    ``ValueError`` for a plain ``.pte``."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    native = _pterun.load_program(source, [])
    if native.bundle_suites() is None:
        raise ValueError(f"{native.origin}: not a bundled program (no BP08 identifier)")
    return BundledProgram(native)


def verify(
    source: Source | BundledProgram,
    *,
    methods: Sequence[str] | None = None,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
) -> VerifyReport:
    """Runs every test case of a bundled program, as ``pterun verify`` does."""
    bundle = source if isinstance(source, BundledProgram) else load_bundled(source)
    return bundle.verify(methods=methods, rtol=rtol, atol=atol)
