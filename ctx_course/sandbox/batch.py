"""The generated cases of one check cross to the learner's process in batches, and are judged one by one.

Covers: ``BatchedCalls``, what a check's runner calls in place of a ``LearnerFunction`` when it is
about to call it on a known list of cases (``ctx_reference.checks.batch.batched``): at the first
case not yet answered it sends that case and the next ones in one request
(``AnswerSession.call_batch``), keeps the replies' entries as they came, and reads each one
(``AnswerSession.result``) only when the runner makes that case's call, with the arguments the
runner passed; and ``install``, which registers it for ``LearnerFunction`` (the grader's side,
once).

Why the result is the one of single calls: the learner's process runs the batch's calls in the
order of the cases, each on its own copy of its arguments, and answers each as it answers one
call (what it returned or raised, the list, dict and set arguments it changed, call-backs answered
meanwhile, the same time limit a call). An entry is decoded only when its case is judged, on the
objects the runner passed, by the same closed schema and limits as a single reply: an entry that
cannot be read costs the case it belongs to, where a single call would have, and the entries
after the first failing case are never read. A call the runner makes that is not the next case's
(arguments equal to that case's, of the same types, or that encode to the same text: a copy of an
object without an ``__eq__`` of its own, a tokenizer, equals only itself), or whose arguments are
not data alone (an object of the grader's passed by reference), is made as a single call.

Leaves out: the wire and the process (``answer_session.py``, ``answerer.py``); which cases a check
runs and how it judges them (``ctx_reference/checks/generated.py``).

Vocabulary: a *chunk* is the cases of one batch request; its size starts at ``FIRST_CHUNK`` and
grows fourfold up to ``MAX_CHUNK`` while a chunk's calls take under ``CHUNK_SECONDS`` together
(a learner's function that fails its first case runs few calls it did not need to).
"""
from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from ctx_reference.checks.batch import register

from . import answerer as wire
from .answer_session import LearnerFunction
from .wire_types import registry

FIRST_CHUNK = 8
MAX_CHUNK = 512
CHUNK_SECONDS = 0.25
# Most bytes of the calls one request carries (the answer process reads at most MAX_LINE).
REQUEST_BYTES = wire.MAX_LINE // 4


class BatchedCalls:
    """Stands for ``func`` (a ``LearnerFunction``) while a check calls it on ``calls``, in order, fetching in chunks.

    Called with a case's arguments: the answer to that case, as ``func`` would give it. The
    ``requests`` made and the ``batched`` calls answered from a batch are counted.
    """

    def __init__(self, func: LearnerFunction, calls: Iterable[tuple[tuple, Mapping[str, Any]]]):
        self._func = func
        self._calls = list(calls)
        self._texts: dict[int, str | None] = {}  # position -> the JSON text of its [args, kwargs]; None: not data
        self._entries: dict[int, dict] = {}  # position -> its entry of a batch reply, not read yet
        self._next = 0  # the position the next call is expected to be
        self._codec = wire.Codec(refs_out=True, types=registry())  # encodes the cases' calls (holds no reference)
        self._size = FIRST_CHUNK
        self.requests = 0
        self.batched = 0

    def __call__(self, *args, **kwargs):
        with self._func._session.unwatched:  # the grader's side of the wire enters no reference code
            return self._answer(args, kwargs)

    def _answer(self, args: tuple, kwargs: dict):
        position = self._next
        if position >= len(self._calls):
            return self._func(*args, **kwargs)
        if self._text(position) is None:  # a case whose arguments are not data alone: a single call, as without
            self._next = position + 1    # batches
            return self._func(*args, **kwargs)
        if not (_same_call((args, kwargs), self._calls[position])
                or _call_text(args, kwargs, self._codec) == self._text(position)):
            return self._func(*args, **kwargs)  # not the next case's call: a single call too
        if position not in self._entries:
            self._fetch(position)
        entry = self._entries.pop(position)
        self._next = position + 1
        self.batched += 1
        return self._func._session.result(entry, list(args))

    def _text(self, position: int) -> str | None:
        if position not in self._texts:
            args, kwargs = self._calls[position]
            self._texts[position] = _call_text(args, kwargs, self._codec)
        return self._texts[position]

    def _fetch(self, first: int) -> None:
        """Send the cases from ``first`` on (up to a chunk) in one request and keep the entries that come back."""
        texts: list[str] = []
        size = 0
        for position in range(first, min(first + self._size, len(self._calls))):
            text = self._text(position)
            if text is None or (texts and size + len(text) > REQUEST_BYTES):
                break
            texts.append(text)
            size += len(text) + 1
        func = self._func
        started = time.monotonic()
        self.requests += 1
        entries = func._session.call_batch(func._name, func._at, texts)
        seconds = time.monotonic() - started
        for offset, entry in enumerate(entries):
            self._entries[first + offset] = entry
        grown = min(MAX_CHUNK, self._size * 4)
        per_call = seconds / len(entries)
        self._size = max(1, min(grown, int(CHUNK_SECONDS / per_call) if per_call > 0 else grown))


def _same_call(call: tuple[tuple, Mapping[str, Any]], case: tuple[tuple, Mapping[str, Any]]) -> bool:
    """Return whether ``call`` (what the check passed) has the arguments of ``case``: equal, of the same types at the
    top (the check passes each case a deep copy of its arguments, which is equal to them)."""
    (args, kwargs), (case_args, case_kwargs) = call, case
    try:
        return ([type(v) for v in args] == [type(v) for v in case_args] and tuple(args) == tuple(case_args)
                and dict(kwargs) == dict(case_kwargs))
    except Exception:  # noqa: BLE001 - values that cannot be compared are not the case's
        return False


def _call_text(args: tuple, kwargs: Mapping[str, Any], codec: wire.Codec | None = None) -> str | None:
    """Return the JSON text of a call's ``[args, kwargs]`` as a single call encodes them; None where an argument is
    not data alone (it would cross by reference) or cannot cross at all. ``codec``: one that neither remembers nor
    holds a reference (the batch's own, reused from call to call; a fresh one without it)."""
    if codec is None:
        codec = wire.Codec(refs_out=True, types=registry())
    encode = codec.encode
    try:
        data = [[encode(value) for value in args], {str(key): encode(value) for key, value in kwargs.items()}]
    except wire.WireError:
        codec.refs.clear()
        return None
    if codec.refs:
        codec.refs.clear()
        return None
    return wire.to_text(data)


def batched_calls(func: LearnerFunction, calls: Iterable[tuple[tuple, Mapping[str, Any]]]) -> BatchedCalls:
    """Return the ``BatchedCalls`` of ``func`` on ``calls`` (the caller ``install`` registers)."""
    return BatchedCalls(func, calls)


def install() -> None:
    """Let the checks call the grader's ``LearnerFunction`` objects in batches (exactly that type, nothing else)."""
    register(LearnerFunction, batched_calls)
