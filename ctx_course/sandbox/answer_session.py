"""The grader's end of the answer process: start ``answerer.py``, walk it through the cells, call the learner.

Covers: ``AnswerSession``, one learner's process for one notebook (started on demand, restarted
for a check cell after it died), which runs the job's cells up to a checkpoint when asked
(``reach``) and calls a learner's function as bound at a checkpoint (``call``), taking back plain
data only; ``LearnerFunction``, what a learner's callable is on the grader's side;
``AnswerUnavailable``, raised when a call cannot be answered (the process ran past its time,
died, broke the protocol, or the run was stopped); ``close_sessions``, which closes them all (the
grader exiting); and ``abandon_sessions``, which a stop signal calls: every learner's process of
this grading process is killed at once and none starts again, so that an evaluation waiting on a
learner's call ends with the run, not after the call's limit.

Leaves out: what the job holds and what the answers are judged against (``grading/steps/judge.py``),
the sandbox the process runs in (``policy.py``), the other end of the protocol and the codec both
ends share (``answerer.py``).

Vocabulary (see ``answerer.py``): the *job* is the first message, a *checkpoint* the place of one
of the grader's cells among the learner's cells, a *request* and its *reply* one line each way.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any

from ctx_reference.i18n import _

from . import answerer as wire
from .wire_types import registry, type_names

_PLAIN_DATA = wire._PLAIN_DATA  # JSON values that are their own value

# The process runs this file's text (the sandbox does not show ctx_course).
ANSWERER_SOURCE = Path(wire.__file__).read_text(encoding="utf-8")


class AnswerUnavailable(RuntimeError):
    """The learner's process ran past its time, died, or broke the protocol: the call cannot be answered."""


# The sessions of this process that may have a learner's process running (``abandon_sessions`` kills
# them; ``close_sessions`` closes them).
_SESSIONS: weakref.WeakSet[AnswerSession] = weakref.WeakSet()


def close_sessions() -> None:
    """Close every session of this process: kill its learner's process and reap it (when the grader exits)."""
    for session in list(_SESSIONS):
        session.close()


def abandon_sessions() -> None:
    """Kill every learner's process of this grading process and keep each session from starting one again.

    For a stop signal: only sends signals and sets flags, so it is safe in a signal handler. A
    session abandoned fails every later ``reach`` and ``call`` with ``"stopped"``.
    """
    for session in list(_SESSIONS):
        session.abandoned = True
        process = session.process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass


