"""A case's directory and the program files in it."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path


def case_dir(root: Path, name: str, stale: Collection[str] | None = (".npy",)) -> Path:
    """Make ``root/name`` (with parents) and delete the files a previous
    export left there: those whose suffix is in ``stale``, every file when
    ``stale`` is None. Returns the directory."""
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    for old in d.iterdir():
        if stale is None or old.suffix in stale:
            old.unlink()
    return d


def write_program(
    directory: Path,
    pte: bytes,
    data_files: Mapping[str, bytes] | None = None,
    name: str = "model.pte",
) -> tuple[Path, list[Path]]:
    """Write the program as ``directory/name`` and its data files (``.ptd``,
    by file name, in sorted order); return their paths."""
    pte_path = directory / name
    pte_path.write_bytes(pte)
    data_paths: list[Path] = []
    for fname, blob in sorted((data_files or {}).items()):
        path = directory / fname
        path.write_bytes(blob)
        data_paths.append(path)
    return pte_path, data_paths
