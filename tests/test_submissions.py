"""The roster and the collection of submitted folders: what a grading run reads before it grades."""
from __future__ import annotations

import re

import pytest

from ctx_course.cli import main
from ctx_course.grading.records import RosterError, Student
from ctx_course.grading.submissions import collect, find_submissions, read_roster

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
