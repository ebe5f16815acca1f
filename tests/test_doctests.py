"""Every example (``>>>``) in a module's docstrings gives the output written beside it."""

import doctest
import importlib
import pkgutil

import pytest

import ctx_course
import ctx_reference

from conftest import REPO


def _modules_with_examples() -> list[str]:
    """Return the dotted names of the package modules (and test helpers) whose source has ``>>>``.

    Modules without examples are not imported: some of ctx_course's are costly to import, and
    one runs only inside a student's kernel.
    """
    names = []
    for package in (ctx_reference, ctx_course):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            spec = info.module_finder.find_spec(info.name, None)  # type: ignore[call-arg]
            if spec and spec.origin and spec.origin.endswith(".py"):
                with open(spec.origin, encoding="utf-8") as source:
                    if ">>>" in source.read():
                        names.append(info.name)
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
