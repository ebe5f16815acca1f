"""The English edition in a real browser: notebook 02 as a learner of `make lab LANG=en` sees it.

The learner's lab is started as `make lab LANG=en` starts it (``python -m ctx_course lab --lang en``)
on a temporary copy of the course's English release (lessons-en/, copied into workspace-en/). In
headless Chromium the menu bar is in English, the notebook opens with the English heading of its
catalogue (i18n/en/), its kernel reads English, and with the model answer typed into the answer
cell, Run All runs every cell and the check cell prints its ✓ lines: the very lines the checks print
in English in this process, and, once the compiled catalogue has them, no Chinese.
"""
from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
from chromium import open_document

from browser.conftest import LAB_TEST_OPTIONS, VIEWPORT, _lab_environment

from conftest import REPO, SOLUTIONS
from labserver import copy_course, start_learner_lab

ASSIGNMENT, NAME = "02-remaining", "02-remaining/remaining.ipynb"
LESSONS_EN = REPO / "lessons-en"
CATALOGUE = REPO / "i18n" / "en" / f"{ASSIGNMENT}.po"
RUN_TIMEOUT_MS = 120_000
# JupyterLab's menu bar in English.
ENGLISH_MENUS = ["File", "Edit", "View", "Run", "Kernel", "Tabs", "Settings", "Help"]
CHINESE_MENUS = ["文件", "编辑", "查看", "运行", "内核", "标签页", "设置", "帮助"]
FAIL_MARK = re.compile(r"^× ", flags=re.M)
PASS_LINE = re.compile(r"^✓ ", flags=re.M)
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^-{20,}$", flags=re.M)
CHECK_CALL = re.compile(r"check_exercise\(\"(\w+)\", (\w+)\)")
SOLUTION_MARKERS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*\n", flags=re.M)

# The start of each script below: the lab, and `until(test, what)`, which waits for `test()` (up to `timeout` ms).
WAIT_JS = """  const app = window.jupyterapp;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const until = async (test, what) => {
    const start = Date.now();
    while (!test()) {
      if (Date.now() - start > timeout) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  };
"""

# Waits for the open notebook and its kernel; returns the menu bar, the first heading and the text
# of every rendered markdown cell, and what the kernel says its reader's language is.
INSPECT_JS = """
async ([timeout]) => {
""" + WAIT_JS + """  const panel = app.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  await until(() => panel.sessionContext.session?.kernel?.status === 'idle', 'the kernel to be idle');
  const markdown = () => [...panel.content.widgets].filter((cell) => cell.model.type === 'markdown');
  await until(() => markdown().every((cell) => cell.node.querySelector('.jp-RenderedMarkdown')),
              'the markdown cells to render');
  const future = panel.sessionContext.session.kernel.requestExecute(
    { code: 'from ctx_reference.i18n import language\\nprint(language())', store_history: false });
  let language = '';
  future.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') language += msg.content.text; };
  await future.done;
  const heading = panel.content.node.querySelector('.jp-RenderedMarkdown h1');
  return {
    menus: [...document.querySelectorAll('.lm-MenuBar-itemLabel')].map((m) => m.innerText),
    heading: heading ? heading.textContent.replace(/¶\\s*$/, '').trim() : null,
    markdown: markdown().map((cell) => ({
      id: cell.model.id, text: cell.node.querySelector('.jp-RenderedMarkdown').innerText,
    })),
    language: language.trim(),
  };
}
"""

# Types the answers into their cells (as a learner would paste them), runs every cell and waits
# until the kernel is idle with no cell still running; returns what each cell shows.
ANSWER_AND_RUN_JS = """
async ([answers, timeout]) => {
""" + WAIT_JS + """  const panel = app.shell.currentWidget;
  const cells = () => [...panel.content.widgets];
  for (const [id, source] of Object.entries(answers)) {
    const cell = cells().find((c) => c.model.id === id);
    if (!cell) throw new Error(`no cell ${id}`);
    cell.model.sharedModel.setSource(source);
  }
  app.shell.activateById(panel.id);
  const status = () => panel.sessionContext.session?.kernel?.status;
  await app.commands.execute('notebook:run-all-cells');
  const prompt = (cell) => cell.node.querySelector('.jp-InputArea-prompt')?.innerText ?? '';
  await until(() => status() === 'idle' && !cells().some((cell) => prompt(cell).includes('*')),
              'the cells to finish');
  return cells().map((cell) => ({
    id: cell.model.id,
    type: cell.model.type,
    prompt: prompt(cell),
    source: cell.model.sharedModel.getSource(),
    text: cell.node.querySelector('.jp-OutputArea')?.innerText ?? '',
  }));
}
"""


