"""Write the inputs and expected values of generated cases as JSON, and read them back exactly.

Covers: the values a case passes and expects (``None``, ``bool``, ``int``, ``float``, ``str``,
``list``, ``tuple``, ``dict`` with any plain keys, ``range``, a read-only mapping, members of the
package's enums and instances of the package's classes), each read back with its exact type, so
that a case read from the bank is the case that was generated.

Leaves out: generating the cases (``bank.py``, ``strategies/``) and running them (``generated.py``).

Vocabulary: the *encoded* form is JSON data in which a JSON list is a Python list and every other
kind is a one-key object naming it (``{"tuple": [...]}``, ``{"dict": [[key, value], ...]}``,
``{"enum": "ctx_reference.ledger.Zone", "name": "SAFE"}``, ``{"object": "ctx_reference.assemble.Item",
"fields": {...}}``). Only classes of ``ctx_reference`` are read back; a dataclass is rebuilt by
calling it with its fields, so its own checks run.
"""
from __future__ import annotations

import dataclasses
import importlib
import math
from enum import Enum
from types import MappingProxyType
from typing import Any

_PACKAGE = "ctx_reference."


def encode(value: Any) -> Any:
    """Return ``value`` as JSON data: ``encode((1, [2]))`` is ``{"tuple": [1, [2]]}``."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is list:
        return [encode(item) for item in value]
    if kind is tuple:
        return {"tuple": [encode(item) for item in value]}
    if kind is dict:
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if kind is MappingProxyType:
        return {"mappingproxy": [[encode(k), encode(v)] for k, v in value.items()]}
    if kind is range:
        return {"range": [value.start, value.stop, value.step]}
    if isinstance(value, Enum):
        return {"enum": _class_name(kind), "name": value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return {"object": _class_name(kind), "fields": fields}
    if kind.__module__.startswith(_PACKAGE) and hasattr(value, "__dict__"):
        return {"object": _class_name(kind), "state": {k: encode(v) for k, v in vars(value).items()}}
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


def decode(data: Any) -> Any:
    """Return the value ``data`` encodes: ``decode(encode(v)) == v`` with the same types throughout."""
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [decode(item) for item in data]
    if type(data) is not dict or len(data) not in (1, 2):
        raise ValueError(f"data must be an encoded value (got {data!r})")
    if "tuple" in data:
        return tuple(decode(item) for item in data["tuple"])
    if "dict" in data:
        return {decode(k): decode(v) for k, v in data["dict"]}
    if "mappingproxy" in data:
        return MappingProxyType({decode(k): decode(v) for k, v in data["mappingproxy"]})
    if "range" in data:
        return range(*data["range"])
    if "float" in data:
        return float(data["float"])
    if "enum" in data:
        return _class(data["enum"])[data["name"]]
    if "object" in data and "fields" in data:
        return _class(data["object"])(**{k: decode(v) for k, v in data["fields"].items()})
    if "object" in data and "state" in data:
        kind = _class(data["object"])
        obj = kind.__new__(kind)
        obj.__dict__.update({k: decode(v) for k, v in data["state"].items()})
        return obj
    raise ValueError(f"data must be an encoded value (got {data!r})")
