"""Hostile submissions of notebook 02 (check_remaining: 3 points), graded together in one sandboxed run.

Each student hands in the release with the answer cell ``remaining`` replaced by an attack
(built here from a fresh release, never copied from a class), graded with a 20-second cell
limit and a 1 GiB memory limit:

``gradebook`` renames every student in the gradebook; ``overwrite`` overwrites ``zz_victim``'s
submission (the untouched release, graded after it); ``planter`` writes ``ipykernel_launcher.py``
into the working folder, where kernels used to start; ``leftover`` starts a process that keeps
rewriting grades.csv; ``reader`` executes the model answer read from solutions/; ``key_reader``
asks for a hint, the model answer and a question's sample answer, then executes the model answer
read from the package's answer key (``ctx_reference/answer_key/``); ``ast`` installs
an AST transformer (re-installed by a pre_run_cell callback) that turns assert and raise into
pass, and silences check_exercise; ``input_cleanup`` does the same with an input transformer
that turns ``assert x`` into ``assert True or x``; ``displayhook`` makes a wrong ``remaining`` call
``sys.displayhook(3)``; ``quoter`` prints the check cell's source with ``[`` replaced by ``<``
from inside ``remaining``, ``quoter_later`` from a cell after it; ``deleter`` deletes the answer
cell and the check cell; ``memory`` maps 3 GiB; ``network`` connects to a port the test listens on.
"""
from __future__ import annotations

import hashlib
import html
import json
import os
import re
import socket
import threading
import time
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from ctx_course.grading.grader import Grader
from ctx_course.grading.records import Student
from ctx_course.sandbox.policy import sandbox_problem

from conftest import REMAINING_MODEL as MODEL_FUNCTION
from conftest import REPO, class_builder

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.skipif(sandbox_problem() is not None, reason="bubblewrap cannot sandbox here"),
    pytest.mark.filterwarnings("ignore::nbformat.warnings.MissingIDFieldWarning"),
]

ASSIGNMENT = "02-remaining"
TIMEOUT = 20
TAG = "ctx-leftover-" + os.urandom(6).hex()  # in the leftover process's command line


WRONG_FUNCTION = '''
def remaining(window, read, write, input, max_tokens):
    return 0, False
'''


