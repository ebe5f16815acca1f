"""Bring a new release of a notebook into a learner's copy without losing anything the learner wrote.

Vocabulary:

- **key**: how a cell is recognised across versions: its nbformat cell ``id``, or, in a notebook
  without ids, its nbgrader ``grade_id``. Every cell of the release has one. When two of the
  learner's cells share a key (a pasted copy of an nbgrader cell keeps its ``grade_id``), the first
  one holds the key and the others count as cells the learner added.
- **digest**: a hash of a cell's type and source (not its outputs or metadata).
- **record**: ``{key: digest}`` of a release, as it was when the learner's copy was made.
- **answer cell**: a cell nbgrader marks ``solution`` (``cells.is_answer``). It is always kept as
  the learner has it.
- **touched**: a cell whose digest differs from the record (the learner edited it). Kept as it is.
- **untouched**: a cell whose digest equals the record. It becomes the new release's version
  (outputs cleared) or, when the new release has no such cell, is removed.

The new notebook follows the new release's order; a cell the learner added (or kept, and the
release no longer has) follows the cell it followed in the learner's notebook. A release cell the
learner deleted stays deleted. A cell the learner moved goes back to its place in the release.

Without a record (a copy made before records were kept), an edit cannot be told from an older
release: every cell that differs from the new release counts as touched, and every release cell
missing from the learner's notebook is added (a deleted cell comes back; nothing is lost).

Pure functions on nbformat dicts; reading and writing files is ``workspace.py``'s.
"""
from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..cells import is_answer, source_text


def cell_key(cell: Mapping) -> str | None:
    """Return the key of ``cell``: its ``id``, else its nbgrader ``grade_id``, else None.

    >>> cell_key({"id": "check_remaining", "cell_type": "code", "metadata": {}, "source": ""})
    'check_remaining'
    >>> cell_key({"cell_type": "markdown", "metadata": {"nbgrader": {"grade_id": "q1"}}, "source": ""})
    'q1'
    """
    if cell.get("id"):
        return str(cell["id"])
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return str(grade_id) if grade_id else None


def cell_digest(cell: Mapping) -> str:
    """Return the SHA-256 (hex) of a cell's type and source; outputs and metadata do not count.

    >>> a = {"cell_type": "code", "source": "x = 1", "outputs": [], "metadata": {}}
    >>> cell_digest(a) == cell_digest({**a, "outputs": [{"output_type": "stream"}]})
    True
    >>> cell_digest(a) == cell_digest({**a, "source": ["x = ", "1"]})
    True
    """
    text = f"{cell.get('cell_type')}\n{source_text(cell.get('source', ''))}"
    return hashlib.sha256(text.encode()).hexdigest()


def release_record(notebook: Mapping) -> dict[str, str]:
    """Return ``{key: digest}`` of every cell of a released notebook.

    Raises ValueError naming the cell when a cell has no key or two cells share one.
    """
    record: dict[str, str] = {}
    for index, cell in enumerate(notebook["cells"]):
        key = cell_key(cell)
        if key is None or key in record:
            raise ValueError(f"released cell {index} must have a unique id (got {key!r})")
        record[key] = cell_digest(cell)
    return record


@dataclass(frozen=True)
class MergeReport:
    """What a merge did, by cell key."""

    updated: tuple[str, ...] = ()  # untouched cells replaced by their new version
    added: tuple[str, ...] = ()  # cells of the new release the learner's copy did not have
    removed: tuple[str, ...] = ()  # untouched cells the new release no longer has
    kept_answers: tuple[str, ...] = ()  # answer cells, kept as they are
    kept_edited: tuple[str, ...] = ()  # other cells the learner changed, kept as they are
    kept_behind: tuple[str, ...] = ()  # kept cells (answers or edited) whose release version changed
    left_deleted: tuple[str, ...] = ()  # release cells the learner deleted, not brought back
    own: int = 0  # cells the learner added, kept

    @property
    def changed(self) -> bool:
        """True when the merged notebook's cells differ from the learner's."""
        return bool(self.updated or self.added or self.removed)


CELL_IDS_SINCE = (4, 5)  # nbformat version from which every cell has an id


def _give_ids(cells: list[dict]) -> None:
    """Give an id to each of ``cells`` (a new list of copies) that has none: learner-1, learner-2, ..."""
    taken = {cell["id"] for cell in cells if cell.get("id")}
    number = 0
    for cell in cells:
        if not cell.get("id"):
            number += 1
            while f"learner-{number}" in taken:
                number += 1
            cell["id"] = f"learner-{number}"
            taken.add(cell["id"])


def _release_part(cell: Mapping) -> tuple:
    """What a release decides about a cell: type, source, nbgrader metadata and tags."""
    metadata = cell.get("metadata", {})
    return cell.get("cell_type"), source_text(cell.get("source", "")), metadata.get("nbgrader"), metadata.get("tags")


