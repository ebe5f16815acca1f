"""Runs a learner's cells in a process of their own and calls their functions on request.

The grader (``ctx_course/grading/steps/judge.py``, through ``answer_session.py``, the other end of
this protocol) starts this file as a script inside the sandbox (``python -P answer.py``, a copy of
this file in the process's own folder): the process sees the code cells the learner's notebook
runs that the learner wrote (answer cells, cells they added, release cells they edited) and the
release cells they need, in notebook order, and a build of ``ctx_reference`` without the
exercise's own functions. It runs the cells up to each check cell's place (a *checkpoint*) when
asked, then answers the grader's requests, one JSON object per line over its standard input and
output: "call the learner's ``remaining``, as bound at this checkpoint, with these arguments" is
answered with the returned value as plain data, or with the exception raised. Whatever the
learner's code does in this process (print, patch, fork, forge messages), the grader only ever
reads data from it and judges that data itself; nothing this process says about itself is trusted.

Also here, because both ends use it: the *wire codec* (``Codec``) that turns values into JSON and
back by a closed schema: plain values, containers, exact numbers, numpy scalars and arrays of
numbers, and the workbook's own value types declared in a ``Registry`` (each rebuilt through its
own constructor from fields checked against their hints; an enum member found by its name). What
the grader reads from this process is data only: decoding never imports, never calls a class or
function a message names, never writes into an object, and stops at the limits below. Any other
object is passed as a *reference*, an id the other end can call back (only the grader's objects
go so; this process's go as a marker the grader refuses).

Leaves out: the sandbox itself (``policy.py``), starting and talking to this process
(``answer_session.py``), what the answers are compared with (the grader's side). Imports nothing
outside the standard library (it runs where ``ctx_course`` is not visible).

Vocabulary: the *job* is the first message (the cells and checkpoints, the learner's names, the
import path, the working folder, the cell time limit, the names of the declared value types); a
*request* is ``{"advance": checkpoint}`` (run on to that checkpoint),
``{"call": name, "at": checkpoint, "args": [...], "kwargs": {...}}`` (the grader calls the learner's
``name``), ``{"batch": name, "at": checkpoint, "calls": [[args, kwargs], ...]}`` (several calls of
it, in order) or ``{"cb": ref, "attr": name, ...}`` (this process calls
back an object the grader passed by reference); its *reply* is ``{"ready": {...}}``, ``{"ok":
value, ...}``, ``{"raised": {...}}`` or ``{"batch": [entry, ...]}`` (an entry per call run, each
one of the two before, or ``{"timeout": true}``).
"""
import builtins
import collections.abc
import dataclasses
import decimal
import enum
import fractions
import functools
import inspect
import io
import json
import os
import re
import signal
import sys
import time
import types
import typing

PACKAGE = "ctx_reference"
# Limits on what crosses the wire, checked while reading and before anything is built from it
# (docs/sandbox.md names each; every honest answer of every exercise fits with room).
MAX_LINE = 32 * 2**20  # longest message, in bytes, either way
MAX_DEPTH = 60  # deepest nesting of a value on the wire
MAX_ITEMS = 1_000_000  # most values (containers, items, array elements) one message may decode to
MAX_DIGITS = 4300  # most digits of a Decimal and of its exponent (Python's own limit for an int's digits)
# A batch of calls (``_answer_batch``): its reply stops growing at BATCH_REPLY_BYTES, an entry holds at
# most BATCH_ENTRY_BYTES, so that a reply stays under MAX_LINE; BATCH_PROGRESS seconds between progress messages.
BATCH_REPLY_BYTES = MAX_LINE // 4
BATCH_ENTRY_BYTES = MAX_LINE // 2
BATCH_PROGRESS = 1.0
KNOWN_OBJECTS = 4096  # most encodings a codec that remembers keeps (then it starts again)
# Attributes a reference's proxy forwards to the object it stands for (besides public names).
FORWARDED = ("__call__", "__iter__", "__next__", "__len__", "__getitem__", "__contains__")
# The element types of the numpy arrays that cross (numbers and booleans), by their exact names.
ARRAY_DTYPES = frozenset(
    {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"}
)
# The float values JSON cannot hold, tagged by their repr.
_SPECIAL_FLOATS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}
# Values that are their own encoding, and data that is its own value: a container's items of these
# kinds are taken as they are, without a call of ``encode`` or ``decode`` each (the same result).
_PLAIN = frozenset({type(None), bool, int, str})
_PLAIN_DATA = frozenset({type(None), bool, int, float, str})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,79}")
# One line of the wire as text: what ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` gives, by
# one encoder made once (``json.dumps`` with options makes a new one each call).
to_text = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class WireError(Exception):
    """A message or a value that cannot cross the wire; the message says why."""


class Unreadable(WireError):
    """A value of a type the wire does not carry; ``kind`` is its type's name as sent (an identifier, or "?")."""

    def __init__(self, kind: object):
        self.kind = kind if type(kind) is str and _NAME.fullmatch(kind) else "?"
        super().__init__(f"a value of type {self.kind} cannot be read here")


def _(message):
    """Return ``message`` in the reader's language where ``ctx_reference`` is loaded (the grader's side), else as is.

    This file imports nothing outside the standard library: on the grader's side the package's
    ``ctx_reference.i18n`` is already loaded; in the answer process nothing is looked up.
    """
    i18n = sys.modules.get(f"{PACKAGE}.i18n")
    try:
        return str(i18n.gettext(message)) if i18n is not None and __name__ != "__main__" else message
    except Exception:
        return message


# --------------------------------------------------------------------------------------------
# The declared value types


