"""Every notebook, run in the learner's JupyterLab in a real browser, shows what a learner should see.

For each notebook of lessons/ (discovered, not listed): the untouched release, run top to bottom,
says gently that the first exercise is not done yet; the model answers (the notebook of solutions/)
pass every check cell and draw every figure as an image. The Formgrader of the instructor's
JupyterLab lists every assignment.
"""
from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from conftest import LESSONS, SOLUTIONS, notebooks
from labserver import SOLUTIONS_IN_WORKSPACE

NOT_DONE_LINE = "还没有实现"
FAIL_MARK = re.compile(r"^× ", flags=re.M)  # a failed case's line (× also means "times" inside labels)
ALL_PASSED = re.compile(r"全部 \d+ 个检查通过")
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^-{20,}$", flags=re.M)
RUN_TIMEOUT_MS = 120_000

# Opens a notebook in the running lab (as File > Open would), waits for its kernel, runs every
# cell (the "Run All Cells" command), waits until the kernel is idle again, and returns what each
# cell shows: its prompt, the text of its output area and how many images that area holds.
RUN_NOTEBOOK_JS = """
async ([path, timeout]) => {
  const app = window.jupyterapp;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const until = async (test, what) => {
    const start = Date.now();
    while (!test()) {
      if (Date.now() - start > timeout) throw new Error(`timed out waiting for ${what} (${path})`);
      await sleep(100);
    }
  };
  let panel = app.shell.currentWidget;
  if (!panel || !panel.context || panel.context.path !== path) {
    panel = await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
  }
  await panel.context.ready;
  await panel.sessionContext.ready;
  const status = () => panel.sessionContext.session?.kernel?.status;
  await until(() => status() === 'idle', 'the kernel to be idle');
  app.shell.activateById(panel.id);
  await app.commands.execute('notebook:run-all-cells');
  await until(() => status() === 'idle', 'the cells to finish');
  const cells = [...panel.content.widgets].map((cell) => ({
    type: cell.model.type,
    prompt: cell.node.querySelector('.jp-InputArea-prompt')?.innerText ?? '',
    text: cell.node.querySelector('.jp-OutputArea')?.innerText ?? '',
    images: cell.node.querySelectorAll('.jp-OutputArea img').length,
  }));
  await panel.sessionContext.shutdown();
  panel.dispose();
  return cells;
}
"""


def _names(folder: Path) -> list[str]:
    return [p.relative_to(folder).as_posix() for p in notebooks(folder)]


NOTEBOOKS = _names(LESSONS)


