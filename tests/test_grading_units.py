"""The grading run's small parts, without a kernel: roster, collection, preprocessors, lines, CLI errors."""
from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.dbutil import ALEMBIC_DIR
from nbgrader.preprocessors import Execute
from traitlets.utils.importstring import import_item

from ctx_course.cells import hidden_spans
from ctx_course.cli import main
from ctx_course.config import gradebook_schema_head, load_course_config, share_gradebook_engines
from ctx_course.grading.autograde import grading_config
from ctx_course.grading.records import ClassReport, GradeResult, RosterError, Student
from ctx_course.grading.report import CSV_COLUMNS, format_outcome, format_result, format_start, format_summary
from ctx_course.grading.steps.preprocessors import (
    AUTOGRADE_PREPROCESSORS,
    FEEDBACK_PREPROCESSORS,
    HIDDEN_START,
    CapOutput,
    HideHiddenTests,
    ScoreFromErrorsOnly,
)
from ctx_course.grading.stopping import StopOnSignal
from ctx_course.grading.submissions import collect, find_submissions, read_roster
from ctx_course.sandbox import policy
from ctx_course.sandbox.execute import PrelaunchedExecute
from ctx_course.sandbox.kernels import KernelPool
from ctx_course.sandbox.policy import SYSTEM_ALLOWED, SandboxPolicy, compile_course_packages, parse_cpu, parse_memory

from conftest import REPO


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---- roster


def test_roster_reads_the_nbgrader_columns(tmp_path):
    """A roster row id,first_name,last_name,email becomes one Student with those fields."""
    roster = _write(tmp_path / "r.csv", "id,first_name,last_name,email\nada,Ada,Lovelace,ada@example.org\n")
    assert read_roster(roster) == [Student("ada", "Ada", "Lovelace", "ada@example.org")]


def test_roster_empty_cells_become_none_and_unknown_columns_are_ignored(tmp_path):
    """Like `nbgrader db student import`: '' is None, a `section` column is ignored, a BOM is skipped."""
    roster = _write(tmp_path / "r.csv", "\ufeffid, email ,section\nben,,B2\ncai,cai@example.org,B1\n")
    assert read_roster(roster) == [Student("ben"), Student("cai", email="cai@example.org")]


def test_roster_without_an_id_column_is_refused(tmp_path):
    """A header without `id` raises RosterError naming the file."""
    roster = _write(tmp_path / "r.csv", "name,email\nada,ada@example.org\n")
    with pytest.raises(RosterError, match="r.csv"):
        read_roster(roster)


@pytest.mark.parametrize("bad_id", ["", "../x", ".hidden", "a/b"])
def test_roster_ids_must_be_folder_names(tmp_path, bad_id):
    """An id that cannot be a submitted/<student>/ folder raises RosterError with the line number 2."""
    roster = _write(tmp_path / "r.csv", f"id,email\n{bad_id},x@example.org\n")
    with pytest.raises(RosterError, match="line 2"):
        read_roster(roster)


def test_roster_with_a_duplicate_id_is_refused(tmp_path):
    """The second `ada` (line 3) raises RosterError."""
    roster = _write(tmp_path / "r.csv", "id\nada\nada\n")
    with pytest.raises(RosterError, match="line 3.*twice"):
        read_roster(roster)


def test_example_roster_lists_nine_students():
    """The example roster holds ada, ben, cai, dana, eve, fay, gus, hana and ivan; all but fay have a Canvas id."""
    students = read_roster(REPO / "examples" / "class" / "roster.csv")
    assert [s.id for s in students] == ["ada", "ben", "cai", "dana", "eve", "fay", "gus", "hana", "ivan"]
    assert [s.id for s in students if not s.lms_user_id] == ["fay"]


# ---- collection


def test_find_submissions_lists_student_assignment_folders(tmp_path):
    """Folders <student>/<assignment>/ are found, sorted; files and dot-folders are not."""
    _write(tmp_path / "ben" / "02-remaining" / "remaining.ipynb", "{}")
    _write(tmp_path / "ada" / "03-recall" / "recall.ipynb", "{}")
    _write(tmp_path / "ada" / "notes.txt", "")
    (tmp_path / ".ipynb_checkpoints" / "x").mkdir(parents=True)
    assert find_submissions(tmp_path) == [("ada", "03-recall"), ("ben", "02-remaining")]


