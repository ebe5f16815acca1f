"""What a grading run tells people: progress lines, the closing summary, and the grades CSV.

Covers: the line printed for each submission (``format_start`` while it is graded, then
``format_outcome``; ``format_result`` for both at once), the summary printed at the end
(``format_summary``), and the grades CSV exported from the gradebook (``export_grades``, its
columns ``CSV_COLUMNS`` and the values of its ``status`` column).

Leaves out: grading itself (``grader.py``) and the records it returns (``records.py``); what the learner reads
(the feedback HTML, made by nbgrader with ``preprocessors.HideHiddenTests``).

Vocabulary: a *progress line* is one submission's line, ``[index/total] student assignment …``
and its outcome; *auto points* come from the autograded check cells, *manual points* from the
free-response cells graded in the formgrader; a *status* says how settled a CSV row's score is.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .csv_files import write_csv
from .deadlines import format_late
from .records import ClassReport, GradeResult

# Columns of the grades CSV, one row per student × assignment of the gradebook.
CSV_COLUMNS = (
    "student_id",
    "last_name",
    "first_name",
    "email",
    "assignment",
    "status",
    "auto_score",
    "max_auto_score",
    "manual_score",
    "max_manual_score",
    "score",
    "max_score",
    "late_hours",
    "late_penalty",
)
# Values of the `status` column.
GRADED = "graded"  # every point is settled
NEEDS_MANUAL = "needs manual grading"  # autograded; free-response answers wait for the formgrader
NOT_GRADED = "not graded"  # this run could not grade the submission (see the run's summary)
NOT_SUBMITTED = "not submitted"  # no submission in the gradebook: scores are 0


# --------------------------------------------------------------------------------------------
# Export


def export_grades(
    db_url: str,
    path: str | os.PathLike,
    results: Sequence[GradeResult] = (),
    *,
    course_id: str = "default_course",
) -> Path:
    """Write one CSV row per student × assignment of the gradebook (columns CSV_COLUMNS); return the path.

    A submission this run could not grade (``results``) has status ``not graded`` and empty
    scores; a student with no submission has status ``not submitted`` and 0 points.
    Example row: ``ada,Lovelace,Ada,ada@example.org,02-remaining,needs manual grading,3,3,0,3,3,6``.
    """
    failed = {(r.student, r.assignment) for r in results if not r.graded}
    rows = []
    with Gradebook(db_url, course_id) as gb:
        for assignment in gb.assignments:
            for student in gb.students:
                row = {
                    "student_id": student.id,
                    "last_name": student.last_name or "",
                    "first_name": student.first_name or "",
                    "email": student.email or "",
                    "assignment": assignment.name,
                    "max_auto_score": _number(assignment.max_code_score),
                    "max_manual_score": _number(assignment.max_written_score),
                    "max_score": _number(assignment.max_score),
                    "late_hours": "",
                    "late_penalty": "",
                }
                if (student.id, assignment.name) in failed:
                    row.update(status=NOT_GRADED, auto_score="", manual_score="", score="")
                else:
                    try:
                        sub = gb.find_submission(assignment.name, student.id)
                    except MissingEntry:
                        row.update(status=NOT_SUBMITTED, auto_score="0", manual_score="0", score="0")
                    else:
                        penalty = float(sub.late_submission_penalty or 0)
                        late = sub.total_seconds_late
                        row.update(
                            status=NEEDS_MANUAL if sub.needs_manual_grade else GRADED,
                            auto_score=_number(sub.code_score),
                            manual_score=_number(sub.written_score),
                            score=_number(float(sub.score or 0) - penalty),  # after the late penalty
                            late_hours=f"{late / 3600:.2f}" if late else "",
                            late_penalty=_number(penalty) if late else "",
                        )
                rows.append(row)
    rows.sort(key=lambda r: (r["student_id"], r["assignment"]))
    return write_csv(([row.get(column, "") for column in CSV_COLUMNS] for row in rows), path, header=CSV_COLUMNS)


# --------------------------------------------------------------------------------------------
# Formatting (the CLI prints these)


def inert(text: str) -> str:
    """Return ``text`` as one line of inert text: every control character (``\\r``, ESC, …) becomes a space.

    Reasons and notes can quote a submission (a cell id, a message); on the instructor's console
    they must not move the cursor, erase a line or colour the rest. ``inert("a\\r\\x1b[2Kb")`` is
    ``"a  [2Kb"``.
    """
    return "".join(ch if ch.isprintable() else " " for ch in str(text))


def format_log(result: GradeResult) -> str:
    """Return nbgrader's log of one submission for the console: each line inert, prefixed by student and assignment."""
    head = f"{inert(result.student)} {inert(result.assignment)} | "
    return "\n".join(head + inert(line) for line in result.log.rstrip().splitlines())