class WireType:
    """One declared value type of the workbook: its exact name on the wire, its class, how it is read back.

    ``form`` is how its values are written and rebuilt: ``"enum"`` (a member, by its name; never
    created), ``"tuple"`` (a named tuple, its fields in order, rebuilt by the class's constructor),
    ``"fields"`` (a dataclass, its init fields by name), ``"error"`` (an exception, the
    constructor's parameters read from the attributes of the same names), ``"args"`` (a class
    whose ``__getnewargs__`` gives its constructor's arguments), ``"empty"`` (a class whose
    instances hold no state, built with no argument). ``names`` are the fields or parameters, and
    ``hints`` the type each must hold (``typing`` forms; anything not understood allows any data).
    """

    __slots__ = ("name", "kind", "form", "names", "hints", "checks")
    name: str
    kind: type
    form: str
    names: tuple[str, ...]
    hints: dict[str, typing.Any]
    checks: tuple  # per field: the exact types it may hold (a frozenset), or a predicate (``Registry`` sets them)

    def __init__(self, kind: type):
        self.kind = kind
        self.name = f"{kind.__module__}:{kind.__qualname__}"
        hints = _hints(kind)
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            self.form, self.names = "enum", ()
        elif issubclass(kind, tuple) and hasattr(kind, "_fields") and hasattr(kind, "_make"):
            self.form, self.names = "tuple", tuple(kind._fields)
        elif dataclasses.is_dataclass(kind):
            fields = dataclasses.fields(kind)
            if not all(f.init for f in fields):
                raise TypeError(f"{self.name}: every field of a wire type must be an init field")
            self.form, self.names = "fields", tuple(f.name for f in fields)
        elif issubclass(kind, BaseException):
            parameters = list(inspect.signature(kind.__init__).parameters.values())[1:]
            if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in parameters):
                raise TypeError(f"{self.name}: an error type's constructor must take named parameters only")
            self.form, self.names = "error", tuple(p.name for p in parameters)
            hints = _hints(kind.__init__)
        elif "__getnewargs__" in vars(kind):
            self.form, self.names = "args", ()
        elif kind.__init__ is object.__init__ and kind.__new__ is object.__new__ and not getattr(kind, "__slots__", ()):
            self.form, self.names = "empty", ()
        else:
            raise TypeError(f"{self.name} has no form the wire can carry")
        self.hints = {name: hints.get(name) for name in self.names}
        self.checks = ()


def _hints(target) -> dict:
    try:
        return typing.get_type_hints(target)
    except Exception:  # a hint that does not resolve allows any data
        return {}


class Registry:
    """The closed set of value types that cross the wire, by exact name and exact class; nothing else is looked up."""

    def __init__(self, kinds=()):
        self.by_name: dict[str, WireType] = {}
        self.by_class: dict[type, WireType] = {}
        for kind in kinds:
            declared = WireType(kind)
            self.by_name[declared.name] = declared
            self.by_class[kind] = declared
        for declared in self.by_name.values():  # once every type is known: a hint may name another
            declared.checks = tuple(_checker(declared.hints[name], self) for name in declared.names)

    @classmethod
    def from_names(cls, names) -> "Registry":
        """Return the registry of the types ``names`` (``"module:qualname"``) names, leaving out any not found.

        For the answer process, which is handed the grader's list of names in its job: a type the
        build of ``ctx_reference`` does not hold (withheld with the exercise) is not carried.
        """
        import importlib

        kinds: list[type] = []
        for name in names:
            module, _sep, qualname = str(name).partition(":")
            try:
                value = importlib.import_module(module)
                for part in qualname.split("."):
                    value = getattr(value, part)
            except Exception:
                continue
            if isinstance(value, type):
                kinds.append(value)
        return cls(kinds)


def _numpy_scalar(value):
    """Return a numpy scalar as the Python value of its kind (np.int64 -> int ...), or None if it is not one."""
    kind = type(value)
    if kind.__module__ != "numpy" or not hasattr(value, "item") or getattr(value, "shape", None) != ():
        return None
    name = kind.__name__
    if name.startswith(("int", "uint", "float")) or name in ("bool_", "bool", "longlong", "ulonglong"):
        return value.item()
    return None


# --------------------------------------------------------------------------------------------
# The codec


