"""The committed student release (lessons/) is exactly what nbgrader makes of solutions/."""
from __future__ import annotations

import json
import re

import pytest

from ctx_course.release import generate_release

from conftest import LESSONS, REPO, SOLUTIONS, notebooks

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


def _cells_text(path) -> str:
    return "\n".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])


def _secret_lines(begin: str, end: str) -> dict[str, set[str]]:
    """Per released notebook, the lines that only the marked blocks of its source hold.

    A line long enough to be telling counts; a line that the source also shows outside the
    blocks (a worked example the learner is meant to read) does not.
    """
    secrets = {}
    for path in notebooks(SOLUTIONS):
        text = _cells_text(path)
        pattern = rf"{begin}\n(.*?){end}"
        public = re.sub(pattern, "", text, flags=re.S)
        hidden = {
            line.strip()
            for block in re.findall(pattern, text, flags=re.S)
            for line in block.splitlines()
            if len(line.strip()) >= 12
        }
        secrets[str(path.relative_to(SOLUTIONS))] = {line for line in hidden if line not in public}
    return secrets


def _assert_no_leak(begin: str, end: str, marker: str) -> None:
    secrets = _secret_lines(begin, end)
    assert any(secrets.values()), "the source notebooks hold no such block: the scan would prove nothing"
    for path in notebooks(LESSONS):
        text = _cells_text(path)
        assert marker not in text, path
        leaked = [line for line in secrets.get(str(path.relative_to(LESSONS)), ()) if line in text]
        assert leaked == [], f"{path.relative_to(REPO)} leaks: {leaked[:3]}"


def test_release_has_no_solutions():
    """No solution marker and no line found only in a model solution appears in a released notebook."""
    _assert_no_leak(r"### BEGIN SOLUTION", r"\s*### END SOLUTION", "SOLUTION")


def test_release_has_no_hidden_tests():
    """No hidden-test marker and no line found only in hidden tests appears in a released notebook."""
    _assert_no_leak(r"### BEGIN HIDDEN TESTS", r"\s*### END HIDDEN TESTS", "HIDDEN TESTS")