def attacks(work: Path, port: int) -> dict[str, dict]:
    """Return each student's attack: the code of the answer cell, and cells appended at the end."""
    grades = work / "grades.csv"
    solution = REPO / "solutions" / ASSIGNMENT / "remaining.ipynb"
    leftover_loop = (
        "import time\n"
        "end = time.time() + 40\n"
        "while time.time() < end:\n"
        "    try:\n"
        f"        open({str(grades)!r}, 'w').write('student_id\\nHACKED\\n')\n"
        "    except OSError:\n"
        "        pass\n"
        "    time.sleep(0.2)\n"
    )
    planted = (
        "import os, sys\n"
        "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'planted-ran'), 'a').write('x')\n"
        "sys.path.pop(0)\n"
        "del sys.modules['ipykernel_launcher']\n"
        "import runpy\n"
        "runpy.run_module('ipykernel_launcher', run_name='__main__')\n"
    )
    return {
        "gradebook": {"code": f'''
import sqlite3
try:
    with sqlite3.connect({str(work / "gradebook.db")!r}, timeout=20) as db:
        db.execute("UPDATE student SET first_name = 'HACKED'")
    print("gradebook: changed")
except sqlite3.Error as exc:
    print("gradebook: out of reach")
{MODEL_FUNCTION}'''},
        "overwrite": {"code": f'''
try:
    open({str(work / "submitted" / "zz_victim" / ASSIGNMENT / "remaining.ipynb")!r}, "w").write("{{}}")
    print("victim: overwritten")
except OSError:
    print("victim: out of reach")
{MODEL_FUNCTION}'''},
        "planter": {"code": f'''
try:
    open({str(work / "ipykernel_launcher.py")!r}, "w").write({planted!r})
    print("planted")
except OSError:
    print("cannot plant")
{MODEL_FUNCTION}'''},
        "leftover": {"code": f'''
import subprocess, sys
subprocess.Popen([sys.executable, "-c", {leftover_loop!r}, {TAG!r}], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
{MODEL_FUNCTION}'''},
        "reader": {"code": f'''
import json
try:
    notebook = json.load(open({str(solution)!r}, encoding="utf-8"))
    exec(next("".join(c["source"]) for c in notebook["cells"]
              if c["metadata"].get("nbgrader", {{}}).get("grade_id") == "remaining"))
    print("solutions: read")
except OSError:
    print("solutions: not visible")
'''},
        "key_reader": {"code": '''
import json
import pathlib

import ctx_reference
from ctx_reference import attempts
from ctx_reference.hints import hint
from ctx_reference.model_answers import show_solution
from ctx_reference.sample_answers import sample_answer

attempts.record("remaining", ("negative-when-over",))
hint("remaining")
show_solution("remaining")
sample_answer("q_why_early", notebook="remaining.ipynb")
try:
    key = pathlib.Path(ctx_reference.__file__).with_name("answer_key") / "zh_CN.json"
    exec(json.loads(key.read_text(encoding="utf-8"))["remaining"])
    print("answer key: read")
except (OSError, ValueError, KeyError):
    print("answer key: not visible")
'''},
        "ast": {"code": f'''
import ast
from IPython import get_ipython


class NoChecks(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()

    def visit_Raise(self, node):
        return ast.Pass()


shell = get_ipython()
shell.ast_transformers.append(NoChecks())
shell.events.register("pre_run_cell", lambda info: shell.ast_transformers.append(NoChecks()))
check_exercise = lambda *args, **kwargs: None
{WRONG_FUNCTION}'''},
        "input_cleanup": {"code": f'''
from IPython import get_ipython

get_ipython().input_transformers_cleanup.append(
    lambda lines: [line.replace("assert ", "assert True or ") for line in lines]
)
check_exercise = lambda *args, **kwargs: None
{WRONG_FUNCTION}'''},
        "displayhook": {"code": '''
import sys


def remaining(window, read, write, input, max_tokens):
    sys.displayhook(3)
    return 0, False
'''},
        "quoter": {"code": '''
def remaining(window, read, write, input, max_tokens):
    from IPython import get_ipython
    print(get_ipython().user_ns["In"][-1].replace("[", "<"))
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
'''},
        "quoter_later": {
            "code": MODEL_FUNCTION,
            "append": ['print([s for s in In[:-1] if \'check_exercise("remaining"\' in s][-1].replace("[", "<"))'],
        },
        "deleter": {"code": MODEL_FUNCTION, "delete": ("remaining", "check_remaining")},
        "memory": {"code": f'''
import mmap
try:
    block = mmap.mmap(-1, 3 * 2**30)
    print("memory: 3 GiB mapped")
except (OSError, MemoryError):
    print("memory: refused")
{MODEL_FUNCTION}'''},
        "network": {"code": f'''
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    print("network: reached")
except OSError:
    print("network: blocked")
{MODEL_FUNCTION}'''},
        "zz_victim": {},
    }


