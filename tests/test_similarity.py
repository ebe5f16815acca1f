"""Similarity report: answers alike each other or the model answer, the released template excluded, no score changed."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil

import pytest

from ctx_course.cli import main
from ctx_course.term.similarity import MODEL, answer_code, compare_answers

from conftest import LESSONS, REPO, SOLUTIONS, class_builder

ASSIGNMENT = "04-assembly"
build = class_builder()
TEMPLATE = answer_code(json.loads((LESSONS / ASSIGNMENT / "assembly.ipynb").read_text(encoding="utf-8"))["cells"])
MODEL_ANSWER = answer_code(json.loads((SOLUTIONS / ASSIGNMENT / "assembly.ipynb").read_text(encoding="utf-8"))["cells"])
BEN = build.ASSEMBLE_NO_DEDUP
# ben's answer with every name and the comment changed: winnowing normalises names.
GUS = (
    BEN.replace("used", "spent")
    .replace("kept", "keep_flags")
    .replace("dropped", "left_out")
    .replace("# 按优先级放，能放就放（忘了去重）", "# 从高优先级开始放")
)
# An answer written independently: the same job, its own code.
OWN = '''
def assemble(items, budget):
    """在 budget 个 token 内挑选并排列 items，返回 Assembly。"""
    pool = list(items)
    need = [x for x in pool if x.required]
    total = 0
    for x in need:
        total = total + x.tokens
    if total > budget:
        raise BudgetError(total, budget)
    rest = sorted([x for x in pool if not x.required], key=lambda x: x.priority, reverse=True)
    seen = set(x.text for x in need if x.text is not None)
    out, gone = list(need), []
    while rest:
        x = rest.pop(0)
        if x.text is not None and x.text in seen:
            gone.append((x, "duplicate"))
            continue
        if total + x.tokens <= budget:
            out.append(x)
            total += x.tokens
            if x.text is not None:
                seen.add(x.text)
        else:
            gone.append((x, "no room"))
    out = [x for x in pool if x in out]
    return Assembly(items=[x for x in out if x.stable] + [x for x in out if not x.stable], used=total, dropped=gone)
'''


def _by_names(pairs):
    return {(p.kind, p.first, p.second): p for p in pairs}


def test_renamed_copy_is_found():
    """gus hands in ben's answer with names and comment changed: the pair ben/gus is 100 % alike both ways."""
    pairs = _by_names(compare_answers(ASSIGNMENT, {"ben": BEN, "gus": GUS, "own": OWN}, TEMPLATE, MODEL_ANSWER))
    pair = pairs[("students", "ben", "gus")]
    assert (round(pair.first_share, 2), round(pair.second_share, 2)) == (1.0, 1.0)


def test_independent_answer_is_not_paired():
    """An answer written independently is paired with neither ben nor gus."""
    pairs = _by_names(compare_answers(ASSIGNMENT, {"ben": BEN, "gus": GUS, "own": OWN}, TEMPLATE, MODEL_ANSWER))
    assert [key for key in pairs if "own" in key] == []


def test_released_template_is_excluded():
    """Two untouched releases share every token but the template's: they are compared with nothing."""
    assert (
        compare_answers(ASSIGNMENT, {"cai": TEMPLATE, "cai2": TEMPLATE}, TEMPLATE, MODEL_ANSWER, threshold=0.01) == []
    )


def test_template_left_in_would_pair_them():
    """Without the template excluded the two untouched releases would be 100 % alike (what the exclusion prevents)."""
    [pair] = compare_answers(ASSIGNMENT, {"cai": TEMPLATE, "cai2": TEMPLATE}, "", "")
    assert pair.similarity == 1.0


def test_model_answer_copies_are_listed_against_the_model_not_as_a_pair():
    """ada and hal both hand in the model answer: no student pair, each listed 100 % alike the model answer."""
    pairs = _by_names(
        compare_answers(ASSIGNMENT, {"ada": MODEL_ANSWER, "hal": MODEL_ANSWER, "own": OWN}, TEMPLATE, MODEL_ANSWER)
    )
    assert set(pairs) == {(MODEL, "ada", MODEL), (MODEL, "hal", MODEL)}
    assert pairs[(MODEL, "ada", MODEL)].first_share == 1.0


def test_bad_threshold_names_itself():
    """A threshold above 1 raises ValueError naming the argument and the value."""
    with pytest.raises(ValueError, match=r"threshold must be a share in \(0, 1\] \(got 1.5\)"):
        compare_answers(ASSIGNMENT, {}, TEMPLATE, threshold=1.5)


def test_cli_reports_and_changes_no_score(tmp_path):
    """`similarity` writes the CSV and HTML with the ben/gus pair; gradebook and grades.csv keep their bytes."""
    work = tmp_path / "work"
    released = LESSONS / ASSIGNMENT / "assembly.ipynb"
    for student, code in (("ben", BEN), ("gus", GUS), ("own", OWN), ("cai", None)):
        folder = work / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        work_done = build.Work(code={"assemble": code}) if code else build.Work()
        (folder / "assembly.ipynb").write_text(
            build.submission(released, SOLUTIONS / ASSIGNMENT / "assembly.ipynb", work_done), encoding="utf-8"
        )
    shutil.copy(REPO / "examples" / "class" / "roster.csv", work / "grades.csv")  # stands in for the grades
    (work / "gradebook.db").write_bytes(b"SQLite format 3\x00 stand-in")
    before = {name: (work / name).read_bytes() for name in ("grades.csv", "gradebook.db")}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["similarity", "--root", str(REPO), "--work", str(work)])
    assert status == 0
    rows = list(csv.DictReader((work / "similarity.csv").open(encoding="utf-8")))
    assert [(r["kind"], r["first"], r["second"], r["similarity"]) for r in rows] == [("students", "ben", "gus", "1.00")]
    page = (work / "similarity.html").read_text(encoding="utf-8")
    assert "<mark>" in page and "ben / gus" in page
    assert {name: (work / name).read_bytes() for name in ("grades.csv", "gradebook.db")} == before
    assert "04-assembly: ben / gus  100% / 100%  (students)" in out.getvalue()


def test_cli_bad_threshold_is_one_error_line(tmp_path):
    """--threshold 0 is one `error:` line naming the argument; nothing is written."""
    (tmp_path / "work" / "submitted").mkdir(parents=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["similarity", "--root", str(REPO), "--work", str(tmp_path / "work"), "--threshold", "0"])
    assert status == 2 and err.getvalue() == "error: threshold must be a share in (0, 1] (got 0.0)\n"
    assert not (tmp_path / "work" / "similarity.csv").exists()