def _cells(path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _nbgrader(cell: dict) -> dict:
    return cell["metadata"].get("nbgrader", {})


def _english_heading() -> str:
    """The English title of the notebook: the first line of the translation of its first cell."""
    from ctx_course.editions.translate import read_catalogue

    (message,) = [m for m in read_catalogue(CATALOGUE) if m.context == "cell-00" and m.id]
    assert message.string and not message.fuzzy, "the catalogue has no English for cell-00"
    first = message.string.splitlines()[0]
    assert first.startswith("# ")
    return first[2:].strip()


def _model_answers() -> dict[str, str]:
    """The model answer of each code answer cell, in the English edition, as a learner would type it."""
    from ctx_course.editions.translate import edition_translations, translate_notebook

    solution = json.loads((SOLUTIONS / NAME).read_text(encoding="utf-8"))
    english = translate_notebook(solution, edition_translations(REPO, "en", ASSIGNMENT), "en")
    return {cell["id"]: SOLUTION_MARKERS.sub("", _source(cell)) for cell in english["cells"]
            if cell["cell_type"] == "code" and _nbgrader(cell).get("solution")}


def _english_check_output(answers: dict[str, str], check_source: str) -> str:
    """What the check cell prints in English, run here on the model answers (the catalogue in use, compiled)."""
    from ctx_reference.checks import check_exercise
    from ctx_reference.i18n import using

    namespace: dict = {"__name__": "__main__"}
    for source in answers.values():
        exec(compile(source, "<answer>", "exec"), namespace)
    printed = io.StringIO()
    with using("en"), contextlib.redirect_stdout(printed):
        for name, variable in CHECK_CALL.findall(check_source):
            check_exercise(name, namespace[variable])
    return printed.getvalue()


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def english_lab(tmp_path_factory):
    """The learner's lab of the English edition (`make lab LANG=en`) on a copy of lessons-en/."""
    root = copy_course(tmp_path_factory.mktemp("course-en"), ("lessons-en",))
    folder = tmp_path_factory.mktemp("lab-en")
    server = start_learner_lab(root, folder / "lab.log", LAB_TEST_OPTIONS, _lab_environment(folder), language="en")
    print(f"\nEnglish learner's lab answered after {server.started_in:.1f} s")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def english_page(browser, english_lab):
    """A page of the English lab with notebook 02 open (as the learner opens it from the file browser)."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(90_000)
    open_document(page, english_lab.url(f"lab/tree/{NAME}"), NAME)
    yield page
    page.close()


@pytest.fixture(scope="module")
def opened(english_page) -> dict:
    """What the freshly opened English notebook shows."""
    return english_page.evaluate(INSPECT_JS, [RUN_TIMEOUT_MS])


@pytest.fixture(scope="module")
def answered(english_page, opened) -> list[dict]:
    """The cells of the English notebook after the model answer was typed in and every cell was run."""
    return english_page.evaluate(ANSWER_AND_RUN_JS, [_model_answers(), RUN_TIMEOUT_MS])


def _check_cells() -> list[dict]:
    return [c for c in _cells(LESSONS_EN / NAME) if c["cell_type"] == "code" and _nbgrader(c).get("grade")
            and not _nbgrader(c).get("solution") and CHECK_CALL.search(_source(c))]


def test_english_lab_menu_bar_is_in_english(opened):
    """The English lab shows JupyterLab's menu bar in English, not in Chinese."""
    assert [label for label in ENGLISH_MENUS if label not in opened["menus"]] == [], opened["menus"]
    assert [label for label in CHINESE_MENUS if label in opened["menus"]] == [], opened["menus"]


def test_english_notebook_opens_with_its_english_heading_and_english_text(opened):
    """The notebook's first heading is the English one of i18n/en/02-remaining.po; no narrative cell shows Chinese."""
    from ctx_course.editions.translate import has_chinese

    assert opened["heading"] == _english_heading()
    answers = {c["id"] for c in _cells(LESSONS_EN / NAME) if _nbgrader(c).get("solution")}
    narrative = [cell for cell in opened["markdown"] if cell["id"] not in answers]
    assert len(narrative) > 5
    assert [cell["id"] for cell in narrative if has_chinese(cell["text"])] == []


def test_english_notebook_kernel_reads_english(opened):
    """The notebook's kernel (started by the English lab) reads its messages in English: CTX_LANG=en."""
    assert opened["language"] == "en"


def test_english_notebook_with_the_model_answer_runs_and_its_check_passes(answered):
    """With the model answer typed in, Run All runs every code cell without a traceback, and the check cell
    prints ✓ lines, no × line, and exactly what the checks print in English for that answer."""
    stored = _cells(LESSONS_EN / NAME)
    assert [cell["id"] for cell in answered] == [cell["id"] for cell in stored]
    answers = _model_answers()
    assert answers and all(next(c for c in answered if c["id"] == i)["source"] == s for i, s in answers.items())
    unexecuted = [cell["id"] for cell in answered if cell["type"] == "code" and cell["prompt"] in ("", "[ ]:")]
    assert unexecuted == []
    assert TRACEBACK.search("\n".join(cell["text"] for cell in answered)) is None
    checks = _check_cells()
    assert checks
    for check in checks:
        shown = next(cell["text"] for cell in answered if cell["id"] == check["id"])
        assert FAIL_MARK.search(shown) is None, shown
        assert len(PASS_LINE.findall(shown)) >= 2, shown
        assert _lines(shown) == _lines(_english_check_output(answers, _source(check)))


def test_english_check_cell_speaks_english(answered):
    """The check cell's ✓ lines read in English: no Chinese in them (once the compiled catalogue has them)."""
    from ctx_course.editions.translate import has_chinese

    answers = _model_answers()
    for check in _check_cells():
        expected = _english_check_output(answers, _source(check))
        if has_chinese(expected):
            pytest.skip("the compiled catalogue (ctx_reference/locale/en/LC_MESSAGES/ctx.mo) has no English "
                        "for these check lines yet: " + next(line for line in _lines(expected) if has_chinese(line)))
        shown = next(cell["text"] for cell in answered if cell["id"] == check["id"])
        assert [line for line in _lines(shown) if has_chinese(line)] == [], shown
        assert PASS_LINE.search(shown)