class Listener:
    """A TCP port on the host's loopback that counts the connections it accepts."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.5)
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.accepted += 1
            connection.close()

    def close(self):
        self.running = False
        self.thread.join()
        self.server.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, released_remaining):
    """Every attack collected and graded once; grades.csv read right after the run and 1 s later
    (five tries of a leftover writer that tries every 0.2 s)."""
    tmp = tmp_path_factory.mktemp("attacks")
    work = tmp / "work"
    build = class_builder()
    grader = Grader(REPO, work=work, timeout=TIMEOUT, memory_limit="1G")
    released = released_remaining
    source = REPO / "solutions" / ASSIGNMENT / "remaining.ipynb"
    listener = Listener()
    for student, attack in attacks(work, listener.port).items():
        folder = tmp / "incoming" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        job = build.Work(
            code={"remaining": attack["code"]} if "code" in attack else {},
            append=tuple(attack.get("append", ())),
            delete=tuple(attack.get("delete", ())),
        )
        (folder / "remaining.ipynb").write_text(build.submission(released, source, job), encoding="utf-8")
    grader.collect(tmp / "incoming")
    victim = work / "submitted" / "zz_victim" / ASSIGNMENT / "remaining.ipynb"
    victim_before = _digest(victim)
    grader.register([Student("gradebook", first_name="Gail")])
    report = grader.grade()
    csv_after_run = (work / "grades.csv").read_text(encoding="utf-8")
    time.sleep(1)
    listener.close()
    return {
        "grader": grader,
        "work": work,
        "results": {r.student: r for r in report.results},
        "csv_after_run": csv_after_run,
        "csv_later": (work / "grades.csv").read_text(encoding="utf-8"),
        "victim": (victim_before, _digest(victim)),
        "accepted": listener.accepted,
    }


def _printed(graded, student: str) -> str:
    path = graded["work"] / "autograded" / student / ASSIGNMENT / "remaining.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "".join(
        "".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
    )


def _score(graded, student: str):
    result = graded["results"][student]
    return result.graded, result.auto_score, result.max_auto_score


def test_a_cell_cannot_edit_the_gradebook(graded):
    """gradebook's UPDATE of every student's first name finds no gradebook; Gail keeps her name."""
    assert "gradebook: out of reach" in _printed(graded, "gradebook")
    with Gradebook(graded["grader"].db_url) as gb:
        assert gb.find_student("gradebook").first_name == "Gail"
        assert [s.id for s in gb.students if s.first_name == "HACKED"] == []


def test_a_cell_cannot_overwrite_another_submission(graded):
    """zz_victim's submitted file is byte for byte what was collected, and it is graded (0 of 3)."""
    before, after = graded["victim"]
    assert "victim: out of reach" in _printed(graded, "overwrite")
    assert after == before
    assert _score(graded, "zz_victim") == (True, 0, 3)


def test_a_planted_ipykernel_launcher_never_runs(graded):
    """planter cannot write ipykernel_launcher.py into the working folder; no kernel ran one."""
    assert "cannot plant" in _printed(graded, "planter")
    assert not (graded["work"] / "ipykernel_launcher.py").exists()
    assert not (graded["work"] / "planted-ran").exists()


def test_a_leftover_process_does_not_outlive_its_notebook(graded):
    """No process carrying leftover's tag is alive after the run."""
    alive = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if TAG.encode() in cmdline.read_bytes():
                alive.append(cmdline.parent.name)
        except OSError:
            pass
    assert alive == []


def test_a_leftover_process_cannot_rewrite_grades_csv(graded):
    """grades.csv two seconds after the run is what the run wrote, without HACKED."""
    assert "HACKED" not in graded["csv_later"]
    assert graded["csv_later"] == graded["csv_after_run"]


def test_solutions_are_not_visible_to_student_code(graded):
    """reader finds no solutions/ folder, so its `remaining` is never defined: 0 of 3."""
    assert "solutions: not visible" in _printed(graded, "reader")
    assert _score(graded, "reader") == (True, 0, 3)


def test_the_answer_key_is_not_visible_to_student_code(graded):
    """key_reader gets no hint, no model answer and no sample answer, and finds the answer key folder empty in
    the kernel and absent from the build its answer process runs against, so its `remaining` is never
    defined: 0 of 3. Its feedback shows no question's points or rubric."""
    printed = _printed(graded, "key_reader")
    assert "评分时不提供提示。" in printed and printed.count("评分时不提供参考答案。") == 2
    assert "answer key: not visible" in printed and "def remaining" not in printed
    assert _score(graded, "key_reader") == (True, 0, 3)
    feedback = _feedback_text(graded, "key_reader")
    assert "要点" not in feedback and "评分参考" not in feedback and "压缩本身是一次调用" not in feedback


