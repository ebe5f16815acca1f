"""Shared paths and helpers of the test suite."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
LESSONS = REPO / "lessons"


def notebooks(folder: Path) -> list[Path]:
    """Return the notebooks of a course folder (solutions/ or lessons/), in reading order."""
    return sorted(p for p in folder.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)

