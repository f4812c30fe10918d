"""Importing pterun's own Python files (``python/pterun/*.py``) from the tree."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parents[2]


def load_tree_module(relpath: str, name: str, *, register: bool = False) -> ModuleType:
    """Execute ``REPO_ROOT/relpath`` as a new module called ``name`` (every
    call executes it again); with ``register`` it goes into ``sys.modules``
    first (dataclasses and pickling need that)."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / relpath)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_torch_ops() -> ModuleType:
    """``python/pterun/torch_ops.py``: the ``.out`` schemas of torchao's
    quantization ops and pterun's graph passes (executed again each call)."""
    return load_tree_module("python/pterun/torch_ops.py", "pterun_torch_ops")


def load_lowbit() -> ModuleType:
    """``python/pterun/lowbit.py`` as ``pterun_lowbit``, its torch.library
    registrations of torchao's low-bit operators made."""
    mod = load_tree_module("python/pterun/lowbit.py", "pterun_lowbit", register=True)
    mod.register()
    return mod
