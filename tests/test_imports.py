"""The course package imports in one direction, each room imports only the rooms it may, and every module is used.

The imports are read from the source (``ast``), every one of them: at the top of a module, inside
a function (a lazy import closes a circle as surely as one at the top) and under ``TYPE_CHECKING``.
"""
from __future__ import annotations

import ast
import re
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


def imported_names(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Return every module name the module ``name`` (at ``path``) imports, relative imports made absolute.

    Lazy imports count; ``from package import module`` names that module where ``modules`` holds it.
    """
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
    return targets


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Return the modules of the package that the module ``name`` (at ``path``) imports."""
    return {t for t in imported_names(name, path, modules) if t in modules and t != name}


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
    assert "ctx_course.term.leaderboard" in graph["ctx_course.cli"]  # imported inside _leaderboard()
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_course_package_has_no_import_cycle():
    """No module of ctx_course imports, directly or through others, a module that imports it."""
    cycle = find_cycle(import_graph())
    assert cycle == [], "import circle: " + " -> ".join(cycle)


# The rooms of ctx_course: each folder is one place and one time of running (CONTRIBUTING.md,
# "The packages, by role"). A module outside them is one of the modules the rooms share.
ROOMS = ("grading.steps", "grading", "sandbox", "term", "learner", "editions", "mutation")
SHARED = {"cli", "__main__", "release", "config", "cells", "exchange", "hubcheck", "scratch_folders", "deferred_iri",
          "api_check"}
# What runs inside the sandbox, in the learner's kernel or the answer process, sent there as text.
IN_THE_SANDBOX = {f"{PACKAGE}.sandbox.kernel_guard", f"{PACKAGE}.sandbox.answerer"}


def room(name: str) -> str:
    """Return the room of the module ``name``: the folder of ctx_course it lies in, or "" for the package's top.

    >>> room("ctx_course.grading.steps.behaviour"), room("ctx_course.grading.grader"), room("ctx_course.cells")
    ('grading.steps', 'grading', '')
    """
    inner = name.removeprefix(f"{PACKAGE}.")
    return next((r for r in ROOMS if inner == r or inner.startswith(f"{r}.")), "")


def crossings(graph: dict[str, set[str]], source: str, targets: set[str]) -> dict[str, list[str]]:
    """Return, for each module of the room ``source``, the modules of a room in ``targets`` it imports (none left out).

    >>> crossings({"ctx_course.term.a": {"ctx_course.learner.b", "ctx_course.cells"}, "ctx_course.learner.b": set()},
    ...           "term", {"learner"})
    {'ctx_course.term.a': ['ctx_course.learner.b']}
    """
    found = {name: sorted(t for t in graph[name] if room(t) in targets) for name in graph if room(name) == source}
    return {name: wrong for name, wrong in found.items() if wrong}


def _room_modules(graph: dict[str, set[str]], name: str) -> list[str]:
    modules = [module for module in graph if room(module) == name and module != f"{PACKAGE}.{name}"]
    assert modules, f"ctx_course/{name.replace('.', '/')}/ holds no module"
    return modules


def test_every_module_of_the_package_lies_in_a_room_or_is_shared():
    """A module at the top of ctx_course is one the rooms share (the command line, the release, the course's
    configuration, what a cell is, the exchange, the hub check, scratch folders, start-up): a new module
    has to be put in the room where and when it runs, or be named here."""
    top = {name.removeprefix(f"{PACKAGE}.") for name in import_graph() if room(name) == "" and name != PACKAGE}
    assert top == SHARED


def test_the_room_check_sees_a_forbidden_import():
    """crossings reports a module of one room importing another room, also a steps module importing the run,
    and not an import of the shared modules or of a room it was not asked about."""
    lab, workspace, step, engine = ("ctx_course.learner.lab", "ctx_course.learner.workspace",
                                    "ctx_course.grading.steps.x", "ctx_course.grading.engine")
    graph = {lab: {"ctx_course.grading.grader", "ctx_course.cells", workspace}, workspace: set(),
             step: {engine}, engine: set()}
    assert crossings(graph, "learner", {"grading"}) == {lab: ["ctx_course.grading.grader"]}
    assert crossings(graph, "grading.steps", {"grading"}) == {step: [engine]}
    assert crossings(graph, "learner", {"term", "sandbox"}) == {}


def test_nothing_in_the_sandbox_imports_grading_the_term_or_the_learners_side():
    """No module under ctx_course/sandbox/ imports a module of grading/, grading/steps/, term/ or learner/: the
    boundary around student code is the smaller side, and what it knows of the run comes in as arguments."""
    graph = import_graph()
    _room_modules(graph, "sandbox")
    assert crossings(graph, "sandbox", {"grading", "grading.steps", "term", "learner"}) == {}


def test_the_steps_do_not_import_the_run_that_drives_them():
    """No module of grading/steps/ imports the run (grader, engine, worker, autograde): a step gets what it needs
    through nbgrader's configuration, so nbgrader's own commands load it without a grading run."""
    graph = import_graph()
    _room_modules(graph, "grading.steps")
    run = {f"{PACKAGE}.grading.{name}" for name in ("grader", "engine", "worker", "autograde")}
    wrong = {name: sorted(graph[name] & run) for name in graph if room(name) == "grading.steps"}
    assert {name: targets for name, targets in wrong.items() if targets} == {}
    assert crossings(graph, "grading.steps", {"term", "learner"}) == {}


def test_the_coordinator_reaches_the_workers_only_through_the_engine():
    """grader.py does not import worker.py: what runs where submissions are graded (grading, feedback pages) is
    reached through engine.py, the one seam between the coordinator and its graders."""
    graph = import_graph()
    coordinator, worker = f"{PACKAGE}.grading.grader", f"{PACKAGE}.grading.worker"
    assert worker not in graph[coordinator]
    assert f"{PACKAGE}.grading.engine" in graph[coordinator] and worker in graph[f"{PACKAGE}.grading.engine"]


def _names(path: Path) -> set[str]:
    """Return every name and attribute a module's code uses (``a.b(c)``: a, b, c)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            | {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names})


def test_the_leaderboard_borrows_a_kernel_pool_and_builds_no_submission_grader():
    """The leaderboard's task takes a worker's kernel pool (``GradingWorker.kernel_pool``) and never a
    SubmissionGrader (an NbGraderAPI, reference builds and a scratch gradebook it has no use for); the coordinator
    tests no engine type."""
    used = _names(_modules()[f"{PACKAGE}.term.leaderboard"])
    assert "kernel_pool" in used
    assert used & {"SubmissionGrader", "submission_grader"} == set()
    assert _names(_modules()[f"{PACKAGE}.grading.grader"]) & {"isinstance"} == set()


def test_the_grading_run_imports_nothing_of_the_term_or_the_learners_side():
    """No module of grading/ or grading/steps/ imports term/ or learner/: what runs after a run, and the
    learner's lab, may change without touching a grade."""
    graph = import_graph()
    _room_modules(graph, "grading")
    assert crossings(graph, "grading", {"term", "learner"}) == {}


def test_the_term_imports_nothing_of_the_learners_side():
    """No module of term/ imports learner/: the term's tools read a graded class, never a learner's workspace."""
    graph = import_graph()
    _room_modules(graph, "term")
    assert crossings(graph, "term", {"learner"}) == {}


def test_the_learners_side_imports_nothing_of_grading_the_sandbox_or_the_term():
    """No module of learner/ imports grading/, grading/steps/, sandbox/ or term/: the learner's lab and workspace
    run on the learner's machine, where none of the grading run is."""
    graph = import_graph()
    _room_modules(graph, "learner")
    assert crossings(graph, "learner", {"grading", "grading.steps", "sandbox", "term"}) == {}


def test_the_editions_import_only_the_shared_modules():
    """No module of editions/ imports another room (grading, steps, sandbox, term, learner): translating and
    checking an edition needs only what a cell is and the course's configuration, and every room may use
    which edition a submission is in."""
    graph = import_graph()
    _room_modules(graph, "editions")
    assert crossings(graph, "editions", {"grading", "grading.steps", "sandbox", "term", "learner"}) == {}


def test_the_shared_modules_import_no_room_but_the_command_line_and_the_release():
    """Of the modules at the top of ctx_course only cli (which wires the verbs), __main__ and release (which
    builds the editions' releases) import a room; the others are leaves every room may import."""
    graph = import_graph()
    wiring = {f"{PACKAGE}.{name}" for name in ("cli", "__main__", "release")}
    shared = [name for name in graph if room(name) == "" and name not in wiring]
    wrong = {name: sorted(t for t in graph[name] if room(t)) for name in shared}
    assert {name: targets for name, targets in wrong.items() if targets} == {}


def test_the_code_that_runs_in_the_learners_kernel_imports_nothing_of_ctx_course():
    """ctx_reference (imported in the learner's kernel) and the parts of the sandbox sent into it as text
    (kernel_guard, answerer) import no module of ctx_course, at the top, in a function or for type checking."""
    sources = sorted((REPO / "ctx_reference").rglob("*.py"))
    assert sources, "ctx_reference holds no module"
    modules = _modules()
    sources += [modules[name] for name in sorted(IN_THE_SANDBOX)]
    wrong = {}
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            named = [n for n in names if n == PACKAGE or n.startswith(f"{PACKAGE}.")]
            if named:
                wrong.setdefault(path.relative_to(REPO).as_posix(), []).extend(named)
    assert wrong == {}


# The maintainer's drawing tools (Hypothesis, the strategies, the bank's writer) form one room of the checks:
# nothing a learner's kernel or the grader runs imports it. Only the tests, the benchmarks, the mutation
# campaign (its mutants are called as the oracles are) and the command that regenerates the bank may.
DRAWING = ("ctx_reference.checks.drawing", "hypothesis")
MAY_DRAW = ("ctx_course.mutation", "ctx_reference.checks.bank.__main__")


def drawing_imports(sources: dict[str, Path]) -> dict[str, list[str]]:
    """Return, for each module of ``sources`` outside the drawing room and ``MAY_DRAW``, what of ``DRAWING``
    it imports."""
    def within(module: str, rooms: tuple[str, ...]) -> bool:
        return any(module == room or module.startswith(f"{room}.") for room in rooms)

    wrong = {}
    for name, path in sources.items():
        if within(name, DRAWING) or within(name, MAY_DRAW):
            continue
        named = sorted(target for target in imported_names(name, path, sources) if within(target, DRAWING))
        if named:
            wrong[name] = named
    return wrong


def _package_modules(package: str) -> dict[str, Path]:
    return {".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): path
            for path in sorted((REPO / package).rglob("*.py"))}


def test_nothing_outside_the_drawing_tools_imports_them_or_hypothesis():
    """No module of ctx_reference or ctx_course imports ``ctx_reference.checks.drawing`` or Hypothesis, at the
    top, in a function or for type checking, but the drawing tools themselves, the mutation campaign and the
    bank's regeneration command: a check cell reads the bank and never draws."""
    sources = {**_package_modules("ctx_reference"), **_package_modules(PACKAGE)}
    assert "ctx_reference.checks.drawing.write_bank" in sources
    assert drawing_imports(sources) == {}


def test_the_drawing_rule_sees_a_forbidden_import(tmp_path):
    """drawing_imports reports a relative import of the drawing tools, a lazy import of Hypothesis, and
    leaves the drawing tools' own imports alone."""
    runtime = tmp_path / "generated.py"
    runtime.write_text("from .drawing import write_bank\n\ndef f():\n    import hypothesis.strategies\n")
    inside = tmp_path / "write_bank.py"
    inside.write_text("import hypothesis\n")
    sources = {"ctx_reference.checks.generated": runtime, "ctx_reference.checks.drawing.write_bank": inside}
    assert drawing_imports(sources) == {"ctx_reference.checks.generated": [
        "ctx_reference.checks.drawing.write_bank", "hypothesis.strategies"]}


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


# Where a module may be named without an import statement: nbgrader's configuration (dotted class
# names), the hub's files, and the entry points of pyproject.toml; ``python -m ctx_course`` runs these,
# and so does ``python -m`` of a subpackage that the Makefile runs (``make mutation``).
ENTRY_MODULES = {PACKAGE, f"{PACKAGE}.__main__"} | {
    f"{name}.__main__" for name in re.findall(rf"python -m ({PACKAGE}(?:\.\w+)+)",
                                              (REPO / "Makefile").read_text(encoding="utf-8"))}
DOTTED = r"\bctx_course(?:\.\w+)+"


def named_modules(text: str, modules: dict[str, Path]) -> set[str]:
    """Return the modules of the package that ``text`` names by dotted path (``a.b.Class`` names ``a.b``).

    >>> sorted(named_modules('x = "ctx_course.term.export.CanvasExport"', {"ctx_course.term.export": Path()}))
    ['ctx_course.term.export']
    """
    import re

    found = set()
    for dotted in re.findall(DOTTED, text):
        parts = dotted.split(".")
        prefixes = (".".join(parts[:n]) for n in range(len(parts), 0, -1))
        found |= {next((p for p in prefixes if p in modules), PACKAGE)}
    return found


def read_as_files(modules: dict[str, Path]) -> set[str]:
    """Return the modules whose file name a module of the same folder holds as a string (sent as source text:
    ``Path(__file__).with_name("kernel_guard.py")``)."""
    found = set()
    for path in modules.values():
        names = {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, ast.Constant) and isinstance(node.value, str)}
        found |= {name for name, other in modules.items() if other.parent == path.parent and other.name in names}
    return found


