"""The learner's lab opens on the start page, shows the progress there, and opening a notebook modifies nothing.

The lab of each edition is started as `make lab` (`make lab LANG=en`) starts it, on a temporary copy
of the edition's release. In headless Chromium the lab's front address is opened as a learner's
browser opens it: JupyterLab shows start-here.ipynb (not the Launcher). Its progress cell is run in
its kernel, and prints the progress view in the edition's language. Then notebook 02 is opened and,
once its kernel has answered (JupyterLab then writes the kernel's language_info and kernel spec into
the notebook where they differ), the notebook is still unmodified: the learner is not asked to save a
notebook they have not touched.
"""
from __future__ import annotations

import pytest

from browser.conftest import LAB_TEST_OPTIONS, VIEWPORT, _lab_environment

from labserver import copy_course, start_learner_lab

EDITIONS = {"zh_CN": ("lessons", "里保存过的笔记本"), "en": ("lessons-en", "The saved notebooks in workspace-en/")}
NOTEBOOK = "02-remaining/remaining.ipynb"
TIMEOUT_MS = 120_000

# Waits until the current widget is the document at ``path`` and its kernel has answered kernel_info; returns
# whether the document is modified a moment later, with the language_info JupyterLab holds for it.
SETTLED_JS = """
async ([path, timeout]) => {
  const app = window.jupyterapp;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const start = Date.now();
  const current = () => app.shell.currentWidget;
  while (!(current()?.context && current().context.path === path)) {
    if (Date.now() - start > timeout) throw new Error('not opened: ' + path);
    await sleep(100);
  }
  const panel = current();
  await panel.context.ready;
  await panel.sessionContext.ready;
  while (!panel.sessionContext.session?.kernel) {
    if (Date.now() - start > timeout) throw new Error('no kernel for ' + path);
    await sleep(100);
  }
  const kernel = panel.sessionContext.session.kernel;
  await kernel.info;
  await sleep(5000);  // the metadata JupyterLab writes on the kernel's answer lands after it
  return { dirty: panel.context.model.dirty, language: panel.context.model.getMetadata('language_info'),
           version: (await kernel.info).language_info.version };
}
"""

# Runs every cell of the current notebook and returns the text of the last cell's outputs.
RUN_JS = """
async ([timeout]) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  await app.commands.execute('notebook:run-all-cells');
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const start = Date.now();
  const cells = panel.content.model.cells;
  const last = cells.get(cells.length - 1);
  while (last.outputs.length === 0 || panel.sessionContext.session.kernel.status !== 'idle') {
    if (Date.now() - start > timeout) throw new Error('the progress cell printed nothing');
    await sleep(200);
  }
  return last.outputs.toJSON().map((output) => [].concat(output.text || '').join('')).join('');
}
"""


@pytest.fixture(scope="module", params=sorted(EDITIONS))
def edition_lab(request, tmp_path_factory):
    """The learner's lab of one edition on a copy of its release: (edition, the server)."""
    language = request.param
    root = copy_course(tmp_path_factory.mktemp(f"course-start-{language}"), (EDITIONS[language][0],))
    folder = tmp_path_factory.mktemp(f"lab-start-{language}")
    server = start_learner_lab(root, folder / "lab.log", LAB_TEST_OPTIONS, _lab_environment(folder), language=language)
    yield language, server
    server.stop()


def test_the_lab_opens_on_the_start_page_and_nothing_opened_is_modified(browser, edition_lab):
    """The front address shows start-here.ipynb, unmodified once its kernel answered; its progress cell prints
    the view in the edition's language; notebook 02, opened next, is unmodified once its kernel answered."""
    language, server = edition_lab
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(server.url(""))
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
        start = page.evaluate(SETTLED_JS, ["start-here.ipynb", TIMEOUT_MS])
        printed = page.evaluate(RUN_JS, [TIMEOUT_MS])
        page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", NOTEBOOK)
        lesson = page.evaluate(SETTLED_JS, [NOTEBOOK, TIMEOUT_MS])
    finally:
        page.close()
    assert start["dirty"] is False and start["language"]["version"] == start["version"]
    assert EDITIONS[language][1] in printed and "02 · " in printed
    assert lesson["dirty"] is False and lesson["language"]["version"] == lesson["version"]