class AnswerSession:
    """The learner's process for one notebook: started on demand, restarted for a check cell after it died.

    ``argv`` starts ``answerer.py``; ``job`` is its first message (cells and checkpoints, names,
    path, working folder). ``reach(checkpoint)`` runs the learner's cells up to that checkpoint
    and returns which of the learner's names are defined there; ``call(name, args, kwargs, at)``
    returns the learner's value (decoded) or raises what the learner's function raised.
    ``withheld`` is set when the learner's code called a withheld reference function since the
    last ``reach``, ``failure`` when the process timed out or died (``"timeout"``, ``"died"``,
    ``"protocol"``).
    """

    def __init__(self, argv: list[str], job: dict, timeout: float, env: dict | None = None, cwd: str | None = None):
        self.argv, self.timeout, self.env, self.cwd = argv, float(timeout), env, cwd
        self.job = {**job, "types": type_names()}  # the answer process carries the declared types only
        self.process: subprocess.Popen | None = None
        self.ready: dict = {}
        # a record sent in an earlier call (every turn's view holds the turns before) crosses as its number
        self.codec = wire.Codec(refs_out=True, remember=True, refer=True, types=registry())
        # what a callback of the learner's process gets back: data only, never a reference to another object
        self.data_codec = wire.Codec(refs_out=False, types=registry())
        self.unreadable: str | None = None  # the type of the last value of the learner's that could not be read
        self._buffer = b""
        self._reached = -1  # index in the job's cells of the last checkpoint the process passed
        self.withheld = False
        self.failure: str | None = None
        self.started = 0
        self.abandoned = False  # the run was stopped: no learner's process starts again
        self.unwatched = Unwatched()
        _SESSIONS.add(self)

    # -- process
    def start(self) -> None:
        """Start the learner's process and hand it the job (it runs nothing before the first ``reach``)."""
        self.close()
        if self.abandoned:
            self.failure = "stopped"
            return
        self.started += 1
        self.codec.forget_kept()  # the new process holds none of the records the last one was sent
        self._buffer = b""
        self._reached = -1
        self.failure = None
        self.process = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=self.env, cwd=self.cwd, start_new_session=True,
        )
        try:
            self._send(self.job)
        except AnswerUnavailable as exc:
            self._fail(str(exc))

    def reach(self, checkpoint: str) -> dict:
        """Run the learner's cells up to ``checkpoint`` and return which learner's names are defined there.

        Clears the flags of the previous check cell and restarts the process if it is gone (the
        new one runs the cells from the top). Each cell run on the way may take the time limit,
        as in the notebook; past that, or if the process dies, nothing is defined (``failure``
        says why).
        """
        self.withheld = False
        self.unreadable = None
        if self.abandoned:
            self._fail("stopped")
            return {}
        if self.failure is not None or self.process is None or self.process.poll() is not None:
            self.start()
        cells = self.job.get("cells", [])
        target = next((i for i, c in enumerate(cells) if c.get("checkpoint") == checkpoint), len(cells))
        steps = sum(1 for c in cells[self._reached + 1: target] if "checkpoint" not in c)
        self.ready = {}
        if self.failure is not None:
            return self.ready
        try:
            self._send({"advance": checkpoint})
            message = self._receive(time.monotonic() + self.timeout * (steps + 1))
        except AnswerUnavailable as exc:
            self._fail(str(exc))
            return self.ready
        self._reached = max(self._reached, target)
        ready = message.get("ready")
        self.ready = ready if isinstance(ready, dict) else {}
        return self.ready

    def close(self) -> None:
        """Kill the learner's process (its whole sandbox) and reap it."""
        if self.process is None:
            return
        process, self.process = self.process, None
        for stream in (process.stdin, process.stdout):
            if stream is None:
                continue
            try:
                stream.close()
            except OSError:
                pass
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                process.kill()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def _fail(self, why: str) -> None:
        self.failure = why
        self.close()

    # -- messages
    def _send(self, message: dict) -> None:
        self._send_line(wire.to_text(message).encode("utf-8") + b"\n")

    def _send_line(self, line: bytes) -> None:
        stdin = self.process.stdin if self.process is not None else None
        if stdin is None:
            raise AnswerUnavailable("died")
        try:
            stdin.write(line)
            stdin.flush()
        except (OSError, ValueError):
            raise AnswerUnavailable("died") from None

    def _receive(self, deadline: float) -> dict:
        stdout = self.process.stdout if self.process is not None else None
        if stdout is None:
            raise AnswerUnavailable("died")
        while b"\n" not in self._buffer:
            if len(self._buffer) > wire.MAX_LINE:
                raise AnswerUnavailable("protocol")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AnswerUnavailable("timeout")
            fd = stdout.fileno()
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise AnswerUnavailable("stopped" if self.abandoned else "died")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return wire.parse_line(line)
        except wire.WireError:
            raise AnswerUnavailable("protocol") from None

    # -- calls
    def _require_running(self) -> None:
        """Raise AnswerUnavailable unless the learner's process is there to answer a call (the run not stopped)."""
        if self.abandoned:
            self._fail("stopped")
        if self.failure is not None or self.process is None:
            raise AnswerUnavailable(self.failure or "died")

    def call(self, name: str, args: tuple, kwargs: dict, at: str) -> Any:
        """Call the learner's ``name``, as bound at checkpoint ``at``, on ``args`` in the learner's process."""
        with self.unwatched:
            return self._call(name, args, kwargs, at)

    def _call(self, name: str, args: tuple, kwargs: dict, at: str) -> Any:
        self._require_running()
        values = list(args)  # an argument the learner's function changed is updated from its copy ("changed")
        try:
            message = {
                "call": name,
                "at": at,
                "args": [self.codec.encode(a) for a in values],
                "kwargs": {str(k): self.codec.encode(v) for k, v in kwargs.items()},
            }
        except wire.WireError as exc:
            self.codec.commit(held=False)
            raise TypeError(f"this argument cannot be passed to the learner's function ({exc})") from None
        deadline = time.monotonic() + self.timeout
        try:
            self._send(message)
            while True:
                reply = self._receive(deadline)
                if "cb" in reply:
                    self._send(self._callback(reply))
                    continue
                break
        except AnswerUnavailable as exc:
            self.codec.commit(held=False)
            self._fail(str(exc))
            raise
        # the learner's process read the whole request (and so holds the records it numbered) only if the call ran
        self.codec.commit(held="ok" in reply)
        return self.result(reply, values)

    def result(self, reply: dict, values: list) -> Any:
        """Return what a call's ``reply`` says the learner's function returned, or raise what it raised.

        ``values`` are the call's positional arguments, as the grader's side holds them: a list,
        dict or set argument the learner's function changed is made to hold what its copy holds,
        and a reply saying the function returned one of them returns that very object. A batch's
        entries are read here one at a time, each when its case is judged (``call_batch``).
        """
        with self.unwatched:
            return self._result(reply, values)

    def _result(self, reply: dict, values: list) -> Any:
        if "timeout" in reply:  # only a batch's last entry: the call ran past the time limit
            self._fail("timeout")
            raise AnswerUnavailable("timeout")
        if "raised" in reply:
            raise self._exception(reply["raised"])
        if "ok" not in reply:
            self._fail("protocol")
            raise AnswerUnavailable("protocol")
        try:
            for index, data in (reply.get("changed") or {}).items():
                _update(values[int(index)], self.codec.decode(data))
            value = reply["ok"]
            if type(value) in _PLAIN_DATA:  # its own value, as decode would return it
                return value
            if isinstance(value, dict) and set(value) == {"same"}:
                return values[int(value["same"])]
            return self.codec.decode(value)
        except wire.Unreadable as exc:
            self.unreadable = exc.kind
            raise
        except wire.WireError:
            raise
        except Exception as exc:  # a value that decodes to nothing valid
            raise wire.WireError(_("返回值无法还原（{kind}）").format(kind=type(exc).__name__)) from None

    def call_batch(self, name: str, at: str, calls: list[str]) -> list[dict]:
        """Call the learner's ``name``, as bound at checkpoint ``at``, once per call of ``calls``, in order, in one
        request; return the replies' entries, undecoded (``result`` reads each), at least one and at most one per call.

        Each of ``calls`` is the JSON text of one call's ``[args, kwargs]`` as ``call`` encodes them.
        Every call has the time limit a single call has: counted from the request, and again from
        each progress message (``{"next": index}``, the calls before ``index`` ended), whose index must
        grow; a call past it fails the batch as a single call fails. A reply of any other shape (not
        a list, no entry or more entries than calls, an entry that is not one reply's shape, a
        time-out entry before the last) breaks the protocol: the process is stopped, and every call
        of this check cell fails, as after any malformed reply.
        """
        with self.unwatched:
            return self._call_batch(name, at, calls)

    def _call_batch(self, name: str, at: str, calls: list[str]) -> list[dict]:
        self._require_running()
        head = wire.to_text({"batch": name, "at": at})
        line = (head[:-1] + ',"calls":[' + ",".join(calls) + "]}").encode("utf-8") + b"\n"
        grace = wire.BATCH_PROGRESS + 1.0  # the answer process says "next" at most this late after a call began
        deadline = time.monotonic() + self.timeout + grace
        done = 0
        try:
            self._send_line(line)
            while True:
                reply = self._receive(deadline)
                if "cb" in reply:
                    self._send(self._callback(reply))
                    continue
                if set(reply) == {"next"} and type(reply["next"]) is int and done < reply["next"] < len(calls):
                    done = reply["next"]
                    deadline = time.monotonic() + self.timeout + grace
                    continue
                break
            entries = reply.get("batch") if set(reply) == {"batch"} else None
            if not _entries_fit(entries, len(calls)):
                raise AnswerUnavailable("protocol")
        except AnswerUnavailable as exc:
            self._fail(str(exc))
            raise
        return entries  # type: ignore[return-value]

    def _exception(self, info) -> BaseException:
        if not isinstance(info, dict):
            return RuntimeError("")
        if info.get("withheld"):
            self.withheld = True
        if "value" in info:
            try:
                value = self.codec.decode(info["value"])
                if isinstance(value, Exception):
                    return value
            except Exception:
                pass
        return wire.rebuild_exception(info, self.codec)

    def _callback(self, message: dict) -> dict:
        """Answer the learner's call of an object the grader passed by reference."""
        try:
            target: Any = self.codec.refs[message["cb"]]  # any object the grader passed, or one of its methods
            attr = message.get("attr")
            if attr != "__call__":
                if not isinstance(attr, str) or (attr.startswith("_") and attr not in wire.FORWARDED):
                    raise AttributeError(f"{attr!r} cannot be called back")
                target = getattr(target, attr)
            args = [self.codec.decode(a) for a in message.get("args", [])]
            kwargs = {str(k): self.codec.decode(v) for k, v in message.get("kwargs", {}).items()}
            with self.unwatched.paused():  # the grader's object runs watched, as when the check calls it
                value = target(*args, **kwargs)
                if attr == "__iter__":
                    value = list(value)
            return {"ok": self.data_codec.encode(value)}
        except Exception as exc:
            return {"raised": wire.describe_exception(exc, self.data_codec)}


