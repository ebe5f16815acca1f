"""The one model of plain data: what a check compares, shows, digests and stores.

Covers: turning a returned value into plain data of exact types (``plain``, with numpy scalars read
as the Python number of their kind, ``python_scalar``), comparing two plain values with their types
(``same``), showing one in a feedback line (``show``), its canonical text and digest for the hidden
tests (``canonical_text``, ``digest``: the expected values are not in the cell, a learner's function
that reads its caller's frame or source finds a hash), and the bank's encoding of the inputs and
expected values of generated cases as JSON, read back exactly (``encode``, ``decode``, and ``decode_call`` for a
call's arguments).

The canonical text tags every value with its type (``i:3``, ``s:"a"``, ``[…]`` for a list,
``(…)`` for a tuple), so ``3`` and ``3.0``, or a list and a tuple, have different digests. Dict
keys are sorted by their canonical text. Floats are rounded to ``places`` decimals first when
given, so that a correct function computing in another order still matches; with ``places``,
numbers are compared by their value: an ``int``, a ``Fraction``, a ``Decimal`` or a numpy number
counts as the ``float`` of the same value (bool stays bool). When grading, the hidden tests run
only on the grader's side (``ctx_course/grading/steps/judge.py``).

The encoding covers ``None``, ``bool``, ``int``, ``float``, ``str``, ``list``, ``tuple``, ``dict``
with any plain keys, ``range``, a read-only mapping, members of the package's enums and instances
of the package's classes, each read back with its exact type, and one object in two places read
back as one object in two places (a list holding one record twice tests bookkeeping by identity,
``is`` and ``id()``, as the text's inputs allow). A value that contains itself is refused.

Leaves out: running the cases (``runner.py``), reading the bank (``bank``) and writing it (the
maintainer's drawing tools).

Vocabulary: *plain data* is a value built only from ``None``, ``bool``, ``int``, ``float``, ``str``,
``list``, ``tuple``, ``dict`` and members of the package's enums, each of exactly that type (no
subclasses). The *encoded* form is JSON data in which a JSON list is a Python list and every other
kind is a one-key object naming it (``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``,
``{"enum": "ctx_reference.ledger.Zone", "name": "SAFE"}``, ``{"object": "ctx_reference.assemble.Item",
"fields": {...}}``). Only classes of ``ctx_reference`` are read back; a dataclass is rebuilt by
calling it with its fields, so its own checks run. A *shared* value (a list, tuple, dict, read-only
mapping or object met again) is written in full once and then as ``{"same": n}``: the n-th such
value finished so far, counted from 0 in the order they are finished (its parts before it), in one
``Shared`` record, which a call's arguments and keyword arguments share.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import math
from enum import Enum
from json.encoder import encode_basestring
from types import MappingProxyType
from typing import Any

from ctx_reference._validate import real_value

from ..i18n import _

# Longest rendering of a value inside a feedback line, in characters.
MAX_SHOWN = 300

_SCALARS = (bool, int, float, str, type(None))
#: The types of JSON's scalars (and Python's plain ones): a value of one of them is its own plain data.
SCALAR_TYPES = frozenset(_SCALARS)


class NotPlain(Exception):
    """A returned value that is not plain data of exact types; the message says why in the reader's language."""


def python_scalar(value: Any) -> Any:
    """Return a numpy scalar as the Python value of its kind; any other value as it is.

    Where an exercise asks for "an integer", "a number" or "True/False", numpy's ``int64``,
    ``float64`` and ``bool_`` are that too: ``python_scalar(numpy.int64(3))`` is the ``int`` 3.
    """
    kind = type(value)
    if kind.__module__ != "numpy" or getattr(value, "shape", None) != () or not hasattr(value, "item"):
        return value
    item = value.item()
    return item if type(item) in (bool, int, float) else value


def plain(value: Any, by_value: bool = False) -> Any:
    """Return a copy of ``value`` built from exact plain types, or raise NotPlain saying why.

    ``plain([1, (2, "a")]) == [1, (2, "a")]``; a numpy scalar becomes the Python number or bool
    of its kind (``python_scalar``); an ``int`` subclass, an object whose ``__eq__`` is always
    true, or a ``list`` subclass raises NotPlain naming its type. With ``by_value``, any real
    number (a ``Fraction``, a ``Decimal`` …) becomes the ``int`` or ``float`` of its value
    (``_validate.real_value``), wherever it stands.
    """
    kind = type(value)
    if kind in SCALAR_TYPES:
        return value
    value = python_scalar(value)
    kind = type(value)
    if kind in SCALAR_TYPES:
        return value
    if kind is list:
        if SCALAR_TYPES.issuperset(map(type, value)):  # a list of scalars: a copy at once
            return value.copy()
        return [plain(item, by_value) for item in value]
    if kind is tuple:
        if SCALAR_TYPES.issuperset(map(type, value)):
            return value
        return tuple(plain(item, by_value) for item in value)
    if kind is dict:
        return {plain(key, by_value): plain(item, by_value) for key, item in value.items()}
    if by_value and (number := real_value(value)) is not None:
        return number
    if isinstance(value, Enum) and kind.__module__.startswith("ctx_reference."):
        return value
    raise NotPlain(_("返回值里有一个 {kind} 类型的值，"
                     "这里只接受普通的 int、float、str、bool、list、tuple、dict").format(kind=kind.__name__))