def _copy(value: Mapping) -> dict:
    """A deep copy of a notebook or a cell that the merge may change (nbformat's dicts keep their class)."""
    copied = copy.deepcopy(value)
    return copied if isinstance(copied, dict) else dict(copied)


def _fresh(cell: Mapping) -> dict:
    """A copy of a release cell, as it is put into a learner's notebook: no outputs, never run."""
    fresh = _copy(cell)
    if fresh.get("cell_type") == "code":
        fresh["outputs"] = []
        fresh["execution_count"] = None
    return fresh


def _key_holders(cells: Iterable[Mapping]) -> dict[str, Mapping]:
    """The cells that hold a key (the first cell with that key), by key, in their order."""
    holders: dict[str, Mapping] = {}
    for cell in cells:
        key = cell_key(cell)
        if key is not None and key not in holders:
            holders[key] = cell
    return holders


def _untouched(cell: Mapping, recorded: str | None, new: Mapping | None) -> bool:
    """True when ``cell`` is not an answer and its digest is the recorded one (no record: the new release's)."""
    if is_answer(cell):
        return False
    baseline = recorded
    if baseline is None and new is not None:
        baseline = cell_digest(new)  # no record: only a cell equal to the new release
    return baseline is not None and cell_digest(cell) == baseline


def merge_notebook(
    learner: Mapping, release: Mapping, record: Mapping[str, str] | None
) -> tuple[dict, MergeReport]:
    """Return the learner's notebook brought up to ``release``, and what changed.

    ``record`` is the ``release_record`` of the release the learner's copy was made from, or None
    if it is unknown. The inputs are not changed. See the module docstring for the rules. Raises
    ValueError if a cell of ``release`` has no key or shares one.

    Example: a learner who answered ``remaining`` and edited nothing else gets every other cell
    of the new release of ``02-remaining/remaining.ipynb``, and their answer as they wrote it.
    """
    record = dict(record or {})
    release_record(release)  # every release cell has a key of its own, or ValueError
    # Every release cell has a key (release_record above): none is left out here.
    new_cells = {key: cell for cell in release["cells"] if (key := cell_key(cell)) is not None}

    mine = _key_holders(learner["cells"])

    def untouched(key: str, cell: Mapping) -> bool:
        return _untouched(cell, record.get(key), new_cells.get(key))

    # Learner cells the new release does not place (added by the learner, or kept but no longer
    # released) follow the last learner cell before them that the new release does place.
    following: dict[str | None, list[dict]] = {}
    anchor: str | None = None
    own = 0
    removed: list[str] = []
    kept_answers: list[str] = []
    kept_edited: list[str] = []
    for cell in learner["cells"]:
        key = cell_key(cell)
        holds_key = key is not None and mine.get(key) is cell
        if key is None or not holds_key:  # a cell the learner added, or a pasted copy of a keyed cell
            own += 1
        elif key in new_cells:
            anchor = key
            continue
        elif untouched(key, cell):
            removed.append(key)
            continue
        elif key in record:
            (kept_answers if is_answer(cell) else kept_edited).append(key)
        else:
            own += 1
        following.setdefault(anchor, []).append(_copy(cell))

    cells: list[dict] = list(following.get(None, []))
    updated: list[str] = []
    added: list[str] = []
    kept_behind: list[str] = []
    left_deleted: list[str] = []
    for key, new in new_cells.items():
        cell = mine.get(key)
        if cell is None:
            if key in record:
                left_deleted.append(key)
                continue
            cells.append(_fresh(new))
            added.append(key)
        elif untouched(key, cell):
            if _release_part(cell) == _release_part(new):
                cells.append(_copy(cell))  # nothing new: keep its outputs
            else:
                cells.append(_fresh(new))
                updated.append(key)
        else:
            (kept_answers if is_answer(cell) else kept_edited).append(key)
            if key in record and record[key] != cell_digest(new):
                kept_behind.append(key)
            cells.append(_copy(cell))
        cells.extend(following.get(key, []))

    merged = _copy(learner)
    merged["cells"] = cells
    merged["nbformat"], merged["nbformat_minor"] = max(
        (learner["nbformat"], learner["nbformat_minor"]), (release["nbformat"], release["nbformat_minor"])
    )
    if (merged["nbformat"], merged["nbformat_minor"]) >= CELL_IDS_SINCE:
        _give_ids(cells)
    report = MergeReport(
        updated=tuple(updated),
        added=tuple(added),
        removed=tuple(removed),
        kept_answers=tuple(kept_answers),
        kept_edited=tuple(kept_edited),
        kept_behind=tuple(kept_behind),
        left_deleted=tuple(left_deleted),
        own=own,
    )
    return merged, report
