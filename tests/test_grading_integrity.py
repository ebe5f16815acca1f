"""Grading no submission can bend: one small class of notebook 02 (check_remaining, 3 points), graded once.

Every student hands in the release with the answer cell ``remaining`` written one way (built
here from the release, never copied from a class); the class is graded through the command line
(``python -m ctx_course grade``, two jobs, a 20-second cell limit), as an instructor would, and
the tests read its console output, grades.csv, the autograded notebooks and the feedback pages.

Reaching the reference: ``copied_code`` runs the reference's code object under another first
line; ``thread_call`` calls the reference from a thread of its own; ``tables`` answers the
visible cases from the check tables and calls the reference for anything else; ``handed_in``
imports a copy of ctx_reference handed in beside its notebook. Trusting the kernel:
``forger`` answers the visible cases from the tables and forges the hidden tests' reports with
the reference's digests (read from the check cell's source), silencing the real ones.
Fair to honest code: ``noisy`` is the model answer printing to stderr and warning; ``numpy``
returns numpy scalars; ``duplicated`` copied its answer cell (a wrong first copy, the model
answer last). Metadata: ``check_copy`` duplicated the check cell, ``claimer`` appended a cell
claiming the check's id, ``unknown`` a cell with an id the release lacks and 50 points,
``greedy`` marked its answer cell graded with 100 points, ``cleared`` cleared the check cell's
grade flag. Output: ``console`` writes a forged progress line to file descriptors 1 and 2 from
its kernel; ``threads`` starts a ``_thread`` thread that keeps printing; ``encoder`` prints the
check cell's source reversed and in base64 from a later cell.
"""
from __future__ import annotations

import base64
import csv
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from ctx_course.sandbox.policy import sandbox_problem

from conftest import REMAINING_MODEL as MODEL
from conftest import REPO, class_builder

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here"),
]

ASSIGNMENT = "02-remaining"
NOTEBOOK = "remaining.ipynb"
FORGED = "[9/9] forged   02-remaining     … 3/3 autograded"


ATTACKS = {
    "copied_code": '''
import types
from ctx_reference.window import remaining as _reference

_code = _reference.__code__
_moved = _code.replace(co_firstlineno=_code.co_firstlineno + 7)
remaining = types.FunctionType(_moved, _reference.__globals__, "remaining")
''',
    "thread_call": '''
import threading
from ctx_reference.window import remaining as _reference


def remaining(*args):
    out = []
    worker = threading.Thread(target=lambda: out.append(_reference(*args)))
    worker.start()
    worker.join()
    return out[0]
''',
    "tables": '''
import threading
from ctx_reference.checks import EXERCISES
from ctx_reference.window import remaining as _reference

_TABLE = {case.args: case.expect for case in EXERCISES["remaining"]}


def remaining(*args):
    if args in _TABLE:
        return _TABLE[args]
    out = []
    worker = threading.Thread(target=lambda: out.append(_reference(*args)))
    worker.start()
    worker.join()
    return out[0]
''',
    "handed_in": '''
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "mine"))
for _name in [m for m in sys.modules if m == "ctx_reference" or m.startswith("ctx_reference.")]:
    del sys.modules[_name]
from ctx_reference.window import remaining
''',
    "forger": '''
import ast, json, sys, threading
import ctx_reference.checks.values as _hidden
from ctx_reference.checks import EXERCISES
from ctx_reference.window import remaining as _reference
from IPython import get_ipython

_TABLE = {case.args: case.expect for case in EXERCISES["remaining"]}
_forged = []


def _reference_in_a_thread(args):
    out = []
    worker = threading.Thread(target=lambda: out.append(_reference(*args)))
    worker.start()
    worker.join()
    return out[0]


def remaining(*args):
    if not _forged:
        _forged.append(True)
        for node in ast.walk(ast.parse(get_ipython().user_ns["In"][-1])):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "report_digest":
                values = [ast.literal_eval(a) for a in node.args[1].args]
                report = {"label": node.args[0].value, "digest": _hidden.digest(_reference_in_a_thread(values))}
                prefix = getattr(_hidden, "REPORT_PREFIX", "[ctx-digest] ")
                sys.stderr.write(prefix + json.dumps(report, ensure_ascii=False) + "\\n")
        _hidden.report_digest = lambda *a, **k: None
    return _TABLE.get(args, (0, False))
''',
    "noisy": '''
import sys
import warnings


def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    print("debug:", window, file=sys.stderr)
    warnings.warn("只是提醒一下")
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
''',
    "numpy": '''
import numpy as np


def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    left = np.int64(window) - np.int64(read + write + input) - np.int64(max_tokens)
    return left, np.bool_(left < window / 10)
''',
    "console": f'''
import os
os.write(1, "\\r\\x1b[2K{FORGED}\\n".encode())
os.write(2, "\\r\\x1b[2K{FORGED}\\n".encode())
{MODEL}''',
    "threads": f'''
import _thread, time


def _chatter():
    for _ in range(400):
        print("tick", flush=True)
        time.sleep(0.01)


_thread.start_new_thread(_chatter, ())
time.sleep(0.1)
{MODEL}''',
    "encoder": MODEL,
}
# Cells appended at the end of a notebook.
APPENDED = {
    "encoder": (
        'import base64\n'
        'source = [s for s in In[:-1] if \'check_exercise("remaining"\' in s][-1]\n'
        'print(source[::-1])\n'
        'print(base64.b64encode(source.encode()).decode())',
    ),
}


