"""The class leaderboard of 11-capstone: graded notebooks re-scored on hidden workloads in kernels."""
from __future__ import annotations

import csv

import nbformat
import pytest

from ctx_course.grading.grader import Grader
from ctx_course.grading.submissions import read_roster
from ctx_course.term.leaderboard import Row, leaderboard, rank, read_row

from conftest import REPO

pytestmark = pytest.mark.heavy  # runs notebooks in kernels: scheduled first

EXAMPLE = REPO / "examples" / "capstone"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The example capstone class graded (ada model, ben never clears, cai broken, dana compact 5): its folder."""
    work = tmp_path_factory.mktemp("capstone")
    grader = Grader(REPO, work=work, jobs=1)  # the leaderboard is under test here, not parallel grading
    grader.register(read_roster(EXAMPLE / "roster.csv"))
    grader.collect(EXAMPLE / "submitted")
    grader.grade()
    return work


@pytest.fixture(scope="module")
def on_workers(graded):
    """The leaderboard's rows when two Dask workers score the notebooks."""
    return leaderboard(REPO, "11-capstone", work=graded, jobs=2)[0]


@pytest.fixture(scope="module")
def board(graded, on_workers):
    """The example capstone class ranked in this process (after the run on workers, whose files it replaces)."""
    work = graded
    rows, csv_path, png_path = leaderboard(REPO, "11-capstone", work=work)
    return {r.student: r for r in rows}, rows, csv_path, png_path


def test_model_answer_ranks_first_below_one(board):
    """ada's model policy is safe on all 5 hidden workloads and cheaper than the best built-in overall."""
    by_student, rows, _, _ = board
    ada = by_student["ada"]
    assert rows[0].student == "ada"
    assert (ada.status, ada.safe_workloads, ada.workloads) == ("scored", 5, 5)
    assert ada.score < 1


def test_never_clearing_overflows_everywhere(board):
    """ben's policy does nothing: it overflows on every hidden workload and is disqualified."""
    ben = board[0]["ben"]
    assert (ben.status, ben.overflows, ben.safe_workloads) == ("disqualified", 5, 0)


def test_compact_five_loses_facts_with_a_small_summary(board):
    """dana's compact-5 never overflows but loses facts (lb-small-summary holds 8 facts)."""
    dana = board[0]["dana"]
    assert dana.status == "disqualified" and dana.overflows == 0 and dana.facts_lost > 0


def test_broken_policy_is_an_error_row_ranked_last(board):
    """cai's policy returns a string: the simulation's ValueError becomes his row's error, ranked last."""
    by_student, rows, _, _ = board
    assert rows[-1].student == "cai"
    assert "policy must return None, an action" in by_student["cai"].error


def test_csv_and_png_are_written(board):
    """The CSV has a header and one ranked row per graded student; the PNG exists."""
    _, rows, csv_path, png_path = board
    with csv_path.open(encoding="utf-8") as handle:
        lines = list(csv.DictReader(handle))
    assert [r["student"] for r in lines] == [r.student for r in rows]
    assert [r["rank"] for r in lines] == ["1", "2", "3", "4"]
    assert png_path.stat().st_size > 0


def test_row_reading_needs_the_marker():
    """A line without this run's marker (say, forged by the notebook) is not read as a result."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout",
                                           text='LEADERBOARD-0000:{"score": 0.1}\nM:{"score": 0.5, "workloads": 5}\n')]
    nb.cells = [cell]
    assert read_row("x", nb, "M:").score == 0.5
    assert read_row("x", nb, "N:").error == "the scoring cell printed no result"


def test_rank_order():
    """Scores low to high, then disqualified, then errors; ties by student id."""
    rows = [Row("e", error="boom"), Row("d"), Row("b", score=0.9), Row("a", score=0.9), Row("c", score=0.7)]
    assert [r.student for r in rank(rows)] == ["c", "a", "b", "d", "e"]


def test_no_graded_notebook(tmp_path):
    """A working folder without autograded notebooks is a ValueError naming the assignment."""
    with pytest.raises(ValueError, match="11-capstone"):
        leaderboard(REPO, "11-capstone", work=tmp_path)


def test_two_dask_workers_give_the_same_leaderboard(board, on_workers):
    """Scored by two Dask workers, every row (score, counts, error) and the ranking are those of one process."""
    _, rows, _, _ = board
    assert on_workers == rows