class Codec:
    """Turn values into JSON-ready data and back by the closed schema of ``types`` (a ``Registry``).

    What decodes: ``None``, ``bool``, ``int``, ``float`` (nan and the infinities tagged), ``str``,
    ``bytes``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset``, ``range``, a read-only
    mapping, ``Fraction``, ``Decimal``, numpy arrays of the ``ARRAY_DTYPES``, the declared types
    (each rebuilt through its own constructor from fields checked against their hints), and
    references to this side's own objects. Anything else, and anything past a limit, raises
    ``WireError``; decoding never imports, never calls what a message names, never writes into an
    object. numpy scalars go as the Python numbers of their kind.

    ``refs_out`` says what an object that is not data becomes when encoded: with True, a reference
    this side keeps (and the other side can call); with False, the marker ``{"x": type name}`` (a
    value the other side refuses with ``Unreadable``). ``remote`` makes the proxy of a reference
    the other side sent.

    With ``remember``, a named tuple of the registry whose fields are plain values (a
    ``TurnRecord``) is encoded once and its encoding reused while this codec keeps the object (it
    cannot change): the grader sends the same records in every turn's view. Only the grader's
    side remembers, since its objects are its own. With ``reuse``, the other side reads such a
    record once and gives the same object for the same fields again.

    With ``refer`` as well (the grader's session; it needs ``remember``), a remembered record
    inside a container crosses in full once, numbered, as ``{"keep": n, "v": encoding}``, and
    after that as ``{"kept": n}``, while the other side is known to hold it (in a list or tuple of
    such records only, ``{"kl": [...]}`` or ``{"kt": [...]}``, as the bare number): the numbers a message
    used count as held only once ``commit`` is called (the grader calls it when the call's reply
    says "ok", so the other side read the whole message), and ``forget_kept`` drops them all (a
    new process holds none). Numbers are below ``KNOWN_OBJECTS`` and are given again, oldest
    first, once they run out. Only a codec with ``reuse`` reads these tags; any other codec (the
    grader's reading a learner's value) refuses them as malformed.
    """

    def __init__(self, refs_out: bool, remote=None, remember: bool = False, types: Registry | None = None,
                 reuse: bool = False, refer: bool = False):
        self.refs_out = refs_out
        self.remote = remote
        self.types = types if types is not None else Registry()
        self.refs: dict[int, object] = {}
        # id -> (the object, its encoding); the object is kept so that its id is not reused
        self._known: dict[int, tuple] | None = {} if remember else None
        self._budget = 0  # values the message being decoded may still hold
        # with ``reuse``: the named tuples of plain fields read so far, by their fields (the same record in
        # every view is read once); only the answer process reuses, since what it reads is the grader's
        self._reused: dict[tuple, object] | None = {} if reuse else None
        # with ``refer``: id -> (the record, its number) of the records the other side holds, and of those this
        # message numbered (held once committed); the record each number was last given to; the next number
        self._kept: dict[int, tuple] | None = {} if refer and remember else None
        self._keeping: dict[int, tuple] = {}
        self._numbered: dict[int, object] = {}
        self._serial = 0
        # with ``reuse``: number -> the record the other side sent in full under it (``{"keep": n, ...}``)
        self._held: dict[int, object] | None = {} if reuse else None

    # -- encoding
    def encode(self, value, depth: int = 0):  # noqa: C901 - the wire format, one case per kind in the order tried
        if depth > MAX_DEPTH:
            raise WireError("the value is nested too deeply")
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is float:
            return value if value == value and value not in (float("inf"), float("-inf")) else {"f": repr(value)}
        if kind.__module__ == "numpy":
            scalar = _numpy_scalar(value)
            if scalar is not None:
                return self.encode(scalar, depth)
        if kind is list or kind is tuple:
            if self._kept is not None and value and depth + 1 < MAX_DEPTH:
                records = self._records(value, depth + 1)
                if records is not None:  # records only: each held one as its bare number
                    return {"kl" if kind is list else "kt": records}
            return {"l" if kind is list else "t": self._items(value, depth + 1)}
        if kind is dict:
            return {"d": self._pairs(value.items(), depth + 1)}
        if kind in (set, frozenset):
            return {"s" if kind is set else "fs": self._items(value, depth + 1)}
        if kind is range:
            return {"r": [value.start, value.stop, value.step]}
        if kind is bytes:
            return {"b": value.hex()}
        if kind is types.MappingProxyType:
            return {"mp": self._pairs(value.items(), depth + 1)}
        if kind is fractions.Fraction:
            return {"q": [value.numerator, value.denominator]}
        if kind is decimal.Decimal:
            return {"dec": str(value)}
        if kind.__module__ == "numpy" and kind.__name__ == "ndarray" and str(value.dtype) in ARRAY_DTYPES:
            return {"nd": self.encode(value.tolist(), depth + 1), "dtype": str(value.dtype)}
        if kind is Remote:
            return {"ref": object.__getattribute__(value, "_ref")}
        declared = self.types.by_class.get(kind)
        if declared is not None:
            return self._encode_object(declared, value, depth)
        if self.refs_out:
            ref = len(self.refs) + 1
            self.refs[ref] = value
            return {"ref": ref, "type": kind.__name__}
        return {"x": kind.__name__}

    def _encode_object(self, declared: WireType, value, depth):
        form = declared.form
        if form == "enum":
            return {"o": declared.name, "e": value.name}
        if form == "tuple":
            encoded = {"o": declared.name, "nt": self._items(value, depth + 1)}
            known = self._known
            if known is not None and all(type(v) in _PLAIN for v in value):
                if len(known) >= KNOWN_OBJECTS:
                    known.clear()
                known[id(value)] = (value, encoded)
            return encoded
        if form == "empty":
            return {"o": declared.name, "a": []}
        if form == "args":
            return {"o": declared.name, "a": self._items(tuple(value.__getnewargs__()), depth + 1)}
        missing = object()
        fields: dict[str, typing.Any] = {}
        for name in declared.names:
            item = getattr(value, name, missing)
            if item is missing:
                raise WireError(f"a {type(value).__name__} without its {name} cannot cross the wire")
            fields[name] = item
        return {"o": declared.name, "k": self._pairs(fields.items(), depth + 1)}

    def _items(self, values, depth: int) -> list:
        """Return the encodings of ``values``, each at ``depth`` (a plain value's is itself; remembered ones reused)."""
        encode = self.encode
        if depth > MAX_DEPTH:
            return [encode(v, depth) for v in values]  # raises at the first item, as encode does
        known = self._known
        kept = self._kept
        if kept is not None and depth < MAX_DEPTH:
            refer = self._refer
            return [
                v if type(v) in _PLAIN
                else {"kept": held[1]} if (held := kept.get(id(v))) is not None and held[0] is v
                else refer(v, depth)
                for v in values
            ]
        if not known or depth == MAX_DEPTH:  # at the deepest level a tuple's fields would be too deep
            return [v if type(v) in _PLAIN else encode(v, depth) for v in values]
        return [
            v if type(v) in _PLAIN
            else seen[1] if (seen := known.get(id(v))) is not None and seen[0] is v
            else encode(v, depth)
            for v in values
        ]

    def _refer(self, value, depth: int):
        """Return the encoding of ``value`` (an item at ``depth`` below MAX_DEPTH, not held by the other side) for a
        codec that refers: a remembered record numbered, in full (``_items`` refers to one held)."""
        key = id(value)
        known = self._known
        seen = known.get(key) if known is not None else None
        encoded = seen[1] if seen is not None and seen[0] is value else self.encode(value, depth)
        seen = known.get(key) if known is not None else None
        if seen is None or seen[0] is not value:  # not a record of plain fields: no number
            return encoded
        keeping = self._keeping.get(key)
        number = keeping[1] if keeping is not None and keeping[0] is value else self._number(value)
        return {"keep": number, "v": encoded}

    def _records(self, values, depth: int) -> list | None:
        """Return the items of ``values`` if every one is a record of plain fields: a held one as its number, another
        numbered in full (``_refer``); None at the first item that is not such a record."""
        kept, by_class = self._kept, self.types.by_class
        items: list = []
        for value in values:
            held = kept.get(id(value))  # type: ignore[union-attr]
            if held is not None and held[0] is value:
                items.append(held[1])
                continue
            declared = by_class.get(type(value))
            if declared is None or declared.form != "tuple":
                return None
            encoded = self._refer(value, depth)
            if "keep" not in encoded:
                return None
            items.append(encoded)
        return items

    def _number(self, value) -> int:
        """Give ``value`` the next number (kept once committed); the record that had it before is no longer held."""
        number = self._serial % KNOWN_OBJECTS
        self._serial += 1
        before = self._numbered.get(number)
        if before is not None:
            for table in (self._kept, self._keeping):
                entry = table.get(id(before))  # type: ignore[union-attr]
                if entry is not None and entry[0] is before and entry[1] == number:
                    del table[id(before)]  # type: ignore[union-attr]
        self._numbered[number] = value
        self._keeping[id(value)] = (value, number)
        return number

    def commit(self, held: bool = True) -> None:
        """Count the records numbered since the last ``commit`` as held by the other side (``held``), or not: they
        will cross in full again."""
        if held and self._kept is not None:
            self._kept.update(self._keeping)
        self._keeping.clear()

    def forget_kept(self) -> None:
        """Hold nothing as kept by the other side (a new process): every record crosses in full again."""
        if self._kept is not None:
            self._kept.clear()
        self._keeping.clear()
        self._numbered.clear()
        self._serial = 0

    def _pairs(self, items, depth: int) -> list:
        """Return the encodings of a mapping's ``items``, each key and value at ``depth``, as pairs."""
        encode = self.encode
        if depth > MAX_DEPTH:
            return [[encode(k, depth), encode(v, depth)] for k, v in items]
        return [
            [k if type(k) in _PLAIN else encode(k, depth), v if type(v) in _PLAIN else encode(v, depth)]
            for k, v in items
        ]

    # -- decoding
    def decode(self, data):
        """Return the value ``data`` (one message's value, as JSON gave it) encodes, or raise WireError."""
        self._budget = MAX_ITEMS
        try:
            return self._decode(data, 0)
        except WireError:
            raise
        except RecursionError:
            raise WireError("the value is nested too deeply") from None
        except Exception as exc:  # a declared type's constructor refused the fields, numpy a ragged array
            raise WireError(f"malformed value ({type(exc).__name__})") from None

    def _count(self, items: int) -> None:
        self._budget -= items
        if self._budget < 0:
            raise WireError(f"the value holds more than {MAX_ITEMS} items")

    def _decode(self, data, depth: int):  # noqa: C901 - encode's cases read back, one per tag in the order tried
        if depth > MAX_DEPTH:
            raise WireError("the value is nested too deeply")
        kind = type(data)
        if kind in _PLAIN_DATA:
            return data
        if kind is not dict or len(data) == 0 or len(data) > 2:
            raise WireError("malformed value")
        self._count(1)
        if self._held is not None and ("kept" in data or "keep" in data):
            return self._decode_held(data, depth)
        if "l" in data:
            return self._values(data["l"], depth + 1)
        if "t" in data:
            return tuple(self._values(data["t"], depth + 1))
        if self._held is not None and ("kl" in data or "kt" in data):
            return self._held_records(data, depth + 1)
        if "d" in data:
            return self._mapping(data["d"], depth + 1)
        if "s" in data:
            return set(self._values(data["s"], depth + 1))  # added in their order, as they came
        if "fs" in data:
            return frozenset(self._values(data["fs"], depth + 1))
        if "o" in data:
            return self._decode_object(data, depth)
        if "f" in data:
            if type(data["f"]) is not str or data["f"] not in _SPECIAL_FLOATS:
                raise WireError("malformed float")
            return _SPECIAL_FLOATS[data["f"]]
        if "r" in data:
            bounds = data["r"]
            if type(bounds) is not list or len(bounds) != 3 or any(type(v) is not int for v in bounds):
                raise WireError("malformed range")
            value = range(*bounds)
            self._count(len(value))
            return value
        if "b" in data:
            if type(data["b"]) is not str:
                raise WireError("malformed bytes")
            return bytes.fromhex(data["b"])
        if "mp" in data:
            return types.MappingProxyType(self._mapping(data["mp"], depth + 1))
        if "q" in data:
            parts = data["q"]
            if type(parts) is not list or len(parts) != 2 or any(type(v) is not int for v in parts):
                raise WireError("malformed fraction")
            return fractions.Fraction(parts[0], parts[1])
        if "dec" in data:
            return _decimal(data["dec"])
        if "nd" in data:
            return self._array(data, depth)
        if "ref" in data:
            ref = data["ref"]
            if type(ref) is int and ref in self.refs:
                return self.refs[ref]
            if self.remote is None or type(ref) is not int:
                raise WireError("a reference this side does not know")
            return self.remote(ref, str(data.get("type", "object"))[:80])
        if "x" in data:
            raise Unreadable(data["x"])
        raise WireError("malformed value")

    def _decode_held(self, data, depth):
        """Return the record a ``{"keep": n, "v": ...}`` sends (held under n from here on) or ``{"kept": n}`` names
        (only with ``reuse``: the answer process reading the grader's records)."""
        held = self._held
        number = data.get("kept", data.get("keep"))
        if type(number) is not int or not 0 <= number < KNOWN_OBJECTS or ("kept" in data) == ("keep" in data):
            raise WireError("malformed value")
        if "kept" in data:
            if len(data) != 1 or number not in held:
                raise WireError("a record this side was not sent")
            return held[number]
        if "v" not in data:
            raise WireError("malformed value")
        value = held[number] = self._decode(data["v"], depth)
        return value

    def _held_records(self, data, depth):
        """Return the list (``{"kl": [...]}``) or tuple (``"kt"``) of records whose items are numbers of held records
        or records sent in full (only with ``reuse``: the answer process reading the grader's views)."""
        items = data.get("kl", data.get("kt"))
        if type(items) is not list or len(data) != 1:
            raise WireError("malformed value")
        self._count(len(items))
        held, decode = self._held, self._decode
        if depth > MAX_DEPTH:
            raise WireError("the value is nested too deeply")
        values = [
            held[v] if type(v) is int and v in held
            else decode(v, depth) if type(v) is dict
            else _not_held(v)
            for v in items
        ]
        return values if "kl" in data else tuple(values)

    def _array(self, data, depth):
        dtype = data.get("dtype")
        if type(dtype) is not str or dtype not in ARRAY_DTYPES:
            raise Unreadable("ndarray")
        values = self._decode(data["nd"], depth + 1)
        if type(values) is not list:
            raise WireError("malformed array")
        import numpy

        return numpy.array(values, dtype=dtype)

    def _decode_object(self, data, depth):
        name = data["o"]
        declared = self.types.by_name.get(name) if type(name) is str else None
        if declared is None:
            raise Unreadable(name.rpartition(":")[2].rpartition(".")[2] if type(name) is str else "?")
        kind, form = declared.kind, declared.form
        if form == "enum":
            member = data.get("e")
            if type(member) is not str or member not in kind.__members__:
                raise WireError(f"{kind.__name__} has no member {str(member)[:80]!r}")
            return kind.__members__[member]
        if form == "tuple":
            items = data.get("nt")
            reused = self._reused
            if reused is None or type(items) is not list or any(type(v) not in _PLAIN_DATA for v in items):
                return kind(*self._fields(declared, items, depth))
            key = (name, *items)
            value = reused.get(key)
            if value is None:
                if len(reused) >= KNOWN_OBJECTS:
                    reused.clear()
                value = reused[key] = kind(*self._fields(declared, items, depth))
            return value
        if form in ("empty", "args"):
            args = data.get("a")
            if type(args) is not list or (form == "empty" and args):
                raise WireError(f"malformed {kind.__name__}")
            return kind(*self._values(args, depth + 1))
        pairs = data.get("k")
        if type(pairs) is not list:
            raise WireError(f"malformed {kind.__name__}")
        names = [p[0] if type(p) is list and len(p) == 2 and type(p[0]) is str else None for p in pairs]
        if None in names:
            raise WireError(f"malformed {kind.__name__}")
        if names != list(declared.names):
            raise WireError(f"the fields of {kind.__name__} do not match")
        values = self._fields(declared, [p[1] for p in pairs], depth)
        return kind(**dict(zip(declared.names, values)))

    def _fields(self, declared: WireType, items, depth: int) -> list:
        """Return the decoded field values ``items`` of a ``declared`` type, each checked against its hint."""
        if type(items) is not list or len(items) != len(declared.names):
            raise WireError(f"the fields of {declared.kind.__name__} do not match")
        values = self._values(items, depth + 1)
        for name, check, value in zip(declared.names, declared.checks, values):
            if not (type(value) in check if type(check) is frozenset else check(value)):
                raise WireError(f"the field {name} of {declared.kind.__name__} holds a {type(value).__name__}")
        return values

    def _values(self, items, depth: int) -> list:
        """Return the values of the data ``items``, each decoded at ``depth`` (plain data is its own value)."""
        if type(items) is not list:
            raise WireError("malformed value")
        self._count(len(items))
        decode = self._decode
        if depth > MAX_DEPTH:
            return [decode(v, depth) for v in items]  # raises at the first item, as decode does
        held = self._held
        if held:  # a record held here, named by its number, is that record (counted as one item)
            return [
                v if type(v) in _PLAIN_DATA
                else held[number] if type(v) is dict and len(v) == 1 and type(number := v.get("kept")) is int
                and number in held
                else decode(v, depth)
                for v in items
            ]
        return [v if type(v) in _PLAIN_DATA else decode(v, depth) for v in items]

    def _mapping(self, pairs, depth: int) -> dict:
        """Return the dict of the data ``pairs`` ([key, value] each), keys and values decoded at ``depth``."""
        if type(pairs) is not list or any(type(p) is not list or len(p) != 2 for p in pairs):
            raise WireError("malformed mapping")
        self._count(2 * len(pairs))
        decode = self._decode
        if depth > MAX_DEPTH:
            return {decode(k, depth): decode(v, depth) for k, v in pairs}
        return {
            (k if type(k) in _PLAIN_DATA else decode(k, depth)): (v if type(v) in _PLAIN_DATA else decode(v, depth))
            for k, v in pairs
        }


