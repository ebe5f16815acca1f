"""Stop a grading run cleanly on SIGTERM or SIGINT.

Covers: ``StopOnSignal``, a context manager that, while it is active, turns SIGTERM and SIGINT
into a request to stop: the notebook running is abandoned (``on_stop``), no further notebook
starts, and the caller still writes the feedback and the grades CSV of what was graded.

Leaves out: what is graded and written (``grader.py``), how a kernel is abandoned (``sandbox/kernels.py``).

Vocabulary: a *stop request* is the first SIGTERM or SIGINT received; later ones are ignored
until the run has written its results (SIGKILL still ends it at once).
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Callable

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopOnSignal:
    """Record the first SIGTERM/SIGINT instead of dying; call ``on_stop`` once when it arrives.

    Example::

        with StopOnSignal(on_stop=pool.abandon) as stop:
            for item in work:
                if stop.signal:
                    break
                ...
        # stop.signal is "SIGTERM", "SIGINT" or None; stop.number the signal's number

    Only the main thread can install handlers; elsewhere this does nothing.
    """

    def __init__(self, on_stop: Callable[[], None] | None = None):
        self.on_stop = on_stop
        self.signal: str | None = None
        self.number: int | None = None
        self._previous: dict = {}

    def _handle(self, number, frame):
        if self.signal is None:
            self.signal, self.number = signal.Signals(number).name, number
            if self.on_stop is not None:
                self.on_stop()

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for number in SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous = {}
