"""Due dates, extensions and the late policy of a course, read from ``deadlines.toml``, applied to the gradebook.

The file sits beside ``nbgrader_config.py``; every date carries its UTC offset::

    [policy]
    late = "per-day"        # "none" (lateness is shown, nothing taken), "zero", or "per-day"
    share_per_day = 0.1     # per-day: share of the score taken for each day or part of a day late
    cap = 0.5               # per-day: the most taken in all (a share of the score)

    [due]
    "02-remaining" = 2026-03-02T23:59:00+08:00

    [extensions.ben]        # one table per student
    "02-remaining" = 2026-03-04T23:59:00+08:00   # a later due date ...
    "03-recall" = { days = 2 }                   # ... or a number of days (and hours) more

A submission is late by the time between its due date (with the student's extension) and the
time in its ``timestamp.txt`` (what ``nbgrader collect`` writes; nbgrader stores it in the
gradebook when it autogrades). Lateness and penalty go where nbgrader keeps them, so
``nbgrader export`` and the formgrader see them too: the assignment's ``duedate``, the
submission's ``extension`` and each notebook's ``late_submission_penalty`` (recomputed from
the current score at every run, so a hand grade given later is penalised at the next
``--feedback-only``).

Covers: ``LatePolicy`` and ``late_penalty`` (pure), ``parse_deadlines``/``read_deadlines``/
``load_deadlines`` (one ``DeadlineError`` naming the entry for bad input), ``check_students``, ``apply_deadlines``
(writes the gradebook and returns each submission's ``Lateness``), ``ShowLateness`` (the line
at the top of a late submission's feedback page), and ``format_late`` (the instructor's words).

Leaves out: deadlines shown to learners before they submit, and grace periods other than an
extension.

Vocabulary: *due* is an assignment's due date; an *extension* moves one student's due date;
*late by* is in seconds, never negative; a *day started* counts whole: 1 s late is one day.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from ctx_reference.i18n import _, using

from ..config import CONFIG_FILE, assignments
from ..editions.translate import submitted_edition
from .records import Lateness

DEADLINES_FILE = "deadlines.toml"  # beside nbgrader_config.py
POLICIES = ("none", "zero", "per-day")
DAY = 86_400  # seconds


class DeadlineError(ValueError):
    """deadlines.toml cannot be used: the message names the file and the entry."""


@dataclass(frozen=True)
class LatePolicy:
    """What lateness costs: nothing, everything, or ``share_per_day`` of the score per day started, at most ``cap``."""

    late: str = "none"
    share_per_day: float = 0.0
    cap: float = 1.0


@dataclass(frozen=True)
class Deadlines:
    """The course's due dates (aware datetimes) by assignment, its extensions by (student, assignment), its policy."""

    due: Mapping[str, dt.datetime] = field(default_factory=dict)
    extensions: Mapping[tuple[str, str], dt.datetime] = field(default_factory=dict)
    policy: LatePolicy = LatePolicy()
    source: str = DEADLINES_FILE

    def due_for(self, student: str, assignment: str) -> dt.datetime | None:
        """Return the due date of one student's assignment (with her extension), or None if it has none."""
        return self.extensions.get((student, assignment), self.due.get(assignment))


def late_penalty(policy: LatePolicy, score: float, seconds_late: float) -> float:
    """Return the points a score of ``score`` loses for being ``seconds_late`` late.

    Example: per-day, 0.1 a day, cap 0.5: 1 s late on 6 points costs 0.6 (a day started);
    26 h late costs 1.2 (two days); a week late costs 3 (the cap). "zero" costs the whole score.
    """
    if seconds_late <= 0 or score <= 0 or policy.late == "none":
        return 0.0
    if policy.late == "zero":
        return float(score)
    days = math.ceil(seconds_late / DAY)
    return round(float(score) * min(policy.cap, policy.share_per_day * days), 6)


