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

Also here, because both ends use it: the *wire codec* (``encode``/``decode``) that turns values
into JSON and back: plain values, containers, numpy scalars and arrays (as Python numbers and
lists), and objects of ``ctx_reference`` (through their pickle reduction, restricted to that
package); any other object is passed as a *reference*, an id the other end can call back.

Leaves out: the sandbox itself (``policy.py``), starting and talking to this process
(``answer_session.py``), what the answers are compared with (the grader's side). Imports nothing
outside the standard library (it runs where ``ctx_course`` is not visible).

Vocabulary: the *job* is the first message (the cells and checkpoints, the learner's names, the
import path, the working folder, the cell time limit); a *request* is ``{"advance": checkpoint}``
(run on to that checkpoint), ``{"call": name, "at": checkpoint, "args": [...], "kwargs": {...}}``
(the grader calls the learner's ``name``) or ``{"cb": ref, "attr": name, ...}`` (this process calls
back an object the grader passed by reference); its *reply* is ``{"ready": {...}}``, ``{"ok":
value, ...}`` or ``{"raised": {...}}``.
"""
import builtins
import copyreg
import dataclasses
import functools
import io
import json
import os
import re
import signal
import sys
import types

PACKAGE = "ctx_reference"
MAX_LINE = 32 * 2**20  # longest message, in bytes, either way
MAX_DEPTH = 60  # deepest nesting of a value on the wire
KNOWN_OBJECTS = 4096  # most encodings a codec that remembers keeps (then it starts again)
# Attributes a reference's proxy forwards to the object it stands for (besides public names).
FORWARDED = ("__call__", "__iter__", "__next__", "__len__", "__getitem__", "__contains__")
# Values that are their own encoding, and data that is its own value: a container's items of these
# kinds are taken as they are, without a call of ``encode`` or ``decode`` each (the same result).
_PLAIN = frozenset({type(None), bool, int, str})
_PLAIN_DATA = frozenset({type(None), bool, int, float, str})


class WireError(Exception):
    """A message or a value that cannot cross the wire; the message says why."""


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
# The codec


def _numpy_scalar(value):
    """Return a numpy scalar as the Python value of its kind (np.int64 -> int ...), or None if it is not one."""
    kind = type(value)
    if kind.__module__ != "numpy" or not hasattr(value, "item") or getattr(value, "shape", None) != ():
        return None
    name = kind.__name__
    if name.startswith(("int", "uint", "float")) or name in ("bool_", "bool", "longlong", "ulonglong"):
        return value.item()
    if name.startswith("float"):
        return float(value)
    return None


class Codec:
    """Turn values into JSON-ready data and back, keeping the objects passed by reference.

    ``refs_out`` says what an object that is not data becomes: with True, a reference this side
    keeps (and the other side can call); with False, the marker ``{"x": type name}`` (a value the
    other side refuses). ``remote`` makes the proxy of a reference the other side sent.

    With ``remember``, a named tuple of ``ctx_reference`` whose fields are plain values (a
    ``TurnRecord``) is encoded once and its encoding reused while this codec keeps the object (it
    cannot change): the grader sends the same records in every turn's view. Only the grader's
    side remembers, since its objects are its own.
    """

    def __init__(self, refs_out: bool, remote=None, remember: bool = False):
        self.refs_out = refs_out
        self.remote = remote
        self.refs: dict[int, object] = {}
        # id -> (the object, its encoding); the object is kept so that its id is not reused
        self._known: dict[int, tuple] | None = {} if remember else None
        self._tuples: dict = {}  # "module:qualname" -> class, of the named tuples decoded so far

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
        if kind is list:
            return {"l": self._items(value, depth + 1)}
        if kind is tuple:
            return {"t": self._items(value, depth + 1)}
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
        if kind.__module__ == "numpy" and kind.__name__ == "ndarray" and value.dtype.kind in "biuf":
            return {"nd": self.encode(value.tolist(), depth + 1), "dtype": str(value.dtype)}
        if isinstance(value, Remote):
            return {"ref": object.__getattribute__(value, "_ref")}
        ours = kind.__module__.split(".")[0] == PACKAGE
        if ours and not isinstance(value, (types.FunctionType, type, types.ModuleType)):
            return self._encode_object(value, depth)
        if self.refs_out:
            ref = len(self.refs) + 1
            self.refs[ref] = value
            return {"ref": ref, "type": kind.__name__}
        return {"x": kind.__name__}

    def _encode_object(self, value, depth):
        kind = type(value)
        if isinstance(value, tuple) and hasattr(kind, "_fields") and hasattr(kind, "_make"):  # a NamedTuple
            encoded = {"o": _path(kind), "nt": self._items(value, depth + 1)}
            known = self._known
            if known is not None and all(type(v) in _PLAIN for v in value):  # _path: a class of the package
                if len(known) >= KNOWN_OBJECTS:
                    known.clear()
                known[id(value)] = (value, encoded)
            return encoded
        if isinstance(value, BaseException):
            state = self.encode(dict(vars(value)), depth + 1)
            return {"o": _path(kind), "args": self.encode(value.args, depth + 1), "st": state}
        if dataclasses.is_dataclass(value):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return {"o": _path(kind), "dc": self.encode(fields, depth + 1)}
        reduced = value.__reduce_ex__(2)
        if isinstance(reduced, str) or not isinstance(reduced, tuple) or len(reduced) < 2:
            raise WireError(f"a {kind.__name__} cannot cross the wire")
        func, args = reduced[0], reduced[1]
        state = reduced[2] if len(reduced) > 2 else None
        if func is copyreg.__newobj__:
            new = self.encode(tuple(args[1:]), depth + 1)
            return {"o": _path(args[0]), "new": new, "st": self.encode(state, depth + 1)}
        if isinstance(func, type) and func is kind:
            return {"o": _path(kind), "call": self.encode(tuple(args), depth + 1), "st": self.encode(state, depth + 1)}
        raise WireError(f"a {kind.__name__} cannot cross the wire")

    def _items(self, values, depth: int) -> list:
        """Return the encodings of ``values``, each at ``depth`` (a plain value's is itself; remembered ones reused)."""
        encode = self.encode
        if depth > MAX_DEPTH:
            return [encode(v, depth) for v in values]  # raises at the first item, as encode does
        known = self._known
        if not known or depth == MAX_DEPTH:  # at the deepest level a tuple's fields would be too deep
            return [v if type(v) in _PLAIN else encode(v, depth) for v in values]
        return [
            v if type(v) in _PLAIN
            else seen[1] if (seen := known.get(id(v))) is not None and seen[0] is v
            else encode(v, depth)
            for v in values
        ]

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
    def decode(self, data, depth: int = 0):  # noqa: C901 - encode's cases read back, one per tag in the order tried
        if depth > MAX_DEPTH:
            raise WireError("the value is nested too deeply")
        if data is None or type(data) in (bool, int, float, str):
            return data
        if type(data) is not dict or len(data) == 0:
            raise WireError("malformed value")
        if len(data) == 2 and "nt" in data and "o" in data:  # a named tuple of a class _decode_object has read
            kind = self._tuples.get(data["o"]) if type(data["o"]) is str else None
            if kind is not None:
                return kind._make(self._values(data["nt"], depth + 1))
        if "l" in data:
            return self._values(data["l"], depth + 1)
        if "t" in data:
            return tuple(self._values(data["t"], depth + 1))
        if "d" in data:
            return self._mapping(data["d"], depth + 1)
        if "s" in data:
            return set(self._values(data["s"], depth + 1))  # added in their order, as they came
        if "fs" in data:
            return frozenset(self._values(data["fs"], depth + 1))
        if "f" in data:
            return float(data["f"])
        if "r" in data:
            return range(*[int(v) for v in data["r"]])
        if "b" in data:
            return bytes.fromhex(data["b"])
        if "mp" in data:
            return types.MappingProxyType(self._mapping(data["mp"], depth + 1))
        if "nd" in data:
            import numpy

            return numpy.array(self.decode(data["nd"], depth + 1), dtype=str(data["dtype"]))
        if "ref" in data:
            ref = data["ref"]
            if ref in self.refs:
                return self.refs[ref]
            if self.remote is None:
                raise WireError("a reference this side does not know")
            return self.remote(ref, str(data.get("type", "object")))
        if "x" in data:
            raise WireError(
                _("返回值里有一个 {kind} 类型的值，"
                  "这里只接受普通的数据（int、float、str、bool、list、tuple、dict……）").format(kind=data["x"])
            )
        if "o" in data:
            return self._decode_object(data, depth)
        raise WireError("malformed value")

    def _decode_object(self, data, depth):
        kind = _class(data["o"])
        if "nt" in data:
            if not (issubclass(kind, tuple) and hasattr(kind, "_make")):
                raise WireError(f"{data['o']} is not a named tuple")
            self._tuples[data["o"]] = kind
            return kind._make(self._values(data["nt"], depth + 1))
        if "dc" in data:
            if not dataclasses.is_dataclass(kind):
                raise WireError(f"{data['o']} is not a dataclass")
            fields = self.decode(data["dc"], depth + 1)
            known = {f.name: f for f in dataclasses.fields(kind)}
            if type(fields) is not dict or set(fields) != set(known):
                raise WireError(f"the fields of {kind.__name__} do not match")
            value = kind(**{k: v for k, v in fields.items() if known[k].init})
            for name, item in fields.items():
                if not known[name].init:
                    object.__setattr__(value, name, item)
            return value
        if "args" in data:
            if not issubclass(kind, BaseException):
                raise WireError(f"{data['o']} is not an exception")
            value = kind.__new__(kind)
            value.args = tuple(self.decode(data["args"], depth + 1))
            _set_state(value, self.decode(data.get("st"), depth + 1))
            return value
        if "new" in data:
            value = kind.__new__(kind, *self.decode(data["new"], depth + 1))
        elif "call" in data:
            value = kind(*self.decode(data["call"], depth + 1))
        else:
            raise WireError("malformed object")
        _set_state(value, self.decode(data.get("st"), depth + 1))
        return value

    def _values(self, items, depth: int) -> list:
        """Return the values of the data ``items``, each decoded at ``depth`` (plain data is its own value)."""
        decode = self.decode
        if depth > MAX_DEPTH:
            return [decode(v, depth) for v in items]  # raises at the first item, as decode does
        return [v if type(v) in _PLAIN_DATA else decode(v, depth) for v in items]

    def _mapping(self, pairs, depth: int) -> dict:
        """Return the dict of the data ``pairs`` ([key, value] each), keys and values decoded at ``depth``."""
        decode = self.decode
        if depth > MAX_DEPTH:
            return {decode(k, depth): decode(v, depth) for k, v in pairs}
        return {
            (k if type(k) in _PLAIN_DATA else decode(k, depth)): (v if type(v) in _PLAIN_DATA else decode(v, depth))
            for k, v in pairs
        }


@functools.lru_cache(maxsize=512)
def _path(kind) -> str:
    if not isinstance(kind, type) or kind.__module__.split(".")[0] != PACKAGE:
        raise WireError(f"only objects of {PACKAGE} cross the wire (got {getattr(kind, '__name__', kind)!r})")
    return f"{kind.__module__}:{kind.__qualname__}"


def _class(path) -> type:
    """Return the class of ``ctx_reference`` named ``module:qualname``; nothing else is ever looked up."""
    if type(path) is not str or ":" not in path:
        raise WireError("malformed class name")
    return _known_class(path)


@functools.lru_cache(maxsize=512)
def _known_class(path: str) -> type:
    module, qualname = path.split(":", 1)
    if module.split(".")[0] != PACKAGE or not re.fullmatch(r"[A-Za-z_][\w.]*", module + "." + qualname):
        raise WireError(f"only objects of {PACKAGE} cross the wire (got {path!r})")
    import importlib

    try:
        value = importlib.import_module(module)
        for part in qualname.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError):
        raise WireError(f"no class {path} in {PACKAGE}") from None
    if not isinstance(value, type):
        raise WireError(f"{path} is not a class")
    return value


def _set_state(value, state) -> None:
    if state is None:
        return
    slots = None
    if type(state) is tuple and len(state) == 2:
        state, slots = state
    for mapping in (state, slots):
        if mapping is None:
            continue
        if type(mapping) is not dict:
            raise WireError("malformed object state")
        for name, item in mapping.items():
            if hasattr(value, "__dict__"):
                value.__dict__[name] = item
            else:
                object.__setattr__(value, name, item)


# --------------------------------------------------------------------------------------------
# Messages


class Channel:
    """One end of the line protocol: send a request, handle the other side's requests until the reply comes."""

    def __init__(self, reader, writer, codec: Codec, handle):
        self.reader, self.writer, self.codec, self.handle = reader, writer, codec, handle

    def send(self, message: dict) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        if len(line) > MAX_LINE:
            too_large = {"raised": {"type": "WireError", "message": "the value is too large to send"}}
            line = json.dumps(too_large).encode() + b"\n"
        self.writer.write(line)
        self.writer.flush()

    def receive(self):
        line = self.reader.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_LINE or not line.endswith(b"\n"):
            raise WireError("a message is too long")
        message = json.loads(line)
        if type(message) is not dict:
            raise WireError("malformed message")
        return message

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
    if kind.__module__.split(".")[0] == PACKAGE:
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
    name = str(info.get("type", "Exception")) if type(info) is dict else "Exception"
    kind = getattr(builtins, name, None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = type(re.sub(r"\W", "_", name) or "Exception", (Exception,), {})
    return kind(str(info.get("message", "")) if type(info) is dict else "")


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
    codec = Codec(refs_out=False, remote=lambda ref, kind: Remote(ref, kind, channel))
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
        args = [codec.decode(a) for a in message.get("args", [])]
        kwargs = {str(k): codec.decode(v) for k, v in message.get("kwargs", {}).items()}
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
