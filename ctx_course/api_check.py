"""Does the course still speak the providers' APIs? Its request bodies and its vocabulary against the official SDKs.

What this covers: `make api-check` installs the newest ``anthropic`` and ``openai`` SDKs in a
temporary virtual environment and runs this module there (``python -m ctx_course api-check``). It

- validates every request body notebook 06 builds against the SDK types by running
  ``tests/test_api_requests.py`` (its strict validation, `sdk_validate`, lives here and is what
  that test imports), and
- lists, kind by kind, every value of the SDK types the course relies on that the course does not
  know, and every value the course knows that the SDK no longer lists (`drift`, a pure function of
  two vocabularies: `course_vocabulary` from ``ctx_reference``, `sdk_vocabulary` from the installed
  SDKs).

The suite itself validates against the SDK versions pinned in ``pyproject.toml`` (the ``test``
extra); ``docs/api-sources.md`` names them and the newest versions the last check ran against.

What it leaves out: whether the API accepts a body (no network: the types are the contract the
SDK states, the documented rules are ``REQUEST_RULES``), and the values of types the course does
not use.

Vocabulary: a kind is one set of names the course relies on (thinking types, context edit types,
content block types, model ids; the beta headers are checked by `sdk_validate`, which refuses a
header the SDK does not list, and OpenAI's ``context_management`` entry ``type`` is a plain str in
its SDK, so there is no list to compare); unknown:
a value the SDK lists that the course does not know; dropped: a value the course knows that the
SDK does not list (for model ids, a family the SDK has no id of).
"""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The kinds of names the course relies on, in the order the report lists them.
KINDS = ("thinking types", "context edit types", "content block types", "Anthropic model families",
         "OpenAI model ids")
#: OpenAI model ids the check compares: the GPT-5 line without dated or suffixed variants (the SDK lists hundreds).
OPENAI_MODEL = re.compile(r"gpt-5(\.\d+)?")
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Drift:
    """What differs in one kind: values the SDK lists that the course does not know, and values it dropped."""

    unknown: tuple[str, ...]
    dropped: tuple[str, ...]


def drift(course: Mapping[str, frozenset[str]], sdk: Mapping[str, frozenset[str]]) -> dict[str, Drift]:
    """Return, for every kind of `course`, the SDK's values the course does not know and the course's the SDK dropped.

    A kind the SDK vocabulary lacks counts as empty there (every value the course knows is dropped).

    >>> d = drift({"thinking types": frozenset({"enabled", "adaptive"})},
    ...           {"thinking types": frozenset({"enabled", "adaptive", "between_tools"})})
    >>> d["thinking types"]
    Drift(unknown=('between_tools',), dropped=())
    """
    if not isinstance(course, Mapping) or not isinstance(sdk, Mapping):
        raise ValueError(f"course and sdk must be mappings of kind to values (got {course!r}, {sdk!r})")
    return {kind: Drift(tuple(sorted(sdk.get(kind, frozenset()) - known)),
                        tuple(sorted(known - sdk.get(kind, frozenset()))))
            for kind, known in course.items()}


def format_drift(found: Mapping[str, Drift]) -> str:
    """Return one block per kind: "same" when nothing differs, else its unknown and dropped values.

    >>> print(format_drift({"thinking types": Drift(("sometimes",), ("enabled",)),
    ...                     "content block types": Drift((), ())}))
    thinking types: the SDK lists 1 the course does not know: sometimes
    thinking types: the course knows 1 the SDK does not list: enabled
    content block types: same
    """
    lines = []
    for kind, d in found.items():
        if not d.unknown and not d.dropped:
            lines.append(f"{kind}: same")
            continue
        if d.unknown:
            lines.append(f"{kind}: the SDK lists {len(d.unknown)} the course does not know: {', '.join(d.unknown)}")
        if d.dropped:
            lines.append(f"{kind}: the course knows {len(d.dropped)} the SDK does not list: {', '.join(d.dropped)}")
    return "\n".join(lines)


def _unwrap(tp: Any) -> list[Any]:
    """The types inside a Union, Optional, Required, Iterable, List or Annotated (itself for any other)."""
    origin = typing.get_origin(tp)
    if origin is None:
        return [tp]
    return [inner for arg in typing.get_args(tp) for inner in _unwrap(arg)]


def literal_values(tp: Any) -> frozenset[str]:
    """Return every str of the Literals in `tp` (through Union, Optional, List and the like).

    >>> sorted(literal_values(typing.Union[str, typing.Literal["a", "b"]]))
    ['a', 'b']
    """
    if typing.get_origin(tp) is typing.Literal:
        return frozenset(v for v in typing.get_args(tp) if isinstance(v, str))
    if typing.get_origin(tp) is None:
        return frozenset()
    return frozenset().union(*(literal_values(arg) for arg in typing.get_args(tp)))


def member_types(tp: Any) -> frozenset[str]:
    """Return the ``type`` values of the TypedDicts in `tp`: one per member of a union of request shapes."""
    from typing_extensions import is_typeddict  # the SDKs' TypedDicts are typing_extensions'

    found: set[str] = set()
    for member in _unwrap(tp):
        if is_typeddict(member):
            found |= literal_values(typing.get_type_hints(member).get("type"))
    return frozenset(found)


