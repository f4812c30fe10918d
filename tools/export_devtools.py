#!/usr/bin/env python3
"""Export the developer-tool fixtures with the real ExecuTorch exporter.

Writes, under ``OUT`` (default ``tests/fixtures/devtools``):

* ``multi.bpte`` - a bundled program (``executorch.devtools.bundled_program``)
  of a three-method program: ``forward`` (float32 Linear+ReLU), ``int_ops``
  (int64 arithmetic) and ``half_ops`` (float16), two or three test cases
  each, the expected outputs computed by eager PyTorch;
* ``multi_wrong.bpte`` - the same program with the expected output of
  ``forward`` case 1 deliberately changed (verification must fail there);
* ``cnn.pte`` + ``cnn.etrecord`` - a small CNN for the ETDump round trip,
  the ETRecord from ``executorch.devtools.generate_etrecord``;
* ``cnn_ops.txt`` - the CNN's operator table, in program order;
* ``tests/fuzz/corpus/bundle/`` - truncated and bit-flipped bundles.

``executorch_sample.bpte`` is ExecuTorch's own sample bundled program
(``extension/module/test/resources/bundled_program.bpte`` in its repository,
made by ``gen_bundled_program.py`` there); it is copied, not regenerated.

Deterministic (fixed seed), CPU only: the programs and bundles come out
byte-identical; the ETRecord is a zip archive with time stamps, so only its
content repeats. Needs torch + executorch (see
``tools/requirements-export.txt``).
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from torch.export import export

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tools"))
import fixturekit as fk

DEFAULT_OUT = REPO_ROOT / "tests" / "fixtures" / "devtools"
SEED = 20261201


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class IntOps(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a * 3 + b - 1


class HalfOps(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * y + x


class Cnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv1(x))
        y = torch.relu(self.conv2(y)) + y
        y = torch.mean(y, dim=(2, 3))
        return torch.softmax(self.fc(y), dim=-1)


def export_multi(out: Path) -> None:
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import (
        MethodTestCase,
        MethodTestSuite,
    )
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer,
    )
    from executorch.exir import to_edge_transform_and_lower

    models: dict[str, nn.Module] = {
        "forward": Mlp().eval(),
        "int_ops": IntOps().eval(),
        "half_ops": HalfOps().eval(),
    }
    examples: dict[str, tuple[torch.Tensor, ...]] = {
        "forward": (torch.randn(2, 8),),
        "int_ops": (
            torch.randint(-50, 50, (3, 4), dtype=torch.int64),
            torch.randint(-50, 50, (3, 4), dtype=torch.int64),
        ),
        "half_ops": (
            torch.randn(5, dtype=torch.float16),
            torch.randn(5, dtype=torch.float16),
        ),
    }
    eps = {
        name: export(copy.deepcopy(m), examples[name], strict=True)
        for name, m in models.items()
    }
    et_program = to_edge_transform_and_lower(eps).to_executorch()

    def cases(name: str, n: int) -> list[MethodTestCase]:
        result = []
        for _ in range(n):
            ins = [
                torch.randn_like(t)
                if t.is_floating_point()
                else torch.randint_like(t, -50, 50)
                for t in examples[name]
            ]
            with torch.no_grad():
                expected = models[name](*ins)
            result.append(MethodTestCase(inputs=ins, expected_outputs=(expected,)))
        return result

    suites = [
        MethodTestSuite(method_name="forward", test_cases=cases("forward", 3)),
        MethodTestSuite(method_name="int_ops", test_cases=cases("int_ops", 2)),
        MethodTestSuite(method_name="half_ops", test_cases=cases("half_ops", 2)),
    ]
    good = serialize_from_bundled_program_to_flatbuffer(
        BundledProgram(et_program, suites)
    )
    (out / "multi.bpte").write_bytes(good)

    # The same bundle with forward case 1 expecting something else.
    wrong_case = suites[0].test_cases[1]
    wrong = MethodTestCase(
        inputs=list(wrong_case.inputs),
        expected_outputs=(wrong_case.expected_outputs[0] + 0.5,),
    )
    suites[0].test_cases[1] = wrong
    bad = serialize_from_bundled_program_to_flatbuffer(
        BundledProgram(et_program, suites)
    )
    (out / "multi_wrong.bpte").write_bytes(bad)


def export_cnn(out: Path) -> None:
    from executorch.devtools import generate_etrecord
    from executorch.exir import to_edge_transform_and_lower

    model = Cnn().eval()
    example = (torch.randn(1, 3, 8, 8),)
    ep = export(copy.deepcopy(model), example, strict=True)
    edge = to_edge_transform_and_lower(ep)
    edge_copy = copy.deepcopy(edge)
    et_program = edge.to_executorch()
    fk.write_program(out, bytes(et_program.buffer), name="cnn.pte")
    # Stack traces name this machine's files (the script, site-packages): a
    # fixture must not carry them, and the Inspector does not read them.
    for method in edge_copy.methods:
        for node in edge_copy.exported_program(method).graph.nodes:
            node.meta.pop("stack_trace", None)
    generate_etrecord(str(out / "cnn.etrecord"), edge_copy, et_program)
    ops = next(iter(fk.method_operators(et_program).values()))  # the one method
    (out / "cnn_ops.txt").write_text("".join(op + "\n" for op in ops))


def write_fuzz_corpus(fixtures: Path, corpus: Path) -> None:
    """Damaged bundles for the ``bundle`` fuzz target: truncations at and
    around structure boundaries, and seeded bit flips."""
    import random

    rng = random.Random(SEED)
    corpus.mkdir(parents=True, exist_ok=True)
    for name in ("multi.bpte", "executorch_sample.bpte"):
        data = (fixtures / name).read_bytes()
        stem = name.removesuffix(".bpte")
        for cut in (7, 8, 64, len(data) // 3, len(data) // 2, len(data) - 1):
            (corpus / f"{stem}_trunc_{cut}").write_bytes(data[:cut])
        for k in range(6):
            flipped = bytearray(data)
            for _ in range(1 + k):
                pos = rng.randrange(len(flipped))
                flipped[pos] ^= 1 << rng.randrange(8)
            (corpus / f"{stem}_flip_{k}").write_bytes(bytes(flipped))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--corpus-only",
        action="store_true",
        help="only rewrite tests/fuzz/corpus/bundle from the fixtures",
    )
    args = parser.parse_args(argv)
    corpus = REPO_ROOT / "tests" / "fuzz" / "corpus" / "bundle"
    if args.corpus_only:
        write_fuzz_corpus(args.out, corpus)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    export_multi(args.out)
    torch.manual_seed(SEED + 1)
    export_cnn(args.out)
    write_fuzz_corpus(args.out, corpus)
    for p in sorted(args.out.iterdir()):
        print(f"{p.name}: {p.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
