"""Shared paths and helpers of the test suite."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
LESSONS = REPO / "lessons"


def notebooks(folder: Path) -> list[Path]:
    """Return the notebooks of a course folder (solutions/ or lessons/), in reading order."""
    return sorted(p for p in folder.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


@pytest.fixture(autouse=True, scope="session")
def _venv_on_path():
    """nbgrader shells out to alembic: make the running interpreter's bin/ reachable."""
    bin_dir = str(Path(os.sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    yield