def test_collect_replaces_an_earlier_copy(tmp_path):
    """Collecting again replaces the submission: a file only in the old copy is gone."""
    incoming, submitted = tmp_path / "in", tmp_path / "work" / "submitted"
    _write(incoming / "ada" / "02-remaining" / "remaining.ipynb", "new")
    _write(submitted / "ada" / "02-remaining" / "old.ipynb", "old")
    assert collect(incoming, submitted) == [("ada", "02-remaining")]
    assert sorted(p.name for p in (submitted / "ada" / "02-remaining").iterdir()) == ["remaining.ipynb"]


def test_collect_follows_no_link_to_a_folder(tmp_path):
    """An assignment folder that is a link into solutions/ is not collected: only the real one is."""
    incoming, submitted = tmp_path / "in", tmp_path / "work" / "submitted"
    _write(incoming / "ada" / "02-remaining" / "remaining.ipynb", "mine")
    (incoming / "mallory").mkdir()
    (incoming / "mallory" / "02-remaining").symlink_to(REPO / "solutions" / "02-remaining")
    assert collect(incoming, submitted) == [("ada", "02-remaining")]
    assert not (submitted / "mallory").exists()


def test_a_student_folder_with_a_glob_character_is_refused_by_name(tmp_path):
    """A student folder kim[2] (nbgrader's patterns would select kim2's files) raises ValueError naming it."""
    _write(tmp_path / "in" / "kim2" / "02-remaining" / "remaining.ipynb", "kim2's")
    _write(tmp_path / "in" / "kim[2]" / "02-remaining" / "remaining.ipynb", "kim[2]'s")
    with pytest.raises(ValueError, match=re.escape("(got 'kim[2]')")):
        collect(tmp_path / "in", tmp_path / "work" / "submitted")
    assert not (tmp_path / "work" / "submitted").exists()


def test_cli_refuses_a_glob_student_id_in_one_error_line(tmp_path, capsys):
    """The command stops with status 2 and one error line naming kim[2], before grading anything."""
    _write(tmp_path / "in" / "kim[2]" / "02-remaining" / "remaining.ipynb", "{}")
    args = ["grade", "--root", str(REPO), "--submissions", str(tmp_path / "in"), "--work", str(tmp_path / "w")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "'kim[2]'" in err
    assert not (tmp_path / "w" / "grades.csv").exists()


def test_collect_from_a_missing_folder_is_refused(tmp_path):
    """A submissions folder that does not exist raises ValueError naming it."""
    with pytest.raises(ValueError, match="nowhere"):
        collect(tmp_path / "nowhere", tmp_path / "submitted")


# ---- configuration


def test_new_gradebooks_are_stamped_with_the_newest_schema_revision(tmp_path):
    """The revision read in process is the one no other migration of nbgrader's builds on, and a
    new gradebook carries it (nbgrader's own `alembic heads` subprocess gives the same)."""
    revisions, parents = set(), set()
    for script in Path(ALEMBIC_DIR, "versions").glob("*.py"):
        text = script.read_text(encoding="utf-8")
        revisions |= set(re.findall(r"^revision\s*=\s*['\"](\w+)['\"]", text, flags=re.M))
        parents |= set(re.findall(r"^down_revision\s*=\s*['\"](\w+)['\"]", text, flags=re.M))
    assert revisions - parents == {gradebook_schema_head()}
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}"):
        pass
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(gradebook_schema_head(),)]


def test_gradebooks_of_one_database_share_an_engine_and_still_close(tmp_path):
    """Two gradebooks of one file use one engine; one closed, the other and a third still write and read."""
    share_gradebook_engines()  # what every path into nbgrader does (load_course_config)
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    first, second = Gradebook(url), Gradebook(url)
    assert first.engine is second.engine
    first.add_student("ada")
    first.close()
    second.add_student("ben")
    second.close()
    with Gradebook(url) as third:
        assert sorted(s.id for s in third.students) == ["ada", "ben"]
    with Gradebook(f"sqlite:///{tmp_path / 'other.db'}") as other:
        assert other.engine is not third.engine and other.students == []