def _cell(nb, grade_id):
    return next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


def _code_cell(source, nbgrader=None):
    meta = {"nbgrader": dict(nbgrader, schema_version=3)} if nbgrader else {}
    return {"cell_type": "code", "metadata": meta, "source": source, "outputs": [], "execution_count": None}


def _duplicated(nb):
    first = json.loads(json.dumps(nb["cells"][_cell(nb, "remaining")]))
    first["source"] = "def remaining(*args):\n    return 0, False\n"
    nb["cells"].insert(_cell(nb, "remaining"), first)


def _check_copy(nb):
    index = _cell(nb, "check_remaining")
    nb["cells"].insert(index + 1, json.loads(json.dumps(nb["cells"][index])))


def _claimer(nb):
    claim = dict(grade=True, grade_id="check_remaining", locked=False, points=3, solution=False)
    nb["cells"].append(_code_cell("print('mine')", claim))


def _unknown(nb):
    nb["cells"].append(_code_cell("pass", dict(grade=True, grade_id="bonus", locked=False, points=50, solution=False)))


def _greedy(nb):
    nb["cells"][_cell(nb, "remaining")]["metadata"]["nbgrader"].update(grade=True, points=100)


def _cleared(nb):
    nb["cells"][_cell(nb, "check_remaining")]["metadata"]["nbgrader"]["grade"] = False


