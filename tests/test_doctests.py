"""Every example (``>>>``) in a module's docstrings gives the output written beside it."""

import doctest
import importlib

import pytest

from conftest import REPO


def _modules_with_examples() -> list[str]:
    """Return the dotted names of the package modules (and test helpers) whose source has ``>>>``.

    The files are read, not imported: some of ctx_course's modules are costly to import, and one
    runs only inside a student's kernel.
    """
    names = []
    for package in ("ctx_reference", "ctx_course"):
        for path in sorted((REPO / package).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(REPO).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(names) + ["sim_oracle"]


MODULES = _modules_with_examples()


def test_the_examples_are_found():
    """The finder sees the examples of the reference package and of the tests' oracle."""
    assert {"ctx_reference.sim", "ctx_reference.policy", "ctx_reference.ledger", "sim_oracle"} <= set(MODULES)
    assert (REPO / "tests" / "sim_oracle.py").is_file()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    """Each of the module's docstring examples prints what its docstring says it prints."""
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name) if t.examples]
    assert tests, f"{name} has no docstring examples"
    report: list[str] = []
    for test in tests:
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
