"""Version numbers, read from the linked libpterun (include/pterun/version.h)."""

from __future__ import annotations

from typing import NamedTuple

from pterun import _pterun


class VersionInfo(NamedTuple):
    major: int
    minor: int
    patch: int


def _version_info() -> VersionInfo:
    n = _pterun.LIBRARY_VERSION_NUMBER
    return VersionInfo(n // 10000, n // 100 % 100, n % 100)


__version__: str = _pterun.LIBRARY_VERSION
version_info: VersionInfo = _version_info()
