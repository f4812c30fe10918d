#!/usr/bin/env python3
"""Export a small XNNPACK-delegated program for pterun's delegate tests.

pterun runs no delegate backends; the test checks that loading such a method
fails with BACKEND_UNAVAILABLE naming the backend, and that inspection still
works. Needs torch==2.13.0 and executorch==1.5.1 (tools/requirements-export.txt).

Usage: python tools/export_delegated.py [--out tests/core/data/delegated_xnnpack.pte]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = (
        Path(__file__).resolve().parent.parent / "tests/core/data/delegated_xnnpack.pte"
    )
    parser.add_argument("--out", type=Path, default=default)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Small().eval()
    ep = torch.export.export(model, (torch.randn(2, 4),))
    program = to_edge_transform_and_lower(
        ep, partitioner=[XnnpackPartitioner()]
    ).to_executorch()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(program.buffer)
    print(f"wrote {args.out} ({len(program.buffer)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