def format_start(index: int, total: int, student: str, assignment: str, width: int = 8) -> str:
    """Return the progress line's head, printed while a submission is graded.

    Example: ``format_start(3, 15, "ada", "02-remaining")`` is ``"[3/15] ada      02-remaining     …"``.
    """
    return f"[{index}/{total}] {student:<{width}} {assignment:<16} …"


def format_outcome(result: GradeResult) -> str:
    """Return the end of a progress line: the score, or why the submission was not graded.

    Example: ``3/3 autograded, 3 to grade by hand  (1.1 s)`` or
    ``NOT GRADED: remaining.ipynb is not valid notebook JSON (…)``.
    """
    if not result.graded:
        return f"NOT GRADED: {inert(result.reason)}"
    text = f"{_number(result.auto_score)}/{_number(result.max_auto_score)} autograded"
    if result.manual_pending:
        text += f", {_number(result.manual_pending)} to grade by hand"
    text += "  (unchanged since the last run)" if result.skipped else f"  ({result.seconds:.1f} s)"
    if result.notes:
        text += "  [" + "; ".join(inert(note) for note in result.notes) + "]"
    if result.regrade:
        text += "  [answer changed since graded by hand: " + ", ".join(result.regrade) + "]"
    return text


def format_result(index: int, total: int, result: GradeResult) -> str:
    """Return the whole progress line of one graded submission (head and outcome)."""
    return format_start(index, total, result.student, result.assignment) + " " + format_outcome(result)


def format_summary(report: ClassReport, base: Path | None = None) -> str:
    """Return the closing summary: how many were graded, which failed and why, time, outputs.

    Paths inside ``base`` (the current folder, for the CLI) are shown relative to it.
    """
    total = len(report.results)
    graded = total - len(report.failed)
    per = report.phases.get("autograde", 0.0) / graded if graded else 0.0
    lines = [
        f"Graded {graded} of {total} submission(s) in {report.seconds:.1f} s "
        f"(autograde {report.phases.get('autograde', 0.0):.1f} s, {per:.1f} s per submission; "
        f"set-up {report.phases.get('prepare', 0.0):.1f} s, feedback {report.phases.get('feedback', 0.0):.1f} s)."
    ]
    if not total:
        lines = ["No submissions found."]
    if report.skipped:
        lines.append(f"Skipped {report.skipped} unchanged since the last run "
                     f"(read back from the gradebook; --force regrades them).")
    if not report.sandboxed:
        lines.insert(0, "WARNING: --no-sandbox: student code ran with your privileges "
                        "(it could read solutions/ and change grading/).")
    if report.stopped_by:
        lines.append(
            f"STOPPED by {report.stopped_by}: the notebook running was abandoned and no other was started; "
            f"feedback and grades.csv hold what was graded. Run again to grade the rest."
        )
    if report.failed:
        lines.append(f"Could not grade {len(report.failed)}:")
        lines += [f"  {r.student} {r.assignment}: {inert(r.reason)}" for r in report.failed]
    late = [r for r in report.results if r.late is not None]
    if late:
        lines.append(f"Late: {len(late)} submission(s):")
        lines += [f"  {r.student} {r.assignment}: {format_late(r.late)}" for r in late if r.late is not None]
    regrade = [r for r in report.results if r.regrade]
    if regrade:
        lines.append(f"To grade by hand again ({len(regrade)}; the answer changed since it was graded, "
                     "the earlier score is kept):")
        lines += [f"  {r.student} {r.assignment}: {', '.join(r.regrade)}" for r in regrade]
    if report.outside_exchange:
        lines.append(
            "Not submitted through the exchange (no submission_secret.txt: nbgrader release_feedback skips them, "
            "hand their feedback over another way): " + ", ".join(report.outside_exchange)
        )
    if report.not_on_roster:
        lines.append("Not on the roster (graded anyway): " + ", ".join(report.not_on_roster))
    if report.grades_csv is not None:
        lines.append(f"Feedback: {report.feedback} notebook(s) under {_shown_path(report.work / 'feedback', base)}")
        lines.append(f"Grades:   {_shown_path(report.grades_csv, base)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Small helpers


def _shown_path(path: Path, base: Path | None) -> str:
    if base is not None:
        try:
            return str(Path(path).resolve().relative_to(Path(base).resolve()))
        except ValueError:
            pass
    return str(path)


def _number(value) -> str:
    return "" if value is None else f"{float(value):g}"