def _not_held(number):
    raise WireError("a record this side was not sent")


def _decimal(text) -> decimal.Decimal:
    """Return the Decimal ``text`` spells, refusing one whose digits or exponent pass MAX_DIGITS."""
    if type(text) is not str or len(text) > 2 * MAX_DIGITS:
        raise WireError("malformed decimal")
    try:
        value = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise WireError("malformed decimal") from None
    exponent = value.as_tuple().exponent
    if type(exponent) is int and abs(exponent) > MAX_DIGITS:
        raise WireError("malformed decimal")
    return value


_NUMBERS = (bool, int, float, fractions.Fraction, decimal.Decimal)
_SEQUENCES = (list, tuple)


def _checker(hint, registry: "Registry"):
    """Return the check of a field of type ``hint``: the exact types it may hold, where that says it all, else
    a predicate (``_fits``). Built once per registry, so that reading a record costs a set lookup a field."""
    if hint is None or hint is typing.Any:
        return _anything
    simple = _simple_types(hint, registry)
    if simple is not None:
        return simple
    return _fits(hint, registry)


def _simple_types(hint, registry: "Registry") -> frozenset | None:
    """Return the exact types a value of ``hint`` may be, or None where the hint says more than a type."""
    if hint is type(None):
        return frozenset({type(None)})
    if hint is bool:
        return frozenset({bool})
    if hint in (int, float):
        return frozenset(_NUMBERS)
    if hint in (str, bytes) or (isinstance(hint, type) and hint in registry.by_class):
        return frozenset({hint})
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        arms = [_simple_types(arm, registry) for arm in typing.get_args(hint)]
        return frozenset().union(*arms) if all(arm is not None for arm in arms) else None  # type: ignore[arg-type]
    return None


