"""The grading wire read as a hostile answer process writes it: searched, not spot-checked.

What the learner's process sends is read by ``parse_line`` and ``Codec.decode`` with the registry of
``wire_types.py``. Whatever it sends, reading gives a value made only of the allowed types, or one
``WireError``; while reading, nothing is imported, no file or process is opened, no Python code runs
outside the codec, the declared types' own constructors and the standard library's number and enum
code, no declared class or enum member changes, and memory stays within a bound of the message's
size. The reproductions of three attacks are here in their general form: any class name a message
can spell (the grader once walked attributes from ``ctx_reference`` to ``subprocess.Popen``), any
state written into a shared object (an enum member renamed), any object equal to everything.
"""
from __future__ import annotations

import contextlib
import dataclasses
import decimal
import enum
import fractions
import functools
import importlib
import json
import pkgutil
import sys
import threading
import tracemalloc
import types
from pathlib import Path
from unittest import mock

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctx_reference
from ctx_course.sandbox import answerer
from ctx_course.sandbox.answerer import MAX_DEPTH, MAX_ITEMS, MAX_LINE, Codec, Unreadable, WireError, parse_line
from ctx_course.sandbox.wire_types import WIRE_TYPES, registry
from ctx_reference.assemble import Assembly, BudgetError, Item
from ctx_reference.ledger import LedgerEntry, Zone
from ctx_reference.window import Outcome

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=400,
                    suppress_health_check=list(HealthCheck))

PLAIN_TYPES = frozenset({type(None), bool, int, float, str, bytes, list, tuple, dict, set, frozenset, range,
                         types.MappingProxyType, fractions.Fraction, decimal.Decimal, numpy.ndarray})
ALLOWED_TYPES = PLAIN_TYPES | set(WIRE_TYPES)

# Names a hostile message may give as a class: the declared ones, and paths that reach further.
HOSTILE_NAMES = [
    "ctx_reference.plots:font_manager.subprocess.Popen", "ctx_reference.checks:mock.ANY", "os:system",
    "builtins:eval", "ctx_reference.ledger:Zone.__class__", "ctx_reference.ledger:Zone.SAFE",
    "ctx_reference.policy:Clear.__init__", "ctx_reference.assemble:Item.__subclasses__", "subprocess:Popen",
    "ctx_reference:__builtins__", "ctx_reference.ledger:Zone", "ctx_reference.assemble:Item", "", ":", "a:b:c",
]
NAMES = st.sampled_from(sorted(registry().by_name) + HOSTILE_NAMES) | st.text(max_size=40)
TAGS = ["l", "t", "d", "s", "fs", "o", "f", "r", "b", "mp", "q", "dec", "nd", "dtype", "ref", "type", "x", "e",
        "nt", "k", "a", "call", "st", "new", "args", "dc", "same", "keep", "kept", "v", "kl", "kt"]
JSON_LEAVES = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
               | st.sampled_from(["nan", "inf", "-inf", "1e999999", "NaN", "int64", "(1000000000,)u1", "object",
                                  "SAFE", "__class__", "_name_", "1/0", "ff", "zz"]))


def _tagged(inner):
    one = st.builds(lambda tag, value: {tag: value}, st.sampled_from(TAGS), inner)
    named = st.builds(lambda name, tag, value: {"o": name, tag: value}, NAMES,
                      st.sampled_from(["e", "nt", "k", "a", "call", "new", "args", "dc", "st"]), inner)
    two = st.dictionaries(st.sampled_from(TAGS) | st.text(max_size=3), inner, max_size=3)
    return one | named | two | st.lists(inner, max_size=5)


MESSAGES = st.recursive(JSON_LEAVES, _tagged, max_leaves=40)


# --------------------------------------------------------------------------------------------
# Watching what reading does


_WATCHING = threading.local()
_AUDITED = ("import", "open", "exec", "compile", "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
            "os.spawn", "os.fork", "socket.connect", "ctypes.dlopen", "pickle.find_class", "marshal.loads")


def _audit(event, args):
    seen = getattr(_WATCHING, "events", None)
    if seen is not None and event.startswith(_AUDITED):
        seen.append(event)


sys.addaudithook(_audit)  # stays for the process; it records only while a test watches

