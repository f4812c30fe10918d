#!/usr/bin/env python3
"""Export the hostile-input programs made from real exports (fuzz regressions).

Writes ``tests/fuzz/regressions/execute/refused_input_unplanned_addmm_relu.pte``:
``nn.Sequential(nn.Linear(16, 32), nn.ReLU())`` on a [4, 16] input, exported
with ``MemoryPlanningPass(alloc_graph_input=False)`` so that its input is
*unplanned* (the method points at the caller's memory). Fused at load into
``pterun::addmm_relu.out``, it is the shape of issue 21 defect 7a: a refused
``set_input`` left the earlier binding in place, the harness freed that
buffer, and execute read it in the f32 GEMM. ``fuzz_execute`` refuses one
binding in its second round and requires execute to refuse too; the C test
``method_refused_input_is_unbound`` (tests/core/test_method.c) loads the same
file and frees the buffer after the refusal (ASan sees any read of it).

Writes ``tests/robustness/data/profiler_output_bomb.pte``: ``torch.relu`` on
a [1024, 2048] float32 input (8 MiB planned output), its one instruction
repeated ``BOMB_CALLS`` times in the serialized program (each call rewrites
the same planned tensor, valid for the runtime). Under 8 KB, the file made a
profiler recording outputs reserve calls x 8 MiB x max_runs (3.2 GB in the
campaign's 7.8 KB bundle, issue 21 defect 7b); ``tests/robustness/test_file_bounds.c``
loads it with a counting allocator and bounds the peak.

Writes ``tests/fuzz/regressions/bundle/profiler_output_bomb.bpte``: that
program in a bundled program (``executorch.devtools.bundled_program``) with
one test suite of no cases, which ``fuzz_bundle`` loads with a profiler
recording outputs (the campaign's crasher had this shape).

Writes ``tests/robustness/data/fold_bomb.pte``: ``x + c.expand(1024, 256)``
with a [1, 256] constant ``c``, plus ``BOMB_FOLDS`` more ``expand_copy`` calls
of ``c`` into distinct [1024 - k, 256] results that all share one planned
range. Each is a load-time fold with its own result (no two are equal), so
before the fold budget a 10 KB file made method load allocate about
``BOMB_FOLDS`` MiB of folded constants.

Deterministic (fixed seed, CPU): the files come out byte-identical. Needs
torch + executorch (``tools/requirements-export.txt``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from torch import nn
from torch.export import export

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "tests" / "fuzz" / "regressions" / "execute"
ROBUSTNESS_DATA = REPO_ROOT / "tests" / "robustness" / "data"
SEED = 20261202
BOMB_CALLS = 150
BOMB_FOLDS = 60


def export_unplanned_linear_relu() -> bytes:
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    torch.manual_seed(SEED)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU()).eval()
    ep = export(model, (torch.randn(4, 16),), strict=True)
    config = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(alloc_graph_input=False)
    )
    return bytes(to_edge_transform_and_lower(ep).to_executorch(config).buffer)


class _Relu(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def export_profiler_output_bomb() -> bytes:
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir._serialize._program import (
        deserialize_pte_binary,
        serialize_pte_binary,
    )

    ep = export(_Relu(), (torch.zeros(1024, 2048),), strict=True)
    pte = bytes(to_edge_transform_and_lower(ep).to_executorch().buffer)
    pte_file = deserialize_pte_binary(pte)
    chain = pte_file.program.execution_plan[0].chains[0]
    if len(chain.instructions) != 1:
        raise RuntimeError(f"expected one relu call, got {chain.instructions}")
    chain.instructions = chain.instructions * BOMB_CALLS
    return bytes(serialize_pte_binary(pte_file))


class _ExpandAdd(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer(
            "c", torch.arange(256, dtype=torch.float32).reshape(1, 256)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.c.expand(1024, 256)


def export_fold_bomb() -> bytes:
    import copy

    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir._serialize._program import (
        deserialize_pte_binary,
        serialize_pte_binary,
    )
    from executorch.exir.schema import EValue, Instruction, Int, IntList, KernelCall

    ep = export(_ExpandAdd(), (torch.zeros(1024, 256),), strict=True)
    pte = bytes(to_edge_transform_and_lower(ep).to_executorch().buffer)
    pte_file = deserialize_pte_binary(pte)
    plan = pte_file.program.execution_plan[0]
    chain = plan.chains[0]
    first = chain.instructions[0].instr_args
    if plan.operators[first.op_index].name != "aten::expand_copy":
        raise RuntimeError(f"expected expand_copy first, got {plan.operators}")
    src, sizes, implicit, out = (
        first.args[0],
        first.args[1],
        first.args[2],
        first.args[3],
    )
    cols_item = plan.values[sizes].val.items[1]
    extra = []
    for k in range(1, BOMB_FOLDS + 1):
        plan.values.append(EValue(Int(1024 - k)))
        rows = len(plan.values) - 1
        plan.values.append(EValue(IntList([rows, cols_item])))
        size_list = len(plan.values) - 1
        result = copy.deepcopy(plan.values[out])
        result.val.sizes = [1024 - k, 256]  # same planned range as `out`
        plan.values.append(result)
        res = len(plan.values) - 1
        call = KernelCall(first.op_index, [src, size_list, implicit, res, res])
        extra.append(Instruction(call))
    chain.instructions = extra + chain.instructions
    return bytes(serialize_pte_binary(pte_file))


def bundle_without_cases(pte: Path) -> bytes:
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer,
    )

    suite = MethodTestSuite(method_name="forward", test_cases=[])
    bundle = BundledProgram(None, method_test_suites=[suite], pte_file_path=str(pte))
    return bytes(serialize_from_bundled_program_to_flatbuffer(bundle))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "refused_input_unplanned_addmm_relu.pte"
    path.write_bytes(export_unplanned_linear_relu())
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    ROBUSTNESS_DATA.mkdir(parents=True, exist_ok=True)
    for name, make in (
        ("profiler_output_bomb.pte", export_profiler_output_bomb),
        ("fold_bomb.pte", export_fold_bomb),
    ):
        path = ROBUSTNESS_DATA / name
        path.write_bytes(make())
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    bundle_dir = args.out.parent / "bundle"
    bundle_dir.mkdir(parents=True, exist_ok=True)
    path = bundle_dir / "profiler_output_bomb.bpte"
    path.write_bytes(bundle_without_cases(ROBUSTNESS_DATA / "profiler_output_bomb.pte"))
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
