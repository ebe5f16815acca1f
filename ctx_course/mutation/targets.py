"""What the mutation campaign mutates for each exercise, and how a mutant is handed to the check.

Covers: the *target* of each exercise, the source file whose functions are mutated and the
functions of it that are the exercise (``targets``): the reference objects of
``ctx_reference.checks.REFERENCES`` with the private helpers of their module that they alone use,
or, for the capstone, whose references are the built-in policies the learner must beat, the
notebook's model answer ``my_policy``; the module's text constants those functions read (a string,
or a regular expression compiled from one: ``sessions._LINE``), which a learner writing the
function writes too; the line spans of those functions and constants (what the mutation tool may
change); and ``learner_function``, which turns a (mutated) copy of the source into the
function the exercise's check is called with.

A mutant is judged as a learner's answer, by its behaviour: its functions are compiled from the
mutated text as code that is not the package's (its lines shifted by one, so that no code object
equals a reference's, which the check would refuse as "used the reference"), and bound to a copy
of the real module's namespace, so that every name other than the exercise's own functions (the
enums, the record types, the validation helpers it shares) is the real one. The few exercises
whose reference is a method or a class are called through the learner's signature (``ADAPT``),
as the notebook states it.

Leaves out: running the mutation tool (``campaign.py``) and judging survivors (``survivors.py``).

Vocabulary: a *target* names an exercise, its source and its *mutated names* (qualified names of
functions, methods or classes in that source); a *span* is the first and last line of one of them,
its decorators included.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import json
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ctx_reference.checks.drawing.signatures import LEARNER_CALLS

ROOT = Path(__file__).resolve().parent.parent.parent

# The capstone's exercises all grade the notebook's policy (ctx_reference.checks.ADAPTERS runs it).
CAPSTONE = ("context_policy", "beat_clear_notes", "beat_compact")
CAPSTONE_NOTEBOOK = ROOT / "solutions" / "11-capstone" / "capstone.ipynb"
CAPSTONE_ANSWER = "my_policy"
# What the capstone's answer cell finds defined when it runs (the notebook's imports).
CAPSTONE_PRELUDE = "from ctx_reference.policy import Clear, Compact\n\n\n"
CAPSTONE_MODULE = "capstone_answer"


@dataclass(frozen=True)
class Target:
    """The source one exercise's mutants are made from, and which of its definitions are the exercise.

    ``module`` is the importable module the source is (None for the capstone's generated file);
    ``source`` its text; ``names`` the qualified names of the definitions compiled from the copy
    (the references and their private helpers); ``spans`` (name, first line, last line) the parts
    of them that are mutated: the functions and methods that the exercise's check reaches (a method
    of a reference class the exercise never calls, or a reference such as ``stuffed_recall`` that
    exists only so that a learner cannot call it, is not the exercise), a reference class's field
    defaults, and the text ``constants`` (module-level names) those functions read, compiled from the
    copy too.
    """

    exercise: str
    filename: str
    module: str | None
    source: str
    names: tuple[str, ...]
    spans: tuple[tuple[str, int, int], ...]
    constants: tuple[str, ...] = ()

    @property
    def mutated(self) -> tuple[str, ...]:
        """Return the names whose lines are mutated, in the order of ``spans``."""
        return tuple(dict.fromkeys(name for name, _, _ in self.spans))

    def function_at(self, line: int) -> str | None:
        """Return the mutated name whose span holds ``line`` (the innermost), or None."""
        inside = [(end - start, name) for name, start, end in self.spans if start <= line <= end]
        return min(inside)[1] if inside else None


def _codes(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _names_used(obj: Any) -> set[str]:
    """Return the global names the code of a function or of a class's methods refers to."""
    members = vars(obj).values() if isinstance(obj, type) else [obj]
    names: set[str] = set()
    for member in members:
        member = getattr(member, "__func__", member)
        member = getattr(member, "fget", member)
        code = getattr(member, "__code__", None)
        if isinstance(code, types.CodeType):
            for inner in _codes(code):
                names |= set(inner.co_names)
    return names


def _defined_here(module: types.ModuleType) -> dict[str, Any]:
    return {name: obj for name, obj in vars(module).items()
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__}


