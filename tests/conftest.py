"""Shared paths and helpers of the test suite, and how it is spread over parallel workers.

``python -m pytest`` runs on one worker per core (pytest-xdist, ``-n auto --dist loadfile`` in
pyproject.toml): every file runs whole on one worker, so a module's grading run is built once
and nbval runs a notebook's cells in order in one kernel. Files marked ``heavy`` (they grade a
class or run many notebooks) are handed out first, so the workers finish together. What several
modules need and takes long to make (a fresh release of 02-remaining, a PostgreSQL server) is made
once per worker process, by the session fixtures below, and shared. The class that several grading
modules grade the same way (``remaining_class``) is graded once for the whole session, whichever
worker asks first (``shared_classes.py``).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import nbval.kernel
import pytest
from jupyter_client.manager import KernelManager

from ctx_course.config import read_schema_in_process
from ctx_course.grading.grader import AUDIT_EVENT
from ctx_course.grading.run_as import ACKNOWLEDGED
from ctx_course.sandbox.kernels import IpcKernelManager, IpcSockets
from ctx_course.sandbox.policy import compile_course_packages

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
LESSONS = REPO / "lessons"

# CI runs the suite as root in a throw-away container: the grading runs it starts leave out the line that
# warns of root (ctx_course/grading/run_as.py); the tests of that line take the variable away.
os.environ[ACKNOWLEDGED] = "1"
# Gradebooks made directly by tests are stamped the way the grader stamps them (no subprocess).
read_schema_in_process()
# Kernels the tests start themselves (nbval, nbgrader's validator) find ctx_reference compiled, as the grader's do.
compile_course_packages()


class IpcBlockingKernelManager(IpcSockets, KernelManager):
    """nbval's kernel manager, over IPC sockets in a folder of its own (``IpcSockets``): no two kernels of
    parallel workers can pick the same TCP port (nbval starts one kernel per notebook)."""

    def start_kernel(self, **kwargs):
        try:
            super().start_kernel(**kwargs)
        except Exception:  # a kernel that never started leaves no folder
            shutil.rmtree(self._own_folder, ignore_errors=True)
            raise


# nbval's own start_new_kernel makes its kernel manager from this name.
nbval.kernel.KernelManager = IpcBlockingKernelManager
#: What tests that run notebooks with nbclient pass as ``kernel_manager_class``.
KERNEL_MANAGER = IpcKernelManager


def class_builder():
    """Return examples/build_class.py loaded as a module (it builds submissions from the release)."""
    spec = importlib.util.spec_from_file_location("build_class", REPO / "examples" / "build_class.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def notebooks(folder: Path) -> list[Path]:
    """Return the notebooks of a course folder (solutions/ or lessons/), in reading order."""
    return sorted(p for p in folder.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


BROWSER_SUITE = Path(__file__).resolve().parent / "browser"
HUB_SUITE = Path(__file__).resolve().parent / "hub"


def pytest_addoption(parser):
    parser.addoption("--browser", action="store_true",
                     help="also collect tests/browser (JupyterLab in headless Chromium; `make test-browser`)")
    parser.addoption("--hub", action="store_true",
                     help="also collect tests/hub (a real JupyterHub for a class of OS users; `make test-hub`)")


def pytest_ignore_collect(collection_path, config):
    """Leave the browser and hub suites out of `make test` unless --browser / --hub is given."""
    if Path(collection_path) == BROWSER_SUITE and not config.getoption("--browser"):
        return True
    if Path(collection_path) == HUB_SUITE and not config.getoption("--hub"):
        return True
    return None
def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: grades a class, runs many notebooks or kernels, or sweeps every mutant "
                            "(left out of `make quick`; scheduled first)")
    config.addinivalue_line("markers", "notebook: a cell of a notebook that nbval re-executes")


# ---- `heavy` for every test that grades a class
#
# A fixture that grades a class says so (``@grades_a_class`` under ``@pytest.fixture``): every test that uses
# it, directly or through other fixtures, is marked heavy at collection. What no declaration can promise,
# the audit hook below holds: a test that is not heavy and grades a class anyway, in this process
# (``Grader.grade`` starts with its audit event) or as a command (``python -m ctx_course grade`` started
# from it), fails at that moment with ``GradesUnmarked``, which names the test and the two ways out.

GRADES_A_CLASS = "grades_a_class"  # the attribute a class-grading fixture's function carries


def grades_a_class(function):
    """Declare a fixture's function as one that grades a class; put it under ``@pytest.fixture``."""
    setattr(function, GRADES_A_CLASS, True)
    return function


def uses_a_graded_class(item) -> bool:
    """Whether a collected test uses, directly or through other fixtures, a fixture declared ``@grades_a_class``."""
    definitions = getattr(item, "_fixtureinfo", None)  # pytest's record of the fixtures a test closes over
    if definitions is None:
        return False
    return any(getattr(d.func, GRADES_A_CLASS, False) for ds in definitions.name2fixturedefs.values() for d in ds)


class GradesUnmarked(AssertionError):
    """A test that is not marked heavy graded a class (``make quick`` would run it)."""


