"""The English edition re-executed, notebook by notebook, as nbval re-executes the Chinese one.

``editions.check.execute_english`` builds the English source notebook (``solutions/`` with its
catalogue) and runs it with ``CTX_LANG=en`` in a kernel of its own, once per notebook (a fixture of
this module; the file runs whole on one worker). Two claims on that run:

- every code cell agrees with the Chinese stored outputs (which nbval checks): the same errors, and
  the same numbers in its text (``editions.compare_outputs``);
- every Chinese character it prints is data an exercise measures or compares, on the reviewed list
  ``DATA`` below: each entry names where the data comes from and why it stays Chinese (the English
  text glosses it). A message, a heading, a label, a unit or a key is never on it: those go through
  the catalogue.

Also: an English release notebook executed the way any Jupyter runs it, without ``CTX_LANG``,
prints its checks in English (``ctx_reference.i18n.notebook_edition``).
"""
from __future__ import annotations

import ast
import dataclasses
import json
import os
from collections.abc import Callable, Iterable
from types import ModuleType

import pytest

import ctx_reference.calibrate as calibrate
import ctx_reference.evaldiff as evaldiff
import ctx_reference.sessions as sessions
from ctx_course.config import assignments
from ctx_course.editions.catalogues import source_notebook
from ctx_course.editions.check import chinese_in_outputs, compare_outputs, execute_english
from ctx_course.editions.translate import has_chinese
from ctx_reference.assemble import lesson_items
from ctx_reference.checks import EXERCISES
from ctx_reference.trim import omission_marker

from conftest import KERNEL_MANAGER, REPO

pytestmark = [pytest.mark.heavy]

ASSIGNMENTS = assignments(REPO)


def _strings(value: object) -> set[str]:
    """Return every str inside plain data, a dataclass or a namedtuple (keys included)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_strings(k) | _strings(v) for k, v in value.items())) if value else set()
    if isinstance(value, (list, tuple, set, frozenset)):
        return set().union(*(_strings(v) for v in value)) if value else set()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _strings([getattr(value, f.name) for f in dataclasses.fields(value)])
    return set()


def cells(*cell_ids: str) -> Callable[[dict], set[str]]:
    """The string literals of these code cells of the English notebook (data its code measures or prints)."""
    def read(english: dict) -> set[str]:
        found = set()
        for cell in english["cells"]:
            if cell["cell_type"] == "code" and cell["id"] in cell_ids:
                source = "\n".join(line for line in "".join(cell["source"]).split("\n")
                                   if not line.lstrip().startswith(("%", "!")))
                found |= {node.value for node in ast.walk(ast.parse(source))
                          if isinstance(node, ast.Constant) and isinstance(node.value, str)}
        return found
    return read


def cases(*exercises: str) -> Callable[[dict], set[str]]:
    """The inputs and expected values of these exercises' visible checks (never their labels)."""
    return lambda english: _strings([(c.args, dict(c.kwargs), c.expect) for name in exercises
                                     for c in EXERCISES[name]])


def module(source: ModuleType) -> Callable[[dict], set[str]]:
    """The data constants of a module of ctx_reference (its ``# data`` strings, tables of them)."""
    return lambda english: _strings([value for name, value in vars(source).items()
                                     if not name.startswith("__") and not callable(value)
                                     and not isinstance(value, ModuleType)])


def made(function: Callable[[], Iterable]) -> Callable[[dict], set[str]]:
    """The strings of what a function of ctx_reference returns (data built from the module's pieces)."""
    return lambda english: _strings(list(function()))


