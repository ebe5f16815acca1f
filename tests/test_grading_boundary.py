"""Learners who attack the grading wire, graded in one worker before honest learners.

A class of notebook 09 (check_zone 2, check_measure 3, check_fit_rates 2: 7 points), graded with
``--jobs 1`` so that every submission goes through the same grading process, in the order of the
learners' names. The hostile learners replace, inside their answer process, the codec's ``encode``
with one that sends a message of their own (the answer process runs their cells; its ``__main__``
is the codec's module): a class named ``ctx_reference.plots:font_manager.subprocess.Popen`` with a
command as its argument, in the old and the new forms; an enum member with a new name and value
written beside it; ``mock.ANY``; an array whose dtype names a gigabyte. Another hands in the object
of the issue's reproduction as its return value. Another changes the dict its ``measure`` was given,
wholesale. Then ``honest`` (the model answers) and ``forms`` (honest answers written other ways: a
callable object, ``functools.partial``, numpy floats) are graded by the same process.
"""
from __future__ import annotations

import html

import pytest

from ctx_course.grading.grader import Grader

from conftest import REPO, class_builder

pytestmark = pytest.mark.heavy

ASSIGNMENT = "09-context-ledger"
NOTEBOOK = "context_ledger.ipynb"

FORGE = '''
import sys as _sys

_MARK = object()


def _forge(message):
    """In the answer process, make the codec send ``message`` wherever the learner's value is _MARK."""
    codec = getattr(_sys.modules.get("__main__"), "Codec", None)
    if codec is None or not hasattr(codec, "encode"):
        return  # the notebook's own kernel: nothing to forge there
    encode = codec.encode

    def forged(self, value, depth=0):
        return message if value is _MARK else encode(self, value, depth)

    codec.encode = forged


_forge({message})


def zone(used, limit):
    return _MARK
'''

POPEN_OLD = ('{{"o": "ctx_reference.plots:font_manager.subprocess.Popen", '
             '"call": {{"t": [{{"l": ["sh", "-c", "touch {proof}"]}}]}}, "st": None}}')
POPEN_NEW = ('{{"o": "ctx_reference.plots:font_manager.subprocess.Popen", '
             '"a": [{{"l": ["sh", "-c", "touch {proof}"]}}]}}')
RENAME = ('{{"o": "ctx_reference.ledger:Zone", "call": {{"t": ["safe"]}}, '
          '"st": {{"d": [["_name_", "DANGER"], ["_value_", "danger"]]}}}}')
ANY = '{{"o": "ctx_reference.checks:mock.ANY", "a": []}}'
HUGE = '{{"nd": {{"l": [1]}}, "dtype": "(1000000000,)u1"}}'

REDUCED = '''
class E:
    def __reduce_ex__(self, protocol):
        return (type(self), (["sh", "-c", "touch {proof}"],))


E.__module__, E.__qualname__ = "ctx_reference.plots", "font_manager.subprocess.Popen"


def zone(used, limit):
    return E()
'''

MUTATE = '''
def measure(buckets, tokenizer, limit):
    tokens = {name: tokenizer.count(buckets[name]) if name in buckets else 0 for name in BUCKETS}
    total = sum(tokens.values())
    entry = LedgerEntry(tokens=tokens, total=total, zone=zone(total, limit), limit=limit)
    buckets.clear()
    buckets["system"] = "x" * 100_000
    return entry
'''

ZONE_OBJECT = '''
class Zoner:
    """zone as an object with __call__."""

    def __call__(self, used, limit):
        if limit <= 0:
            raise ValueError(f"limit must be > 0 (got {limit!r})")
        if used < 0:
            raise ValueError(f"used must be >= 0 (got {used!r})")
        share = used * 100
        if share < 60 * limit:
            return Zone.SAFE
        if share <= 85 * limit:
            return Zone.CAUTION
        return Zone.DANGER if share <= 100 * limit else Zone.OVER


zone = Zoner()
'''

