"""The learner's workspace is filled from the release and never overwrites the learner's work."""
from __future__ import annotations

import pytest

from ctx_course.workspace import prepare_workspace

from conftest import LESSONS, REPO, notebooks


def test_fresh_workspace_gets_every_lesson(tmp_path):
    """An empty workspace receives one copy of each released notebook, byte for byte."""
    copied = prepare_workspace(REPO, tmp_path)
    expected = [tmp_path / p.relative_to(LESSONS) for p in notebooks(LESSONS)]
    assert sorted(copied) == sorted(expected)
    assert len(copied) == len(list((REPO / "solutions").glob("*/*.ipynb")))
    for path in notebooks(LESSONS):
        assert (tmp_path / path.relative_to(LESSONS)).read_bytes() == path.read_bytes()


def test_learner_work_is_never_overwritten(tmp_path):
    """A notebook the learner already has stays as it is; only missing ones are copied."""
    prepare_workspace(REPO, tmp_path)
    mine = tmp_path / "02-remaining" / "remaining.ipynb"
    mine.write_text("my answers", encoding="utf-8")
    (tmp_path / "03-recall" / "recall.ipynb").unlink()
    copied = prepare_workspace(REPO, tmp_path)
    assert copied == [tmp_path / "03-recall" / "recall.ipynb"]
    assert mine.read_text(encoding="utf-8") == "my answers"


def test_folder_without_lessons_is_rejected(tmp_path):
    """A root with no lessons/ folder raises ValueError naming `root`."""
    with pytest.raises(ValueError, match="root must hold a lessons/ folder"):
        prepare_workspace(tmp_path, tmp_path / "ws")
