"""Subprocess of runner.run_python: run one program through pterun's Python
API in several modes (PTERUN_ISA_MASK comes from the environment) and write
each mode's outputs as .npy files. argv[1]: a JSON request; prints one JSON
line: per mode null (ran) or the error message."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def main() -> int:
    import pterun

    req = json.loads(sys.argv[1])
    xs = [np.load(p) for p in req["inputs"]]
    program = pterun.Runtime.get().load_program(req["pte"])
    status: list[str | None] = []
    for j, m in enumerate(req["modes"]):
        try:
            method = program.load_method(
                "forward", threads=m["threads"], no_fusion=not m["fusion"]
            )
            outs = method.execute(xs)
        except pterun.Error as e:
            status.append(str(e))
            continue
        for k, o in enumerate(outs):
            np.save(Path(req["out"]) / f"m{j}_{k}.npy", np.asarray(o))
        status.append(None)
    print(json.dumps(status))
    return 0


if __name__ == "__main__":
    sys.exit(main())
