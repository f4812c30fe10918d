"""Release check helper (tools/release_check.py, wheel mode): in one clean
interpreter, loads the wheel's shared libraries and the extension in the order
given, runs a program with the same deterministic inputs as
tests/release/common/run_model.h and prints its outputs in the same format, so
the output must be byte-identical to the C consumers'.

    python -I python_run.py MODEL METHOD ITEM...   ITEM: a library path, or "extension"
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any


def fill(dtype: str, n: int, i: int) -> list[Any]:
    if dtype in ("float32", "float64", "float16"):
        return [((k * 37 + i * 11) % 17 - 8) / 8.0 for k in range(n)]
    if dtype == "bool":
        return [(k + i) % 2 == 1 for k in range(n)]
    return [(k * 7 + i) % 5 for k in range(n)]


def main() -> int:
    model, method, *items = sys.argv[1:]
    pterun: Any = None
    for item in items:
        if item == "extension":
            import pterun as pterun_module

            pterun = pterun_module
        else:
            ctypes.CDLL(item, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    if pterun is None:
        import pterun as pterun_module

        pterun = pterun_module
    import numpy as np

    runtime = pterun.Runtime.get()
    names = list(runtime.operator_registry.operator_names)
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        print(f"FAIL: registered more than once: {dups}")
        return 1
    m = runtime.load_program(model).load_method(method)
    inputs: list[Any] = []
    for i, info in enumerate(m.metadata.inputs):
        if info.kind != "Tensor":
            inputs.append(info.value)
            continue
        n = 1
        for s in info.shape:
            n *= s
        inputs.append(
            np.array(fill(info.dtype, n, i), dtype=info.dtype).reshape(info.shape)
        )
    out = sys.stdout
    for i, o in enumerate(m.execute(inputs)):
        if isinstance(o, np.ndarray):
            out.write(f"output {i} {o.dtype} [{', '.join(str(s) for s in o.shape)}]\n")
            flat = o.reshape(-1)
            for k, v in enumerate(flat):
                if o.dtype == np.float32:
                    out.write(" %.9g" % float(v))
                elif o.dtype == np.float64:
                    out.write(" %.17g" % float(v))
                else:
                    out.write(f" {int(v)}")
                if k % 8 == 7 or k + 1 == flat.size:
                    out.write("\n")
        elif isinstance(o, bool):
            out.write(f"output {i} bool {int(o)}\n")
        elif isinstance(o, int):
            out.write(f"output {i} int {o}\n")
        elif isinstance(o, float):
            out.write(f"output {i} double %.17g\n" % o)
        else:
            out.write(f"output {i} {type(o).__name__}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
