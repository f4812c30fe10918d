"""``python -m pterun``: where the C SDK is, or the ``pterun`` CLI itself.

    python -m pterun --cmake-dir       directory of pterun-config.cmake
    python -m pterun --pkg-config-dir  directory of the .pc files
    python -m pterun --include-dir     directory to pass with -I
    python -m pterun --lib-dir         directory of libpterun*.so
    python -m pterun --prefix          package root (a CMAKE_PREFIX_PATH entry)
    python -m pterun COMMAND ...       the pterun CLI (run, inspect, bench, ops)

The ``pterun`` console script is the same: it answers the path options above
and otherwise replaces the Python process with the C CLI shipped in the wheel
(``pterun/bin/pterun``) and the same arguments.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from pterun import _paths

_PATH_OPTIONS: dict[str, Callable[[], Path]] = {
    "--cmake-dir": _paths.cmake_dir,
    "--pkg-config-dir": _paths.pkg_config_dir,
    "--include-dir": _paths.include_dir,
    "--lib-dir": _paths.lib_dir,
    "--prefix": _paths.prefix,
}


def exec_cli(args: Sequence[str]) -> int:
    """Runs the C CLI with ``args``; on POSIX the process becomes the CLI."""
    exe = str(_paths.cli_path())
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execv(exe, ["pterun", *args])
    return subprocess.call([exe, *args])


def path_option(args: Sequence[str], prog: str) -> int | None:
    """Answers a path option (``--cmake-dir``, ...); None if ``args`` is not one."""
    if not args or args[0] not in _PATH_OPTIONS:
        return None
    if len(args) != 1:
        print(f"{prog}: {args[0]} takes no arguments", file=sys.stderr)
        return 2
    try:
        print(_PATH_OPTIONS[args[0]]())
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    rc = path_option(args, "python -m pterun")
    if rc is not None:
        return rc
    if args in (["-h"], ["--help"]) or not args:
        print(__doc__.strip() if __doc__ else "", end="\n\n")
        if not args:
            return 2
    try:
        return exec_cli(args)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 1


def console_main() -> None:
    """Entry point of the ``pterun`` console script."""
    rc = path_option(sys.argv[1:], "pterun")
    if rc is not None:
        sys.exit(rc)
    try:
        rc = exec_cli(sys.argv[1:])
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        rc = 1
    sys.exit(rc)


if __name__ == "__main__":
    sys.exit(main())
