"""Trim long tool output to its head and tail before it enters the context.

What this covers: keeping the first ``head`` and the last ``tail`` lines of a long
output and replacing the middle with one marker line that says how many lines
were left out. The tail matters most often: error messages, failing-test
summaries and a command's verdict usually come last, so keeping only the start
would throw away the part the model needs.

The better practice goes one step further: keep the full output outside the
context (in a file), put its path in the marker, and let the model read it on
demand. ``trim_with_reference`` builds that trimmed text without touching the
disk; ``save_full_output`` is the one function here that writes a file, and
``trim_and_save`` joins the two.

What it leaves out: choosing head and tail from the content (e.g. keeping every
line that mentions "error"), byte or token limits per line, and reading the file
back (that is a tool the model would call).

Vocabulary:
    lines  -- a sequence of str, one per output line, without trailing newlines.
    head   -- lines kept from the start; tail: lines kept from the end (both >= 0).
    marker -- the single line that stands in for the omitted middle (Chinese: learners read it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from ctx_reference._validate import require_int

MARKER_TEMPLATE = "……省略 {n} 行（完整输出已保存，可按需读取）……"  # data
MARKER_WITH_PATH_TEMPLATE = "……省略 {n} 行（完整输出已保存在 {path}，可按需读取）……"  # data
FILE_ENCODING = "utf-8"

PathLike = Union[str, "os.PathLike[str]"]


def _require_lines(lines: object) -> list[str]:
    """Return a list copy of ``lines`` if it is a sequence of str (not a str itself), else raise ValueError."""
    if isinstance(lines, (str, bytes)) or not isinstance(lines, Sequence):
        raise ValueError(f"lines must be a sequence of str, not {type(lines).__name__} (got {lines!r})")
    copied = list(lines)
    for index, line in enumerate(copied):
        if not isinstance(line, str):
            raise ValueError(f"lines[{index}] must be a str (got {line!r})")
    return copied


def _require_path(value: object, name: str) -> str:
    """Return ``value`` as a str if it is a non-empty str or os.PathLike, else raise ValueError."""
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"{name} must be a str or path (got {value!r})")
    text = os.fspath(value)
    if not isinstance(text, str) or text == "":
        raise ValueError(f"{name} must be a non-empty str path (got {value!r})")
    return text


def omission_marker(n: int, path: PathLike | None = None) -> str:
    """Return the marker line for ``n`` omitted lines, naming ``path`` when given.

    >>> omission_marker(95)
    '……省略 95 行（完整输出已保存，可按需读取）……'
    >>> omission_marker(95, "logs/test-output.txt")
    '……省略 95 行（完整输出已保存在 logs/test-output.txt，可按需读取）……'

    Used by notebook 05-trim-lines.
    """
    require_int(n, "n", minimum=0)
    if n == 0:
        raise ValueError(f"n must be >= 1 (got {n!r})")
    if path is None:
        return MARKER_TEMPLATE.format(n=n)
    return MARKER_WITH_PATH_TEMPLATE.format(n=n, path=_require_path(path, "path"))


def _trim(lines: object, head: object, tail: object, path: PathLike | None) -> list[str]:
    """Return head lines + marker + tail lines, or a copy of ``lines`` when nothing needs omitting."""
    copied = _require_lines(lines)
    head = require_int(head, "head", minimum=0)
    tail = require_int(tail, "tail", minimum=0)
    if len(copied) <= head + tail:
        return copied
    omitted = len(copied) - head - tail
    return copied[:head] + [omission_marker(omitted, path)] + copied[len(copied) - tail:]


def trim_lines(lines: Sequence[str], head: int, tail: int) -> list[str]:
    """Return the first ``head`` lines, one marker line and the last ``tail`` lines (a copy if short enough).

    >>> output = [f"line {i}" for i in range(1, 101)]
    >>> trim_lines(output, 3, 2)  # 100 - 3 - 2 = 95 lines omitted
    ['line 1', 'line 2', 'line 3', '……省略 95 行（完整输出已保存，可按需读取）……', 'line 99', 'line 100']

    When ``len(lines) <= head + tail`` nothing is omitted and a new list equal to
    ``lines`` is returned. Used by notebook 05-trim-lines.
    """
    return _trim(lines, head, tail, None)


def trim_with_reference(lines: Sequence[str], head: int, tail: int, path: PathLike) -> list[str]:
    """Return ``trim_lines``'s result with a marker that names ``path``, where the full output lives.

    >>> output = [f"line {i}" for i in range(1, 101)]
    >>> trim_with_reference(output, 3, 2, "logs/test-output.txt")[3]
    '……省略 95 行（完整输出已保存在 logs/test-output.txt，可按需读取）……'

    Pure: it only builds text; ``save_full_output`` writes the file. Prefer a
    relative path, so the context (and any saved notebook output) does not depend
    on one machine's folders. Used by notebook 05-trim-lines.
    """
    _require_path(path, "path")
    return _trim(lines, head, tail, path)


def save_full_output(lines: Sequence[str], directory: PathLike, name: str) -> Path:
    """Write ``lines`` (one per line, UTF-8) to ``directory/name`` and return that path.

    The only function in this module with a side effect. ``directory`` must
    exist; ``name`` must be a plain file name. The returned path is
    ``Path(directory) / name`` exactly as given (not made absolute).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     saved = save_full_output(["line 1", "line 2"], folder, "out.txt")
    ...     saved.read_text(encoding="utf-8")
    'line 1\\nline 2\\n'

    Used by notebook 05-trim-lines.
    """
    copied = _require_lines(lines)
    folder = Path(_require_path(directory, "directory"))
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name:
        raise ValueError(f"name must be a plain file name (got {name!r})")
    if not folder.is_dir():
        raise ValueError(f"directory must be an existing directory (got {directory!r})")
    target = folder / name
    target.write_text("".join(line + "\n" for line in copied), encoding=FILE_ENCODING)
    return target


@dataclass(frozen=True)
class TrimmedOutput:
    """What goes into the context after trimming, and where the full output was saved.

    lines:   the trimmed lines (marker included when something was omitted);
    path:    the saved file, or None when nothing was omitted and nothing was written;
    omitted: how many lines the marker stands for (0 when nothing was omitted).
    """

    lines: list[str]
    path: Path | None
    omitted: int


def trim_and_save(lines: Sequence[str], head: int, tail: int, directory: PathLike, name: str) -> TrimmedOutput:
    """Return the trimmed lines with a marker naming the saved file; writes the file only if lines were omitted.

    With the lesson's 100 lines, head 3 and tail 2, the full output is written
    to ``directory/name`` and the marker reads
    ``……省略 95 行（完整输出已保存在 <directory/name>，可按需读取）……``.
    Output short enough to keep whole is returned unchanged and not saved.
    Used by notebook 05-trim-lines.
    """
    copied = _require_lines(lines)
    require_int(head, "head", minimum=0)
    require_int(tail, "tail", minimum=0)
    if len(copied) <= head + tail:
        return TrimmedOutput(lines=copied, path=None, omitted=0)
    saved = save_full_output(copied, directory, name)
    trimmed = trim_with_reference(copied, head, tail, saved)
    return TrimmedOutput(lines=trimmed, path=saved, omitted=len(copied) - head - tail)