def private_helpers(module: types.ModuleType, names: tuple[str, ...]) -> tuple[str, ...]:
    """Return the private functions of ``module`` that the objects ``names`` use and nothing else there uses.

    ``names`` are top-level names; the helpers found are followed too (a helper of a helper).
    """
    defined = _defined_here(module)
    chosen = list(names)
    changed = True
    while changed:
        changed = False
        used = set().union(*(_names_used(defined[name]) for name in chosen if name in defined))
        for helper in sorted(used):
            if helper in chosen or not helper.startswith("_") or not inspect.isfunction(defined.get(helper)):
                continue
            others = [other for other in defined if other not in chosen and other != helper
                      and helper in _names_used(defined[other])]
            if not others:
                chosen.append(helper)
                changed = True
    return tuple(name for name in chosen if name not in names)


def _span(node: ast.stmt) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return first, node.end_lineno or node.lineno


def _find(tree: ast.Module, qualname: str) -> ast.stmt:
    """Return the def or class node of ``qualname`` (``Window.check``) in a parsed module."""
    body: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            raise ValueError(f"qualname must name a definition of the source (got {qualname!r})")
        body = getattr(node, "body", [])
    assert node is not None
    return node


def _is_text_constant(node: ast.stmt) -> str | None:
    """Return the name a top-level statement binds to a string or to ``re.compile(<string>)``, or None.

    Such a line holds nothing cosmic-ray's core operators change (no number, no operator), only
    the text a learner would get wrong (a pattern's character class).
    """
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return None
    value = node.value
    if isinstance(value, ast.Call) and ast.unparse(value.func) == "re.compile" and len(value.args) == 1 \
            and not value.keywords:
        value = value.args[0]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return node.targets[0].id
    return None


def text_constants(tree: ast.Module, module: types.ModuleType, functions: tuple[str, ...]) -> tuple[str, ...]:
    """Return the module's text constants (``_is_text_constant``) that the definitions ``functions`` read."""
    used = set().union(*(_names_used(getattr(module, name.split(".")[0])) for name in functions))
    return tuple(name for node in tree.body if (name := _is_text_constant(node)) and name in used)


def capstone_answer_source(notebook: Path = CAPSTONE_NOTEBOOK) -> str:
    """Return the capstone's model answer as a module: the notebook's imports, then its ``my_policy`` cell.

    The nbgrader solution markers (``### BEGIN SOLUTION``) are dropped, as the release drops them.
    """
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == CAPSTONE_ANSWER:
            text = "".join(cell["source"])
            lines = [line for line in text.split("\n") if "### " not in line]
            return CAPSTONE_PRELUDE + "\n".join(lines).rstrip("\n") + "\n"
    raise ValueError(f"notebook must hold a cell with grade_id {CAPSTONE_ANSWER!r} (got {notebook})")


def _reached(exercise: str, source: str, names: tuple[str, ...], filename: str) -> set[str]:
    """Return the qualified names of the copy's functions that the exercise's check calls."""
    from ctx_reference.checks import CheckFailed, check_exercise

    probe = f"<reach probe of {exercise}>"
    entered: set[str] = set()

    def tracer(frame, event, arg):  # noqa: ARG001 - the trace protocol
        if event == "call" and frame.f_code.co_filename == probe:
            entered.add(frame.f_code.co_qualname)

    func = _learner_function(exercise, source, probe, names, filename)
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        check_exercise(exercise, func, quiet=True)
    except CheckFailed as exc:
        raise ValueError(f"the unmutated reference of {exercise} must pass its own check ({exc})") from None
    finally:
        sys.settrace(previous)
    return entered


def _mutated_spans(tree: ast.Module, names: tuple[str, ...], reached: set[str]) -> tuple[tuple[str, int, int], ...]:
    """Return (name, first, last) for every function of ``names`` reached, and the fields of a class whose method is."""
    spans = []
    for name in names:
        node = _find(tree, name)
        if isinstance(node, ast.ClassDef):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            hit = [m for m in methods if f"{name}.{m.name}" in reached]
            if hit:
                spans += [(name, *_span(n)) for n in node.body if isinstance(n, (ast.AnnAssign, ast.Assign))]
            spans += [(f"{name}.{m.name}", *_span(m)) for m in hit]
        elif name in reached:
            spans.append((name, *_span(node)))
    return tuple(spans)