def test_grading_config_never_writes_the_release_into_lessons(tmp_path):
    """The grading run's release folder is <work>/release, the preprocessors are ours."""
    config = grading_config(REPO, work=tmp_path)
    assert config.CourseDirectory.release_directory == str(tmp_path.resolve() / "release")
    assert CapOutput in config.Autograde.autograde_preprocessors
    assert HideHiddenTests in config.GenerateFeedback.preprocessors


def test_nbgrader_config_names_the_preprocessors_the_grading_run_uses(tmp_path):
    """nbgrader_config.py configures exactly the grading run's preprocessors; in process, only
    step 1 differs: PrelaunchedExecute runs the notebooks in place of nbgrader's Execute."""
    configured = load_course_config(REPO)
    autograde = [import_item(name) for name in configured.Autograde.autograde_preprocessors]
    feedback = [import_item(name) for name in configured.GenerateFeedback.preprocessors]
    assert autograde == AUTOGRADE_PREPROCESSORS
    assert feedback == FEEDBACK_PREPROCESSORS

    in_process = grading_config(REPO, work=tmp_path, pool=KernelPool(tmp_path))
    steps = in_process.Autograde.autograde_preprocessors
    assert len(steps) == len(autograde)
    assert [(n, a, b) for n, (a, b) in enumerate(zip(autograde, steps)) if a is not b] == [
        (0, Execute, PrelaunchedExecute)
    ]
    assert in_process.GenerateFeedback.preprocessors == feedback


# ---- output caps


def _code_cell(outputs, source="print(1)"):
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


def test_cap_output_cuts_one_endless_line():
    """A 5,000,000-character line keeps its first 20,000 characters plus one marker line."""
    cell = _code_cell([{"output_type": "stream", "name": "stdout", "text": "x" * 5_000_000}])
    cell, _ = CapOutput().preprocess_cell(cell, {}, 0)
    text = cell.outputs[0]["text"]
    assert text.startswith("x" * 20_000) and text[20_000] == "\n"
    assert "5,000,000" in text and len(text) < 20_100


def test_cap_output_keeps_short_output_unchanged():
    """An output of 11 characters is left as it is."""
    cell = _code_cell([{"output_type": "stream", "name": "stdout", "text": "hello world"}])
    cell, _ = CapOutput().preprocess_cell(cell, {}, 0)
    assert cell.outputs[0]["text"] == "hello world"


def test_cap_output_keeps_fifty_outputs_per_cell():
    """120 display outputs become the first 50 and one line saying 70 were left out."""
    outputs = [{"output_type": "display_data", "data": {"text/plain": str(i)}, "metadata": {}} for i in range(120)]
    cell, _ = CapOutput().preprocess_cell(_code_cell(outputs), {}, 0)
    assert len(cell.outputs) == 51
    assert cell.outputs[49]["data"]["text/plain"] == "49"
    assert "70" in cell.outputs[50]["text"]


def test_cap_output_drops_an_oversized_image():
    """A 3,000,000-character PNG is replaced by a text note; a 10-character one is kept."""
    big = {"output_type": "display_data", "data": {"image/png": "A" * 3_000_000}, "metadata": {}}
    small = {"output_type": "display_data", "data": {"image/png": "A" * 10}, "metadata": {}}
    cell, _ = CapOutput().preprocess_cell(_code_cell([big, small]), {}, 0)
    assert "image/png" not in cell.outputs[0]["data"] and "image/png" in cell.outputs[0]["data"]["text/plain"]
    assert cell.outputs[1]["data"]["image/png"] == "A" * 10


# ---- hidden tests in the feedback

CHECK_SOURCE = "\n".join(
    [
        'check_exercise("remaining", remaining)',  # line 1
        "assert remaining(1, 0, 0, 0, 0) == (1, False)",  # line 2
        "### BEGIN HIDDEN TESTS",  # line 3
        "assert remaining(7, 0, 0, 0, 0) == (7, False)",  # line 4
        "### END HIDDEN TESTS",  # line 5
    ]
)


def _error(line):
    return {
        "output_type": "error",
        "ename": "AssertionError",
        "evalue": "secret 7",
        "traceback": [f"\x1b[0;31mCell In[4], line {line}\x1b[0m", f"----> {line} assert remaining(7, 0, 0, 0, 0)"],
    }