ROOTS = (Path(answerer.__file__).resolve(), Path(ctx_reference.__file__).resolve().parent, Path(__file__).resolve())
# The standard library's code a reading may run: numbers, enums, typing's introspection, gettext for
# a declared error's message; numpy's for an array.
STDLIB_ALLOWED = {"typing", "enum", "fractions", "numbers", "abc", "gettext", "types", "functools", "re",
                  "_collections_abc", "locale", "decimal", "_pydecimal", "dataclasses", "copy", "posixpath",
                  "contextlib"}


def _allowed_code(filename: str) -> bool:
    if filename.startswith("<"):  # a dataclass's generated __init__
        return True
    path = Path(filename).resolve()
    if path in (ROOTS[0], ROOTS[2]) or ROOTS[1] in path.parents or "numpy" in path.parts:
        return True
    if "hypothesis" in path.parts:  # the search's own garbage-collector callback, run wherever gc runs
        return True
    return path.parent.name.startswith("python3") and path.stem in STDLIB_ALLOWED


@contextlib.contextmanager
def watched():
    """Record the audited events, and the Python code run outside the allowed places, while the block runs."""
    events, foreign = [], []
    _WATCHING.events = events

    def profile(frame, event, arg):
        if event == "call" and not _allowed_code(frame.f_code.co_filename):
            foreign.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield events, foreign
    finally:
        sys.setprofile(previous)
        _WATCHING.events = None


def _declared_state():
    """What a reading must never change: every declared class's attributes and every enum member's state."""
    state = {}
    for kind in WIRE_TYPES:
        state[kind] = {k: id(v) for k, v in vars(kind).items()}
        if issubclass(kind, enum.Enum):
            for member in kind:
                state[(kind, member.name)] = (member.name, member.value, dict(vars(member)))
    return state


def made_of_allowed_types(value, depth: int = 0) -> bool:
    """Return whether ``value`` and everything it holds is of an allowed type (declared types by their fields)."""
    assert depth <= 2 * MAX_DEPTH + 10
    kind = type(value)
    if kind not in ALLOWED_TYPES:
        return False
    if kind in (list, tuple, set, frozenset):
        return all(made_of_allowed_types(v, depth + 1) for v in value)
    if kind in (dict, types.MappingProxyType):
        return all(made_of_allowed_types(k, depth + 1) and made_of_allowed_types(v, depth + 1)
                   for k, v in value.items())
    if kind is numpy.ndarray:
        return value.dtype.kind in "biuf"
    declared = registry().by_class.get(kind)
    if declared is not None and declared.form in ("fields", "tuple", "error"):
        return all(made_of_allowed_types(getattr(value, name), depth + 1) for name in declared.names)
    return True


def read(data):
    """Read ``data`` as the grader reads a learner's reply; return the value or the WireError."""
    try:
        return Codec(refs_out=True, types=registry()).decode(data)
    except WireError as exc:
        return exc


# --------------------------------------------------------------------------------------------
# Arbitrary messages


@SETTINGS
@given(MESSAGES)
def test_any_message_reads_as_allowed_data_or_one_error_and_runs_nothing(data):
    """Whatever a message holds, reading it gives allowed data or a WireError; it imports nothing, opens
    nothing, runs no code outside the codec, the declared constructors and the number code, and changes
    no declared class or enum member."""
    before = _declared_state()
    with watched() as (events, foreign):
        value = read(data)
    assert events == [] and foreign == []
    assert _declared_state() == before
    assert isinstance(value, WireError) or made_of_allowed_types(value)


@SETTINGS
@given(st.binary(max_size=300) | MESSAGES.map(lambda m: json.dumps({"ok": m}).encode()))
def test_any_line_is_a_message_or_one_error(line):
    """Any bytes on the wire are a message (a JSON object) or one WireError, never another exception."""
    try:
        message = parse_line(line + b"\n")
    except WireError:
        return
    assert type(message) is dict
    assert isinstance(read(message.get("ok")), (WireError, object))


def test_a_line_past_the_limit_or_nested_past_the_parser_is_one_error():
    with pytest.raises(WireError):
        parse_line(b"[" * 200_000 + b"]" * 200_000)
    with pytest.raises(WireError):
        parse_line(b'{"ok": "' + b"a" * (MAX_LINE + 1) + b'"}')