@cache
def targets() -> dict[str, Target]:
    """Return the target of every exercise of ``ctx_reference.checks``, in the checks' order."""
    from ctx_reference.checks import REFERENCES

    found = {}
    for exercise, objects in REFERENCES.items():
        if exercise in CAPSTONE:
            source = capstone_answer_source()
            qualnames: tuple[str, ...] = (CAPSTONE_ANSWER,)
            filename, module_name = f"{CAPSTONE_MODULE}.py", None
        else:
            (module_name,) = {obj.__module__ for obj in objects}
            module = importlib.import_module(module_name)
            path = Path(inspect.getsourcefile(module) or "")
            source = path.read_text(encoding="utf-8")
            qualnames = tuple(obj.__qualname__ for obj in objects)
            tops = tuple(dict.fromkeys(q.split(".")[0] for q in qualnames))
            qualnames += private_helpers(module, tops)
            filename = path.name
        reached = _reached(exercise, source, qualnames, module_name or "")
        tree = ast.parse(source)
        spans = _mutated_spans(tree, qualnames, reached)
        constants: tuple[str, ...] = ()
        if module_name:
            tops = tuple(dict.fromkeys(name.split(".")[0] for name, _, _ in spans))
            constants = text_constants(tree, importlib.import_module(module_name), tops)
            spans += tuple((node.targets[0].id, *_span(node)) for node in tree.body  # type: ignore[attr-defined]
                           if _is_text_constant(node) in constants)
        found[exercise] = Target(exercise, filename, module_name, source, qualnames, spans, constants)
    return found


#: The exercises whose reference is not called as the learner's function is: how to call it so.
ADAPT = LEARNER_CALLS


def _compiled(names: tuple[str, ...], capstone: bool, source: str, filename: str,
              constants: tuple[str, ...] = ()) -> types.CodeType:
    """Compile the definitions ``names`` and the text ``constants`` of ``source``, one line lower than in the file."""
    tree = ast.parse(source, filename)
    tops = list(dict.fromkeys(name.split(".")[0] for name in names))
    if capstone:  # the capstone's file is the answer cell: all of it runs
        body = tree.body
    else:
        body = [node for node in tree.body
                if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in tops)
                or _is_text_constant(node) in constants]
    module = ast.Module(body=body, type_ignores=[])
    ast.increment_lineno(module, 1)
    future = ast.ImportFrom(module="__future__", names=[ast.alias("annotations")], level=0)  # as the module has
    module.body.insert(0, ast.fix_missing_locations(ast.copy_location(future, module.body[0])))
    return compile(module, filename, "exec", dont_inherit=True)


def _learner_function(exercise: str, source: str, filename: str, names: tuple[str, ...], module_name: str,
                      constants: tuple[str, ...] = ()) -> Callable:
    module = types.ModuleType(f"mutant_of_{module_name or CAPSTONE_MODULE}")
    if module_name:
        real = sys.modules.get(module_name) or importlib.import_module(module_name)
        module.__dict__.update({key: value for key, value in vars(real).items() if not key.startswith("__")})
    module.__file__ = filename
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    namespace = module.__dict__
    exec(_compiled(names, not module_name, source, filename, constants), namespace)  # noqa: S102 - the code under test
    if exercise in ADAPT:
        return ADAPT[exercise](namespace)
    return namespace[names[0]]


def learner_function(exercise: str, source: str, filename: str = "<mutant>") -> Callable:
    """Return the function ``check_exercise(exercise, …)`` is called with, built from a (mutated) ``source``.

    ``learner_function("remaining", text)`` compiles the ``remaining`` of ``text`` (a copy of
    ctx_reference/window.py) against the real module's other names and returns it.
    """
    all_targets = targets()
    if exercise not in all_targets:
        raise ValueError(f"exercise must be one of: {', '.join(all_targets)} (got {exercise!r})")
    target = all_targets[exercise]
    return _learner_function(exercise, source, filename, target.names, target.module or "", target.constants)
