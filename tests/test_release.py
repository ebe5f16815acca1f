"""The committed student release (lessons/) is exactly what nbgrader makes of solutions/."""
from __future__ import annotations

import json
import re

import pytest

from conftest import LESSONS, REPO, SOLUTIONS, notebooks
from ctx_course.release import generate_release

# Notebook-level metadata that depends on the machine that generated the release.
VOLATILE_METADATA = ("language_info",)


def normalised(path) -> dict:
    nb = json.loads(path.read_text(encoding="utf-8"))
    for key in VOLATILE_METADATA:
        nb["metadata"].pop(key, None)
    return nb


@pytest.fixture(scope="module")
def fresh_release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("release")
    generate_release(REPO, release=tmp / "lessons", work=tmp / "work")
    return tmp / "lessons"


def test_every_source_notebook_is_released():
    """lessons/ holds one notebook for each notebook of solutions/, under the same names."""
    source = [p.relative_to(SOLUTIONS) for p in notebooks(SOLUTIONS)]
    release = [p.relative_to(LESSONS) for p in notebooks(LESSONS)]
    assert source, "solutions/ holds no notebook"
    assert release == source


def test_lessons_match_a_fresh_release(fresh_release):
    """Regenerating the release from solutions/ reproduces the committed lessons/ (run `make lessons`)."""
    stale = [
        str(path.relative_to(LESSONS))
        for path in notebooks(LESSONS)
        if normalised(path) != normalised(fresh_release / path.relative_to(LESSONS))
    ]
    assert stale == [], f"lessons/ is out of date for {stale}: run `make lessons`"


def _marked_blocks(text: str, begin: str, end: str) -> list[str]:
    return re.findall(rf"{begin}\n(.*?){end}", text, flags=re.S)


def _source_blocks(begin: str, end: str) -> list[str]:
    blocks = []
    for path in notebooks(SOLUTIONS):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            blocks += _marked_blocks("".join(cell["source"]), begin, end)
    return blocks


def _meaningful_lines(blocks: list[str]) -> set[str]:
    """Lines long enough that finding one in the release would mean a leak."""
    return {line.strip() for block in blocks for line in block.splitlines() if len(line.strip()) >= 12}


def test_release_has_no_solutions():
    """No solution marker and no line of a model solution appears in any released notebook."""
    secret = _meaningful_lines(_source_blocks(r"### BEGIN SOLUTION", r"\s*### END SOLUTION"))
    assert secret, "the source notebooks hold no solution block: the scan would prove nothing"
    for path in notebooks(LESSONS):
        text = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])
        assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text, path
        leaked = [line for line in secret if line in text]
        assert leaked == [], f"{path.relative_to(REPO)} leaks solution lines: {leaked[:3]}"


def test_release_has_no_hidden_tests():
    """No hidden-test marker and no hidden-test line appears in any released notebook."""
    secret = _meaningful_lines(_source_blocks(r"### BEGIN HIDDEN TESTS", r"\s*### END HIDDEN TESTS"))
    assert secret, "the source notebooks hold no hidden tests: the scan would prove nothing"
    for path in notebooks(LESSONS):
        text = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])
        assert "HIDDEN TESTS" not in text, path
        leaked = [line for line in secret if line in text]
        assert leaked == [], f"{path.relative_to(REPO)} leaks hidden tests: {leaked[:3]}"
