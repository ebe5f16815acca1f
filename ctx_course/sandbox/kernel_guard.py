"""Code that runs inside a grading kernel: undo what a student's cells did to IPython before a check cell.

The grader sends this file's text to each kernel before the notebook's first cell (the kernel
cannot import ``ctx_course``: the sandbox does not show it) and runs it as the module
``_ctx_guard``: ``install()`` takes a snapshot of the kernel as started. Before every graded
cell the grader calls ``reset(token)`` (through ``user_expressions``, which IPython evaluates
without its input or AST transformers) and checks the answer ``"ok:" + token``; a kernel that
does not give it has been tampered with, and the check cell is scored as failed.

``reset`` puts back: the builtins, ``sys.stdout``/``sys.stderr``/``sys.displayhook``/``sys.excepthook``;
IPython's AST transformers, input transformers (cleanup, line, token, post), event callbacks
(student ones are removed: a ``pre_run_cell`` callback could re-install a hook between the reset
and the check), custom exception handler; the methods of the shell, the kernel, the display hook
and the display publisher, on their classes and on the objects; no trace or profile function;
threads started by the student are stopped (they could re-install a hook at any moment);
an installed library's own worker threads, running library code only, are left running.

Leaves out: what a process can do to its own memory by other means (ctypes, /proc/self/mem);
the sandbox limits what that can reach, the scores are decided by the grader.
"""
import builtins
import ctypes
import inspect
import sys
import threading
import time
import types
from typing import Any  # already imported by IPython in every kernel: nothing new is loaded

_SNAPSHOT: dict[str, Any] = {}  # what install() saw, by part of the kernel (see install)
_TRUSTED_PREFIXES = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
_IPYTHON_BUILTINS = ("exit", "quit", "get_ipython", "display")
_STOP_WAIT = 0.2  # seconds given to the stopped threads, all together, to end


def _objects(shell):
    return [shell, getattr(shell, "kernel", None), shell.displayhook, shell.display_pub,
            shell.input_transformer_manager]


def _classes(objects):
    seen = []
    for obj in objects:
        if obj is None:
            continue
        for cls in type(obj).__mro__:
            if cls is not object and cls not in seen:
                seen.append(cls)
    return seen


def install():
    """Take the snapshot of the kernel as started (before any student code); return "installed"."""
    from IPython import get_ipython

    shell = get_ipython()
    objects = [o for o in _objects(shell) if o is not None]
    manager = shell.input_transformer_manager
    _SNAPSHOT.update(
        shell=shell,
        builtins=dict(vars(builtins)),
        sys={name: getattr(sys, name) for name in ("stdout", "stderr", "displayhook", "excepthook")},
        classes={cls: dict(vars(cls)) for cls in _classes(objects)},
        instances={id(o): (o, dict(vars(o))) for o in objects},
        ast_transformers=list(shell.ast_transformers),
        input_post=list(shell.input_transformers_post),
        cleanup=list(manager.cleanup_transforms),
        line=list(manager.line_transforms),
        token=list(manager.token_transformers),
        custom_tb=shell.CustomTB,
        events={name: list(cbs) for name, cbs in shell.events.callbacks.items()},
        threads={t.ident for t in threading.enumerate()},
    )
    return "installed"


def _trusted(callback) -> bool:
    """Return whether an event callback comes from an installed library (not from a notebook cell)."""
    target = getattr(callback, "__func__", callback)
    code = getattr(target, "__code__", None)
    if code is None:
        module = sys.modules.get(getattr(type(target), "__module__", ""), None)
        filename = getattr(module, "__file__", "") or ""
    else:
        filename = code.co_filename
    return filename.startswith(_TRUSTED_PREFIXES)


def _library_thread(thread, frame) -> bool:
    """Return whether a thread is an installed library's own worker, running library code only.

    Such threads are started on demand after the snapshot (pyzmq starts its collector thread at
    the first large output, e.g. a figure) and the kernel needs them: a collector stopped when
    it wakes leaves its socket bound, so none started after it can take over. A student's thread
    runs a plain ``Thread``/``Timer`` with a target, or a class or code from a cell: it is not
    one of these.
    """
    run = getattr(type(thread).run, "__code__", None)
    if run is None or run.co_filename == threading.__file__ or not run.co_filename.startswith(_TRUSTED_PREFIXES):
        return False
    while frame is not None:
        if not frame.f_code.co_filename.startswith(_TRUSTED_PREFIXES):
            return False
        frame = frame.f_back
    return True


