"""The course package imports in one direction: no module imports itself back, and the sandbox never imports grading.

The imports are read from the source (``ast``), every one of them: at the top of a module, inside
a function (a lazy import closes a circle as surely as one at the top) and under ``TYPE_CHECKING``.
"""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from conftest import REPO

PACKAGE = "ctx_course"


def _modules() -> dict[str, Path]:
    """Return every module of the package by dotted name (a package by the name of its ``__init__``)."""
    found = {}
    for path in sorted((REPO / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Return the modules of the package that the module ``name`` (at ``path``) imports."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here[: len(here) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:  # `from package import module` imports that module
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {t for t in targets if t in modules and t != name}


def import_graph() -> dict[str, set[str]]:
    """Return, for each module of the package, the modules of the package it imports."""
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """Return one import circle of ``graph`` as a path that starts and ends at one module, or [] if none.

    >>> find_cycle({"a": {"b"}, "b": {"a"}, "c": set()})
    ['a', 'b', 'a']
    >>> find_cycle({"a": {"b"}, "b": set()})
    []
    """
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str]:
        if name in path:
            return path[path.index(name):] + [name]
        if name in done:
            return []
        for target in sorted(graph.get(name, ())):
            cycle = visit(target, path + [name])
            if cycle:
                return cycle
        done.add(name)
        return []

    for name in sorted(graph):
        cycle = visit(name, [])
        if cycle:
            return cycle
    return []


def test_the_import_walk_sees_lazy_imports_and_cycles_through_them():
    """The walk finds an import made inside a function, and find_cycle finds a circle closed by one."""
    graph = import_graph()
    assert "ctx_course.leaderboard" in graph["ctx_course.cli"]  # imported inside _leaderboard()
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_course_package_has_no_import_cycle():
    """No module of ctx_course imports, directly or through others, a module that imports it."""
    cycle = find_cycle(import_graph())
    assert cycle == [], "import circle: " + " -> ".join(cycle)


def test_nothing_in_the_sandbox_imports_grading():
    """No module under ctx_course/sandbox/ imports a module of ctx_course.grading (the sandbox is the smaller side)."""
    graph = import_graph()
    sandbox = [name for name in graph if name.startswith(f"{PACKAGE}.sandbox.")]
    assert sandbox, "ctx_course/sandbox/ holds no module"
    wrong = {name: sorted(t for t in graph[name] if t.startswith(f"{PACKAGE}.grading"))
             for name in sandbox}
    assert {name: targets for name, targets in wrong.items() if targets} == {}


def test_the_records_cells_and_sandbox_policy_import_nothing_of_the_package():
    """The modules everything else builds on (records, cells, config, stopping, the sandbox policy and the
    in-kernel guard) import no module of ctx_course, so any module can import them without a circle."""
    graph = import_graph()
    leaves = ["ctx_course.grading.records", "ctx_course.cells", "ctx_course.config", "ctx_course.grading.stopping",
              "ctx_course.sandbox.policy", "ctx_course.sandbox.kernel_guard"]
    assert {name: sorted(graph[name]) for name in leaves} == {name: [] for name in leaves}


def test_the_wheel_lists_every_package_of_ctx_course():
    """pyproject.toml lists every folder of ctx_course that holds an __init__.py (the wheel would lack it)."""
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {".".join(path.parent.relative_to(REPO).parts) for path in (REPO / PACKAGE).rglob("__init__.py")}
    assert packages - listed == set()