def parse_deadlines(data: Mapping, assignments: Iterable[str], source: str = DEADLINES_FILE) -> Deadlines:
    """Return the Deadlines of a parsed deadlines.toml; raise DeadlineError naming the first bad entry.

    Example: ``parse_deadlines({"due": {"02-remaining": datetime(2026, 3, 2, tzinfo=UTC)}}, ["02-remaining"])``.
    """
    known = set(assignments)
    unknown_tables = sorted(set(data) - {"policy", "due", "extensions"})
    if unknown_tables:
        raise DeadlineError(
            f"{source}: unknown table [{unknown_tables[0]}] (expected [policy], [due], [extensions.<student>])"
        )
    policy = _policy(data.get("policy", {}), source)
    due = {}
    for assignment, value in _table(data.get("due", {}), "[due]", source).items():
        _known(assignment, known, f"[due] {assignment!r}", source)
        due[assignment] = _aware(value, f"[due] {assignment!r}", source)
    extensions = {}
    for student, table in _table(data.get("extensions", {}), "[extensions]", source).items():
        for assignment, value in _table(table, f"[extensions.{student}]", source).items():
            entry = f"[extensions.{student}] {assignment!r}"
            _known(assignment, known, entry, source)
            if assignment not in due:
                raise DeadlineError(f"{source}: {entry}: {assignment!r} has no due date in [due] to extend")
            if isinstance(value, Mapping):
                extensions[(student, assignment)] = due[assignment] + _duration(value, entry, source)
            else:
                extensions[(student, assignment)] = _aware(value, entry, source)
            if extensions[(student, assignment)] < due[assignment]:
                raise DeadlineError(f"{source}: {entry}: an extension must not come before the due date ({value!r})")
    return Deadlines(due, extensions, policy, source)


def read_deadlines(path: str | os.PathLike, assignments: Iterable[str]) -> Deadlines:
    """Return the Deadlines of a deadlines.toml file; raise DeadlineError for bad input (naming the entry)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DeadlineError(f"deadlines file {str(path)!r} cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise DeadlineError(f"{path.name}: not valid TOML ({exc})") from None
    return parse_deadlines(data, assignments, source=path.name)


def load_deadlines(root: Path, deadlines: str | os.PathLike | bool | None) -> Deadlines | None:
    """Return the course's Deadlines: from ``deadlines`` (a path), else ``deadlines.toml`` beside
    ``nbgrader_config.py`` if there is one; None with ``deadlines=False`` or no file. The
    assignments it may name are the course's (``solutions/``)."""
    if deadlines is False:
        return None
    if deadlines is None or deadlines is True:
        path = Path(root) / DEADLINES_FILE
        if not path.is_file() or not (Path(root) / CONFIG_FILE).is_file():
            return None
    else:
        path = Path(deadlines)
    return read_deadlines(path, assignments(root))


def check_students(deadlines: Deadlines, students: Iterable[str]) -> None:
    """Raise DeadlineError if an extension names a student who is neither on the roster nor has submitted."""
    known = set(students)
    for student, _assignment in sorted(deadlines.extensions):
        if student not in known:
            raise DeadlineError(
                f"{deadlines.source}: [extensions.{student}]: {student!r} is not a student of this course "
                "(not on the roster, no submission)"
            )


def apply_deadlines(
    gb: Gradebook, deadlines: Deadlines, pairs: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], Lateness]:
    """Write due dates, extensions and late penalties of the graded ``pairs`` into the gradebook.

    Returns the Lateness of every late (student, assignment); a submission on time, or of an
    assignment without a due date, is not in it (and keeps no penalty).
    """
    for assignment in gb.assignments:  # a due date taken out of the file is taken out of the gradebook
        due = deadlines.due.get(assignment.name)
        assignment.duedate = _utc(due) if due is not None else None
    late = {}
    for student, assignment in pairs:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            continue
        due = deadlines.due_for(student, assignment)
        base = deadlines.due.get(assignment)
        submission.extension = (due - base) if due is not None and base is not None and due != base else None
        seconds = submission.total_seconds_late if due is not None else 0.0
        penalty = 0.0
        for notebook in submission.notebooks:
            points = late_penalty(deadlines.policy, float(notebook.score or 0), seconds)
            notebook.late_submission_penalty = points or None
            penalty += points
        if seconds > 0 and due is not None:
            score = float(submission.score or 0)
            late[(student, assignment)] = Lateness(
                _utc(due), submission.timestamp, seconds, due != base, penalty, penalty / score if score else 0.0
            )
    gb.db.commit()
    return late


def format_late(lateness: Lateness) -> str:
    """Return how late a submission was and what it cost, for the instructor.

    Example: ``late 1 d 3 h (extended), -1.8 points (30%)``; ``late 2 h`` when the policy takes nothing.
    """
    text = f"late {format_duration(lateness.seconds_late)}" + (" (extended)" if lateness.extended else "")
    if lateness.penalty:
        text += f", -{lateness.penalty:g} points ({lateness.share:.0%})"
    return text


