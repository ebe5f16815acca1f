"""What earlier runs graded from which files, and what this run does with each submission before any runs.

Covers: ``Manifest`` (``<work>/manifest.json``: ``load``, ``unchanged``, ``record``), ``Digests`` (what a submission
is graded from), ``plan_run`` and its ``RunPlan`` (to grade, skipped and read back, or not an assignment).

A submission is read back instead of graded again when the manifest holds the digest it has now
and the gradebook holds its result. The digest changes with the submitted files, the assignment's
``solutions/`` folder, the checker the check cells call (``ctx_reference``'s Python files), the
grading settings (sandbox, limits, time limit) and ``GRADING_VERSION``. A submission that could
not be graded is never recorded: the next run grades it again.

Leaves out: grading and writing (``grader.py``), reading a result back (``Grader.read_back``).

Vocabulary: a *pair* is (student, assignment); the manifest's keys are ``"student/assignment"``.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from .fingerprint import hash_tree
from .records import GradeResult

# What was graded from which files (<work>/manifest.json), so that a rerun skips unchanged submissions.
MANIFEST = "manifest.json"
# Bumped when a change to grading itself must regrade every submission.
GRADING_VERSION = "3"
# The packages whose Python files a check cell calls: a change to them regrades every submission.
CHECKERS = ("ctx_reference",)


class Digests:
    """The digests of submissions graded from one course with one set of settings (sources hashed once each)."""

    def __init__(self, root: Path, settings_key: str):
        self.root, self.settings_key = Path(root), settings_key
        self._sources: dict[str, str] = {}

    def submission(self, assignment: str, submitted: Path) -> str:
        """Return the digest of a submission's folder, its assignment's sources and the grading settings."""
        sha = hashlib.sha256(f"{GRADING_VERSION}\0{self.settings_key}\0".encode())
        sha.update(self.sources(assignment).encode())
        hash_tree(sha, submitted)
        return sha.hexdigest()

    def sources(self, assignment: str) -> str:
        """Return the digest of an assignment's ``solutions/`` folder and of the checker (hashed once per instance)."""
        if assignment not in self._sources:
            sha = hashlib.sha256()
            hash_tree(sha, self.root / "solutions" / assignment)
            for package in CHECKERS:
                hash_tree(sha, self.root / package, suffix=".py")
            self._sources[assignment] = sha.hexdigest()
        return self._sources[assignment]


class Manifest:
    """The digest each submission was last graded from, by ``"student/assignment"``. Example::

        manifest = Manifest.load(work)
        if not manifest.unchanged(("ada", "02-remaining"), digest):
            ...                                           # grade it
            manifest.record(("ada", "02-remaining"), digest if graded else None)
    """

    def __init__(self, path: Path, entries: dict[str, str]):
        self.path, self.entries = path, entries

    @classmethod
    def load(cls, work: Path) -> Manifest:
        """Return the manifest of a working folder (empty when it is missing or not a JSON object)."""
        path = Path(work) / MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        return cls(path, data if isinstance(data, dict) else {})

    def unchanged(self, pair: tuple[str, str], digest: str) -> bool:
        """Return whether the submission was last graded from the files and sources of ``digest``."""
        return self.entries.get("/".join(pair)) == digest

    def record(self, pair: tuple[str, str], digest: str | None) -> None:
        """Record that a submission was graded from ``digest`` (None: it could not be graded); save the manifest."""
        key = "/".join(pair)
        self.entries.pop(key, None)
        if digest is not None:
            self.entries[key] = digest
        partial = self.path.with_suffix(".tmp")
        partial.write_text(json.dumps(self.entries, indent=1, sort_keys=True), encoding="utf-8")
        partial.replace(self.path)


Pair = tuple[str, str]  # (student, assignment)


@dataclass
class RunPlan:
    """What one run does with each submission it was given, before any notebook runs.

    ``pairs`` all of them, sorted; ``known`` the course's assignments; ``digests`` what each one
    to grade is graded from (none without ``autograde``); ``skipped`` those graded by an earlier
    run from the same files and sources, read back; ``problems`` the assignments that could not
    be prepared, with the reason (filled by ``prepare``).
    """

    pairs: list[Pair]
    known: set[str]
    autograde: bool
    manifest: Manifest
    digests: dict[Pair, str]
    skipped: dict[Pair, GradeResult]
    problems: dict[str, str] = field(default_factory=dict)

    def to_grade(self) -> list[Pair]:
        """Return the submissions the engine grades, in order: known, prepared, not skipped."""
        return [p for p in self.digests if p[1] not in self.problems and p not in self.skipped]

    def assignments(self) -> list[str]:
        """Return the course's assignments among the pairs, sorted (what ``prepare`` generates)."""
        return sorted({a for _, a in self.pairs if a in self.known})


def plan_run(pairs: list[Pair], known: set[str], manifest: Manifest, digest: Callable[[str, str], str],
             read_back: Callable[[str, str], GradeResult], *, autograde: bool, force: bool) -> RunPlan:
    """Return the plan of a run of ``pairs`` (sorted) of a course whose assignments are ``known``.

    ``digest(student, assignment)`` is what a submission is graded from now (``Digests``),
    ``read_back(student, assignment)`` its result in the gradebook. A submission whose digest the
    manifest holds and whose result the gradebook holds is skipped (read back), unless ``force``;
    without ``autograde`` nothing is graded.
    """
    digests = {(s, a): digest(s, a) for s, a in pairs if a in known} if autograde else {}
    skipped = {}
    for pair, now in digests.items():
        if not force and manifest.unchanged(pair, now) and (earlier := read_back(*pair)).graded:
            skipped[pair] = replace(earlier, skipped=True)
    return RunPlan(pairs, known, autograde, manifest, digests, skipped)
