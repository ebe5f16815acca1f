"""The committed student releases (lessons/, lessons-en/) are exactly what nbgrader makes of solutions/."""
from __future__ import annotations

import json
import re

import pytest

from ctx_course.editions.check import english_notebook
from ctx_course.release import generate_release

from conftest import LESSONS, REPO, SOLUTIONS, notebooks


def normalised(path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


EDITIONS = {"zh_CN": LESSONS, "en": REPO / "lessons-en"}


@pytest.fixture(scope="module", params=sorted(EDITIONS))
def fresh_release(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("release")
    generate_release(REPO, release=tmp / "lessons", work=tmp / "work", language=request.param)
    return EDITIONS[request.param], tmp / "lessons"


@pytest.mark.parametrize("lessons", EDITIONS.values(), ids=EDITIONS.keys())
def test_every_source_notebook_is_released(lessons):
    """Each release holds one notebook for each notebook of solutions/, under the same names."""
    source = [p.relative_to(SOLUTIONS) for p in notebooks(SOLUTIONS)]
    release = [p.relative_to(lessons) for p in notebooks(lessons)]
    assert source, "solutions/ holds no notebook"
    assert release == source


def test_lessons_match_a_fresh_release(fresh_release):
    """Regenerating a release from solutions/ (and i18n/) reproduces the committed one (run `make lessons`)."""
    lessons, fresh = fresh_release
    stale = [
        str(path.relative_to(lessons))
        for path in notebooks(lessons)
        if normalised(path) != normalised(fresh / path.relative_to(lessons))
    ]
    assert stale == [], f"{lessons.name}/ is out of date for {stale}: run `make lessons`"


GLOSSARIES = {"zh_CN": "glossary.md", "en": "glossary.en.md"}


@pytest.mark.parametrize("language", sorted(EDITIONS))
def test_every_release_ships_its_own_glossary_as_committed(language):
    """lessons/ holds glossary.md and lessons-en/ glossary.en.md at their top, byte for byte the course's, and no
    other glossary."""
    lessons, name = EDITIONS[language], GLOSSARIES[language]
    assert sorted(p.name for p in lessons.glob("*.md")) == [name]
    assert (lessons / name).read_bytes() == (REPO / name).read_bytes(), f"{lessons.name}/{name}: run `make lessons`"


def test_a_fresh_release_ships_its_own_glossary(fresh_release):
    """Releasing copies the course's glossary of the edition to the top of the release, and only that one."""
    lessons, fresh = fresh_release
    name = GLOSSARIES["en" if lessons.name == "lessons-en" else "zh_CN"]
    assert sorted(p.name for p in fresh.glob("*.md")) == [name]
    assert (fresh / name).read_bytes() == (REPO / name).read_bytes()


@pytest.mark.parametrize("lessons", EDITIONS.values(), ids=EDITIONS.keys())
def test_no_released_notebook_stores_a_python_version(lessons):
    """A released notebook's language_info names the language but no Python version: the version is the
    learner's kernel's, written when the notebook is copied into a workspace."""
    for path in notebooks(lessons):
        info = json.loads(path.read_text(encoding="utf-8"))["metadata"]["language_info"]
        assert info["name"] == "python" and "version" not in info, path


def _cells_text(path, language: str = "zh_CN") -> str:
    if language == "zh_CN":
        notebook = json.loads(path.read_text(encoding="utf-8"))
    else:
        notebook = english_notebook(REPO, path.parent.name)
    return "\n".join("".join(c["source"]) for c in notebook["cells"])


def _secret_lines(begin: str, end: str, language: str) -> dict[str, set[str]]:
    """Per released notebook, the lines that only the marked blocks of its source hold.

    A line long enough to be telling counts; a line that the source also shows outside the
    blocks (a worked example the learner is meant to read) does not.
    """
    secrets = {}
    for path in notebooks(SOLUTIONS):
        text = _cells_text(path, language)
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


def _assert_no_leak(begin: str, end: str, marker: str, language: str) -> None:
    secrets = _secret_lines(begin, end, language)
    assert any(secrets.values()), "the source notebooks hold no such block: the scan would prove nothing"
    lessons = EDITIONS[language]
    for path in notebooks(lessons):
        text = _cells_text(path)
        assert marker not in text, path
        leaked = [line for line in secrets.get(str(path.relative_to(lessons)), ()) if line in text]
        assert leaked == [], f"{path.relative_to(REPO)} leaks: {leaked[:3]}"


@pytest.mark.parametrize("language", sorted(EDITIONS))
def test_release_has_no_solutions(language):
    """No solution marker and no line found only in a model solution appears in a released notebook."""
    _assert_no_leak(r"### BEGIN SOLUTION", r"\s*### END SOLUTION", "SOLUTION", language)


@pytest.mark.parametrize("language", sorted(EDITIONS))
def test_release_has_no_hidden_tests(language):
    """No hidden-test marker and no line found only in hidden tests appears in a released notebook."""
    _assert_no_leak(r"### BEGIN HIDDEN TESTS", r"\s*### END HIDDEN TESTS", "HIDDEN TESTS", language)
