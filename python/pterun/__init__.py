"""pterun: run ExecuTorch ``.pte`` programs on a CPU.

>>> import numpy as np, pterun
>>> program = pterun.Runtime.get().load_program("model.pte")
>>> forward = program.load_method("forward")
>>> outputs = forward.execute([np.ones((2, 3), np.float32)])

See docs/python.md. Importing this package registers every kernel library the
wheel ships (``pterun.COMPONENTS``) with the runtime's operator registry.
"""

from __future__ import annotations

from pterun._bundled import (
    BundledProgram,
    CaseResult,
    VerifyReport,
    load_bundled,
    verify,
)
from pterun._meta import MethodMeta, Operator, ValueInfo
from pterun._ops import OperatorRegistry, component_for_op, ops
from pterun._pterun import COMPONENTS, Error, Tensor
from pterun._runtime import InstructionProfile, Method, Profile, Program, Runtime
from pterun._version import VersionInfo, __version__, version_info
from pterun.tokenizer import Tokenizer

__all__ = [
    "COMPONENTS",
    "BundledProgram",
    "CaseResult",
    "Error",
    "InstructionProfile",
    "Method",
    "MethodMeta",
    "Operator",
    "OperatorRegistry",
    "Profile",
    "Program",
    "Runtime",
    "Tensor",
    "Tokenizer",
    "ValueInfo",
    "VerifyReport",
    "VersionInfo",
    "__version__",
    "component_for_op",
    "load_bundled",
    "ops",
    "verify",
    "version_info",
]