def sdk_vocabulary() -> dict[str, frozenset[str]]:
    """Return the installed SDKs' values of every kind of `KINDS`, read from their request types."""
    from anthropic.types.beta import message_create_params as anthropic_params
    from anthropic.types.beta.beta_assistant_message_param import BetaAssistantMessageParam
    from anthropic.types.beta.beta_context_management_config_param import BetaContextManagementConfigParam
    from anthropic.types.beta.beta_user_message_param import BetaUserMessageParam
    from openai.types.responses import response_create_params as openai_params

    from ctx_reference.window import model_family

    request = typing.get_type_hints(anthropic_params.MessageCreateParamsBase)
    families = set()
    for model in literal_values(request["model"]):
        try:
            families.add(model_family(model))
        except ValueError:
            continue   # an id of no family the workbook can name
    openai = typing.get_type_hints(openai_params.ResponseCreateParamsBase)
    return {
        "thinking types": member_types(request["thinking"]),
        "context edit types": member_types(typing.get_type_hints(BetaContextManagementConfigParam)["edits"]),
        "content block types": member_types(typing.get_type_hints(BetaUserMessageParam)["content"])
        | member_types(typing.get_type_hints(BetaAssistantMessageParam)["content"]),
        "Anthropic model families": frozenset(families),
        "OpenAI model ids": frozenset(m for m in literal_values(openai["model"]) if OPENAI_MODEL.fullmatch(m)),
    }


def course_vocabulary() -> dict[str, frozenset[str]]:
    """Return what the course knows of every kind of `KINDS`, read from ``ctx_reference`` (never typed here)."""
    from ctx_reference import api_requests
    from ctx_reference.window import MODEL_TABLE

    return {
        "thinking types": frozenset(api_requests.THINKING_TYPES),
        "context edit types": frozenset(api_requests.EDIT_TYPES),
        "content block types": frozenset(api_requests.BLOCK_TYPES),
        "Anthropic model families": frozenset(row.family for row in MODEL_TABLE if row.status != "retired")
        | frozenset(api_requests.THINKING_BY_FAMILY),
        "OpenAI model ids": frozenset(api_requests.OPENAI_MODELS),
    }


def _forbid_unknown_keys(tp: Any, seen: set) -> None:
    """Set extra='forbid' on every TypedDict reachable from tp (those declaring extra items excepted)."""
    from pydantic import ConfigDict
    from typing_extensions import NoExtraItems, is_typeddict

    if is_typeddict(tp):
        if tp in seen:
            return
        seen.add(tp)
        declares_extra = getattr(tp, "__extra_items__", NoExtraItems) is not NoExtraItems
        tp.__pydantic_config__ = (ConfigDict(arbitrary_types_allowed=True) if declares_extra
                                  else ConfigDict(arbitrary_types_allowed=True, extra="forbid"))
        for hint in typing.get_type_hints(tp).values():
            _forbid_unknown_keys(hint, seen)
    else:
        for arg in typing.get_args(tp):
            _forbid_unknown_keys(arg, seen)


def _consume(value: Any) -> Any:
    """Turn pydantic's lazy iterators into lists, recursively, so every item is validated."""
    if isinstance(value, dict):
        return {k: _consume(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        return [_consume(v) for v in value]
    return value


_ADAPTERS: dict[str, Any] = {}


def _adapter(call: str) -> Any:
    """The strict TypeAdapter of the keyword arguments of client.<call>, built once."""
    if call not in _ADAPTERS:
        from anthropic.types.beta import message_create_params as anthropic_params
        from openai.types.responses import response_compact_params, response_create_params
        from pydantic import TypeAdapter

        types = {"beta.messages.create": anthropic_params.MessageCreateParamsNonStreaming,
                 "responses.create": response_create_params.ResponseCreateParamsNonStreaming,
                 "responses.compact": response_compact_params.ResponseCompactParams}
        if call not in types:
            raise ValueError(f"call must be one of {', '.join(types)} (got {call!r})")
        _forbid_unknown_keys(types[call], set())
        _ADAPTERS[call] = TypeAdapter(types[call])
    return _ADAPTERS[call]


CALLS = ("beta.messages.create", "responses.create", "responses.compact")


def sdk_validate(call: str, request: dict) -> None:
    """Validate `request` as the keyword arguments of ``client.<call>``; raise ValidationError or ValueError.

    The SDKs' request types are TypedDicts, which nothing checks at run time: every TypedDict reachable from
    the call's type is made to forbid unknown keys and every lazy ``Iterable`` is consumed, so a misspelled or
    misplaced field anywhere fails; ``betas`` must be headers the SDK lists (its type accepts any str).
    """
    from anthropic.types.anthropic_beta_param import AnthropicBetaParam

    _consume(_adapter(call).validate_python(request))
    unknown = set(request.get("betas", [])) - literal_values(AnthropicBetaParam)
    if unknown:
        raise ValueError(f"beta headers the SDK does not list: {sorted(unknown)}")


def main(run: Callable[..., Any] = subprocess.run) -> int:
    """Print the SDK versions, the vocabulary drift and the result of validating the notebooks' bodies; 0 if valid."""
    import anthropic
    import openai

    here = all(Path(m.__file__ or "").resolve().is_relative_to(Path(sys.prefix).resolve()) for m in (anthropic, openai))
    print(f"anthropic {anthropic.__version__}, openai {openai.__version__} "
          f"({'installed in this environment' if here else 'from the course environment behind this one'})")
    print(format_drift(drift(course_vocabulary(), sdk_vocabulary())))
    print("validating every request body the notebooks build (tests/test_api_requests.py):", flush=True)
    result = run([sys.executable, "-m", "pytest", "-n", "0", "-p", "no:randomly", "-p", "no:cacheprovider", "-q",
                  "--no-header", str(REPO / "tests" / "test_api_requests.py")], cwd=REPO)
    return 0 if result.returncode == 0 else 1
