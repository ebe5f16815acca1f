"""Due dates, extensions and late penalties: deadlines.toml, applied from each submission's timestamp.txt."""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import textwrap
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from ctx_course.cli import main
from ctx_course.grading.deadlines import (
    DeadlineError,
    LatePolicy,
    check_students,
    format_duration,
    late_penalty,
    parse_deadlines,
    read_deadlines,
)
from ctx_course.grading.grader import Grader
from ctx_course.grading.report import format_summary

from conftest import REPO, class_builder, grades_a_class

ASSIGNMENT = "02-remaining"
UTC = dt.UTC
CST = dt.timezone(dt.timedelta(hours=8))
PER_DAY = LatePolicy("per-day", 0.1, 0.5)


# ---- the policy (pure)


def test_per_day_counts_every_day_started():
    """6 points, 0.1 a day: 1 s late costs 0.6 (one day started), 26 h costs 1.2 (two days)."""
    assert late_penalty(PER_DAY, 6, 1) == pytest.approx(0.6)
    assert late_penalty(PER_DAY, 6, 26 * 3600) == pytest.approx(1.2)


def test_per_day_is_capped():
    """A week late at 0.1 a day, cap 0.5, costs half of 6 points: 3."""
    assert late_penalty(PER_DAY, 6, 7 * 86_400) == pytest.approx(3.0)


def test_zero_policy_takes_the_whole_score_and_none_takes_nothing():
    """ "zero" takes all 6 points one second late; "none" takes nothing a week late; on time costs nothing."""
    assert late_penalty(LatePolicy("zero"), 6, 1) == 6
    assert late_penalty(LatePolicy("none"), 6, 7 * 86_400) == 0
    assert late_penalty(LatePolicy("zero"), 6, 0) == 0


def test_duration_reads_in_days_and_hours():
    """27 h is "1 d 3 h"; 90 s rounds up to "2 min"."""
    assert format_duration(27 * 3600) == "1 d 3 h"
    assert format_duration(90) == "2 min"


# ---- the file


def _parse(text: str):
    import tomllib

    return parse_deadlines(tomllib.loads(textwrap.dedent(text)), [ASSIGNMENT, "03-recall"])


def test_extension_in_days_moves_the_due_date():
    """An extension of { days = 2 } on a due date of 2026-03-02 23:59 +08:00 is 2026-03-04 23:59 +08:00."""
    deadlines = _parse("""
        [due]
        "02-remaining" = 2026-03-02T23:59:00+08:00
        [extensions.ben]
        "02-remaining" = { days = 2 }
    """)
    assert deadlines.due_for("ben", ASSIGNMENT) == dt.datetime(2026, 3, 4, 23, 59, tzinfo=CST)
    assert deadlines.due_for("ada", ASSIGNMENT) == dt.datetime(2026, 3, 2, 23, 59, tzinfo=CST)
    assert deadlines.due_for("ada", "03-recall") is None


@pytest.mark.parametrize(
    "text, named",
    [
        ('[due]\n"99-nope" = 2026-03-02T23:59:00+08:00', "[due] '99-nope'"),
        ('[due]\n"02-remaining" = 2026-03-02T23:59:00', "has no time zone"),
        (
            '[policy]\nlate = "per-day"\nshare_per_day = -0.1',
            "share_per_day must be a share between 0 and 1 (got -0.1)",
        ),
        ('[policy]\nlate = "sometimes"', "late must be one of none, zero, per-day (got 'sometimes')"),
        (
            '[due]\n"02-remaining" = 2026-03-02T23:59:00Z\n[extensions.ben]\n"02-remaining" = { days = -1 }',
            "[extensions.ben] '02-remaining': days",
        ),
        ('[due]\n"02-remaining" = "tomorrow"', "[due] '02-remaining': a due date must be a date and time"),
    ],
)
def test_bad_entries_name_themselves(text, named):
    """Every bad entry raises one DeadlineError whose message names the entry and its value."""
    with pytest.raises(DeadlineError) as caught:
        _parse(text)
    assert named in str(caught.value)


def test_extension_for_an_unknown_student_is_refused():
    """An extension for a student who is not in the course names the student."""
    deadlines = _parse('[due]\n"02-remaining" = 2026-03-02T23:59:00Z\n[extensions.zed]\n"02-remaining" = { days = 1 }')
    with pytest.raises(DeadlineError, match="'zed' is not a student of this course"):
        check_students(deadlines, ["ada", "ben"])


# ---- a graded class

DEADLINES = """\
[policy]
late = "per-day"
share_per_day = 0.1
cap = 0.5

[due]
"02-remaining" = 2026-03-02T23:59:00+08:00

[extensions.cai]
"02-remaining" = { days = 2 }
"""
# 2026-03-02 23:59 +08:00 is 15:59 UTC.
TIMESTAMPS = {
    "ada": "2026-03-02 15:00:00 UTC",  # 59 min early
    "ben": "2026-03-03 18:00:00 UTC",  # 26 h 1 min late: two days started, 20 % of 3 points
    "cai": "2026-03-03 18:00:00 UTC",  # as late as ben, but her extension runs to 2026-03-04 15:59 UTC
}


