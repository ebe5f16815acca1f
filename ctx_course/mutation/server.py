"""A fork server for the judge: the package imported once, each mutant judged in a fresh forked child.

cosmic-ray runs one command per mutant. Starting Python and importing ``ctx_reference.checks``
costs about 0.4 s of CPU, ten times what judging a mutant does; so the campaign starts this
server once (``serve``), and the command cosmic-ray runs is ``client.py``, a stdlib-only script
that sends (exercise, file) over a Unix socket and exits with the verdict. Each request is judged
in a child forked from the server (``judge.judge``), so no mutant sees another's state, and a
child that is still running after ``limit`` seconds is ended by its own alarm (its verdict: killed
by the timeout).

Leaves out: the verdict itself (``judge.py``) and starting or stopping the server (``campaign.py``).

Protocol: the client sends one line ``EXERCISE\\tPATH\\n``; the server answers one line
``STATUS\\tWHY\\n`` (STATUS 0 survived, 1 killed) and closes; no answer means the child died.
"""
from __future__ import annotations

import os
import signal
import socket
import sys


def _handle(connection: socket.socket, limit: float) -> None:
    """In the forked child: read the request, judge it, answer, exit."""
    from .judge import KILLED, judge

    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, limit)
    with connection, connection.makefile("rwb") as stream:
        exercise, _, path = stream.readline().decode("utf-8").rstrip("\n").partition("\t")
        try:
            status, why = judge(exercise, path)
        except BaseException as exc:  # noqa: B036 - whatever a mutant raises past the check is a kill
            status, why = KILLED, f"killed: the judge raised {type(exc).__name__}: {exc}"
        stream.write(f"{status}\t{why}".replace("\n", " ").encode("utf-8") + b"\n")
        stream.flush()


def serve(socket_path: str, limit: float) -> None:
    """Listen on ``socket_path`` and judge each request in a forked child, until terminated."""
    from ctx_reference.checks import EXERCISES  # noqa: F401 - imported once, before any fork

    from .targets import targets

    targets()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(socket_path)
        server.listen(16)
        print("ready", flush=True)
        while True:
            connection, _ = server.accept()
            if os.fork() == 0:
                server.close()
                try:
                    _handle(connection, limit)
                finally:
                    os._exit(0)
            connection.close()