def _anything(value) -> bool:
    return True


def _fits(hint, registry: Registry):  # noqa: C901 - one case per form of hint
    """Return the predicate saying whether a decoded value is of the shape ``hint`` states (loosely: numbers for
    numbers, sequences for sequences, the exact declared class for a declared class; a hint not understood allows
    any data). The hint is read once, here: the predicate only tests the value, the items' predicates inside."""
    if hint is None or hint is typing.Any:
        return _anything
    simple = _simple_types(hint, registry)  # None, bool, numbers, str, bytes, a declared class, unions of them
    if simple is not None:
        return lambda value: type(value) in simple
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:  # an arm says more than a type
        arms = [_fits(arm, registry) for arm in args]
        return lambda value: any(arm(value) for arm in arms)
    if origin is typing.Literal:
        return lambda value: value in args
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            each = _fits(args[0], registry)
            return lambda value: type(value) in _SEQUENCES and all(each(v) for v in value)
        places = [_fits(arg, registry) for arg in args]
        return lambda value: type(value) in _SEQUENCES and (
            not places or (len(places) == len(value) and all(fits(v) for v, fits in zip(value, places))))
    container = origin if origin is not None else hint
    if container in (list, collections.abc.Sequence, collections.abc.Iterable, collections.abc.Collection):
        each = _fits(args[0], registry) if args else _anything
        return lambda value: type(value) in _SEQUENCES and all(each(v) for v in value)
    if container in (set, frozenset, collections.abc.Set):
        each = _fits(args[0], registry) if args else _anything
        return lambda value: type(value) in (set, frozenset) and all(each(v) for v in value)
    if container in (dict, collections.abc.Mapping):
        if not args:
            return lambda value: type(value) in (dict, types.MappingProxyType)
        key, item = _fits(args[0], registry), _fits(args[1], registry)
        return lambda value: type(value) in (dict, types.MappingProxyType) and all(
            key(k) and item(v) for k, v in value.items())
    if isinstance(hint, type):
        return lambda value: isinstance(value, hint)
    return _anything


