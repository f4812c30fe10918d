"""Fixture index files (``tests/fixtures/*cases.txt``).

A row is ``name dir method n_inputs n_outputs rtol atol data ref``: ``name``
is unique (the case, or ``case.method`` for a method other than
``forward``), ``dir`` is the case directory under ``tests/fixtures``,
``data`` the comma-separated ``.ptd`` files or ``-``, ``ref`` which
committed outputs are the reference. Lines starting with ``#`` are comments.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path


def row_name(case: str, method: str) -> str:
    """A row's unique name: the case, or ``case.method`` for a method other
    than ``forward``."""
    return case if method == "forward" else f"{case}.{method}"


def index_row(
    name: str,
    directory: str,
    method: str,
    n_inputs: int,
    n_outputs: int,
    rtol: float,
    atol: float,
    data: Sequence[str] = (),
    ref: str = "et",
    note: str | None = None,
) -> str:
    """One index line (tolerances as ``%g``; a note becomes a ``#`` comment)."""
    files = ",".join(data) if data else "-"
    row = (
        f"{name} {directory} {method} {n_inputs} {n_outputs} {rtol:g} {atol:g} "
        f"{files} {ref}"
    )
    return row if note is None else f"{row}  # {note}"


def write_index(path: Path, header: str, rows: Iterable[str]) -> None:
    """Write ``header`` (comment lines, each ending in a newline) and the rows."""
    path.write_text(header + "".join(row + "\n" for row in rows))


def update_index(
    path: Path,
    header: str,
    fresh: Mapping[str, list[str]],
    order: Sequence[str],
    *,
    key_column: int = 0,
    keep_unknown: bool = False,
    columns: Collection[int] | None = None,
) -> None:
    """Rewrite the index at ``path`` with the rows of the cases exported now.

    The rows already there are grouped by their ``key_column`` (0: name,
    1: dir); the groups in ``fresh`` replace them. The groups are written in
    ``order``; with ``keep_unknown`` the groups of keys not in ``order``
    follow, sorted, else they are dropped. With ``columns``, existing lines
    with another number of fields are dropped.
    """
    rows: dict[str, list[str]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            fields = line.split()
            if not fields or line.startswith("#"):
                continue
            if columns is not None and len(fields) not in columns:
                continue
            rows.setdefault(fields[key_column], []).append(line)
    rows.update(fresh)
    keys = list(order)
    if keep_unknown:
        keys += sorted(set(rows) - set(order))
    write_index(path, header, (line for key in keys for line in rows.get(key, [])))
