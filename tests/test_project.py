"""The project's files agree with each other."""
from __future__ import annotations

import re
import tomllib

import yaml

from conftest import REPO


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pip_lines(env: dict) -> list[list[str]]:
    return [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]


def test_environment_lists_the_same_dependencies_as_pyproject():
    """environment.yml asks (from conda-forge, or from PyPI in its pip list) for exactly the dependencies
    of pyproject.toml."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for group in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in group}
    env = yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)} - {"python", "pip"}
    pip = {_name(line) for lines in _pip_lines(env) for line in lines if not line.startswith("-")}
    assert conda | pip == wanted and not conda & pip


def test_environment_installs_the_package_in_editable_mode():
    """environment.yml installs this repository with `pip install --editable .`, after its other pip packages."""
    env = yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))
    pip_lines = _pip_lines(env)
    assert len(pip_lines) == 1 and pip_lines[0][-1] == "--editable ."


def test_ci_runs_the_readme_test_command():
    """.ci/run calls `make test`, the test command the README gives."""
    assert "make test" in (REPO / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^make test$", (REPO / ".ci" / "run").read_text(encoding="utf-8"), flags=re.M)


def _folders_with_files(package: str) -> set[str]:
    """Every folder under a top-level package that holds a file setuptools would ship, as a dotted name."""
    found = set()
    for path in (REPO / package).rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and not path.name.startswith("."):
            found.add(".".join(path.parent.relative_to(REPO).parts))
    return found


def test_the_package_list_names_every_folder_that_holds_files():
    """[tool.setuptools] packages lists exactly the folders of ctx_reference and ctx_course that hold files,
    data folders included: a folder left out is not installed, and setuptools warns "Package would be
    ignored" for it on every install."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    assert len(listed) == len(setuptools["packages"])
    assert listed == _folders_with_files("ctx_reference") | _folders_with_files("ctx_course")


def test_every_package_data_pattern_matches_a_file():
    """Each [tool.setuptools.package-data] pattern names a listed package and matches at least one file there."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    for package, patterns in setuptools["package-data"].items():
        assert package in setuptools["packages"], package
        folder = REPO.joinpath(*package.split("."))
        for pattern in patterns:
            assert list(folder.glob(pattern)), f"{package}: {pattern}"
