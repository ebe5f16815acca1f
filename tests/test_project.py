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
