#!/usr/bin/env python3
"""Bytes each static library contributes to a linked image, from GNU ld's map.

    python3 tools/map_sizes.py IMAGE.map [IMAGE.map ...]

Per map, one line per archive (libpterun.a, libpterun_optimize.a, ...): the
`.text` + `.rodata` and the `.data` + `.bss` bytes of its input sections that
the link kept (what `--gc-sections` dropped is listed before the memory map
and not counted). The firmware check (tools/run_firmware.sh) prints this for
its images; docs/cortex_m.md's footprint table reads the core's line.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

# An input section: " .text.name 0xADDR 0xSIZE path/libX.a(obj.o)", the name
# alone on the line before when it is long.
_SECTION = re.compile(
    r"^ (\.\S+)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+?\.a)\(([^)]+)\)$"
)
_NAME = re.compile(r"^ (\.\S+)$")


def archive_sizes(map_text: str) -> dict[str, tuple[int, int]]:
    """{archive file name: (code + read-only data, writable data) bytes}."""
    code: dict[str, int] = defaultdict(int)
    data: dict[str, int] = defaultdict(int)
    started = False
    pending = ""
    for line in map_text.splitlines():
        if not started:
            started = line.startswith("Linker script and memory map")
            continue
        name = _NAME.match(line)
        if name:
            pending = name.group(1)
            continue
        m = _SECTION.match(line)
        section = (m.group(1) or pending) if m else ""
        pending = ""
        if not m:
            continue
        lib, size = Path(m.group(3)).name, int(m.group(2), 16)
        if section.startswith((".text", ".rodata")):
            code[lib] += size
        elif section.startswith((".data", ".bss")):
            data[lib] += size
    return {lib: (code[lib], data[lib]) for lib in sorted(set(code) | set(data))}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    for arg in argv:
        path = Path(arg)
        try:
            sizes = archive_sizes(path.read_text(errors="replace"))
        except OSError as e:
            print(f"map_sizes.py: {path}: {e.strerror}", file=sys.stderr)
            return 1
        if not sizes:
            print(
                f"map_sizes.py: {path}: no archive sections (not a GNU ld map?)",
                file=sys.stderr,
            )
            return 1
        print(f"{path}: linked bytes per library (.text+.rodata / .data+.bss)")
        for lib, (c, d) in sizes.items():
            print(f"  {lib:34} {c:9,} / {d:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
