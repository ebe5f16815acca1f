"""The bank of generated cases: up to date, drawn the same way every time, read back exactly, shown in one line.

``python -m ctx_reference.checks.bank --check`` regenerates every bank in memory and compares it
with the stored files; the codec is checked on values drawn by Hypothesis (derandomized, no
example database); the one line of the generated cases is checked on a wrong ``remaining`` in
both editions. That a learner's kernel never imports Hypothesis or the drawing tools is an import
rule of tests/test_imports.py.
"""
from __future__ import annotations

import enum
import gzip
import json
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx_reference.assemble import Item
from ctx_reference.checks import EXERCISES, GENERATED, RULES, CheckFailed, check_exercise
from ctx_reference.checks.bank import cases as bank
from ctx_reference.checks.drawing.strategies import ORACLES, STRATEGIES
from ctx_reference.checks.drawing.write_bank import main as bank_main
from ctx_reference.checks.values import Shared, decode, encode
from ctx_reference.i18n import using
from ctx_reference.ledger import Zone
from ctx_reference.sessions import Record

from conftest import REPO

BANKS = REPO / "ctx_reference" / "checks" / "bank"


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_the_stored_banks_are_what_the_strategies_draw(capsys, name):
    """Regenerated in memory with the pinned Hypothesis and the fixed seeds, each bank equals its files (one
    exercise a test, so that the test workers share the drawing)."""
    assert bank_main(["--check", name]) == 0, capsys.readouterr().err


def test_every_exercise_with_strategies_has_a_bank_and_an_oracle():
    stored = {path.name.removesuffix(".json.gz") for path in BANKS.glob("*.json.gz") if ".hidden." not in path.name}
    assert {path.name for path in BANKS.glob("*.hidden.json.gz")} == {f"{name}.hidden.json.gz" for name in stored}
    assert stored == set(STRATEGIES) and set(ORACLES) == set(STRATEGIES) <= set(EXERCISES)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_bank_is_smallest_first_with_no_call_twice(name):
    """Visible cases are ordered by the size of their call, so the first that fails is the smallest;
    no call is there twice, and no hidden call is also visible."""
    data = json.loads(gzip.decompress((BANKS / f"{name}.json.gz").read_bytes()).decode("utf-8"))
    hidden_part = json.loads(gzip.decompress((BANKS / f"{name}.hidden.json.gz").read_bytes()).decode("utf-8"))
    keys = [json.dumps([e["args"], e["kwargs"]], sort_keys=True, ensure_ascii=False) for e in data["visible"]]
    hidden = [json.dumps([e["args"], e["kwargs"]], sort_keys=True, ensure_ascii=False) for e in hidden_part["hidden"]]
    assert len(set(keys)) == len(keys) and not set(keys) & set(hidden)
    sizes = [len(json.dumps(encode((decode(e["args"]), decode(e["kwargs"]))), sort_keys=True, ensure_ascii=False))
             for e in data["visible"]]
    assert sizes == sorted(sizes)
    assert {e["strategy"] for e in data["visible"]} <= set(STRATEGIES[name])


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_the_reference_gives_every_stored_expectation(name):
    """The oracle, called on every visible case read back from the file, gives the stored value (or error)."""
    spec, oracle = GENERATED[name], ORACLES[name]
    for case in bank(name):
        if case.raises is not None:
            with pytest.raises(Exception) as info:
                oracle(*case.args, **dict(case.kwargs))
            assert type(info.value).__name__ == case.raises
        else:
            got = oracle(*case.args, **dict(case.kwargs))
            assert (spec.project(got) if spec.project else got) == case.expect


class _Colour(enum.Enum):
    RED = 1


_PLAIN = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3),
    max_leaves=10)


@settings(derandomize=True, database=None, max_examples=200)
@given(_PLAIN)
def test_the_codec_reads_back_every_plain_value_with_its_types(value):
    back = decode(json.loads(json.dumps(encode(value))))
    assert repr(back) == repr(value) and _types(back) == _types(value)


def _types(value):
    if isinstance(value, (list, tuple)):
        return (type(value), [_types(v) for v in value])
    if isinstance(value, dict):
        return (dict, [(_types(k), _types(v)) for k, v in value.items()])
    return type(value)


def test_the_codec_reads_back_the_package_objects():
    """Enum members, dataclasses (rebuilt through their own checks), ranges and read-only mappings."""
    values = [Zone.SAFE, Record("done", 3, "建好用户表"), range(1, 15, 2), MappingProxyType({"a": (1, 2)})]
    back = decode(json.loads(json.dumps(encode(values))))
    assert back[:3] == values[:3] and dict(back[3]) == {"a": (1, 2)} and type(back[3]) is MappingProxyType


def test_the_codec_refuses_what_it_cannot_read_back():
    with pytest.raises(ValueError, match="_Colour"):
        encode(_Colour.RED)
    with pytest.raises(ValueError, match="class must be of ctx_reference"):
        decode({"object": "os.system", "fields": {}})


