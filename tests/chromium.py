"""Debian's Chromium, headless, through Playwright: the one browser of the browser and hub suites."""
from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]


@contextmanager
def headless_chromium() -> Iterator[Browser]:
    """Yield the system's Chromium, launched headless; fail the test with one line when it is missing."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no Chromium at {CHROMIUM}: install Debian's chromium or set CHROMIUM")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def open_document(page: Page, url: str, path: str) -> None:
    """Go to ``url`` and wait until JupyterLab's current document is the one at ``path`` (as a learner opens it)."""
    page.goto(url)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.context"
                           f" && window.jupyterapp.shell.currentWidget.context.path === {json.dumps(path)}")