def test_feedback_loses_the_hidden_region():
    """Lines 3–5 (markers and hidden assert) are removed; lines 1–2 stay."""
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([], CHECK_SOURCE), {}, 0)
    assert cell.source == 'check_exercise("remaining", remaining)\nassert remaining(1, 0, 0, 0, 0) == (1, False)'


def test_a_failing_hidden_test_shows_only_its_error_type():
    """An error raised on line 4 (hidden) keeps `AssertionError`, loses its message and its traceback."""
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([_error(4)], CHECK_SOURCE), {}, 0)
    error = cell.outputs[0]
    assert error["evalue"] == ""
    assert error["traceback"] == ["AssertionError（隐藏测试没有通过）"]


def test_a_failing_visible_test_keeps_its_line():
    """An error raised on line 2 (visible) shows its type, message and the visible line, nothing else."""
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([_error(2)], CHECK_SOURCE), {}, 0)
    assert cell.outputs[0]["traceback"] == [
        "AssertionError: secret 7",
        "（这一格第 2 行没有通过：assert remaining(1, 0, 0, 0, 0) == (1, False)）",
    ]


def test_an_unterminated_hidden_region_hides_the_rest_of_the_cell():
    """BEGIN without END (a student's copy) hides everything from the marker on."""
    source = "a = 1\n### BEGIN HIDDEN TESTS\nb = 2"
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([], source), {}, 0)
    assert cell.source == "a = 1"


@pytest.mark.parametrize("line_end", ["\r\n", "\r"])
def test_feedback_finds_the_hidden_region_whatever_the_line_ends(line_end):
    """With \r\n or \r line ends, lines 3–5 are removed and lines 1–2 stay, as the digest rewriter counts them."""
    source = CHECK_SOURCE.replace("\n", line_end)
    assert hidden_spans(source) == [(3, 5)]
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([], source), {}, 0)
    assert cell.source == 'check_exercise("remaining", remaining)\nassert remaining(1, 0, 0, 0, 0) == (1, False)'


def test_cells_without_hidden_tests_are_untouched():
    """A cell without markers keeps its source and its traceback."""
    error = _error(1)
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell([error], "assert False"), {}, 0)
    assert cell.source == "assert False" and len(cell.outputs[0]["traceback"]) == 2


# ---- lines printed by the CLI


def _result(**kw):
    base = dict(student="ada", assignment="02-remaining", graded=True, auto_score=3.0, max_auto_score=3.0)
    return GradeResult(**{**base, **kw})


def test_progress_line_of_a_graded_submission():
    """Score 3 of 3, 3 manual points pending, 1.2 s: one line with all three."""
    line = format_result(3, 15, _result(manual_pending=3.0, seconds=1.24))
    assert line == "[3/15] ada      02-remaining     … 3/3 autograded, 3 to grade by hand  (1.2 s)"


def test_progress_line_prints_a_quoted_submission_as_inert_text():
    """A reason and a note quoting \\r and ESC sequences print without any control character."""
    result = GradeResult("eve", "02-remaining", False, reason="bad \r\x1b[2K[9/9] ok")
    graded = GradeResult("eve", "02-remaining", True, 3, 3, notes=("id \x1b[31mred\x07",))
    for line in (format_outcome(result), format_outcome(graded)):
        assert all(ch.isprintable() for ch in line)
    assert format_outcome(result) == "NOT GRADED: bad   [2K[9/9] ok"


def test_progress_line_of_a_failed_submission_gives_the_reason():
    """A failed submission's line ends with NOT GRADED and its reason."""
    result = _result(graded=False, reason="missing notebook recall.ipynb")
    assert format_outcome(result) == "NOT GRADED: missing notebook recall.ipynb"


def test_progress_line_names_what_nbgrader_restored():
    """Notes follow the score in brackets."""
    text = format_outcome(_result(notes=("deleted check cells restored: check_x",)))
    assert text.endswith("[deleted check cells restored: check_x]")


def test_progress_head_is_printed_before_grading():
    """The head shows index/total, student and assignment, then an ellipsis."""
    assert format_start(1, 2, "ben", "05-trim-lines") == "[1/2] ben      05-trim-lines    …"