@cache
def _stored(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _is_check_cell(cell: dict) -> bool:
    """An autograded check cell: graded by nbgrader and holding no solution."""
    meta = cell["metadata"].get("nbgrader", {})
    return cell["cell_type"] == "code" and meta.get("grade", False) and not meta.get("solution", False)


def _stored_figures(cell: dict) -> int:
    return sum(1 for output in cell.get("outputs", []) if "image/png" in output.get("data", {}))


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


_runs: dict[str, list[dict]] = {}


def _run(page, lab, path: str) -> list[dict]:
    """Run the notebook at ``path`` (relative to the workspace) in the lab once; return its cells as shown."""
    if path not in _runs:
        if not page.url.startswith(lab.base):
            page.goto(lab.url(f"lab/tree/{path}"))
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
        _runs[path] = page.evaluate(RUN_NOTEBOOK_JS, [path, RUN_TIMEOUT_MS])
    return _runs[path]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_untouched_release_says_the_exercise_is_not_done(lab_page, lab, name):
    """Run All on the untouched release shows the gentle 'not implemented yet' line of the first exercise."""
    stubs = [c for c in _stored(LESSONS / name) if "raise NotImplementedError" in _source(c)]
    cells = _run(lab_page, lab, name)
    assert len(cells) == len(_stored(LESSONS / name))
    shown = "\n".join(cell["text"] for cell in cells)
    if stubs:
        assert NOT_DONE_LINE in shown
    else:  # a notebook without exercises runs through
        assert all(cell["prompt"] != "[ ]:" for cell in cells if cell["type"] == "code")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_untouched_release_shows_no_traceback(lab_page, lab, name):
    """The untouched release's outputs hold no Python traceback, only the short check messages."""
    shown = "\n".join(cell["text"] for cell in _run(lab_page, lab, name))
    assert TRACEBACK.search(shown) is None, shown[-1500:]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_model_answers_pass_every_check_and_draw_every_figure(lab_page, lab, name):
    """With the model answers, every check cell says all passed with no failed (×) line, and each figure is an <img>."""
    stored = _stored(SOLUTIONS / name)
    cells = _run(lab_page, lab, f"{SOLUTIONS_IN_WORKSPACE}/{name}")
    assert len(cells) == len(stored)
    unexecuted = [i for i, cell in enumerate(cells) if cell["type"] == "code" and cell["prompt"] in ("", "[ ]:")]
    assert unexecuted == []
    for index, (cell, shown) in enumerate(zip(stored, cells)):
        if _is_check_cell(cell) and "check_exercise" in _source(cell):
            assert FAIL_MARK.search(shown["text"]) is None, (index, shown["text"])
            assert ALL_PASSED.search(shown["text"]), (index, shown["text"])
        if cell["cell_type"] == "code":
            assert shown["images"] == _stored_figures(cell), (index, shown["images"])
    assert TRACEBACK.search("\n".join(cell["text"] for cell in cells)) is None


def test_formgrader_lists_every_assignment(browser, formgrader):
    """The instructor's Formgrader (Manage Assignments) lists every assignment of solutions/."""
    assignments = sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir() and not p.name.startswith("."))
    page = browser.new_page()
    try:
        page.goto(formgrader.url("formgrader/manage_assignments"))
        page.wait_for_selector(f"text={assignments[-1]}", timeout=60_000)
        listed = page.inner_text("body")
    finally:
        page.close()
    assert [a for a in assignments if a not in listed] == []


INSPECT_LAB_JS = """
async (path) => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
  await panel.context.ready;
  await panel.sessionContext.ready;
  const menus = [...document.querySelectorAll('.lm-MenuBar-itemLabel')].map((m) => m.innerText);
  const toasts = [...document.querySelectorAll('.Toastify__toast')].map((t) => t.innerText);
  const commands = ['nbgrader:open-formgrader', 'nbgrader:open-assignment-list', 'nbgrader:open-course-list'];
  return {
    menus,
    nbgraderCommands: commands.filter((id) => app.commands.hasCommand(id)),
    toolbar: panel.toolbar.node.innerText,
    toasts,
  };
}
"""


# JupyterLab's menu bar in Simplified Chinese (the zh_CN language pack): File, Edit, View, Run,
# Kernel, Tabs, Settings, Help.
CHINESE_MENUS = ["文件", "编辑", "查看", "运行", "内核", "标签页", "设置", "帮助"]


def _inspect_lab(page, lab) -> dict:
    name = NOTEBOOKS[0]
    if not page.url.startswith(lab.base):
        page.goto(lab.url(f"lab/tree/{name}"))
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
    return page.evaluate(INSPECT_LAB_JS, name)


def test_learner_lab_menu_bar_is_in_chinese_and_asks_nothing_about_news(lab_page, lab):
    """The learner's lab shows its menu bar in Simplified Chinese and no Jupyter news prompt."""
    shown = _inspect_lab(lab_page, lab)
    assert [label for label in CHINESE_MENUS if label not in shown["menus"]] == [], shown["menus"]
    assert "File" not in shown["menus"]
    assert [t for t in shown["toasts"] if "Jupyter" in t and ("新闻" in t or "news" in t)] == []


def test_learner_lab_offers_validate_but_no_instructor_tools(lab_page, lab):
    """In the learner's lab the Validate button validates the notebook; no Nbgrader menu or Formgrader
    command exists."""
    shown = _inspect_lab(lab_page, lab)
    assert "文件" in shown["menus"] and "Nbgrader" not in shown["menus"]
    assert shown["nbgraderCommands"] == []
    assert "Validate" in shown["toolbar"]
    lab_page.get_by_role("button", name="Validate").first.click()
    dialog = lab_page.locator(".jp-Dialog")
    dialog.wait_for()
    report = dialog.inner_text()
    lab_page.keyboard.press("Escape")
    assert "Validation Results" in report and "failed" in report, report  # the untouched release fails