class Unwatched:
    """While a call crosses the wire, the check's watch for reference code (a profile hook) is off.

    At grading a check calls a ``LearnerFunction``: the learner's code runs in its own process, and
    the grader's side of the call is this package's wire (encoding, the pipe, the closed-schema
    decoder), which enters no exercise's reference code. A profile hook sees every call made, the
    builtins' included, so it would multiply the wire's cost and see nothing: ``with unwatched``
    removes it for the outermost such block and puts it back after; ``paused()`` puts it back
    while a callback runs one of the grader's objects (that code is watched as in the lab). A
    profiler that is not a Python function (``cProfile``) cannot be put back, and is left on.
    """

    __slots__ = ("_depth", "_hook")

    def __init__(self) -> None:
        self._depth = 0
        self._hook: Any = None

    def __enter__(self) -> None:
        if self._depth == 0:
            hook = sys.getprofile()
            # a hook set from Python (the check's watch) can be put back; a C profiler's (cProfile) cannot: it stays
            self._hook = hook if callable(hook) else None
            if self._hook is not None:
                sys.setprofile(None)
        self._depth += 1

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._hook is not None:
            hook, self._hook = self._hook, None
            sys.setprofile(hook)

    def paused(self) -> _Paused:
        """Return a context in which the hook that was on is on again."""
        return _Paused(self._hook)