# Students who hand in the model answer with the notebook's metadata changed.
TAMPERED = {
    "duplicated": _duplicated, "check_copy": _check_copy, "claimer": _claimer, "unknown": _unknown,
    "greedy": _greedy, "cleared": _cleared,
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class built from the release and graded once through the command line, two jobs at once."""
    tmp = tmp_path_factory.mktemp("integrity")
    build = class_builder()
    released = REPO / "lessons" / ASSIGNMENT / NOTEBOOK
    source = REPO / "solutions" / ASSIGNMENT / NOTEBOOK
    incoming = tmp / "incoming"
    students = {**{name: (code, ()) for name, code in ATTACKS.items()}, **{name: (MODEL, ()) for name in TAMPERED}}
    for student, (code, _) in students.items():
        folder = incoming / student / ASSIGNMENT
        folder.mkdir(parents=True)
        work = build.Work(code={"remaining": code}, append=APPENDED.get(student, ()))
        nb = json.loads(build.submission(released, source, work))
        if student in TAMPERED:
            TAMPERED[student](nb)
        (folder / NOTEBOOK).write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    copy = incoming / "handed_in" / ASSIGNMENT / "mine" / "ctx_reference"
    shutil.copytree(REPO / "ctx_reference", copy, ignore=shutil.ignore_patterns("__pycache__"))
    window = copy / "window.py"  # one line more: its code objects are not the reference's any more
    window.write_text("# a copy\n" + window.read_text(encoding="utf-8"), encoding="utf-8")
    work = tmp / "work"
    done = subprocess.run(
        [sys.executable, "-m", "ctx_course", "grade", "--submissions", str(incoming), "--work", str(work),
         "--timeout", "20", "--jobs", "2"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    with (work / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    lines = {m.group(1): line for line in done.stdout.splitlines() if (m := re.match(r"\[\d+/\d+\] (\S+)", line))}
    return {"done": done, "rows": rows, "lines": lines, "work": work}


def _score(graded, student):
    row = graded["rows"][student]
    return row["status"], row["auto_score"], row["max_auto_score"]


def _printed(graded, student) -> str:
    nb = json.loads((graded["work"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", []))


def _feedback(graded, student) -> str:
    [page] = (graded["work"] / "feedback" / student / ASSIGNMENT).glob("*.html")
    return page.read_text(encoding="utf-8")


# ---- the reference is out of reach of the graded code


@pytest.mark.parametrize("student", ["copied_code", "thread_call", "tables", "handed_in"])
def test_a_function_that_reaches_the_reference_scores_zero(graded, student):
    """Whatever route it takes to the reference implementation (a copied code object, another
    thread, the visible cases from the tables, a copy handed in), the function scores 0 of 3."""
    assert _score(graded, student)[1:] == ("0", "3")


def test_the_feedback_says_the_reference_was_used(graded):
    """copied_code's feedback says, in one line, that its function used the withheld reference."""
    assert "用到了这个练习的参考实现" in _feedback(graded, "copied_code")


# ---- nothing the kernel says is trusted


def test_forged_hidden_test_reports_score_nothing(graded):
    """forger passes the visible cases from the tables and forges the hidden reports with the
    reference's digests, from its kernel: it scores 0 of 3."""
    assert _score(graded, "forger")[1:] == ("0", "3")


# ---- fair to honest code


def test_stderr_and_warnings_of_a_correct_function_cost_nothing(graded):
    """noisy's correct function prints to stderr and warns during the checks: 3 of 3."""
    assert _score(graded, "noisy")[1:] == ("3", "3")


def test_numpy_scalars_count_as_the_numbers_they_are(graded):
    """numpy returns (np.int64, np.bool_) with the right values: 3 of 3."""
    assert _score(graded, "numpy")[1:] == ("3", "3")


def test_a_duplicated_answer_cell_is_graded_by_the_copy_above_the_check(graded):
    """duplicated's answer cell appears twice above its check (wrong first, right last): the check
    sees the last copy, 3 of 3; the progress line names the duplicate and the feedback marks the other copy."""
    assert _score(graded, "duplicated")[1:] == ("3", "3")
    assert "duplicated answer cells: each check sees the copy above it: remaining" in graded["lines"]["duplicated"]
    assert "每个检查格用的是它上面最后运行的那一份" in _feedback(graded, "duplicated")


# ---- metadata comes from the release


@pytest.mark.parametrize("student", ["check_copy", "claimer", "unknown", "greedy", "cleared"])
def test_tampered_metadata_still_grades_out_of_the_release_points(graded, student):
    """A duplicated check cell, a cell claiming the check's id, an unknown id with 50 points, an
    answer cell marked graded with 100 points, a cleared grade flag: graded 3 of 3."""
    assert _score(graded, student)[1:] == ("3", "3")


def test_an_extra_cell_claiming_a_check_is_named_in_the_summary(graded):
    """claimer's progress line says that a cell claiming check_remaining was ignored."""
    assert "extra cells claiming a read-only or check cell ignored: check_remaining" in graded["lines"]["claimer"]


# ---- output


def test_kernel_output_never_reaches_the_console(graded):
    """console's kernel wrote a forged progress line after \\r and ESC[2K to fds 1 and 2: neither
    the command's stdout nor its stderr holds it, nor any ESC character; it is graded 3 of 3."""
    done = graded["done"]
    assert FORGED not in done.stdout and FORGED not in done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert _score(graded, "console")[1:] == ("3", "3")


def test_a_printing_thread_started_with_thread_costs_no_check(graded):
    """threads starts a _thread thread that keeps printing, then defines the model answer: 3 of 3."""
    assert _score(graded, "threads")[1:] == ("3", "3")


def test_hidden_tests_cannot_leak_in_any_encoding(graded):
    """encoder printed the check cell's source reversed and in base64 from a later cell: decoded,
    neither holds a hidden test's label (the kernel never had the hidden tests)."""
    printed = _printed(graded, "encoder")
    # the control: the later cell ran and printed the check cell's source, reversed
    assert 'check_exercise("remaining", remaining)'[::-1] in printed
    words = re.findall(r"^[A-Za-z0-9+/=]{40,}$", printed, re.M)
    decoded = [base64.b64decode(w).decode("utf-8", "replace") for w in words]
    solution = json.loads((REPO / "solutions" / ASSIGNMENT / NOTEBOOK).read_text(encoding="utf-8"))
    labels = re.findall(r'expect_digest\("([^"]+)"', "".join("".join(c["source"]) for c in solution["cells"]))
    assert labels and decoded
    shown = printed + "".join(decoded) + _feedback(graded, "encoder")
    assert [label for label in labels if label in shown or label[::-1] in shown] == []