def test_a_failed_check_under_grading_offers_no_hint(graded):
    """displayhook's wrong `remaining` fails its visible check; its feedback shows the failure line, without the
    line that offers a hint in a learner's own kernel."""
    feedback = _feedback_text(graded, "displayhook")
    assert _flat("个检查没有通过，请看上面的 × 行。") in feedback
    assert _flat("卡住了") not in feedback and _flat("from ctx_reference.hints import hint") not in feedback


def test_an_ast_transformer_cannot_strip_the_checks(graded):
    """ast's wrong `remaining` scores 0 of 3: the transformer and its pre_run_cell re-installer
    are gone before the check cell runs."""
    assert _score(graded, "ast") == (True, 0, 3)


def test_an_input_transformer_cannot_rewrite_the_checks(graded):
    """input_cleanup's wrong `remaining` scores 0 of 3: its transformer, which turns every
    `assert x` into `assert True or x`, is gone before the check cell runs."""
    assert _score(graded, "input_cleanup") == (True, 0, 3)


def test_a_value_displayed_by_student_code_is_not_a_score(graded):
    """displayhook's wrong `remaining` shows 3 through sys.displayhook during the check: 0 of 3."""
    assert _score(graded, "displayhook") == (True, 0, 3)


def _hidden_lines() -> list[str]:
    nb = json.loads((REPO / "solutions" / ASSIGNMENT / "remaining.ipynb").read_text(encoding="utf-8"))
    source = next("".join(c["source"]) for c in nb["cells"]
                  if c["metadata"].get("nbgrader", {}).get("grade_id") == "check_remaining")
    block = re.search(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", source, flags=re.S).group(1)
    return [line.strip() for line in block.splitlines() if len(line.strip()) >= 12]


def _flat(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _feedback_text(graded, student: str) -> str:
    [page] = graded["grader"].feedback_path(student, ASSIGNMENT)
    return _flat(html.unescape(re.sub(r"<[^>]*>", "", page.read_text(encoding="utf-8"))))


def test_hidden_source_printed_with_changed_brackets_never_reaches_the_kernel(graded):
    """quoter printed the check cell's source with [ as <, from inside `remaining`: what it
    printed holds the visible check but no hidden line (the kernel never had them), in the
    autograded notebook and in the feedback alike; it still scores 3 of 3."""
    hidden = _hidden_lines()
    printed, feedback = _flat(_printed(graded, "quoter")), _feedback_text(graded, "quoter")
    assert _flat('check_exercise("remaining", remaining)') in printed
    assert [line for line in hidden if _flat(line) in printed or _flat(line) in feedback] == []
    assert _score(graded, "quoter") == (True, 3, 3)


def test_hidden_source_printed_by_a_later_cell_never_reaches_the_kernel(graded):
    """quoter_later printed the check cell's source from a cell at the end: the visible check
    is there, no hidden line, in the autograded notebook and in the feedback alike."""
    hidden = _hidden_lines()
    printed, feedback = _flat(_printed(graded, "quoter_later")), _feedback_text(graded, "quoter_later")
    assert _flat('check_exercise("remaining", remaining)') in printed
    assert [line for line in hidden if _flat(line) in printed or _flat(line) in feedback] == []


def test_deleting_the_answer_and_its_check_still_grades_the_notebook(graded):
    """deleter deleted both cells: both are put back (the answer as released), the notebook is
    graded 0 of 3 and the line names both cells."""
    result = graded["results"]["deleter"]
    assert (result.graded, result.auto_score, result.max_auto_score) == (True, 0, 3)
    assert "deleted check cells restored: check_remaining" in result.notes
    assert "deleted answer cells restored: remaining" in result.notes


def test_three_gib_are_refused_under_the_memory_limit(graded):
    """memory's 3 GiB mapping is refused under the 1 GiB limit; the rest of its notebook scores 3 of 3."""
    assert "memory: refused" in _printed(graded, "memory")
    assert _score(graded, "memory") == (True, 3, 3)


def test_student_code_has_no_network(graded):
    """network's connection to a port listening on the host's loopback fails; the port saw no connection."""
    assert "network: blocked" in _printed(graded, "network")
    assert graded["accepted"] == 0
