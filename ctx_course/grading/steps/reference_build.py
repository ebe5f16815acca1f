"""Build ``ctx_reference`` without one notebook's exercise functions, for the code graded on that notebook.

Covers: which exercises a notebook's check cells grade (``graded_exercises``), which reference
objects ARE those exercises (``withheld_objects``, from ``ctx_reference.checks.REFERENCES``), and
writing a copy of the package in which each of them is a stub that raises (``build_reference``;
``ReferenceBuilds`` keeps one build per set of withheld objects for a grading run). The learner's
answers are evaluated against such a build (``judge.py``): whatever the learner's code
imports, copies or recompiles, the reference of its own exercise is not there to be reached.

Leaves out: running anything (the build is files), the sandbox that shows the build and hides the
real package (``sandbox/policy.py``).

Vocabulary: a *withheld object* is a ``(module, qualname)`` pair, e.g.
``("ctx_reference.window", "remaining")`` or ``("ctx_reference.window", "Window.check")``; a
class is withheld by stubbing every method it defines except the ones that build and compare its
instances (``KEPT_METHODS``), so the package still imports and its values still exist.
"""
from __future__ import annotations

import ast
import compileall
import hashlib
import shutil
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from ctx_reference.i18n import N_

# The package that is built, and the calls in check cells that name the exercises they grade.
PACKAGE = "ctx_reference"
EXERCISE_CALLS = ("check_exercise", "requires_exercise")
# Methods of a withheld class that stay: they build, validate and compare values, and other
# modules make instances of the class when they are imported.
KEPT_METHODS = frozenset({
    "__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__", "__repr__", "__str__",
    "__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__", "__getattr__", "__setattr__",
    "__reduce__", "__reduce_ex__", "__getnewargs__", "__getstate__", "__setstate__",
})
# Folders of the package the build leaves out: the model answers (``ctx_reference/model_answers.py``).
LEFT_OUT = ("answer_key",)
# The module of the build that holds the stubs' exception.
WITHHELD_MODULE = "_withheld"
WITHHELD_SOURCE = '''"""The exception raised by a reference function that grading withholds."""


class ReferenceWithheld(RuntimeError):
    """Raised by a reference function of the exercise being graded: the learner's code called it."""


def message(text, name):
    """Return a stub's message in the reader's language (``CTX_LANG``), as written if that cannot be read."""
    try:
        from .i18n import gettext

        return str(gettext(text)).format(name=name)
    except Exception:
        return text.format(name=name)
'''
# What a stub raises with (translated where it is raised: one build serves both editions).
STUB_MESSAGE = N_("评分时不提供参考实现 {name}：这个练习要用你自己写的代码完成")


def graded_exercises(sources: Iterable[str]) -> list[str]:
    """Return the exercise names that check cells pass to ``check_exercise``/``requires_exercise``, sorted.

    ``graded_exercises(['check_exercise("remaining", remaining)'])`` is ``["remaining"]``; a cell
    that is not Python is skipped.
    """
    names = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if called in EXERCISE_CALLS and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
    return sorted(names)


def withheld_objects(exercises: Iterable[str]) -> list[tuple[str, str]]:
    """Return the ``(module, qualname)`` of every reference object of ``exercises``, sorted.

    Example: ``withheld_objects(["remaining"])`` is ``[("ctx_reference.window", "remaining")]``.
    An unknown exercise name raises ValueError naming it.
    """
    from ctx_reference.checks import REFERENCES

    found = set()
    for name in exercises:
        if name not in REFERENCES:
            raise ValueError(f"exercise must be one of {sorted(REFERENCES)} (got {name!r})")
        for obj in REFERENCES[name]:
            found.add((obj.__module__, obj.__qualname__))
    return sorted(found)


