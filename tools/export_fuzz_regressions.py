#!/usr/bin/env python3
"""Export the fuzz regression programs that come from the real exporter.

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

Deterministic (fixed seed, CPU): the file comes out byte-identical. Needs
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
SEED = 20261202


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "refused_input_unplanned_addmm_relu.pte"
    path.write_bytes(export_unplanned_linear_relu())
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