# --------------------------------------------------------------------------------------------
# Messages


def parse_line(line: bytes) -> dict:
    """Return the message one line of the wire holds (a JSON object), or raise WireError; at most MAX_LINE bytes."""
    if type(line) is not bytes or len(line) > MAX_LINE:
        raise WireError("a message is too long")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # not UTF-8 or not JSON, a number past Python's digits, too deep
        raise WireError("malformed message") from None
    if type(message) is not dict:
        raise WireError("malformed message")
    return message


class Channel:
    """One end of the line protocol: send a request, handle the other side's requests until the reply comes."""

    def __init__(self, reader, writer, codec: Codec, handle):
        self.reader, self.writer, self.codec, self.handle = reader, writer, codec, handle

    def send(self, message: dict) -> None:
        line = to_text(message).encode("utf-8") + b"\n"
        if len(line) > MAX_LINE:
            too_large = {"raised": {"type": "WireError", "message": "the value is too large to send"}}
            line = json.dumps(too_large).encode() + b"\n"
        self.writer.write(line)
        self.writer.flush()

    def send_text(self, text: str) -> None:
        """Send a message already written as JSON text (one line, at most MAX_LINE bytes)."""
        self.writer.write(text.encode("utf-8") + b"\n")
        self.writer.flush()

    def receive(self):
        line = self.reader.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_LINE or not line.endswith(b"\n"):
            raise WireError("a message is too long")
        return parse_line(line)

    def request(self, message: dict) -> dict:
        """Send ``message`` and return its reply, answering the other side's requests meanwhile."""
        self.send(message)
        while True:
            incoming = self.receive()
            if incoming is None:
                raise WireError("the other side went away")
            if "ok" in incoming or "raised" in incoming:
                return incoming
            self.send(self.handle(incoming))


