"""The reviewed survivors: mutants the visible checks let through, each with the reason that is right.

Covers: reading ``equivalent_mutants.toml`` (``load_equivalents``), where each entry names one
surviving mutant by its identity (exercise, function, the line's text, the mutated text, the
operator; see ``campaign.Mutant``), its *kind* and the reason: ``equivalent`` (it computes what the
reference computes on every input), ``outside-domain`` (it differs only on inputs the exercise's
text does not admit), ``another-answer`` (an exercise that admits many answers, the capstone's
policy, and the mutant is one: it follows the stated rules on a sweep of workloads wider than the
check's, which the reason names), or ``gap`` (it is wrong on an input the text covers, which the reason names:
a weakness of today's visible checks, listed so that it is tracked, never as equivalent); and
``review``, which sets a campaign's survivors against the list: a survivor not listed is
unreviewed, an entry of an exercise that was run whose mutant no longer survives is stale.

``without_stale`` rewrites the list without the entries a full run found stale (``python -m
ctx_course.mutation prune``), keeping its header and the others as they are.

Leaves out: running anything, and deciding what is equivalent (a person does, and writes why).
"""
from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .campaign import ExerciseRun, Mutant

EQUIVALENTS = Path(__file__).with_name("equivalent_mutants.toml")

_FIELDS = ("exercise", "function", "operator", "line", "mutated", "kind", "reason")
KINDS = ("equivalent", "outside-domain", "another-answer", "gap")


@dataclass(frozen=True)
class Equivalent:
    """One reviewed survivor and why it may survive."""

    exercise: str
    function: str
    operator: str
    line: str
    mutated: str
    kind: str
    reason: str

    @property
    def identity(self) -> tuple[str, str, str, str, str]:
        return (self.exercise, self.function, self.line, self.mutated, self.operator)


def load_equivalents(path: Path = EQUIVALENTS) -> list[Equivalent]:
    """Return the entries of the reviewed list; an entry without a field or a reason raises ValueError."""
    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entries = []
    for number, raw in enumerate(data.get("mutant", []), start=1):
        missing = [name for name in _FIELDS if not isinstance(raw.get(name), str)]
        extra = sorted(set(raw) - set(_FIELDS))
        if missing or extra or not raw["reason"].strip() or raw["kind"] not in KINDS:
            raise ValueError(f"entry {number} of {path.name} must have exactly the fields {', '.join(_FIELDS)}, "
                             f"a kind among {', '.join(KINDS)} and a reason (got {raw!r})")
        entries.append(Equivalent(**raw))
    return entries


@dataclass(frozen=True)
class Review:
    """Survivors not on the list, and entries (of the exercises run) whose mutant no longer survives."""

    unlisted: tuple[Mutant, ...]
    stale: tuple[Equivalent, ...]
    listed: tuple[Mutant, ...]


def review(runs: Iterable[ExerciseRun], equivalents: Iterable[Equivalent]) -> Review:
    """Set the survivors of ``runs`` against ``equivalents``; entries of exercises not run are left alone."""
    runs = list(runs)
    run_names = {run.exercise for run in runs}
    entries = [e for e in equivalents if e.exercise in run_names]
    known = {e.identity for e in entries}
    survivors = [m for run in runs for m in run.survivors]
    alive = {m.identity for m in survivors}
    return Review(
        unlisted=tuple(m for m in survivors if m.identity not in known),
        stale=tuple(e for e in entries if e.identity not in alive),
        listed=tuple(m for m in survivors if m.identity in known),
    )


def _entry_text(entry: Equivalent) -> str:
    fields = [f"{name} = {json.dumps(getattr(entry, name), ensure_ascii=False)}" for name in _FIELDS]
    return "\n".join(["[[mutant]]", *fields]) + "\n"


def without_stale(stale: Iterable[Equivalent], path: Path = EQUIVALENTS) -> int:
    """Rewrite ``path`` without the entries ``stale``; return how many were removed."""
    text = path.read_text(encoding="utf-8")
    header = text[: text.index("[[mutant]]")] if "[[mutant]]" in text else text
    gone = {entry.identity for entry in stale}
    kept = [entry for entry in load_equivalents(path) if entry.identity not in gone]
    removed = len(load_equivalents(path)) - len(kept)
    path.write_text(header + "\n".join(_entry_text(entry) for entry in kept), encoding="utf-8")
    return removed