class _Paused:
    __slots__ = ("_hook",)

    def __init__(self, hook: Any) -> None:
        self._hook = hook

    def __enter__(self) -> None:
        if self._hook is not None:
            sys.setprofile(self._hook)

    def __exit__(self, *exc: object) -> None:
        if self._hook is not None:
            sys.setprofile(None)


def _entries_fit(entries, asked: int) -> bool:
    """Return whether ``entries`` is what a batch of ``asked`` calls may answer: a list of 1 to ``asked`` replies,
    each ``{"ok": ...}`` (with ``"changed"`` or not) or ``{"raised": ...}``, or ``{"timeout": true}`` as the last."""
    if type(entries) is not list or not 1 <= len(entries) <= asked:
        return False
    for index, entry in enumerate(entries):
        if type(entry) is not dict:
            return False
        keys = set(entry)
        if keys == {"timeout"}:
            if entry["timeout"] is not True or index != len(entries) - 1:
                return False
        elif keys != {"raised"} and keys not in ({"ok"}, {"ok", "changed"}):
            return False
        elif "changed" in entry and type(entry["changed"]) is not dict:
            return False
    return True


def _update(target, value) -> None:
    """Make a list, dict or set argument hold what the learner's function left in its copy."""
    if type(target) is list and type(value) is list:
        target[:] = value
    elif type(target) is dict and type(value) is dict:
        target.clear()
        target.update(value)
    elif type(target) is set and type(value) is set:
        target.clear()
        target.update(value)


class LearnerFunction:
    """Stands, on the grader's side, for a learner's callable as bound at one checkpoint: its process answers."""

    def __init__(self, session: AnswerSession, name: str, at: str):
        self._session, self._name, self._at = session, name, at

    def __call__(self, *args, **kwargs):
        return self._session.call(self._name, args, kwargs, self._at)

    def __repr__(self) -> str:
        return f"<{self._name}>"
