"""Fixtures of the browser suite: one learner's lab and one headless Chromium for the whole session.

The lab is started the way `make lab` starts it (``python -m ctx_course lab``), on a temporary copy
of the course: its workspace/ is filled from the copied lessons/, and the model answers of
solutions/ are copied beside them into workspace/solutions/. The browser is the system's Chromium
(Debian's ``chromium``), driven by Playwright; Playwright's own browser download is not used.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from chromium import headless_chromium

from labserver import SOLUTIONS_IN_WORKSPACE, copy_course, start_formgrader, start_learner_lab

VIEWPORT = {"width": 1400, "height": 1000}
# JupyterLab options the tests need, passed through `python -m ctx_course lab` like any learner's:
# window.jupyterapp lets a test run commands and wait on the kernel.
LAB_TEST_OPTIONS = ["--LabApp.expose_app_in_browser=True"]
# Settings of the test's own JupyterLab (the user's are not read or written): render every cell,
# not only those in view, so that every output is in the page. The language and the news prompt
# are left to the learner's configuration, which the suite checks.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def _lab_environment(folder: Path) -> dict[str, str]:
    """Environment variables giving JupyterLab its own settings and workspaces folders under ``folder``."""
    settings = folder / "settings"
    for name, values in LAB_SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    return {"JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTERLAB_WORKSPACES_DIR": str(folder / "workspaces")}


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Path:
    """A temporary copy of the course (config, lessons, solutions); the model answers in workspace/solutions/."""
    root = copy_course(tmp_path_factory.mktemp("course"))
    shutil.copytree(root / "solutions", root / "workspace" / SOLUTIONS_IN_WORKSPACE)
    return root


@pytest.fixture(scope="session")
def formgrader_launched(tmp_path_factory):
    """The instructor's JupyterLab (as `make formgrader`) on its own copy of the course, still starting."""
    root = copy_course(tmp_path_factory.mktemp("instructor"))
    folder = tmp_path_factory.mktemp("formgrader")
    server = start_formgrader(root, folder / "formgrader.log", env=_lab_environment(folder), wait=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def lab(course, formgrader_launched, tmp_path_factory):
    """The learner's JupyterLab on the course copy, as `make lab` starts it.

    The instructor's server is launched first, so that it starts while the notebooks run.
    """
    folder = tmp_path_factory.mktemp("lab")
    server = start_learner_lab(course, folder / "lab.log", LAB_TEST_OPTIONS, _lab_environment(folder))
    print(f"\nlearner's lab answered after {server.started_in:.1f} s")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium of the system, through Playwright."""
    with headless_chromium() as instance:
        yield instance


@pytest.fixture(scope="session")
def lab_page(browser, lab):
    """One page of the learner's lab, shared by every notebook test (notebooks run one after another)."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(90_000)
    yield page
    page.close()


@pytest.fixture(scope="session")
def formgrader(formgrader_launched):
    """The instructor's JupyterLab, ready."""
    formgrader_launched.wait_ready()
    return formgrader_launched
