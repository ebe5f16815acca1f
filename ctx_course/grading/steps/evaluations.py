"""The evaluations one autograde step starts and the next one scores, handed to both through configuration.

Covers: ``Evaluations``, the check-cell evaluations of the notebooks being autograded, each a
``concurrent.futures.Future``: ``start`` (``StartEvaluation``), ``take`` (``ScoreFromBehaviour``), ``discard``.

``StartEvaluation``, the last sanitising step, starts a notebook's evaluation in a thread beside the
kernel's run; ``ScoreFromBehaviour``, after ``Execute``, waits for it. The two steps meet through
one ``Evaluations`` set as ``c.ScoreFromBehaviour.evaluations`` (a ``SubmissionGrader`` makes its
own, as it makes its ``policy`` and ``builds``; ``nbgrader_config.py`` gives nbgrader's own commands
one), never through a module of their own: each grader's evaluations are its own.

Leaves out: what an evaluation does (``judge.py``) and the steps themselves (``behaviour.py``).
Nothing here imports nbgrader: ``nbgrader_config.py`` imports it cheaply.

Vocabulary: a notebook's *key* is (gradebook URL, student, assignment, notebook), from nbgrader's
``resources["nbgrader"]``; an evaluation *not scored* is one whose notebook failed before
``ScoreFromBehaviour`` ran (a kernel that did not start, a cell past the time limit).
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

Key = tuple[Any, Any, Any, Any]


def notebook_key(info: Mapping[str, Any]) -> Key:
    """Return the key of the notebook nbgrader is converting (``resources["nbgrader"]``).

    >>> notebook_key({"db_url": "sqlite:///g.db", "student": "ada", "assignment": "02-remaining", "notebook": "n"})
    ('sqlite:///g.db', 'ada', '02-remaining', 'n')
    """
    return (info.get("db_url"), info.get("student"), info.get("assignment"), info.get("notebook"))


class Evaluations:
    """The evaluations started and not yet scored, by notebook. Example::

        evaluations = Evaluations()
        evaluations.start(info, run)               # StartEvaluation: ``run()`` in a thread of its own
        verdicts = evaluations.take(info).result()  # ScoreFromBehaviour, after the kernel's run
        evaluations.discard("ada", "02-remaining")  # what a failed notebook left, waited for and dropped

    Each evaluation runs in a daemon thread (one left running never holds up the grader's exit:
    ``judge.py`` cleans up its answer process then) and is kept as a ``Future``.
    """

    def __init__(self) -> None:
        self._running: dict[Key, Future] = {}
        self._lock = threading.Lock()

    def start(self, info: Mapping[str, Any], run: Callable[[], Any]) -> None:
        """Start ``run()`` in a thread of its own as the evaluation of the notebook ``info`` names."""
        future: Future = Future()

        def work() -> None:
            future.set_running_or_notify_cancel()
            try:
                future.set_result(run())
            except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits
                future.set_exception(exc)

        with self._lock:
            self._running[notebook_key(info)] = future
        threading.Thread(target=work, name="ctx-evaluation", daemon=True).start()

    def take(self, info: Mapping[str, Any]) -> Future | None:
        """Return and forget the evaluation of the notebook ``info`` names (None when none was started)."""
        with self._lock:
            return self._running.pop(notebook_key(info), None)

    def discard(self, student: str, assignment: str) -> None:
        """Wait for and drop the evaluations of a submission that were started but never scored."""
        with self._lock:
            keys = [key for key in self._running if key[1:3] == (student, assignment)]
            futures = [self._running.pop(key) for key in keys]
        for future in futures:
            try:
                future.result()
            except Exception:  # noqa: BLE001 - nothing is scored from it
                pass

    def __deepcopy__(self, memo) -> Evaluations:
        # traitlets deep-copies configuration values: both steps must hold this same object
        return self
