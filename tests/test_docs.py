"""The documents name only files, folders, `make` targets and commands that exist in the repository."""

import argparse
import re
import unicodedata
from pathlib import Path

import pytest

from ctx_course.cli import build_parser

from conftest import REPO

DOCUMENTS = sorted({REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "benchmarks" / "README.md",
                    *REPO.glob("docs/*.md")})
# Folders a run creates (git-ignored): a path under them names what a command will write.
CREATED = ("grading/", "workspace/", "workspace-en/", ".venv/", ".hub/")
# Fenced blocks (but not ```text ones: sample output) and inline code spans.
CODE = re.compile(r"```(?!text)[^\n]*\n(.*?)```|```text\n.*?```|`([^`\n]+)`", re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
MAKE = re.compile(r"\bmake ([a-z][\w-]*)")
COURSE_COMMAND = re.compile(r"python -m ctx_course ([a-z][\w-]*)([^\n|#;&]*)")
OPTION = re.compile(r"(?<![\w-])(--[a-z][\w-]*)")
PASSED_ON = {"lab"}  # verbs whose other options go on to JupyterLab (ctx_course/cli.py)
EXTRAS = re.compile(r'pip install (?:--quiet )?-e "\.\[([\w,]+)\]"')


def _code(text: str) -> list[str]:
    """Return the document's code: fenced blocks and inline spans."""
    return [block or span for block, span in CODE.findall(text) if block or span]


def _is_path(word: str) -> bool:
    return ("/" in word and "://" not in word and not word.startswith(("/", "-", "$", "~"))
            and not word.split("/")[0].isupper()       # DIR/<student>/…: a placeholder
            and not word.startswith(CREATED) and "=" not in word and "\\" not in word
            and not re.fullmatch(r"</?[\w-]+>", word))  # an XML tag of a prompt


def _paths(text: str) -> set[str]:
    """Return the repository paths the document's code names: words with a / (from the repository root)."""
    words = {word.strip("\"'(),;:") for code in _code(text) for word in code.split()}
    return {word for word in words if _is_path(word)}


def _links(text: str) -> set[str]:
    """Return the document's links to files of the repository (relative to the document's folder)."""
    return {target for target in LINK.findall(text) if "://" not in target and not target.startswith("mailto:")}


def _exists(path: str, base: Path = REPO) -> bool:
    """Return True if ``path`` exists under ``base`` (or, from the root, in the release, as the notebook
    table names them); ``<placeholder>`` and ``*`` parts match any name."""
    path = path.split("#")[0].rstrip(".")
    pattern = re.sub(r"<[^>/]*>", "*", path).rstrip("/")
    bases = (REPO, REPO / "lessons") if base == REPO else (base,)
    return any(any(root.glob(pattern)) if "*" in pattern else (root / pattern).exists() for root in bases)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    kept = "".join(ch for ch in heading.strip().lower()
                   if ch in " -_" or not unicodedata.category(ch).startswith(("P", "S")))
    return kept.replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    text = document.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # a shell comment is not a heading
    return {_slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def _make_targets() -> set[str]:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][\w-]*):", makefile, re.MULTILINE))


def _verbs() -> dict[str, set[str]]:
    """Return each verb of `python -m ctx_course` with the options it accepts."""
    parser = build_parser()
    actions = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {verb: set(sub._option_string_actions) for verb, sub in actions.choices.items()}


def test_the_documents_are_found():
    """README, CONTRIBUTING, the benchmarks' README and every page of docs/ are checked, code spans included."""
    names = {p.relative_to(REPO).as_posix() for p in DOCUMENTS}
    assert {"README.md", "CONTRIBUTING.md", "benchmarks/README.md", "docs/models.md", "docs/grading.md",
            "docs/jupyterhub.md"} <= names
    assert "tests/sim_oracle.py" in _paths((REPO / "docs" / "models.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_path_a_document_names_exists(document: Path):
    """Each file or folder a document names in its code is in the repository."""
    text = document.read_text(encoding="utf-8")
    missing = sorted(path for path in _paths(text) if not _exists(path))
    assert missing == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_link_of_a_document_leads_somewhere(document: Path):
    """Each link to a file is relative to the document and reaches a file; each #anchor, a heading of it."""
    text = document.read_text(encoding="utf-8")
    broken = []
    for link in sorted(_links(text)):
        target, _, anchor = link.partition("#")
        path = (document.parent / target).resolve() if target else document
        if not path.exists() or REPO.resolve() not in [path, *path.parents]:
            broken.append(link)
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(link)
    assert broken == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_make_target_a_document_names_exists(document: Path):
    """Each `make <target>` a document's code gives is a target of the Makefile."""
    text = document.read_text(encoding="utf-8")
    named = {target for code in _code(text) for target in MAKE.findall(code)}
    assert sorted(named - _make_targets()) == []


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_course_command_a_document_gives_is_accepted(document: Path):
    """Each `python -m ctx_course VERB --option` a document's code gives uses a verb and options of the command line."""
    text = document.read_text(encoding="utf-8")
    verbs = _verbs()
    wrong = []
    for code in _code(text):
        for verb, rest in COURSE_COMMAND.findall(code):
            if verb not in verbs:
                wrong.append(verb)
            elif verb not in PASSED_ON:
                wrong += [f"{verb} {option}" for option in OPTION.findall(rest) if option not in verbs[verb]]
    assert wrong == []


def test_the_install_line_names_every_extra_the_makefile_installs():
    """The README's `pip install -e ".[...]"` names the extras of the Makefile's .venv recipe, no more, no fewer."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^\$\(STAMP\):.*\n((?:\t.*\n)+)", makefile, flags=re.M).group(1)
    installed = {extra for match in EXTRAS.findall(recipe) for extra in match.split(",")}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    named = [set(match.split(",")) for match in EXTRAS.findall(readme)]
    assert installed and named == [installed]


def test_both_quick_starts_are_linked_from_the_first_screen():
    """The README's first 16 lines (one screen) link to its Chinese and its English quick start, each a section."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert "](#快速开始)" in "\n".join(lines[:16]) and "](#quick-start)" in "\n".join(lines[:16])
    assert "## 快速开始" in lines and "## Quick start" in lines


def test_the_checker_catches_a_missing_path_target_link_and_option():
    """A path, a make target, a link, an anchor, a verb and an option that do not exist are reported; a
    placeholder path is not."""
    text = ("Run `make nowhere`, then read `ctx_reference/nowhere.py` and `solutions/<assignment>/`; "
            "`python -m ctx_course grade --quickly` and `python -m ctx_course fly`.")
    assert sorted(p for p in _paths(text) if not _exists(p)) == ["ctx_reference/nowhere.py"]
    assert set(MAKE.findall(_code(text)[0])) - _make_targets() == {"nowhere"}
    verbs = _verbs()
    found = [COURSE_COMMAND.findall(code) for code in _code(text)]
    assert [(v, OPTION.findall(r)) for pair in found for v, r in pair] == [("grade", ["--quickly"]), ("fly", [])]
    assert "--quickly" not in verbs["grade"] and "fly" not in verbs and "--force" in verbs["grade"]
    assert not _paths("`</rules>` and `<rules>`")
    assert not _exists("nowhere.md", REPO / "docs") and _exists("grading.md", REPO / "docs")
    assert "hand-grades-stay-put" in _anchors(REPO / "docs" / "term.md")
    assert _slug("快速开始（中文）") == "快速开始中文" and _slug("The instructor's term") == "the-instructors-term"