def is_grade_command(argv) -> bool:
    """Whether a command line runs ``python -m ctx_course grade`` (its help aside).

    >>> is_grade_command(["/venv/bin/python", "-m", "ctx_course", "grade", "--jobs", "1"])
    True
    >>> is_grade_command(["python", "-m", "ctx_course", "grade", "-h"]), is_grade_command("python -m ctx_course lab")
    (False, False)
    """
    words = str(argv).split() if isinstance(argv, str | bytes) else [str(word) for word in argv]
    return "--help" not in words and "-h" not in words and any(
        words[i:i + 3] == ["-m", "ctx_course", "grade"] for i in range(len(words)))


_UNMARKED: list = []  # the test being set up, run or torn down, when it is not heavy


def _grading_guard(event: str, args: tuple) -> None:
    if not _UNMARKED:
        return
    if event == AUDIT_EVENT or (event == "subprocess.Popen" and is_grade_command(args[1])):
        raise GradesUnmarked(
            f"{_UNMARKED[-1].nodeid} grades a class but is not marked heavy: take the class from a fixture "
            "declared @grades_a_class (tests/conftest.py), or mark the test @pytest.mark.heavy")


sys.addaudithook(_grading_guard)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Watch a test that is not heavy, from its fixtures' set-up to their teardown (``_grading_guard``); the
    browser and hub suites, never part of ``make quick``, grade as they need."""
    own_suite = any(Path(item.path).is_relative_to(suite) for suite in (BROWSER_SUITE, HUB_SUITE))
    unmarked = item.get_closest_marker("heavy") is None and not own_suite
    if unmarked:
        _UNMARKED.append(item)
    try:
        return (yield)
    finally:
        if unmarked:
            _UNMARKED.remove(item)


def pytest_collection_modifyitems(config, items):
    """Mark nbval's cells ``notebook`` and every test that uses a class-grading fixture ``heavy``; put the heavy
    files first (a stable sort: the order within and among them is kept). ``make quick``
    (``-m "not heavy and not notebook"``, applied after this hook) is the inner loop."""
    for item in items:
        if type(item).__module__.startswith("nbval"):
            item.add_marker(pytest.mark.notebook)
        elif item.get_closest_marker("heavy") is None and uses_a_graded_class(item):
            item.add_marker(pytest.mark.heavy)
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)


# The model answer of 02-remaining as a learner writes it: the grading modules hand it in as a submission.
REMAINING_MODEL = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    left = window - (read + write + input) - max_tokens
    return left, left < window / 10
'''
# The release's stub, handed in untouched.
REMAINING_STUB = "raise NotImplementedError()"
# The class the grading modules share (``remaining_class``): two model answers, two untouched stubs.
REMAINING_CLASS = {"ada": REMAINING_MODEL, "ben": REMAINING_STUB, "cai": REMAINING_MODEL, "dan": REMAINING_STUB}


@pytest.fixture(scope="session")
def released_remaining(tmp_path_factory) -> Path:
    """Return remaining.ipynb of 02-remaining as the grader releases it (``Grader.prepare``, fresh from solutions/).

    Made once per test process (each pytest-xdist worker) and shared by its modules, which read it and
    build their classes from it; none may change it.
    """
    from ctx_course.grading.grader import Grader

    assignment = "02-remaining"
    scratch = tmp_path_factory.mktemp("release")
    assert Grader(REPO, work=scratch, sandbox=False).prepare([assignment]) == {}
    return scratch / "release" / assignment / "remaining.ipynb"


@pytest.fixture(scope="session")
def postgres():
    """A throw-away PostgreSQL server (``postgres_server.py``), started once per test process and shared by its
    modules: each makes databases of its own names on it, and one that stops it (an outage) starts it again."""
    from postgres_server import PostgresServer, binaries

    if binaries() is None:
        pytest.skip("PostgreSQL is not installed (.ci/run installs it)")
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def make_class(released_remaining):
    """Return a function writing <folder>/<student>/02-remaining/remaining.ipynb for {student: answer code}."""
    assignment = "02-remaining"
    build = class_builder()
    source = REPO / "solutions" / assignment / "remaining.ipynb"

    def make(folder: Path, students: dict[str, str]) -> Path:
        for student, code in students.items():
            target = folder / student / assignment
            target.mkdir(parents=True)
            text = build.submission(released_remaining, source, build.Work(code={"remaining": code}))
            (target / "remaining.ipynb").write_text(text, encoding="utf-8")
        return folder

    return make


@pytest.fixture(scope="session")
@grades_a_class
def grade_once():
    """``graded_once`` (``shared_classes.py``): a test that grades a class through it is heavy by that alone."""
    from shared_classes import graded_once

    return graded_once


@pytest.fixture(scope="session")
@grades_a_class
def remaining_class(tmp_path_factory, make_class):
    """REMAINING_CLASS graded by ``python -m ctx_course grade --jobs 1`` once for the whole session
    (``shared_classes.py``): the run every other way of grading it must equal, byte for byte. Read only."""
    from shared_classes import graded_once

    shared = graded_once(tmp_path_factory, "remaining", lambda folder: make_class(folder, REMAINING_CLASS),
                         "--jobs", "1")
    assert shared.status == 0, shared.output[-3000:]
    return shared