MEASURE_PARTIAL = '''
import functools


def _measure(buckets, tokenizer, limit, names=()):
    for name in buckets:
        if name not in names:
            raise ValueError(f"unknown bucket {name!r}")
    counts = {name: tokenizer.count(buckets.get(name, "")) if name in buckets else 0 for name in names}
    used = sum(counts.values())
    return LedgerEntry(tokens=counts, total=used, zone=zone(used, limit), limit=limit)


measure = functools.partial(_measure, names=tuple(BUCKETS))
'''

FIT_NUMPY = '''
import numpy as np


def fit_rates(receipts):
    ascii_counts = [sum(ch.isascii() for ch in r.text) for r in receipts]
    features = np.array([[a, len(r.text) - a] for a, r in zip(ascii_counts, receipts)], dtype=float).reshape(-1, 2)
    tokens = np.array([r.prompt_tokens for r in receipts], dtype=float)
    if len(receipts) == 0 or np.linalg.matrix_rank(features) < 2:
        raise ValueError("receipts must tell the ASCII and non-ASCII rates apart")
    solution = np.linalg.lstsq(features, tokens, rcond=None)[0]
    return solution[0], solution[1]
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("boundary")
    proof = tmp / "proof"
    build = class_builder()
    grader = Grader(REPO, work=tmp / "work", jobs=1)
    assert grader.prepare([ASSIGNMENT]) == {}
    released = grader.work / "release" / ASSIGNMENT / NOTEBOOK
    source = REPO / "solutions" / ASSIGNMENT / NOTEBOOK
    model = {"zone": build.MODEL, "measure": build.MODEL, "fit_rates": build.MODEL}
    forged = {name: FORGE.format(message=message.format(proof=proof / name))
              for name, message in (("a_popen_old", POPEN_OLD), ("a_popen_new", POPEN_NEW), ("b_rename", RENAME),
                                    ("c_any", ANY), ("d_huge", HUGE))}
    learners = {name: {**model, "zone": code} for name, code in forged.items()}
    learners["e_reduced"] = {**model, "zone": REDUCED.format(proof=proof / "e_reduced")}
    learners["f_mutate"] = {**model, "measure": MUTATE}
    learners["x_forms"] = {"zone": ZONE_OBJECT, "measure": MEASURE_PARTIAL, "fit_rates": FIT_NUMPY}
    learners["z_honest"] = model
    for student, code in learners.items():
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        work = build.Work(code=code)
        (folder / NOTEBOOK).write_text(build.submission(released, source, work), encoding="utf-8")
    grader.collect(tmp / "incoming")
    report = grader.grade()
    return grader, {r.student: r for r in report.results}, proof


def _feedback(grader, student) -> str:
    [page] = grader.feedback_path(student, ASSIGNMENT)
    return html.unescape(page.read_text(encoding="utf-8"))


def test_nothing_a_learner_sent_ran_on_the_graders_side(graded):
    """No command a forged or reduced class named was run: no proof file, for any of them."""
    _, results, proof = graded
    assert all(r.graded for r in results.values())
    assert not proof.exists() or list(proof.iterdir()) == []


def test_honest_learners_graded_after_the_attacks_in_the_same_process_score_full_marks(graded):
    """Model answers, and honest answers as a callable object, functools.partial and numpy floats, score 7 of 7
    after every attack was graded by the same grading process."""
    _, results, _ = graded
    for student in ("z_honest", "x_forms"):
        assert (results[student].auto_score, results[student].max_auto_score) == (7, 7), student


def test_a_value_the_wire_does_not_carry_costs_its_check_with_one_line(graded):
    """The reproduction's object scores 0 for check_zone, and its feedback says in one fixed line that the value's
    type could not be read (not its name: that is text the learner chose); the forged messages cost the attackers
    their own zone check and nothing else."""
    grader, results, _ = graded
    assert "读不了" in _feedback(grader, "e_reduced")
    for student in ("a_popen_old", "a_popen_new", "b_rename", "c_any", "d_huge", "e_reduced"):
        assert results[student].auto_score <= 5, student  # check_zone (2 points) lost, at least


def test_a_learner_who_changes_its_argument_changes_no_one_elses(graded):
    """f_mutate's measure empties the dict it was given: its own check_measure fails (the text says buckets is
    left unchanged), the honest learners after it are untouched (above)."""
    _, results, _ = graded
    assert results["f_mutate"].auto_score == 4