def show(value: Any) -> str:
    """Return a short rendering of a value for a feedback line (enum members as ``Zone.SAFE``)."""
    text = _render(value)
    if len(text) > MAX_SHOWN:
        text = text[: MAX_SHOWN - 1] + "…"
    return text


def _render(value: Any) -> str:
    kind = type(value)
    if isinstance(value, Enum):
        return f"{kind.__name__}.{value.name}"
    if kind is list:
        return "[" + ", ".join(_render(item) for item in value) + "]"
    if kind is tuple:
        inner = ", ".join(_render(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if kind is dict:
        return "{" + ", ".join(f"{_render(k)}: {_render(v)}" for k, v in value.items()) + "}"
    try:
        return repr(value)
    except Exception:  # a learner's object whose __repr__ fails
        return f"<{kind.__name__}>"


def same(got: Any, expect: Any, tol: float | None = None) -> bool:
    """Return True if plain ``got`` equals plain ``expect`` with the same exact types throughout.

    With ``tol``, a float expectation accepts any finite int or float within ``tol``.
    ``same(1, 1.0)`` and ``same([1], (1,))`` are False; ``same(3, 3.0000001, tol=1e-6)`` is True.
    """
    if tol is not None and type(expect) is float:
        return type(got) in (int, float) and math.isfinite(got) and abs(got - expect) <= tol
    if type(got) is not type(expect):
        return False
    if type(expect) in (list, tuple):
        return len(got) == len(expect) and all(same(g, e, tol) for g, e in zip(got, expect))
    if type(expect) is dict:
        return list(got) == list(expect) and all(same(got[k], expect[k], tol) for k in expect)
    return got == expect


DIGEST_HEX = 16  # hex digits kept of the SHA-256 digest


def canonical_text(value: Any, places: int | None = None) -> str:
    """Return the canonical text of plain data: ``canonical_text([1, "a"]) == '[i:1,s:"a"]'``."""
    kind = type(value)
    if value is None:
        return "n"
    if kind is bool:
        return f"b:{value}"
    if kind is int and places is None:
        return f"i:{value}"
    if kind is int:
        kind, value = float, float(value)  # with places, 3 and 3.0 are the same number
    if kind is float:
        shown = round(value, places) if places is not None else value
        return f"f:{shown + 0.0!r}"  # + 0.0 turns -0.0 into 0.0
    if kind is str:
        return "s:" + encode_basestring(value)  # what json.dumps(value, ensure_ascii=False) returns
    if kind is list:
        return "[" + ",".join(canonical_text(v, places) for v in value) + "]"
    if kind is tuple:
        return "(" + ",".join(canonical_text(v, places) for v in value) + ")"
    if kind is dict:
        items = sorted((canonical_text(k, places), canonical_text(v, places)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, Enum):
        return f"e:{kind.__name__}.{value.name}"
    raise NotPlain(_("不能比较 {kind} 类型的值").format(kind=kind.__name__))


def digest(value: Any, places: int | None = None) -> str:
    """Return the digest of plain data: the first 16 hex digits of SHA-256 of its canonical text.

    With ``places``, any real number counts by its value: ``digest(Fraction(1, 2), 6) == digest(0.5, 6)``.
    """
    text = canonical_text(plain(value, by_value=places is not None), places)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGEST_HEX]


_PACKAGE = "ctx_reference."


class Shared:
    """The values written (or read) so far in one encoding: their numbers for ``{"same": n}``."""

    def __init__(self) -> None:
        self.numbers: dict[int, int] = {}  # id of a finished value -> its number
        self.values: list[Any] = []  # the finished values, in order (kept alive: their ids stay theirs)
        self.open: set[int] = set()  # ids of the values being written


def encode(value: Any, shared: Shared | None = None) -> Any:
    """Return ``value`` as JSON data: ``encode((1, [2]))`` is ``{"tuple": [1, [2]]}``.

    >>> item = [1]
    >>> encode([item, item])
    [[1], {'same': 0}]
    """
    shared = Shared() if shared is None else shared
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is range:
        return {"range": [value.start, value.stop, value.step]}
    if isinstance(value, Enum):
        return {"enum": _class_name(kind), "name": value.name}
    if kind is tuple and not value:
        return {"tuple": []}  # the interpreter's one empty tuple: being the same object says nothing
    key = id(value)
    if key in shared.numbers:
        return {"same": shared.numbers[key]}
    if key in shared.open:
        raise ValueError(f"value must not contain itself (got a {kind.__name__} inside itself)")
    shared.open.add(key)
    encoded = _encode_parts(value, shared)
    shared.open.discard(key)
    shared.numbers[key] = len(shared.values)
    shared.values.append(value)
    return encoded


def _encode_parts(value: Any, shared: Shared) -> Any:
    kind = type(value)
    if kind is list:
        return [encode(item, shared) for item in value]
    if kind is tuple:
        return {"tuple": [encode(item, shared) for item in value]}
    if kind is dict:
        return {"dict": [[encode(k, shared), encode(v, shared)] for k, v in value.items()]}
    if kind is MappingProxyType:
        return {"mappingproxy": [[encode(k, shared), encode(v, shared)] for k, v in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name), shared) for f in dataclasses.fields(value) if f.init}
        return {"object": _class_name(kind), "fields": fields}
    if kind.__module__.startswith(_PACKAGE) and hasattr(value, "__dict__"):
        return {"object": _class_name(kind), "state": {k: encode(v, shared) for k, v in vars(value).items()}}
    raise ValueError(f"value must be plain data or an object of ctx_reference (got {kind.__name__}: {value!r})")


def _class_name(kind: type) -> str:
    if not kind.__module__.startswith(_PACKAGE):
        raise ValueError(f"value must be of a class of ctx_reference (got {kind.__module__}.{kind.__qualname__})")
    return f"{kind.__module__}.{kind.__qualname__}"


@functools.cache
def _class(name: str) -> Any:
    """Return the class of ctx_reference named ``name`` (looked up once per name)."""
    module, _, qualname = name.rpartition(".")
    if not name.startswith(_PACKAGE):
        raise ValueError(f"class must be of ctx_reference (got {name!r})")
    return getattr(importlib.import_module(module), qualname)


def decode(data: Any, shared: Shared | None = None) -> Any:
    """Return the value ``data`` encodes: ``decode(encode(v)) == v`` with the same types throughout, and a value
    met twice in ``v`` one object met twice.

    >>> first, second = decode([[1], {"same": 0}])
    >>> first is second
    True
    """
    kind = type(data)
    if kind in SCALAR_TYPES:  # JSON's scalars
        return data
    if kind is dict:
        if len(data) == 1:
            if "float" in data:
                return float(data["float"])
            if "range" in data:
                return range(*data["range"])
        if "enum" in data:
            return _class(data["enum"])[data["name"]]
    shared = Shared() if shared is None else shared
    if kind is list and SCALAR_TYPES.issuperset(map(type, data)):  # a list of scalars: read as it is, copied
        value: Any = data.copy()
        shared.values.append(value)
        return value
    if kind is dict and len(data) == 1:
        if "same" in data:
            number = data["same"]
            if type(number) is not int or not 0 <= number < len(shared.values):
                raise ValueError(f"data must name a value read before (got {data!r})")
            return shared.values[number]
        items = data.get("tuple")
        if type(items) is list and SCALAR_TYPES.issuperset(map(type, items)):  # a tuple of scalars
            if items:
                value = tuple(items)
                shared.values.append(value)
                return value
            return ()
        if data.get("dict") == []:  # no keyword arguments
            value = {}
            shared.values.append(value)
            return value
    value = _decode_parts(data, shared)
    if not (type(value) is tuple and not value):
        shared.values.append(value)
    return value


_NO_KEYWORDS: dict[str, list] = {"dict": []}  # the encoded keyword arguments of a call that has none


def decode_call(args: Any, kwargs: Any = None) -> tuple[tuple, Any]:
    """Return a call's arguments (a tuple) and keyword arguments, encoded together as ``encode(list(args), shared)``
    then ``encode(kwargs, shared)`` with one ``Shared``: an object in two arguments is read back as one object.
    ``kwargs`` None: the call has none.

    >>> decode_call([1, "a"])
    ((1, 'a'), {})
    """
    kwargs = _NO_KEYWORDS if kwargs is None else kwargs
    if kwargs == _NO_KEYWORDS and type(args) is list and SCALAR_TYPES.issuperset(map(type, args)):
        return tuple(args), {}  # scalars only: nothing to share
    shared = Shared()
    return tuple(decode(args, shared)), decode(kwargs, shared)


def _decode_parts(data: Any, shared: Shared) -> Any:
    if type(data) is list:
        return [decode(item, shared) for item in data]
    if type(data) is not dict or len(data) not in (1, 2):
        raise ValueError(f"data must be an encoded value (got {data!r})")
    if "object" in data and "fields" in data:
        kind, fields = _class(data["object"]), data["fields"]
        if type(fields) is dict and SCALAR_TYPES.issuperset(map(type, fields.values())):  # fields of scalars
            return kind(**fields)
        return kind(**{k: decode(v, shared) for k, v in fields.items()})
    if "tuple" in data:
        return tuple(decode(item, shared) for item in data["tuple"])
    if "dict" in data:
        return {decode(k, shared): decode(v, shared) for k, v in data["dict"]}
    if "mappingproxy" in data:
        return MappingProxyType({decode(k, shared): decode(v, shared) for k, v in data["mappingproxy"]})
    if "object" in data and "state" in data:
        kind = _class(data["object"])
        obj = kind.__new__(kind)
        obj.__dict__.update({k: decode(v, shared) for k, v in data["state"].items()})
        return obj
    raise ValueError(f"data must be an encoded value (got {data!r})")