# --------------------------------------------------------------------------------------------
# The three attacks in their general form


def _reachable_names():
    """Every ``module:qualname`` reachable from a module of ctx_reference by one or two attribute steps."""
    names = set()
    for module_info in pkgutil.walk_packages(ctx_reference.__path__, "ctx_reference."):
        if module_info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(module_info.name)
        except Exception:
            continue
        for attr, value in list(vars(module).items()):
            names.add(f"{module.__name__}:{attr}")
            for inner in list(getattr(value, "__dict__", {}))[:200]:
                names.add(f"{module.__name__}:{attr}.{inner}")
    return sorted(names)


@pytest.mark.heavy  # imports every module of ctx_reference (matplotlib's among them) and reads ~100,000 messages
def test_no_class_name_a_message_spells_is_looked_up_or_called():
    """Every name a message could give, reachable from ctx_reference (``plots:font_manager.subprocess.Popen``
    among them), in every form an object took or takes, is refused unless it is a declared type read in its
    own form; nothing is imported or called while reading any of them."""
    declared = registry().by_name
    payloads = [{"call": {"t": [{"l": ["sh", "-c", "exit 0"]}]}, "st": None}, {"a": [{"l": ["sh"]}]},
                {"new": {"t": []}}, {"nt": []}, {"k": []}, {"e": "SAFE"}, {"dc": {"d": []}},
                {"args": {"t": []}, "st": None}]
    names = _reachable_names()
    assert "ctx_reference.plots:font_manager" in names and len(names) > 1000
    before = _declared_state()
    with watched() as (events, foreign):
        results = [(name, read({"o": name, **payload})) for name in names for payload in payloads]
    assert events == [] and foreign == []
    assert _declared_state() == before
    read_as_values = {name for name, value in results if not isinstance(value, WireError)}
    assert read_as_values <= set(declared), sorted(read_as_values - set(declared))[:5]
    refused = [value for name, value in results if name not in declared]
    assert all(isinstance(value, WireError) for value in refused)


@SETTINGS
@given(st.sampled_from([Zone, Outcome]), st.dictionaries(st.sampled_from(["_name_", "_value_", "__class__",
                                                                         "name", "value", "e", "st"]),
                                                        JSON_LEAVES, max_size=3))
def test_an_enum_member_is_found_by_its_name_never_made_or_changed(kind, state):
    """A message naming an enum member with any state beside it reads as that same member, unchanged, or
    is refused; a member it does not name is refused."""
    name = registry().by_class[kind].name
    member = next(iter(kind))
    before = _declared_state()
    for data in ({"o": name, "e": member.name, **state}, {"o": name, "call": {"t": [member.value]}, "st": state},
                 {"o": name, "e": "NOT_A_MEMBER"}, {"o": name, "e": member.value}):
        value = read(data)
        assert value is member or isinstance(value, WireError)
    assert _declared_state() == before
    assert read({"o": name, "e": member.name}) is member


class _EqualToEverything:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


@SETTINGS
@given(MESSAGES)
def test_no_value_read_is_equal_to_everything(data):
    """Nothing read from the wire is equal to an object it has never seen (``mock.ANY`` and its kind)."""
    value = read(data)
    if isinstance(value, WireError) or type(value) is numpy.ndarray:
        return
    stranger = object()
    assert (value == stranger) is False
    assert read({"o": "ctx_reference.checks:mock.ANY", "a": []}).__class__ is Unreadable


# --------------------------------------------------------------------------------------------
# Limits before work