# Opens a notebook, runs every cell and leaves it open; returns the images of the cell that
# shows sliders (ipywidgets) as their data URLs.
RUN_AND_KEEP_JS = """
async ([path, timeout]) => {
  const app = window.jupyterapp;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const panel = await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
  await panel.context.ready;
  await panel.sessionContext.ready;
  const status = () => panel.sessionContext.session?.kernel?.status;
  const start = Date.now();
  while (status() !== 'idle') { if (Date.now() - start > timeout) throw new Error('kernel'); await sleep(100); }
  app.shell.activateById(panel.id);
  await app.commands.execute('notebook:run-all-cells');
  while (status() !== 'idle' || !panel.node.querySelector('.widget-vbox img')) {
    if (Date.now() - start > timeout) throw new Error(`no slider with a figure in ${path}`);
    await sleep(100);
  }
  return true;
}
"""

SLIDER_IMAGES_JS = """
() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .widget-vbox img')].map((img) => img.src)
"""


@pytest.mark.parametrize("name", ["06-strategies/strategies.ipynb", "03-recall/recall.ipynb"])
def test_moving_a_slider_redraws_the_figure(lab_page, lab, name):
    """In the lab, the experiment cells of 03 and 06 show sliders; moving one redraws the figure."""
    if not lab_page.url.startswith(lab.base):
        lab_page.goto(lab.url(f"lab/tree/{NOTEBOOKS[0]}"))
        lab_page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
    lab_page.evaluate(RUN_AND_KEEP_JS, [f"{SOLUTIONS_IN_WORKSPACE}/{name}", RUN_TIMEOUT_MS])
    before = lab_page.evaluate(SLIDER_IMAGES_JS)
    assert len(before) == 1
    handle = lab_page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-vbox .noUi-handle").first
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    lab_page.mouse.move(x, y)
    lab_page.mouse.down()
    lab_page.mouse.move(x + 40, y, steps=5)
    lab_page.mouse.up()
    lab_page.wait_for_function(
        "(before) => { const now = (" + SLIDER_IMAGES_JS.strip() + ")(); "
        "return now.length === 1 && now[0] !== before; }",
        arg=before[0], timeout=60_000,
    )
    lab_page.evaluate("async () => { const panel = window.jupyterapp.shell.currentWidget; "
                      "await panel.sessionContext.shutdown(); panel.dispose(); }")


def _menu_labels(page) -> list[str]:
    page.wait_for_selector(".lm-MenuBar-itemLabel")
    return [label.inner_text() for label in page.query_selector_all(".lm-MenuBar-itemLabel")]


def _choose_language(page, settings_menu: str, language_menu: str, language: str) -> None:
    """Settings → Language → the language whose label starts with ``language``; accept the reload dialog."""
    page.click(f".lm-MenuBar-itemLabel:text-is('{settings_menu}')")
    page.hover(f".lm-Menu-itemLabel:text-is('{language_menu}')")
    page.click(f".lm-Menu-itemLabel:has-text('{language}')")
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.wait_for_load_state()


def test_learner_can_switch_the_lab_back_to_english_in_settings(browser, lab):
    """Chinese is only the default: 设置 → 语言 → English reloads the lab in English (then Chinese is chosen again)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(90_000)
    try:
        page.goto(lab.url("lab"))
        assert "文件" in _menu_labels(page)
        _choose_language(page, "设置", "语言", "English - ")
        page.wait_for_function("() => [...document.querySelectorAll('.lm-MenuBar-itemLabel')]"
                               ".some((m) => m.innerText === 'File')")
        english = _menu_labels(page)
        _choose_language(page, "Settings", "Language", "Chinese (Simplified")
        page.wait_for_function("() => [...document.querySelectorAll('.lm-MenuBar-itemLabel')]"
                               ".some((m) => m.innerText === '文件')")
    finally:
        page.close()
    assert english[:3] == ["File", "Edit", "View"]