def test_summary_names_the_failures(tmp_path):
    """Two results, one failed: 'Graded 1 of 2', then the failed one by name with its reason."""
    report = ClassReport(
        results=(_result(), _result(student="eve", graded=False, reason="broken")),
        seconds=3.0,
        work=tmp_path,
        grades_csv=tmp_path / "grades.csv",
        feedback=1,
        phases={"prepare": 0.5, "autograde": 2.0, "feedback": 0.4, "export": 0.1},
    )
    lines = format_summary(report).splitlines()
    assert lines[0].startswith("Graded 1 of 2 submission(s) in 3.0 s (autograde 2.0 s, 2.0 s per submission")
    assert lines[1:3] == ["Could not grade 1:", "  eve 02-remaining: broken"]


def test_csv_columns():
    """The grades CSV has fourteen columns, identity first, scores, then lateness last."""
    assert CSV_COLUMNS == (
        "student_id", "last_name", "first_name", "email", "assignment", "status",
        "auto_score", "max_auto_score", "manual_score", "max_manual_score", "score", "max_score",
        "late_hours", "late_penalty",
    )


# ---- CLI: bad input exits with 2 and one line


def test_cli_refuses_a_missing_submissions_folder(tmp_path, capsys):
    """--submissions pointing nowhere: exit 2, one 'error:' line on stderr."""
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path), "--submissions", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("error: --submissions") and err.count("\n") == 1


def test_cli_refuses_a_bad_roster(tmp_path, capsys):
    """A roster without an id column: exit 2, no traceback."""
    roster = _write(tmp_path / "r.csv", "name\nada\n")
    (tmp_path / "in").mkdir()
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "in"),
                   "--roster", str(roster)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and "'id' column" in err


def test_cli_example_excludes_explicit_paths(tmp_path, capsys):
    """--example together with --roster: exit 2."""
    status = main(["grade", "--root", str(REPO), "--example", "--roster", "x.csv", "--work", str(tmp_path)])
    assert status == 2 and "--example" in capsys.readouterr().err


def test_cli_refuses_a_root_without_config(tmp_path, capsys):
    """A root without nbgrader_config.py: exit 2."""
    status = main(["grade", "--root", str(tmp_path)])
    assert status == 2 and "nbgrader_config.py" in capsys.readouterr().err


def test_cli_refuses_a_zero_timeout(tmp_path, capsys):
    """--timeout 0: exit 2 naming timeout."""
    (tmp_path / "in").mkdir()
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "in"),
                   "--timeout", "0"])
    assert status == 2 and "timeout" in capsys.readouterr().err


def test_cli_refuses_zero_jobs(tmp_path, capsys):
    """--jobs 0: exit 2 naming jobs and echoing 0."""
    (tmp_path / "in").mkdir()
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w"), "--submissions", str(tmp_path / "in"),
                   "--jobs", "0"])
    err = capsys.readouterr().err
    assert status == 2 and "jobs" in err and "(got 0)" in err


def test_cli_without_submissions_folder_says_so(tmp_path, capsys):
    """A working folder without submitted/: exit 2 and a hint to collect first."""
    status = main(["grade", "--root", str(REPO), "--work", str(tmp_path / "w")])
    assert status == 2 and "collect first" in capsys.readouterr().err


def test_release_still_parses():
    """The release subcommand is still there (help exits 0)."""
    with pytest.raises(SystemExit) as stop:
        main(["release", "--help"])
    assert stop.value.code == 0


def test_example_submissions_are_valid_notebooks_except_the_broken_one():
    """Every example submission except eve's broken 02 is a valid notebook."""
    folder = REPO / "examples" / "class" / "submitted"
    broken = folder / "eve" / "02-remaining" / "remaining.ipynb"
    for path in sorted(folder.glob("*/*/*.ipynb")):
        if path == broken:
            with pytest.raises(json.JSONDecodeError):
                json.loads(path.read_text(encoding="utf-8"))
        else:
            nbformat.validate(nbformat.read(path, as_version=4))


# ---- output printed while hidden tests run


def test_feedback_drops_what_was_printed_during_hidden_tests():
    """Text after HIDDEN_START in the same output, and every later output, are dropped."""
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": f"✓ visible\n{HIDDEN_START}(7, 0, 0, 0, 0)\n"},
        {"output_type": "stream", "name": "stdout", "text": "(8, 0, 0, 0, 0)\n"},
        {"output_type": "display_data", "data": {"text/plain": "(9, 0)"}, "metadata": {}},
    ]
    cell, _ = HideHiddenTests().preprocess_cell(_code_cell(outputs, CHECK_SOURCE), {}, 0)
    assert [o["text"] for o in cell.outputs] == ["✓ visible\n"]


