"""Write the inputs and expected values of generated cases as JSON, and read them back exactly.

Covers: the values a case passes and expects (``None``, ``bool``, ``int``, ``float``, ``str``,
``list``, ``tuple``, ``dict`` with any plain keys, ``range``, a read-only mapping, members of the
package's enums and instances of the package's classes), each read back with its exact type, and
one object in two places read back as one object in two places, so that a case read from the
bank is the case that was generated (a list holding one record twice tests bookkeeping by
identity, ``is`` and ``id()``, as the text's inputs allow).

Leaves out: generating the cases (``bank.py``, ``strategies/``) and running them (``generated.py``).
A value that contains itself is refused.

Vocabulary: the *encoded* form is JSON data in which a JSON list is a Python list and every other
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
import importlib
import math
from enum import Enum
from types import MappingProxyType
from typing import Any

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


def _class(name: str) -> Any:
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
    shared = Shared() if shared is None else shared
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is dict and len(data) == 1 and "float" in data:
        return float(data["float"])
    if type(data) is dict and len(data) == 1 and "range" in data:
        return range(*data["range"])
    if type(data) is dict and "enum" in data:
        return _class(data["enum"])[data["name"]]
    if type(data) is dict and len(data) == 1 and "same" in data:
        number = data["same"]
        if type(number) is not int or not 0 <= number < len(shared.values):
            raise ValueError(f"data must name a value read before (got {data!r})")
        return shared.values[number]
    value = _decode_parts(data, shared)
    if not (type(value) is tuple and not value):
        shared.values.append(value)
    return value


def _decode_parts(data: Any, shared: Shared) -> Any:
    if type(data) is list:
        return [decode(item, shared) for item in data]
    if type(data) is not dict or len(data) not in (1, 2):
        raise ValueError(f"data must be an encoded value (got {data!r})")
    if "tuple" in data:
        return tuple(decode(item, shared) for item in data["tuple"])
    if "dict" in data:
        return {decode(k, shared): decode(v, shared) for k, v in data["dict"]}
    if "mappingproxy" in data:
        return MappingProxyType({decode(k, shared): decode(v, shared) for k, v in data["mappingproxy"]})
    if "object" in data and "fields" in data:
        return _class(data["object"])(**{k: decode(v, shared) for k, v in data["fields"].items()})
    if "object" in data and "state" in data:
        kind = _class(data["object"])
        obj = kind.__new__(kind)
        obj.__dict__.update({k: decode(v, shared) for k, v in data["state"].items()})
        return obj
    raise ValueError(f"data must be an encoded value (got {data!r})")