class Remote:
    """Stands for an object the grader passed by reference: calls and public attributes are forwarded."""

    __slots__ = ("_ref", "_type", "_channel")

    def __init__(self, ref, kind, channel):
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_type", kind)
        object.__setattr__(self, "_channel", channel)

    def _forward(self, attr, *args, **kwargs):
        channel = object.__getattribute__(self, "_channel")
        codec = channel.codec
        reply = channel.request({
            "cb": object.__getattribute__(self, "_ref"), "attr": attr,
            "args": [codec.encode(a) for a in args], "kwargs": {k: codec.encode(v) for k, v in kwargs.items()},
        })
        if "raised" in reply:
            raise rebuild_exception(reply["raised"], codec)
        return codec.decode(reply["ok"])

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._forward(name, *args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._forward("__call__", *args, **kwargs)

    def __iter__(self):
        return iter(self._forward("__iter__"))

    def __len__(self):
        return self._forward("__len__")

    def __getitem__(self, key):
        return self._forward("__getitem__", key)

    def __contains__(self, item):
        return self._forward("__contains__", item)

    def __repr__(self):
        return f"<{object.__getattribute__(self, '_type')}>"


def describe_exception(exc: BaseException, codec: Codec) -> dict:
    """Return what crosses the wire for an exception: its type's name and module, message, and the object if it can."""
    kind = type(exc)
    info: dict[str, object] = {
        "type": kind.__name__[:100], "module": str(kind.__module__)[:200], "message": _text(exc)[:2000],
    }
    info["withheld"] = any(
        k.__name__ == "ReferenceWithheld" and k.__module__ == f"{PACKAGE}._withheld" for k in kind.__mro__
    )
    if kind in codec.types.by_class:  # a declared error type: the object itself, by its constructor's arguments
        try:
            info["value"] = codec.encode(exc)
        except Exception:
            pass
    return info


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return ""


def rebuild_exception(info, codec: Codec) -> BaseException:
    """Return an exception like the one ``describe_exception`` described, of a builtin kind or a new one.

    Nothing is looked up but the builtins: ``{"type": "ValueError", "message": "bad"}`` gives
    ``ValueError("bad")``, ``{"type": "MyError"}`` a fresh ``Exception`` subclass named ``MyError``.
    """
    name = info.get("type") if type(info) is dict else None
    name = name if type(name) is str and _NAME.fullmatch(name) else "Exception"
    message = info.get("message") if type(info) is dict else None
    message = message[:2000] if type(message) is str else ""
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        try:
            return kind(message)
        except Exception:  # a builtin kind whose constructor wants more (UnicodeDecodeError ...)
            pass
    return type(name, (Exception,), {})(message)


# --------------------------------------------------------------------------------------------
# The process


class _Shell:
    """What ``get_ipython()`` returns to an answer cell here: its namespace is the cells' one, magics do nothing."""

    def __init__(self, namespace: dict):
        self.user_ns = namespace

    def run_line_magic(self, *args, **kwargs):
        return None

    run_cell_magic = system = run_line_magic


def _python(source: str) -> str:
    """Return a cell's source as plain Python (IPython's magics become calls that do nothing)."""
    if not re.search(r"^\s*[%!]", source, flags=re.M):
        return source
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:
        return "\n".join("" if re.match(r"\s*[%!]", line) else line for line in re.split(r"\r\n|\r|\n", source))


def serve(reader, writer) -> None:
    """Read the job, then run its cells up to each checkpoint asked for and answer calls there, until the input ends.

    The job's ``cells`` are the notebook's code cells this side runs, in notebook order, with
    ``{"checkpoint": id}`` where a cell of the grader's side stands. ``{"advance": id}`` runs the
    cells up to that checkpoint, keeps which objects the job's ``names`` are bound to at each
    checkpoint it passes, and is answered with ``{"ready": ...}``: which of them are defined at
    that checkpoint (a callable, or a value as data). A call names its checkpoint (``"at"``) and
    calls the object bound there: a cell after the checkpoint that rebinds the name changes nothing.
    """
    namespace = {"__name__": "__main__", "__builtins__": builtins, "In": [""], "Out": {}}
    namespace["display"] = lambda *args, **kwargs: None
    shell = _Shell(namespace)
    namespace["get_ipython"] = lambda: shell
    channel: Channel  # bound below, before the codec decodes a reference that calls back through it
    codec = Codec(refs_out=False, remote=lambda ref, kind: Remote(ref, kind, channel), reuse=True)
    channel = Channel(reader, writer, codec, None)
    bound: dict[str, dict] = {}  # checkpoint id -> {name: the object bound there}

    handle = functools.partial(_answer_call, bound=bound, codec=codec)
    channel.handle = handle
    job = channel.receive()
    if job is None:
        return
    for folder in reversed(job.get("path", [])):
        sys.path.insert(0, folder)
    if job.get("cwd"):
        os.chdir(job["cwd"])
    codec.types = Registry.from_names(job.get("types", []))  # before any learner's cell runs
    limit = float(job.get("cell_timeout") or 0)
    names = [str(name) for name in job.get("names", [])]
    steps = list(job.get("cells", []))
    signal.signal(signal.SIGALRM, _interrupt)
    if any("IPython" in str(step.get("source", "")) for step in steps):
        _lend_shell(shell)
    position = 0

    def advance(target) -> dict:
        nonlocal position
        while target not in bound and position < len(steps):
            step, position = steps[position], position + 1
            if "checkpoint" in step:
                bound[step["checkpoint"]] = {name: namespace[name] for name in names if name in namespace}
            else:
                _run_cell(step, namespace, limit)
        ready = {}
        for name, value in bound.get(target, {}).items():
            if callable(value):
                ready[name] = {"callable": True}
            else:
                try:
                    ready[name] = {"value": codec.encode(value)}
                except Exception:
                    pass
        return {"ready": ready}

    while True:
        message = channel.receive()
        if message is None:
            return
        if "batch" in message:
            _answer_batch(message, bound, codec, channel, limit)
            continue
        channel.send(advance(message["advance"]) if "advance" in message else handle(message))


def _answer_call(message: dict, bound: dict, codec: Codec) -> dict:
    """Return the reply to the grader's call of the learner's object bound at a checkpoint (``serve``'s requests).

    ``bound`` holds, by checkpoint id as the job gave it, the learner's objects bound there; a call
    naming no checkpoint, or one not passed yet, is answered with the KeyError raised.
    """
    if "call" not in message:
        return {"raised": {"type": "WireError", "message": "unexpected request"}}
    try:
        func = bound[message.get("at")][message["call"]]
        decode = codec.decode  # plain data is its own value (what decode would return)
        args = [a if type(a) in _PLAIN_DATA else decode(a) for a in message.get("args", [])]
        kwargs = {str(k): v if type(v) in _PLAIN_DATA else decode(v) for k, v in message.get("kwargs", {}).items()}
    except Exception as exc:
        return {"raised": describe_exception(exc, codec)}
    mutable = [(i, a, _snapshot(codec, a)) for i, a in enumerate(args) if type(a) in (list, dict, set)]
    try:
        result = func(*args, **kwargs)
    except BaseException as exc:  # the learner's code may raise anything, SystemExit included
        return {"raised": describe_exception(exc, codec)}
    reply: dict[str, object] = {}
    same = [i for i, a in enumerate(args) if a is result and type(a) in (list, dict, set)]
    try:
        reply["ok"] = {"same": same[0]} if same else codec.encode(result)
        changed = {str(i): after for i, a, before in mutable if (after := _snapshot(codec, a)) != before}
    except Exception as exc:
        return {"raised": {"type": "WireError", "message": _text(exc)[:2000]}}
    if changed:
        reply["changed"] = changed
    return reply


def _answer_batch(message: dict, bound: dict, codec: Codec, channel: Channel, limit: float) -> None:
    """Answer the grader's batch: each call of ``message["calls"]`` in order, as ``_answer_call`` answers one.

    The reply is one message, ``{"batch": [entry, ...]}``, an entry per call run, each what the
    call's own reply would be (``{"ok": ..., "changed": ...}`` or ``{"raised": ...}``). It may hold
    fewer entries than calls, never more: the run stops after a call that took ``limit`` seconds or
    more (it is interrupted at ``limit``; its entry is ``{"timeout": true}``, the last one), and
    once the reply holds ``BATCH_REPLY_BYTES``; the grader asks for the calls left in a new batch.
    An entry longer than ``BATCH_ENTRY_BYTES`` is the error a single reply too long to send is.
    Before a call that starts ``BATCH_PROGRESS`` seconds or more after the request or the last
    such message, ``{"next": index}`` tells the grader the calls before it ended (its time limit
    counts from there).
    """
    name, at = message.get("batch"), message.get("at")
    calls = message.get("calls")
    if type(calls) is not list:
        calls = []
    entries: list[str] = []
    size, base = 0, time.monotonic()
    for index, call in enumerate(calls):
        started = time.monotonic()
        if index and started - base >= BATCH_PROGRESS:
            channel.send({"next": index})
            base = started
        args, kwargs = (call[0], call[1]) if type(call) is list and len(call) == 2 else ([], {})
        single = {"call": name, "at": at, "args": args, "kwargs": kwargs}
        try:
            if limit > 0:
                signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                reply = _answer_call(single, bound, codec)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            timed_out = limit > 0 and time.monotonic() - started >= limit
        except KeyboardInterrupt:  # the interrupt at the limit, come outside the learner's function
            timed_out = True
        if timed_out:
            entries.append('{"timeout":true}')
            break
        text = to_text(reply)
        length = len(text) if text.isascii() else len(text.encode("utf-8"))
        if length > BATCH_ENTRY_BYTES:
            text = '{"raised":{"type":"WireError","message":"the value is too large to send"}}'
            length = len(text)
        entries.append(text)
        size += length + 1
        if size >= BATCH_REPLY_BYTES:
            break
    channel.send_text('{"batch":[' + ",".join(entries) + "]}")


def _run_cell(cell: dict, namespace: dict, limit: float) -> None:
    """Run one cell in ``namespace``; like the notebook's time limit, a cell past ``limit`` seconds is interrupted.

    What the cell defined before it stopped stays; an unfinished answer (``NotImplementedError``)
    leaves its names undefined.
    """
    try:
        signal.setitimer(signal.ITIMER_REAL, limit)
        namespace["In"].append(cell["source"])
        exec(compile(_python(cell["source"]), f"<cell {cell.get('id', '')}>", "exec"), namespace)
    except BaseException:  # noqa: BLE001 - whatever a learner's cell raises, the next cell runs
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _lend_shell(shell) -> None:
    """Make IPython's own ``get_ipython`` (imported by an answer cell) return this process's shell."""
    try:
        import IPython
        import IPython.core.getipython
    except Exception:
        return
    IPython.get_ipython = IPython.core.getipython.get_ipython = lambda: shell


def _interrupt(signum, frame):
    raise KeyboardInterrupt("the cell ran past its time limit")


def _snapshot(codec: Codec, value):
    try:
        return codec.encode(value)
    except Exception:
        return None


def main() -> None:
    """Take the wire off standard input and output, point the standard streams at nothing, serve."""
    reader = open(os.dup(0), "rb")
    writer = open(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    sys.stdin = io.TextIOWrapper(open(0, "rb", closefd=False))
    sys.stdout = sys.stderr = io.TextIOWrapper(open(1, "wb", closefd=False), write_through=True)
    serve(reader, writer)


if __name__ == "__main__":
    main()