def test_summary_shows_paths_relative_to_the_current_folder(tmp_path):
    """With base = the working folder's parent, the summary names grading/feedback and grading/grades.csv."""
    work = tmp_path / "grading"
    report = ClassReport(results=(_result(),), seconds=1.0, work=work, grades_csv=work / "grades.csv", feedback=1,
                         phases={"prepare": 0.1, "autograde": 0.8, "feedback": 0.1, "export": 0.0})
    lines = format_summary(report, base=tmp_path).splitlines()
    assert lines[-2:] == ["Feedback: 1 notebook(s) under grading/feedback", "Grades:   grading/grades.csv"]


def test_kernel_pool_survives_configuration_copies(tmp_path):
    """traitlets deep-copies configuration values; a copied pool must be the same pool
    (or each notebook would get its own pool and kernels would leak)."""
    pool = KernelPool(tmp_path)
    assert copy.deepcopy(pool) is pool
    assert grading_config(REPO, work=tmp_path, pool=pool).PrelaunchedExecute.pool is pool


class _FakeKernel:
    async def is_alive(self):
        return True


def _counting_pool(tmp_path, monkeypatch) -> tuple[KernelPool, list]:
    """A pool whose launches are counted instead of starting kernels."""
    pool, launched = KernelPool(tmp_path), []
    monkeypatch.setattr(pool, "_launch", lambda: launched.append(_FakeKernel()) or launched[-1])
    return pool, launched


def test_a_kernel_pool_launches_none_ahead_after_the_planned_notebooks(tmp_path, monkeypatch):
    """Three notebooks planned: three kernels in all, the last notebook's none launched ahead."""
    pool, launched = _counting_pool(tmp_path, monkeypatch)
    pool.plan(3)
    for _ in range(3):
        pool.take()
        pool.launch_next()
    assert len(launched) == 3 and pool._waiting is None


def test_a_kernel_pool_without_a_plan_always_launches_one_ahead(tmp_path, monkeypatch):
    """No plan (a caller that does not know what follows): one kernel waits after each take."""
    pool, launched = _counting_pool(tmp_path, monkeypatch)
    for _ in range(3):
        pool.take()
        pool.launch_next()
    assert len(launched) == 4 and pool._waiting is launched[-1]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_a_kernel_pool_refuses_a_bad_plan(tmp_path, bad):
    """The plan is a whole number of notebooks (or None); anything else names the value."""
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        KernelPool(tmp_path).plan(bad)


# ---- sandbox settings and command


def test_memory_sizes_are_read_in_binary_units():
    """2G is 2 GiB, 512M is 512 MiB, 1.5GiB is 1.5 GiB, a plain number is bytes."""
    assert parse_memory("2G") == 2 * 1024**3
    assert parse_memory("512M") == 512 * 1024**2
    assert parse_memory("1.5GiB") == 3 * 1024**3 // 2
    assert parse_memory(1024**3) == 1024**3


@pytest.mark.parametrize("bad", ["lots", "2X", "1M", True])
def test_bad_memory_limits_are_refused(bad):
    """A size that is not one, or below 64M, raises ValueError naming memory_limit and echoing it."""
    with pytest.raises(ValueError, match=f"memory_limit.*{re.escape(repr(bad))}"):
        parse_memory(bad)


@pytest.mark.parametrize("bad", ["0", "-5", "1.5", "soon"])
def test_bad_cpu_limits_are_refused(bad):
    """A CPU limit that is not a whole number of seconds >= 1 raises ValueError naming cpu_limit."""
    with pytest.raises(ValueError, match="cpu_limit"):
        parse_cpu(bad)