def build_reference(source: str | Path, target: str | Path, withheld: Iterable[tuple[str, str]]) -> Path:
    """Copy the package folder ``source`` to ``target/<package>`` with every withheld object a stub; return the copy.

    A withheld function keeps its signature and docstring and raises ``ReferenceWithheld``; a
    withheld class keeps KEPT_METHODS and has every other method of its body stubbed. Modules
    without a withheld object are copied as they are; the folders of LEFT_OUT (the model answers)
    are not. The copy is compiled (no kernel can save bytecode in the sandbox). A withheld object
    that is not found raises ValueError naming it.
    """
    source, target = Path(source), Path(target) / PACKAGE
    by_module: dict[str, list[str]] = {}
    for module, qualname in withheld:
        by_module.setdefault(module, []).append(qualname)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", *LEFT_OUT))
    (target / f"{WITHHELD_MODULE}.py").write_text(WITHHELD_SOURCE, encoding="utf-8")
    for module, qualnames in sorted(by_module.items()):
        parts = module.split(".")
        if parts[0] != PACKAGE:
            raise ValueError(f"withheld object must be in {PACKAGE} (got {module!r})")
        path = target.joinpath(*parts[1:]).with_suffix(".py")
        if not path.is_file():
            path = target.joinpath(*parts[1:], "__init__.py")
        path.write_text(stub_source(path.read_text(encoding="utf-8"), module, qualnames), encoding="utf-8")
    compileall.compile_dir(target, quiet=2)
    return target


def stub_source(text: str, module: str, qualnames: Iterable[str]) -> str:
    """Return a module's source with each of ``qualnames`` (``f`` or ``Class.method`` or ``Class``) stubbed.

    >>> print(stub_source("def f(x):\\n    return x\\n", "ctx_reference.m", ["f"]).splitlines()[-1].strip()[:38])
    raise __import__('ctx_reference._withh
    """
    tree = ast.parse(text)
    for qualname in qualnames:
        node = _find(tree, qualname.split("."))
        if node is None:
            raise ValueError(f"withheld object {module}.{qualname} is not defined in its module")
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.name not in KEPT_METHODS:
                    _stub(member, f"{module}.{qualname}.{member.name}")
        else:
            _stub(node, f"{module}.{qualname}")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _find(scope: ast.AST, path: list[str]) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    for node in getattr(scope, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == path[0]:
            return node if len(path) == 1 else _find(node, path[1:])
    return None


def _stub(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> None:
    docstring = ast.get_docstring(node, clean=False)
    withheld = f"__import__({PACKAGE + '.' + WITHHELD_MODULE!r}, fromlist=['ReferenceWithheld'])"
    raise_stub = ast.parse(
        f"raise {withheld}.ReferenceWithheld({withheld}.message({STUB_MESSAGE!r}, {name!r}))"
    ).body
    node.body = ([ast.Expr(ast.Constant(docstring))] if docstring is not None else []) + raise_stub


class ReferenceBuilds:
    """Builds of the package for one grading run, one per set of withheld objects, in a temporary folder.

    The folder is made inside ``parent`` when given (a grading run uses ``<work>/reference-builds``,
    so that a worker killed before it could clean up leaves nothing outside its grading folder).

    ``builds.path(withheld)`` returns the folder to put first on ``sys.path`` (it holds the
    package); ``close()`` removes every build. Example::

        builds = ReferenceBuilds()
        folder = builds.path(withheld_objects(["remaining"]))
    """

    def __init__(self, source: str | Path | None = None, parent: str | Path | None = None):
        self.parent = Path(parent) if parent is not None else None
        if source is None:
            import ctx_reference

            source = Path(ctx_reference.__file__).parent
        self.source = Path(source)
        self.folder: Path | None = None
        self._built: dict[tuple, Path] = {}
        self._lock = threading.Lock()  # evaluations run in threads beside the kernels

    def path(self, withheld: Iterable[tuple[str, str]]) -> Path:
        """Return the folder holding a build without ``withheld`` (built on first use)."""
        key = tuple(sorted(withheld))
        with self._lock:
            return self._path(key)

    def _path(self, key: tuple) -> Path:
        if key not in self._built:
            if self.folder is None:
                if self.parent is not None:
                    self.parent.mkdir(parents=True, exist_ok=True)
                self.folder = Path(tempfile.mkdtemp(prefix="ctx-reference-build-", dir=self.parent))
            name = hashlib.sha256(repr(key).encode()).hexdigest()[:12]
            folder = self.folder / name
            build_reference(self.source, folder, key)
            self._built[key] = folder
        return self._built[key]

    def close(self) -> None:
        """Remove every build."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.folder, self._built = None, {}

    def __deepcopy__(self, memo):
        # traitlets deep-copies configuration values: every copy must be this same set of builds
        return self
