"""A glossary link of a notebook opens the glossary inside the learner's lab, in both editions.

The lab is started as `make lab` (`make lab LANG=en`) starts it, on a temporary copy of the
edition's release, so its root is workspace/ (workspace-en/), where the release's glossaries are
copied. In headless Chromium, notebook 02 is opened and the glossary link of its rendered first
section clicked, as a learner clicks it: JupyterLab opens the edition's glossary in a tab of its
own (a file outside the lab's root could not open: the link would end in an error).
"""
from __future__ import annotations

import urllib.parse

import pytest
from chromium import open_document

from browser.conftest import LAB_TEST_OPTIONS, VIEWPORT, _lab_environment

from labserver import copy_course, start_learner_lab

NAME = "02-remaining/remaining.ipynb"
EDITIONS = {"zh_CN": ("lessons", "glossary.md", "# 术语表"), "en": ("lessons-en", "glossary.en.md", "# Glossary")}
TIMEOUT_MS = 90_000

# Waits for the open notebook to render its markdown; returns the glossary links it shows (their address).
LINKS_JS = """
async ([timeout]) => {
  const app = window.jupyterapp;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const start = Date.now();
  const panel = app.shell.currentWidget;
  await panel.context.ready;
  const links = () => [...panel.content.node.querySelectorAll('.jp-RenderedMarkdown a')]
    .filter((a) => (a.getAttribute('href') || '').includes('glossary'));
  while (links().length === 0) {
    if (Date.now() - start > timeout) throw new Error('no glossary link rendered');
    await sleep(100);
  }
  return links().map((a) => a.getAttribute('href'));
}
"""

# Once a link was clicked: waits for a document other than the notebook to be the current one; returns its
# path and text.
OPENED_JS = """
async ([notebook, timeout]) => {
  const app = window.jupyterapp;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const start = Date.now();
  const current = () => app.shell.currentWidget;
  while (!(current()?.context && current().context.path !== notebook)) {
    if (Date.now() - start > timeout) return { path: null, text: '' };
    await sleep(100);
  }
  await current().context.ready;
  return { path: current().context.path, text: current().context.model.toString() };
}
"""


@pytest.fixture(scope="module", params=sorted(EDITIONS))
def glossary_lab(request, tmp_path_factory):
    """The learner's lab of one edition on a copy of its release: (edition, the server)."""
    language = request.param
    release = EDITIONS[language][0]
    root = copy_course(tmp_path_factory.mktemp(f"course-glossary-{language}"), (release,))
    folder = tmp_path_factory.mktemp(f"lab-glossary-{language}")
    server = start_learner_lab(root, folder / "lab.log", LAB_TEST_OPTIONS, _lab_environment(folder), language=language)
    yield language, server
    server.stop()


def test_a_glossary_link_opens_the_glossary_inside_the_lab(browser, glossary_lab):
    """Clicking the first glossary link of notebook 02 opens the edition's glossary in the lab (its own file,
    at the workspace's top), with the glossary's text."""
    language, server = glossary_lab
    _release, glossary, heading = EDITIONS[language]
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    try:
        open_document(page, server.url(f"lab/tree/{NAME}"), NAME)
        links = page.evaluate(LINKS_JS, [TIMEOUT_MS])
        # JupyterLab resolves a link from the notebook's folder, within its root: ../glossary.md is /files/glossary.md
        assert links and all(urllib.parse.urlsplit(link).path == f"/files/{glossary}" for link in links), links
        page.locator(".jp-RenderedMarkdown a[href*='glossary']").first.click()
        opened = page.evaluate(OPENED_JS, [NAME, TIMEOUT_MS])
    finally:
        page.close()
    assert opened["path"] == glossary
    assert opened["text"].startswith(heading) and '<a id="cache"></a>' in opened["text"]
