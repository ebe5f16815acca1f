"""Shared paths and helpers of the test suite."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
LESSONS = REPO / "lessons"


def notebooks(folder: Path) -> list[Path]:
    """Return the notebooks of a course folder (solutions/ or lessons/), in reading order."""
    return sorted(p for p in folder.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)



BROWSER_SUITE = Path(__file__).resolve().parent / "browser"


def pytest_addoption(parser):
    parser.addoption("--browser", action="store_true",
                     help="also collect tests/browser (JupyterLab in headless Chromium; `make test-browser`)")


def pytest_ignore_collect(collection_path, config):
    """Leave the browser suite out of `make test` unless --browser is given."""
    if Path(collection_path) == BROWSER_SUITE and not config.getoption("--browser"):
        return True
    return None