def referenced_outside() -> set[str]:
    """Return the modules named by nbgrader_config.py, the hub's files and pyproject.toml's entry points,
    and those read as files (``read_as_files``)."""
    modules = _modules()
    texts = [(REPO / "nbgrader_config.py").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted((REPO / "hub").rglob("*")) if p.is_file()]
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = [project.get("scripts", {}), project.get("gui-scripts", {}), *project.get("entry-points", {}).values()]
    texts += [target.split(":")[0] for group in groups for target in group.values()]
    return {name for text in texts for name in named_modules(text, modules)} | read_as_files(modules)


def unused_modules(graph: dict[str, set[str]], named: set[str]) -> list[str]:
    """Return the modules of ``graph`` that no other module imports and ``named`` does not hold, sorted.

    A package counts as imported with any of its modules (Python runs its ``__init__`` first).

    >>> unused_modules({"p": set(), "p.a": {"p.b"}, "p.b": set(), "p.c": set()}, {"p.c"})
    ['p.a']
    """
    used = {target for targets in graph.values() for target in targets} | named
    used |= {".".join(name.split(".")[:n]) for name in used for n in range(1, name.count(".") + 1)}
    return sorted(set(graph) - used)


def test_every_module_of_the_package_is_used():
    """Every module of ctx_course is imported by another module, named by nbgrader_config.py, a hub file or
    an entry point of pyproject.toml, read as a file by a module beside it, or is the package or its
    ``python -m`` entry: a module nothing uses
    (a file revived by a merge, say) fails here."""
    assert unused_modules(import_graph(), referenced_outside() | ENTRY_MODULES) == []


def test_the_unused_module_check_sees_a_module_nobody_imports():
    """The check reports a module nothing imports, also one that imports others, and keeps a package whose
    module is imported and a module only nbgrader_config.py names."""
    graph = {"ctx_course": set(), "ctx_course.a": {"ctx_course.b"}, "ctx_course.b": set(),
             "ctx_course.sub": set(), "ctx_course.sub.c": set(), "ctx_course.d": set()}
    assert unused_modules(graph, {"ctx_course", "ctx_course.sub.c"}) == ["ctx_course.a", "ctx_course.d"]
    named = named_modules('steps = ["ctx_course.sub.c.Step"]', {name: Path() for name in graph})
    assert named == {"ctx_course.sub.c"}


def test_the_mutation_campaign_imports_no_room():
    """ctx_course/mutation/ (the maintainer's measure of the checks, `make mutation`) runs the learner's
    checks of ctx_reference against mutants and imports nothing of the course's rooms."""
    graph = import_graph()
    _room_modules(graph, "mutation")
    assert crossings(graph, "mutation", {"grading", "grading.steps", "sandbox", "term", "learner", "editions"}) == {}