@pytest.fixture(scope="module", params=[1, 2], ids=["jobs1", "jobs2"])
@grades_a_class
def late_class(tmp_path_factory, request, released_remaining):
    """ada, ben and cai hand in the model answer of 02-remaining at TIMESTAMPS; graded with DEADLINES.

    Graded in this process (one job) and on two Dask workers, whose scratch gradebooks know no due date.
    """
    tmp = tmp_path_factory.mktemp("late")
    build = class_builder()
    released = released_remaining
    for student, stamp in TIMESTAMPS.items():
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        text = build.submission(
            released, REPO / "solutions" / ASSIGNMENT / "remaining.ipynb", build.Work(code={"remaining": build.MODEL})
        )
        (folder / "remaining.ipynb").write_text(text, encoding="utf-8")
        (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")
    (tmp / "deadlines.toml").write_text(DEADLINES, encoding="utf-8")
    grader = Grader(REPO, work=tmp / "work", sandbox=False, jobs=request.param, deadlines=tmp / "deadlines.toml")
    grader.collect(tmp / "incoming")
    report = grader.grade()
    rows = {r["student_id"]: r for r in csv.DictReader((tmp / "work" / "grades.csv").open(encoding="utf-8"))}
    return tmp, grader, report, rows


def test_late_submission_loses_its_share_in_grades_csv(late_class):
    """ben, 26 h late at 0.1 a day started, loses 20 % of 3 points: score 2.4, late_penalty 0.6, late_hours 26.02."""
    _, _, _, rows = late_class
    assert (rows["ben"]["score"], rows["ben"]["late_penalty"], rows["ben"]["late_hours"]) == ("2.4", "0.6", "26.02")


def test_on_time_and_extended_submissions_keep_their_score(late_class):
    """ada (early) and cai (late, but within her extension) keep 3 points and show no lateness."""
    _, _, _, rows = late_class
    for student in ("ada", "cai"):
        assert (rows[student]["score"], rows[student]["late_hours"], rows[student]["late_penalty"]) == ("3", "", "")


def test_gradebook_holds_due_date_extension_and_penalty(late_class):
    """nbgrader's own fields carry it (so `nbgrader export` agrees): due 15:59 UTC, cai's 2-day extension, ben's 0.6."""
    _, grader, _, _ = late_class
    with Gradebook(grader.db_url) as gb:
        assert gb.find_assignment(ASSIGNMENT).duedate == dt.datetime(2026, 3, 2, 15, 59)
        assert gb.find_submission(ASSIGNMENT, "cai").extension == dt.timedelta(days=2)
        assert gb.find_submission(ASSIGNMENT, "ben").late_submission_penalty == pytest.approx(0.6)
        assert gb.find_submission(ASSIGNMENT, "cai").late_submission_penalty == 0


def test_summary_and_feedback_show_the_lateness(late_class):
    """The summary lists ben 1 d 2 h late, -0.6 points; his feedback page says 迟交 and 扣 0.6 分, ada's does not."""
    tmp, _, report, _ = late_class
    summary = format_summary(report)
    assert "Late: 1 submission(s):" in summary
    assert "  ben 02-remaining: late 1 d 2 h, -0.6 points (20%)" in summary
    ben = (tmp / "work" / "feedback" / "ben" / ASSIGNMENT / "remaining.html").read_text(encoding="utf-8")
    ada = (tmp / "work" / "feedback" / "ada" / ASSIGNMENT / "remaining.html").read_text(encoding="utf-8")
    assert "迟交" in ben and "扣 0.6 分" in ben
    assert "迟交" not in ada


def test_bad_deadlines_file_is_one_error_line_and_nothing_graded(tmp_path):
    """A due date without a time zone: exit 2, one `error:` line naming the entry, no grades.csv, nothing graded."""
    incoming = tmp_path / "incoming" / "ada" / ASSIGNMENT
    incoming.mkdir(parents=True)
    (incoming / "remaining.ipynb").write_text(
        (REPO / "lessons" / ASSIGNMENT / "remaining.ipynb").read_text(encoding="utf-8")
    )
    bad = tmp_path / "deadlines.toml"
    bad.write_text('[due]\n"02-remaining" = 2026-03-02T23:59:00\n', encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(
            [
                "grade",
                "--root",
                str(REPO),
                "--work",
                str(tmp_path / "work"),
                "--no-sandbox",
                "--submissions",
                str(tmp_path / "incoming"),
                "--deadlines",
                str(bad),
            ]
        )
    assert status == 2
    assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("error: deadlines.toml: [due] '02-remaining'")
    assert not (tmp_path / "work" / "grades.csv").exists()
    assert not (tmp_path / "work" / "autograded").exists()


def test_unknown_student_in_extensions_stops_before_grading(tmp_path):
    """An extension for a student nobody knows: the grader raises before any submission is autograded."""
    (tmp_path / "deadlines.toml").write_text(
        '[due]\n"02-remaining" = 2026-03-02T23:59:00Z\n[extensions.zed]\n"02-remaining" = { days = 1 }\n',
        encoding="utf-8",
    )
    incoming = tmp_path / "incoming" / "ada" / ASSIGNMENT
    incoming.mkdir(parents=True)
    (incoming / "remaining.ipynb").write_text(
        (REPO / "lessons" / ASSIGNMENT / "remaining.ipynb").read_text(encoding="utf-8")
    )
    grader = Grader(REPO, work=tmp_path / "work", sandbox=False, jobs=1, deadlines=tmp_path / "deadlines.toml")
    grader.collect(tmp_path / "incoming")
    with pytest.raises(DeadlineError, match=r"\[extensions.zed\]"):
        grader.grade()
    assert not (tmp_path / "work" / "autograded").exists()


def test_reading_a_missing_file_names_it(tmp_path):
    """--deadlines pointing at no file raises DeadlineError naming the path."""
    with pytest.raises(DeadlineError, match="cannot be read"):
        read_deadlines(Path(tmp_path / "none.toml"), [ASSIGNMENT])
