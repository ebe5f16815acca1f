"""Write the CSV files an instructor opens (grades, exports, items, similar pairs): one way for all.

Covers: ``write_csv``, UTF-8, the ``csv`` module's default dialect (comma, ``\\r\\n`` line ends,
quotes where needed), folders made as needed, and the file replaced only once the new one is whole
(an earlier file survives a full disk or a crash). What goes in each file is its module's business.
"""
from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Sequence
from pathlib import Path


def write_csv(rows: Iterable[Sequence[object]], path: str | os.PathLike, header: Sequence[str] = ()) -> Path:
    """Write ``header`` (if any) and ``rows`` as a UTF-8 CSV at ``path``; return the path.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = write_csv([["ada", 3]], Path(folder) / "out" / "scores.csv", header=["student", "score"])
    >>> path.read_bytes()
    b'student,score\\r\\nada,3\\r\\n'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            if header:
                writer.writerow(header)
            writer.writerows(rows)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
    return path