class _Delivered(Exception):
    """Raised in the guard's own thread to take CPython's pending-exception signal down."""


def _stop_threads():
    """Raise SystemExit in each thread started after the snapshot, except libraries' own workers.

    A thread waiting in C (``Event.wait``, an idle ``ThreadPoolExecutor`` worker) gets its
    exception only when it wakes. Until then CPython 3.11 keeps an interpreter-wide "pending
    exception" signal up that only the receiving thread takes down, and a function called
    under a profile function (as the visible checks call the learner's) restarts its first
    instruction forever while that signal is up. So, after a short wait, the guard takes the
    signal down by delivering an exception to itself; the waiting threads keep theirs, and
    CPython raises the signal again when one of them wakes and gets it.
    """
    frames = sys._current_frames()
    stopped = []
    for thread in threading.enumerate():
        if thread.ident in _SNAPSHOT["threads"] or thread is threading.current_thread():
            continue
        if not _running(thread, frames):
            continue
        if _library_thread(thread, frames.get(thread.ident)):
            continue
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(SystemExit))
        stopped.append(thread)
    deadline = time.monotonic() + _STOP_WAIT
    while stopped and time.monotonic() < deadline:
        frames = sys._current_frames()
        stopped = [t for t in stopped if _running(t, frames)]
        if stopped:
            time.sleep(0.005)
    if stopped:
        try:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()),
                                                       ctypes.py_object(_Delivered))
            for _ in range(1000):  # each loop turn checks for pending exceptions
                pass
        except _Delivered:
            pass


def _running(thread, frames) -> bool:
    """Return whether a thread still runs, without ``is_alive``/``join``.

    A thread started with ``_thread.start_new_thread`` shows up as a ``_DummyThread`` once it
    prints (ipykernel asks for the current thread), and a dummy thread cannot be joined: it runs
    while the interpreter has a frame for its id.
    """
    return thread.ident in frames


def reset(token):
    """Put back everything the snapshot holds; return ``"ok:" + token``."""
    shell = _SNAPSHOT["shell"]
    _stop_threads()
    for cls, saved in _SNAPSHOT["classes"].items():
        current = vars(cls)
        for name, value in saved.items():
            if current.get(name, _MISSING) is not value:
                try:
                    setattr(cls, name, value)
                except (AttributeError, TypeError):
                    pass
    for obj, saved in _SNAPSHOT["instances"].values():
        for name in list(vars(obj)):
            static = inspect.getattr_static(type(obj), name, None)
            if not isinstance(static, (types.FunctionType, staticmethod, classmethod, property)):
                continue
            if name in saved:
                setattr(obj, name, saved[name])
            else:
                delattr(obj, name)
    for name, value in _SNAPSHOT["builtins"].items():
        if name not in _IPYTHON_BUILTINS and vars(builtins).get(name, _MISSING) is not value:
            setattr(builtins, name, value)
    for name, value in _SNAPSHOT["sys"].items():
        setattr(sys, name, value)
    sys.displayhook = shell.displayhook
    sys.settrace(None)
    sys.setprofile(None)
    threading.settrace(None)
    threading.setprofile(None)
    manager = shell.input_transformer_manager
    shell.ast_transformers[:] = _SNAPSHOT["ast_transformers"]
    shell.input_transformers_post[:] = _SNAPSHOT["input_post"]
    manager.cleanup_transforms[:] = _SNAPSHOT["cleanup"]
    manager.line_transforms[:] = _SNAPSHOT["line"]
    manager.token_transformers[:] = _SNAPSHOT["token"]
    shell.custom_exceptions = ()
    shell.CustomTB = _SNAPSHOT["custom_tb"]
    for name, callbacks in shell.events.callbacks.items():
        original = _SNAPSHOT["events"].get(name, [])
        callbacks[:] = original + [cb for cb in callbacks if cb not in original and _trusted(cb)]
    return "ok:" + token


_MISSING = object()