def _sharing(value, seen=None) -> list:
    """Return, for each list, tuple, dict or object met walking ``value``, the index of its first meeting."""
    seen = {} if seen is None else seen
    if isinstance(value, (list, tuple, dict, Record)) and not (type(value) is tuple and not value):
        found = [seen.setdefault(id(value), len(seen))]
        parts = [] if isinstance(value, Record) else value.values() if isinstance(value, dict) else value
        for part in parts:
            found += _sharing(part, seen)
        return found
    return []


def test_the_codec_keeps_one_object_in_two_places_as_one():
    """A record twice in a list, one list in two places and an object in two arguments are read back shared,
    and equal values that were two objects stay two."""
    record, inner = Record("done", 3, "建好用户表"), [1, 2]
    value = [record, [record, inner], inner, Record("done", 3, "建好用户表"), [1, 2]]
    back = decode(json.loads(json.dumps(encode(value))))
    assert back == value and _sharing(back) == _sharing(value)
    assert back[0] is back[1][0] and back[1][1] is back[2] and back[3] is not back[0] and back[4] is not back[2]
    shared = Shared()
    args, kwargs = encode([record], shared), encode({"again": record}, shared)
    read = Shared()
    assert decode(args, read)[0] is decode(kwargs, read)["again"]


def test_the_codec_reads_lists_and_tuples_of_scalars_shared_and_apart_from_the_data():
    """A list or tuple of scalars (read at once) and an empty dict are numbered like any value, so that a later
    ``{"same": n}`` finds them, and a list read back is never the data's own list."""
    data = [[1, "a"], {"tuple": [2, None]}, {"dict": []}, {"same": 0}, {"same": 1}, {"same": 2}]
    back = decode(data)
    assert back == [[1, "a"], (2, None), {}, [1, "a"], (2, None), {}]
    assert back[3] is back[0] and back[4] is back[1] and back[5] is back[2] and back[0] is not data[0]
    assert type(back[1]) is tuple and decode({"tuple": []}) == ()


def test_the_codec_rebuilds_an_object_of_scalar_fields_through_its_checks():
    """An object whose fields are all scalars is still built by calling its class, so its own checks run."""
    assert decode({"object": "ctx_reference.assemble.Item", "fields": {"name": "a", "tokens": 3}}) == Item("a", 3)
    with pytest.raises(ValueError, match="tokens"):
        decode({"object": "ctx_reference.assemble.Item", "fields": {"name": "a", "tokens": -1}})


def test_the_codec_refuses_a_value_inside_itself():
    looped: list = [1]
    looped.append(looped)
    with pytest.raises(ValueError, match="must not contain itself"):
        encode(looped)
    with pytest.raises(ValueError, match="must name a value read before"):
        decode([{"same": 0}])


def test_a_bank_holds_one_object_twice_where_a_strategy_draws_it():
    """08's "same version" passes one Result as both results: the bank gives it back as one object."""
    same = [case for case in bank("diff") if case.strategy == "same-version" and case.args[0]]
    assert same and all(case.args[1] is case.args[2] for case in same)


def _almost(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return left, (left <= window / 10 if window < 100 else left < window / 10)


@pytest.mark.parametrize(("language", "line"), [
    ("zh_CN", "× 生成的例子 remaining(20, 3, 6, 6, 3)：期望 (2, False)，你的函数返回 (2, True)"
              "（这条规则：“小于窗口的十分之一”）"),
    ("en", "× generated case remaining(20, 3, 6, 6, 3): expected (2, False); your function returned (2, True) "
           "(the rule: “"),
])
def test_a_failing_generated_case_is_one_line_with_the_smallest_call_and_its_rule(capsys, language, line):
    """A function wrong only on small windows: one × line for the generated cases, naming the smallest
    failing call of the bank, the expected value, what came back and the rule's phrase: 20 - (3 + 6 + 6) - 3 = 2
    tokens left, exactly a tenth of the window, which is not below it."""
    with using(language), pytest.raises(CheckFailed):
        check_exercise("remaining", _almost)
    lines = capsys.readouterr().out.splitlines()
    generated = [text for text in lines if "remaining(" in text]
    assert len(generated) == 1 and generated[0].startswith(line)
    assert [rule.name for rule in RULES["remaining"] if "at-a-tenth" in rule.generated][0] == "below-a-tenth"


def test_calls_per_strategy_name_every_strategy():
    """A strategies module may give each strategy its own number of calls; a mapping that leaves one out is refused,
    naming the strategies."""
    from ctx_reference.checks.drawing.write_bank import build
    strategies = {"a": st.just(((1,), {})), "b": st.just(((2,), {}))}
    with pytest.raises(ValueError, match=r"\['a', 'b'\]"):
        build("remaining", strategies, lambda x: x, GENERATED["remaining"], {"a": 3})
    drawn = build("remaining", strategies, lambda x: x, GENERATED["remaining"], {"a": 3, "b": 1})
    assert [case["strategy"] for case in drawn["visible"]] == ["a", "b"]