@pytest.mark.parametrize("data", [
    {"nd": {"l": [1]}, "dtype": "(1000000000,)u1"},
    {"nd": {"l": [1]}, "dtype": "object"},
    {"nd": {"l": [1]}, "dtype": "V1000000000"},
    {"r": [0, 10**18, 1]},
    {"dec": "1e999999999"},
    {"dec": "9" * 10_000},
    {"l": [0] * (MAX_ITEMS + 1)},
    {"l": [{"l": [0] * 1000}] * (MAX_ITEMS // 1000 + 1)},
], ids=["dtype-shape", "dtype-object", "dtype-void", "range", "decimal-exponent", "decimal-digits", "items",
        "items-nested"])
def test_a_message_past_a_limit_is_refused_before_it_is_built(data):
    """A message that would make the grader allocate past the limits is refused, within a small bound of memory."""
    tracemalloc.start()
    try:
        value = read(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(value, WireError)
    assert peak < 64 * 2**20, f"reading took {peak / 2**20:.0f} MiB"


@SETTINGS
@given(MESSAGES)
def test_memory_while_reading_is_bounded_by_the_message(data):
    """Reading allocates at most a small multiple of the message's size (plus a constant)."""
    text = json.dumps(data)
    tracemalloc.start()
    try:
        read(json.loads(text))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 64 * len(text) + 2**20


# --------------------------------------------------------------------------------------------
# Arbitrary objects given to the learner's side's encoder


class _LyingItem(Item):
    def __eq__(self, other):
        return True

    __hash__ = Item.__hash__


class _Forged:
    def __reduce_ex__(self, protocol):
        return (type(self), (["sh", "-c", "exit 0"],))


_Forged.__module__, _Forged.__qualname__ = "ctx_reference.plots", "font_manager.subprocess.Popen"


class _MyList(list):
    pass


OBJECTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.fractions() | st.decimals(allow_nan=True)
    | st.sampled_from([Zone.SAFE, Outcome.FITS, Item("a", 1), BudgetError(3, 2), _LyingItem("b", 2), _Forged(),
                       mock.ANY, _MyList([1]), numpy.int64(3), numpy.float32(0.5), numpy.bool_(True),
                       numpy.arange(3), numpy.array(["s"]), numpy.array([1 + 2j]), lambda: 0, iter([1]),
                       functools.partial(int, "1"), object(), range(3), b"\x00", types.MappingProxyType({"a": 1}),
                       LedgerEntry({"system": 1}, 1, Zone.SAFE, 10), Assembly([Item("x", 1)], 1, [])]),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=20,
)


@SETTINGS
@given(OBJECTS)
def test_any_object_the_learner_returns_reads_as_allowed_data_or_one_error(value):
    """The learner's side encodes any object to data or raises WireError; the grader reads that data as allowed
    data or refuses it with Unreadable: a subclass with lying methods, a forged class name and ``mock.ANY``
    never come back as what they pretend to be."""
    try:
        data = json.loads(json.dumps(Codec(refs_out=False, types=registry()).encode(value)))
    except WireError:
        return
    got = read(data)
    assert isinstance(got, WireError) or made_of_allowed_types(got)
    if isinstance(got, WireError):
        return
    again = json.dumps(Codec(refs_out=False, types=registry()).encode(got))
    assert again == json.dumps(data)  # the same value: it encodes to the same data (nan and sNaN included)


def test_honest_values_of_every_declared_type_come_back_equal():
    """A value of each declared type the learner returns comes back equal, of the same exact type."""
    codec = Codec(refs_out=False, types=registry())
    values = [Zone.DANGER, Outcome.REJECTED, Item("a", 3, 1, True, False, "x"),
              Assembly([Item("a", 3)], 3, [(Item("b", 4), "budget")]), LedgerEntry({"system": 1}, 1, Zone.SAFE, 10),
              fractions.Fraction(7, 3), decimal.Decimal("2.50"), numpy.float64(0.25), numpy.int32(4),
              numpy.array([[1.5, 2.0]]), [Item("a", 1), Item("a", 1)]]
    for value in values:
        got = read(json.loads(json.dumps(codec.encode(value))))
        if type(value) is numpy.ndarray:
            assert type(got) is numpy.ndarray and (got == value).all() and got.dtype == value.dtype
        else:
            assert got == value
    error = read(json.loads(json.dumps(codec.encode(BudgetError(30, 20)))))
    assert type(error) is BudgetError and (error.required_tokens, error.budget) == (30, 20)


def test_every_declared_type_has_a_form_and_no_field_outside_the_schema():
    """Each declared type is carried in one form; its fields are its init fields (none set behind the constructor)."""
    for kind in WIRE_TYPES:
        declared = registry().by_class[kind]
        if dataclasses.is_dataclass(kind):
            assert declared.names == tuple(f.name for f in dataclasses.fields(kind))
        assert declared.form in ("enum", "tuple", "fields", "error", "args", "empty")
