"""The documents name only files, folders and `make` targets that exist in the repository."""

import re
from pathlib import Path

import pytest

from conftest import REPO

DOCUMENTS = sorted({REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "benchmarks" / "README.md",
                    *REPO.glob("docs/*.md")})
# Folders a run creates (git-ignored): a path under them names what a command will write.
CREATED = ("grading/", "workspace/", ".venv/", ".hub/")
# Fenced blocks (but not ```text ones: sample output) and inline code spans.
CODE = re.compile(r"```(?!text)[^\n]*\n(.*?)```|```text\n.*?```|`([^`\n]+)`", re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
MAKE = re.compile(r"\bmake ([a-z][\w-]*)")


def _code(text: str) -> list[str]:
    """Return the document's code: fenced blocks and inline spans."""
    return [block or span for block, span in CODE.findall(text) if block or span]


def _paths(text: str) -> set[str]:
    """Return the repository paths the document names: words with a / in its code, and link targets."""
    words = {word.strip("\"'(),;:") for code in _code(text) for word in code.split()}
    words |= {target for target in LINK.findall(text) if "://" not in target}
    return {word for word in words
            if "/" in word and "://" not in word and not word.startswith(("/", "-", "$", "~"))
            and not word.split("/")[0].isupper()       # DIR/<student>/…: a placeholder
            and not word.startswith(CREATED) and "=" not in word and "\\" not in word}


def _exists(path: str) -> bool:
    """Return True if ``path`` exists at the root (or in the release, as the notebook table names
    them); ``<placeholder>`` and ``*`` parts match any name."""
    path = path.split("#")[0].rstrip(".")
    pattern = re.sub(r"<[^>/]*>", "*", path).rstrip("/")
    return any(any(base.glob(pattern)) if "*" in pattern else (base / pattern).exists()
               for base in (REPO, REPO / "lessons"))


def _make_targets() -> set[str]:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):", makefile, re.MULTILINE))


def test_the_documents_are_found():
    """README, CONTRIBUTING, the benchmarks' README and docs/models.md are all checked, code spans included."""
    names = {p.relative_to(REPO).as_posix() for p in DOCUMENTS}
    assert {"README.md", "CONTRIBUTING.md", "benchmarks/README.md", "docs/models.md"} <= names
    assert "tests/sim_oracle.py" in _paths((REPO / "docs" / "models.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_path_a_document_names_exists(document: Path):
    """Each file or folder a document names in its code or links is in the repository."""
    text = document.read_text(encoding="utf-8")
    missing = sorted(path for path in _paths(text) if not _exists(path))
    assert missing == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_make_target_a_document_names_exists(document: Path):
    """Each `make <target>` a document's code gives is a target of the Makefile."""
    text = document.read_text(encoding="utf-8")
    named = {target for code in _code(text) for target in MAKE.findall(code)}
    assert sorted(named - _make_targets()) == []


def test_the_checker_catches_a_missing_path_and_target():
    """A path and a make target that do not exist are reported; a placeholder path is not."""
    text = "Run `make nowhere`, then read `ctx_reference/nowhere.py` and `solutions/<assignment>/`."
    assert sorted(p for p in _paths(text) if not _exists(p)) == ["ctx_reference/nowhere.py"]
    assert set(MAKE.findall(_code(text)[0])) - _make_targets() == {"nowhere"}