def test_sandbox_command_hides_the_course_and_limits_the_kernel(tmp_path):
    """The command unshares network and PIDs, dies with the grader, binds only the kernel's
    folder writable, and sets both limits."""
    work = tmp_path / "grading"
    work.mkdir()
    policy = SandboxPolicy.for_course(REPO, work, memory_limit="1G", cpu_limit=7)
    argv = policy.command(["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "k.json"], tmp_path / "kernel")
    assert {"--unshare-net", "--unshare-pid", "--die-with-parent", "--clearenv"} <= set(argv)
    pairs = list(zip(argv, argv[1:]))
    assert [a for a, b in pairs if a in ("--bind", "--bind-try")] == ["--bind"]
    assert ("--bind", str(tmp_path / "kernel")) in pairs
    assert "ulimit -v 1048576 && ulimit -t 7" in argv[argv.index("-c") + 1]
    assert argv[argv.index("/usr/bin/python3") + 1] == "-P"


def test_sandbox_filesystem_is_an_allow_list(tmp_path):
    """Only the system folders, a few files of /etc, the exposed folders and the kernel's folder
    are mounted: not /, not the course folder, not the grading folder, not the host's /tmp."""
    work = tmp_path / "grading"
    work.mkdir()
    policy = SandboxPolicy.for_course(REPO, work)
    argv = policy.command(["python3"], tmp_path / "kernel")
    sources = [b for a, b in zip(argv, argv[1:]) if a in ("--ro-bind", "--bind")]
    allowed = [*SYSTEM_ALLOWED, *policy.exposed, str(tmp_path / "kernel")]
    assert [s for s in sources if not s.startswith("/etc/") and not any(Path(s) == Path(a) for a in allowed)] == []
    assert "/" not in sources and str(REPO) not in sources and str(work) not in sources
    assert ("--tmpfs", "/tmp") in list(zip(argv, argv[1:]))


def test_sandbox_hides_the_debugger_a_graded_kernel_never_uses(tmp_path):
    """debugpy's folder is an empty read-only folder in the sandbox, mounted after the virtual
    environment it lies in (so ipykernel starts without loading a debugger)."""
    [debugpy] = importlib.util.find_spec("debugpy").submodule_search_locations
    argv = SandboxPolicy.for_course(REPO, tmp_path / "grading").command(["python3"], tmp_path / "kernel")
    pairs = list(zip(argv, argv[1:]))
    venv = str(Path(sys.prefix).resolve())
    assert pairs.index(("--ro-bind", venv)) < pairs.index(("--tmpfs", str(Path(debugpy).resolve())))
    assert ("--remount-ro", str(Path(debugpy).resolve())) in pairs


@pytest.mark.skipif(policy.sandbox_problem() is not None, reason="bubblewrap cannot sandbox here")
def test_a_sandboxed_kernel_imports_the_course_package_the_grader_bound(tmp_path, monkeypatch):
    """A course graded from another folder than the one the environment was installed from (a
    copy of the checkout): the sandboxed kernel imports the copy's ctx_reference, the folder
    the policy binds, and not the install's (which is not in the sandbox at all)."""
    course = tmp_path / "course-copy"
    shutil.copytree(REPO / "ctx_reference", course / "ctx_reference", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(policy, "_package_folders", lambda name: [str(course / name)])
    work = tmp_path / "grading"
    work.mkdir()
    sandbox = SandboxPolicy.for_course(course, work)
    kernel = tmp_path / "kernel"
    policy.prepare_folder(kernel)
    code = "import ctx_reference, ctx_reference.checks; print(ctx_reference.__file__)"
    done = subprocess.run(sandbox.command([sys.executable, "-c", code], kernel), capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, str(course / "ctx_reference" / "__init__.py")), done.stderr
    # the answer process's policy (no course package bound) is given no such path
    without = dataclasses.replace(sandbox, exposed=tuple(p for p in sandbox.exposed if Path(p).name != "ctx_reference"))
    assert "PYTHONPATH" not in without.command(["python3"], kernel)


@pytest.mark.skipif(policy.sandbox_problem() is not None, reason="bubblewrap cannot sandbox here")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="on one core BLAS starts no thread anyway")
def test_a_sandboxed_process_multiplies_matrices_on_one_thread(tmp_path):
    """numpy's BLAS starts no thread of its own in the sandbox, however many cores there are
    (each would spin after every product, taking CPU from the other kernels)."""
    sandbox = SandboxPolicy.for_course(REPO, tmp_path / "grading")
    policy.prepare_folder(tmp_path / "kernel")
    code = "import os, numpy; a = numpy.ones((300, 300)); a @ a; print(len(os.listdir('/proc/self/task')))"
    done = subprocess.run(sandbox.command([sys.executable, "-c", code], tmp_path / "kernel"), capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "1"), done.stderr


def test_course_packages_are_compiled_so_no_kernel_compiles_them(tmp_path, monkeypatch):
    """After compile_course_packages, a kernel that may not write bytecode (read-only package,
    PYTHONDONTWRITEBYTECODE) loads every module of ctx_reference from bytecode, none from source."""
    package = tmp_path / "packages" / "ctx_reference"
    shutil.copytree(REPO / "ctx_reference", package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(policy, "_package_folders", lambda name: [str(package)])
    assert compile_course_packages() == [str(package)]
    modules = sorted(str(path) for path in package.rglob("*.py"))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(package.parent))
    code = "import ctx_reference, ctx_reference.checks, ctx_reference.plots, ctx_reference.widgets, ctx_reference.cli"
    done = subprocess.run([sys.executable, "-v", "-P", "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = [line for line in done.stderr.splitlines() if str(package) in line]
    from_source = [line for line in loaded
                   if line.startswith("# code object from") and line.rstrip("'").endswith(".py")]
    from_bytecode = [line for line in loaded if line.startswith("# code object from") and ".pyc" in line]
    assert from_source == [] and len(from_bytecode) >= 10, loaded[:20]
    assert all(Path(importlib.util.cache_from_source(module)).is_file() for module in modules)


def test_stop_on_signal_records_sigterm_instead_of_dying():
    """Inside StopOnSignal a SIGTERM to this very process is recorded (and on_stop called once);
    outside it the previous handler is back."""
    import os
    import signal

    calls = []
    before = signal.getsignal(signal.SIGTERM)
    with StopOnSignal(on_stop=lambda: calls.append(1)) as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)
    assert (stop.signal, stop.number, calls) == ("SIGTERM", signal.SIGTERM, [1])
    assert signal.getsignal(signal.SIGTERM) is before


# ---- scores and feedback


def test_a_displayed_value_in_a_check_cell_is_not_a_score():
    """An execute_result "3" before an error in a 3-point check cell becomes a display: nbgrader scores 0."""
    from nbgrader.utils import determine_grade

    outputs = [
        {"output_type": "execute_result", "data": {"text/plain": "3"}, "metadata": {}, "execution_count": 1},
        {"output_type": "error", "ename": "AssertionError", "evalue": "", "traceback": []},
    ]
    cell = _code_cell(outputs, "check()")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "check_x", "points": 3}
    assert determine_grade(copy.deepcopy(cell))[0] == 3  # nbgrader's own reading: the control
    cell, _ = ScoreFromErrorsOnly().preprocess_cell(cell, {}, 0)
    assert [o["output_type"] for o in cell.outputs] == ["display_data", "error"]
    assert determine_grade(cell)[0] == 0


def test_a_later_cell_quoting_a_hidden_test_is_cut_from_the_feedback():
    """A later cell printing the check cell's hidden line with [ ] ( ) changed to < > loses that
    line; its other line stays."""
    check = _code_cell([], CHECK_SOURCE)
    check.metadata["nbgrader"] = {"grade": True, "locked": True, "grade_id": "check_remaining", "points": 3}
    quoted = "assert remaining<7, 0, 0, 0, 0> == <7, False>"
    later = _code_cell([{"output_type": "stream", "name": "stdout", "text": f"hello\n{quoted}\n"}], "print(...)")
    nb = nbformat.v4.new_notebook(cells=[check, later])
    nb, _ = HideHiddenTests().preprocess(nb, {})
    assert nb.cells[1].outputs[0]["text"] == "hello\n（这一行引用了隐藏测试，已删去）\n"


def test_a_hidden_test_spread_over_lines_is_cut_whole():
    """The hidden line printed one character per line is caught across lines: the output is replaced whole."""
    check = _code_cell([], CHECK_SOURCE)
    check.metadata["nbgrader"] = {"grade": True, "locked": True, "grade_id": "check_remaining", "points": 3}
    spread = "\n".join("assert remaining(7, 0, 0, 0, 0) == (7, False)") + "\n"
    later = _code_cell([{"output_type": "stream", "name": "stdout", "text": spread}], "print(...)")
    nb = nbformat.v4.new_notebook(cells=[check, later])
    nb, _ = HideHiddenTests().preprocess(nb, {})
    assert nb.cells[1].outputs[0]["text"] == "（这一行引用了隐藏测试，已删去）\n"
