"""Type stubs for pterun's C extension (python/pterun/_pterun.c)."""

from collections.abc import Sequence
from typing import Any, final

COMPONENTS: tuple[str, ...]
LIBRARY_VERSION: str
LIBRARY_VERSION_NUMBER: int
HEADER_VERSION: str
MAX_RANK: int

class Error(RuntimeError):
    status: str
    code: int
    message: str
    log: tuple[str, ...]

@final
class Tensor:
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def ndim(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    def tobytes(self) -> bytes: ...
    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

@final
class Method:
    @property
    def name(self) -> str: ...
    @property
    def input_count(self) -> int: ...
    @property
    def output_count(self) -> int: ...
    @property
    def program(self) -> Program: ...
    @property
    def last_input_copies(self) -> tuple[bool, ...]: ...
    def execute(self, inputs: Sequence[Any], /) -> list[Any]: ...
    def memory(self) -> tuple[int, int]: ...

@final
class Program:
    @property
    def method_names(self) -> tuple[str, ...]: ...
    @property
    def origin(self) -> str: ...
    def load_method(
        self,
        name: str,
        profile_runs: int = 0,
        record_outputs: bool = False,
        threads: int = 0,
        no_fusion: bool = False,
    ) -> Method: ...
    def method_meta(self, name: str, /) -> dict[str, Any]: ...
    def info(self) -> dict[str, Any]: ...
    def method_memory(self, name: str, /) -> dict[str, int]: ...

def load_program(source: Any, data_files: Sequence[Any] | None = None) -> Program: ...
def kernels() -> list[tuple[str, str]]: ...
def component_for_op(op: str, /) -> str | None: ...
def status_names() -> dict[int, str]: ...
def llm_generate(
    program: Program,
    prompt: Sequence[int],
    max_new_tokens: int,
    temperature: float,
    top_k: int,
    top_p: float,
    seed: int,
    ignore_eos: bool,
    stop_tokens: Sequence[int],
    return_logits: bool,
    /,
) -> dict[str, Any]: ...