# The reviewed list: per notebook, where each Chinese data string comes from, and why it stays Chinese.
DATA: dict[str, tuple[tuple[Callable[[dict], set[str]], str], ...]] = {
    "01-window-math": (
        (cells("cell-19", "cell-25"), "the sentences whose tokens the notebook counts: Chinese text is the point"),
        (cases("estimate_tokens"), "estimate_tokens' check inputs: it counts Chinese characters one by one"),
    ),
    "04-assembly": (
        (made(lambda: [item.text for item in lesson_items()]),
         "the lesson's items: the duplicate rule compares their texts"),
        (cells("cell-10"), "the texts of the duplicate demo, compared the same way"),
        (cases("assemble"), "the item names of the checks (规则, 文档甲 …), glossed in the notebook"),
    ),
    "05-trim-lines": (
        (made(lambda: [omission_marker(n) for n in range(1, 101)]
                      + [omission_marker(100, "tool-output/pytest-run-1.txt")]),
         "the omission marker: the exercise must return it exactly"),
        (cells("cell-07", "cell-09", "cell-11", "cell-13", "cell-15"), "the marker as the demos build it"),
        (cases("trim_lines"), "the check inputs 第 N 行 (line N) and their markers"),
    ),
    "06-strategies": (
        (cells("cell-api-01", "cell-api-03"),
         "the system prompt and tool descriptions every request body carries, whose tokens the estimate counts"),
    ),
    "07-render": (
        (cells("cell-02", "cell-06", "cell-08", "cell-12", "cell-18", "cell-tools-01", "cell-tools-03", "render"),
         "the spec, its rules and the tool descriptions: the checker looks for 不要/而是/改为 and measures them"),
        (cases("render"), "the specs of render's checks, the same words"),
    ),
    "08-eval-diff": (
        (made(evaldiff.lesson_cases), "the questions and expected answers the grader compares"),
        (made(lambda: [evaldiff.fake_model(v, c.question) for v in evaldiff.PROMPTS for c in evaldiff.lesson_cases()]),
         "the model's answers, graded by substring"),
        (made(evaldiff.PROMPTS.values), "the prompts the answers depend on"),
        (module(evaldiff), "their added sentences"),
        (cases("diff"), "diff's check inputs"),
    ),
    "09-context-ledger": (
        (cells("cell-02", "cell-05-disagree-code", "cell-07", "rare-characters", "reconcile-02"),
         "the sentences and pieces whose tokens each ruler counts"),
        (module(calibrate), "the sample texts of each kind, counted by the real tokenizers"),
        (cases("fit_rates"), "fit_rates' receipts (账: one non-ASCII character)"),
    ),
    "10-sessions": (
        (made(lambda: [r for session in sessions.session_records() for r in session]),
         "the records of the simulated sessions: their tokens are what the budget counts"),
        (cells("cell-04"), "a record the notebook counts by hand"),
        (cases("write_progress", "restore"), "the records of the checks; restore must read them back exactly"),
    ),
}


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def english_run(request) -> tuple[str, dict]:
    """The English edition of one assignment, executed once for both tests."""
    return request.param, execute_english(REPO, request.param, kernel_manager_class=KERNEL_MANAGER)


def test_the_english_edition_runs_as_the_chinese_one(english_run):
    assignment, english = english_run
    chinese = json.loads(source_notebook(REPO, assignment).read_text(encoding="utf-8"))
    assert compare_outputs(chinese, english) == []


def test_the_english_run_shows_no_chinese_but_the_reviewed_data(english_run):
    """Every run of Chinese characters in the English outputs is part of a data string on ``DATA``."""
    assignment, english = english_run
    allowed = set().union(*(source(english) for source, _why in DATA.get(assignment, ())))
    allowed = {text for text in allowed if has_chinese(text)}
    shown = [(cell_id, run) for cell_id, run in chinese_in_outputs(english)
             if not any(run in text for text in allowed)]
    assert shown == [], f"{len(shown)} runs of Chinese that are not reviewed data, e.g. {shown[:8]}"


def test_an_english_release_notebook_reads_english_without_ctx_lang():
    """lessons-en/02-remaining executed as nbconvert does (in its folder, no CTX_LANG, no Jupyter Server):
    the check of the unfinished exercise speaks English and no output holds Chinese."""
    import nbformat
    from nbclient import NotebookClient

    path = REPO / "lessons-en" / "02-remaining" / "remaining.ipynb"
    notebook = nbformat.read(path, as_version=4)
    env = {key: value for key, value in os.environ.items() if key not in ("CTX_LANG", "JPY_SESSION_NAME")}
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                            kernel_manager_class=KERNEL_MANAGER, resources={"metadata": {"path": str(path.parent)}})
    client.km = client.kernel_manager_class(kernel_name="python3", config=client.config)
    client.execute(env=env)
    check = next(cell for cell in notebook.cells if cell.get("id") == "check_remaining")
    text = "".join(output.get("text", "") for output in check.outputs) + "".join(
        "\n".join(output.get("traceback", [])) for output in check.outputs)
    assert "not implemented yet" in text and "Exercise `remaining` is not finished yet." in text, text
    assert chinese_in_outputs(notebook) == []
