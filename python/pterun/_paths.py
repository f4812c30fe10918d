"""Where the installed package keeps the C SDK: libraries, headers, CMake
package, pkg-config files and the ``pterun`` executable."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def _existing(path: Path, what: str) -> Path:
    if not path.exists():
        raise FileNotFoundError(
            f"pterun: {what} not found at {path}; is pterun installed from a wheel "
            "(pip install .) rather than imported from the source tree?"
        )
    return path


def prefix() -> Path:
    """The package root: a CMAKE_PREFIX_PATH entry that finds pterun."""
    return _existing(
        PACKAGE_DIR / "lib" / "cmake" / "pterun", "the CMake package"
    ).parents[2]


def lib_dir() -> Path:
    """Directory holding libpterun*.so."""
    return _existing(PACKAGE_DIR / "lib" / "libpterun.so", "libpterun.so").parent


def include_dir() -> Path:
    """Directory to add with -I (it holds pterun/pterun.h)."""
    return _existing(
        PACKAGE_DIR / "include" / "pterun" / "pterun.h", "pterun.h"
    ).parents[1]


def cmake_dir() -> Path:
    """Directory holding pterun-config.cmake (use as -Dpterun_DIR=...)."""
    config = PACKAGE_DIR / "lib" / "cmake" / "pterun" / "pterun-config.cmake"
    return _existing(config, "the CMake package").parent


def pkg_config_dir() -> Path:
    """Directory holding pterun.pc and one .pc per component (PKG_CONFIG_PATH)."""
    return _existing(
        PACKAGE_DIR / "lib" / "pkgconfig" / "pterun.pc", "pterun.pc"
    ).parent


def cli_path() -> Path:
    """The C ``pterun`` command-line tool shipped in the wheel."""
    return _existing(PACKAGE_DIR / "bin" / "pterun", "the pterun executable")