def format_duration(seconds: float) -> str:
    """Return a duration in days, hours and minutes: ``format_duration(97_200)`` is ``"1 d 3 h"``."""
    minutes = math.ceil(seconds / 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [
        f"{days} d" if days else "",
        f"{hours} h" if hours else "",
        f"{minutes} min" if minutes and not days else "",
    ]
    return " ".join(p for p in parts if p) or "0 min"


class ShowLateness(NbGraderPreprocessor):
    """Put one line at the top of a late submission's feedback page: due date, when it came, the penalty.

    Runs in the feedback pipeline after nbgrader's ``GetGrades`` (which reads the penalty too).
    Example: "迟交：截止时间 2026-03-02 15:59 UTC，提交于 2026-03-03 18:59 UTC，晚了 1 天 3 小时；扣 1.8 分。"
    """

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        with Gradebook(info["db_url"]) as gb:
            try:
                submission = gb.find_submission(info["assignment"], info["student"])
                notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            except MissingEntry:
                return nb, resources
            seconds = submission.total_seconds_late
            if not seconds:
                return nb, resources
            due, submitted = submission.duedate, submission.timestamp
            penalty = notebook.late_submission_penalty or 0.0
            extension = bool(submission.extension)
        with using(submitted_edition(nb)):  # the feedback speaks the language of the submission
            extended = _("（已延期）") if extension else ""
            late = _shown_duration(seconds)
            if penalty:
                text = _("**迟交**：截止时间{extended} {due} UTC，提交于 {submitted} UTC，"
                         "晚了 {late}；按迟交规则扣 {penalty:g} 分。")
            else:
                text = _("**迟交**：截止时间{extended} {due} UTC，提交于 {submitted} UTC，"
                         "晚了 {late}；不扣分。")
            text = text.format(extended=extended, due=f"{due:%Y-%m-%d %H:%M}", submitted=f"{submitted:%Y-%m-%d %H:%M}",
                               late=late, penalty=penalty)
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(text, id="ctx-lateness"))  # the same id on every run
        return nb, resources


# --------------------------------------------------------------------------------------------
# Small helpers


def _policy(table, source: str) -> LatePolicy:
    table = _table(table, "[policy]", source)
    unknown = sorted(set(table) - {"late", "share_per_day", "cap"})
    if unknown:
        raise DeadlineError(f"{source}: [policy] {unknown[0]!r} is not a setting (expected late, share_per_day, cap)")
    late = table.get("late", "none")
    if late not in POLICIES:
        raise DeadlineError(f"{source}: [policy] late must be one of {', '.join(POLICIES)} (got {late!r})")
    share = _share(table.get("share_per_day", 0.0), "share_per_day", source)
    cap = _share(table.get("cap", 1.0), "cap", source)
    if late == "per-day" and share == 0:
        raise DeadlineError(f"{source}: [policy] late = 'per-day' needs share_per_day > 0 (got {share!r})")
    return LatePolicy(late, share, cap)


def _share(value, name: str, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise DeadlineError(f"{source}: [policy] {name} must be a share between 0 and 1 (got {value!r})")
    return float(value)


def _table(value, name: str, source: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise DeadlineError(f"{source}: {name} must be a table (got {value!r})")
    return value


def _known(assignment: str, known: set[str], entry: str, source: str) -> None:
    if assignment not in known:
        raise DeadlineError(f"{source}: {entry}: {assignment!r} is not an assignment of this course")


def _aware(value, entry: str, source: str) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise DeadlineError(
            f"{source}: {entry}: a due date must be a date and time such as 2026-03-02T23:59:00+08:00 (got {value!r})"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise DeadlineError(
            f"{source}: {entry}: the date {value.isoformat()} has no time zone "
            f"(write it as {value.isoformat()}+08:00 or …Z)"
        )
    return value


def _duration(table: Mapping, entry: str, source: str) -> dt.timedelta:
    unknown = sorted(set(table) - {"days", "hours"})
    if unknown or not table:
        raise DeadlineError(
            f"{source}: {entry}: an extension is a date or {{ days = N, hours = N }} (got {dict(table)!r})"
        )
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise DeadlineError(f"{source}: {entry}: {key} must be a number >= 0 (got {value!r})")
    return dt.timedelta(days=table.get("days", 0), hours=table.get("hours", 0))


def _utc(moment: dt.datetime) -> dt.datetime:
    """Return an aware datetime as the naive UTC datetime nbgrader's gradebook stores."""
    return moment.astimezone(dt.UTC).replace(tzinfo=None)


def _shown_duration(seconds: float) -> str:
    """Return how late a submission is, in the reader's language ("1 天 3 小时", "1 d 3 h")."""
    minutes = math.ceil(seconds / 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [
        _("{days} 天").format(days=days) if days else "",
        _("{hours} 小时").format(hours=hours) if hours else "",
        _("{minutes} 分钟").format(minutes=minutes) if minutes and not days else "",
    ]
    return " ".join(p for p in parts if p) or _("不到 1 分钟")
