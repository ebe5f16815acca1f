"""Generated cases graded in batches: a class of notebook 09 graded for real, in one grading process.

Notebook 09's checks (check_zone 2, check_measure 3, check_fit_rates 2: 7 points) run their
banks' generated cases at grading in batches (``ctx_course/sandbox/batch.py``). Graded with
``--jobs 1`` (one process, in the learners' order) and a 10 s cell time limit: a learner whose
``zone`` divides as floats, wrong only where the window's size passes what a float tells apart
(late cases of the bank); one whose ``zone`` never ends on those cases; one whose answer process
forges the reply to the batches of ``zone`` (more entries than calls); then the model answers.
"""
from __future__ import annotations

import html

import pytest

from ctx_course.grading.grader import Grader
from ctx_course.grading.steps.judge import ANSWERER_DIED, TIMED_OUT
from ctx_course.sandbox import batch
from ctx_reference.checks import GENERATED, REGISTRY, RULES, generated
from ctx_reference.checks.bank import cases as bank_cases
from ctx_reference.i18n import _
from ctx_reference.ledger import Zone

from conftest import REPO, class_builder

pytestmark = pytest.mark.heavy

ASSIGNMENT = "09-context-ledger"
NOTEBOOK = "context_ledger.ipynb"
TIMEOUT = 10

ZONE_FLOAT = '''
def zone(used, limit):
    if limit <= 0:
        raise ValueError(f"limit must be > 0 (got {limit!r})")
    if used < 0:
        raise ValueError(f"used must be >= 0 (got {used!r})")
    share = used / limit
    if share < 0.6:
        return Zone.SAFE
    if share <= 0.85:
        return Zone.CAUTION
    return Zone.DANGER if share <= 1 else Zone.OVER
'''
ZONE_HONEST = '''
def zone(used, limit):
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
'''
ZONE_HANGS = ZONE_HONEST.replace("    share = used * 100",
                                 "    while limit > 10**15:\n        pass\n    share = used * 100")
# In the answer process (its __main__ is answerer.py), the batches of zone's calls get a forged reply.
FORGER = '''
import json as _json
import sys as _sys

_main = _sys.modules.get("__main__")
_batch = getattr(_main, "_answer_batch", None)
if _batch is not None:
    def _forged(message, bound, codec, channel, limit):
        if message.get("batch") != "zone":
            return _batch(message, bound, codec, channel, limit)
        entry = {"ok": {"o": "ctx_reference.ledger:Zone", "e": "SAFE"}}
        channel.send_text(_json.dumps({"batch": [entry] * (len(message["calls"]) + 1)}))
    _main._answer_batch = _forged
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("batches")
    build = class_builder()
    grader = Grader(REPO, work=tmp / "work", jobs=1, timeout=TIMEOUT)
    assert grader.prepare([ASSIGNMENT]) == {}
    released = grader.work / "release" / ASSIGNMENT / NOTEBOOK
    source = REPO / "solutions" / ASSIGNMENT / NOTEBOOK
    model = {"zone": build.MODEL, "measure": build.MODEL, "fit_rates": build.MODEL}
    learners = {
        "a_float": {**model, "zone": ZONE_FLOAT},
        "b_hangs": {**model, "zone": ZONE_HANGS},
        "c_forger": {**model, "zone": ZONE_HONEST + FORGER},
        "z_honest": model,
    }
    for student, code in learners.items():
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(build.submission(released, source, build.Work(code=code)), encoding="utf-8")
    grader.collect(tmp / "incoming")
    report = grader.grade()
    return grader, {r.student: r for r in report.results}


def _feedback(grader, student) -> str:
    [page] = grader.feedback_path(student, ASSIGNMENT)
    return html.unescape(page.read_text(encoding="utf-8"))


def _lab_line() -> tuple[str, int]:
    """The generated cases' line the lab prints for ZONE_FLOAT, and the index of its first failing case."""
    namespace = {"Zone": Zone}
    exec(ZONE_FLOAT, namespace)
    cases = bank_cases("zone")
    outcome = generated.run_generated(namespace["zone"], "zone", cases, GENERATED["zone"], RULES["zone"],
                                      REGISTRY["zone"].codes)
    first = next(i for i, case in enumerate(cases) if not generated.run_generated(
        namespace["zone"], "zone", [case], GENERATED["zone"], RULES["zone"]).passed)
    return outcome.line, first


def test_honest_learners_score_full_marks_after_the_others(graded):
    _, results = graded
    assert (results["z_honest"].auto_score, results["z_honest"].max_auto_score) == (7, 7)


def test_a_wrong_answer_on_a_late_case_is_caught_at_grading_as_in_the_lab(graded):
    """Float division fails only a late case of zone's bank: its check scores 0 at grading, as a visible failure
    (the feedback shows the lab's line for that case, not a hidden-test or time-limit line); the rest in full."""
    grader, results = graded
    line, first = _lab_line()
    assert first >= batch.FIRST_CHUNK and line.startswith("×")
    assert results["a_float"].auto_score == 5
    page = _feedback(grader, "a_float")
    assert line in page
    assert _(TIMED_OUT).format(seconds=TIMEOUT) not in page and _(ANSWERER_DIED) not in page


def test_a_call_that_never_ends_in_a_batch_costs_its_check_with_the_time_limit_line(graded):
    grader, results = graded
    assert results["b_hangs"].graded and results["b_hangs"].auto_score == 5
    assert _(TIMED_OUT).format(seconds=TIMEOUT) in _feedback(grader, "b_hangs")


def test_a_forged_batch_reply_costs_only_the_forgers_own_check(graded):
    """More entries than calls: the forger's zone check fails with the process line; its other checks (a fresh
    process each) and every other learner are graded as if nothing happened."""
    grader, results = graded
    assert results["c_forger"].auto_score == 5
    assert _(ANSWERER_DIED) in _feedback(grader, "c_forger")
