"""Deterministic seeding of the exporters."""

from __future__ import annotations

import numpy as np
import torch


def case_seed(base: int, name: str) -> int:
    """One seed per case, stable across runs and independent of which cases
    are exported: ``base`` plus the sum of the name's bytes."""
    return base + sum(name.encode())


def seed_case(base: int, name: str, *, numpy_seed: int | None = None) -> None:
    """Seed torch with :func:`case_seed` (and numpy's global generator with
    ``numpy_seed`` when given)."""
    torch.manual_seed(case_seed(base, name))
    if numpy_seed is not None:
        np.random.seed(numpy_seed % (2**32))


def single_thread(*, deterministic_algorithms: bool = False) -> None:
    """One intra-op thread (the summation order of a kernel does not depend
    on the machine), optionally only deterministic algorithms."""
    if deterministic_algorithms:
        torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
