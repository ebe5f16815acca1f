"""The wire codec both ends of the answer process share: values there and back, and a remembered record the same."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx_course.sandbox.answerer import KNOWN_OBJECTS, MAX_DEPTH, WireError
from ctx_course.sandbox.answerer import Codec as _Codec
from ctx_course.sandbox.wire_types import registry
from ctx_reference import TurnRecord


def Codec(refs_out: bool, remember: bool = False) -> _Codec:  # noqa: N802 - the codec as both ends make it
    return _Codec(refs_out=refs_out, remember=remember, types=registry())

SETTINGS = settings(derandomize=True, database=None, deadline=None, max_examples=300,
                    suppress_health_check=list(HealthCheck))

RECORDS = st.builds(TurnRecord, turn=st.integers(0, 500), tool=st.sampled_from(["grep", "read", "run"]),
                    result_tokens=st.integers(0, 10**6), tokens=st.integers(0, 10**6), needed=st.booleans(),
                    cleared=st.booleans(), noted=st.booleans(), protected=st.booleans())
LEAVES = st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.floats(allow_nan=False) | RECORDS
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=4)
    | st.frozensets(st.integers() | st.text(max_size=4), max_size=4),
    max_leaves=30,
)


def _wire(codec: Codec, value) -> str:
    return json.dumps(codec.encode(value), sort_keys=True)


@SETTINGS
@given(VALUES)
def test_every_value_comes_back_equal(value):
    """What one end encodes the other decodes to an equal value, records as records."""
    data = json.loads(json.dumps(Codec(refs_out=True, remember=True).encode(value)))
    assert Codec(refs_out=False).decode(data) == value


@SETTINGS
@given(st.lists(VALUES, min_size=1, max_size=4))
def test_a_remembering_codec_sends_the_same_bytes_every_time(values):
    """The grader's codec remembers records: every message it sends is the one a fresh codec would send,
    also when the same objects go again (the next turn's view)."""
    remembering = Codec(refs_out=True, remember=True)
    for _ in range(2):
        for value in values:
            assert _wire(remembering, value) == _wire(Codec(refs_out=True), value)


def test_a_record_sent_in_every_view_is_encoded_once(monkeypatch):
    """The same TurnRecord objects in view after view: each is encoded the first time only."""
    records = [TurnRecord(t, "read", 100 * t, 10 * t, t % 2 == 0, False, False, False) for t in range(50)]
    codec = Codec(refs_out=True, remember=True)
    encoded = []
    original = _Codec._encode_object

    def counting(self, declared, value, depth):
        encoded.append(value)
        return original(self, declared, value, depth)

    monkeypatch.setattr(_Codec, "_encode_object", counting)
    for turn in range(1, 51):
        codec.encode({"turns": records[:turn], "tokens": turn})
    assert len(encoded) == 50
    fresh = Codec(refs_out=True)
    assert codec.encode({"turns": records}) == fresh.encode({"turns": records})


def test_the_table_of_remembered_records_is_bounded():
    """A remembering codec keeps at most KNOWN_OBJECTS encodings, then starts again, and sends what a fresh
    codec sends before and after."""
    codec = Codec(refs_out=True, remember=True)
    records = [TurnRecord(turn, "run", 1, 1, False, False, False, False) for turn in range(KNOWN_OBJECTS + 10)]
    for record in records:
        codec.encode([record])
    assert 0 < len(codec._known) <= KNOWN_OBJECTS
    assert _wire(codec, records) == _wire(Codec(refs_out=True), records)


@pytest.mark.parametrize("remember", [False, True], ids=["fresh", "remembering"])
def test_a_value_nested_too_deeply_is_refused_either_way(remember):
    """A record's fields may sit at depth MAX_DEPTH and no deeper, whether the record is remembered or not:
    a record inside MAX_DEPTH - 2 lists goes through, inside one more it is refused; reading back, MAX_DEPTH
    nested lists go through and one more is refused."""
    record = TurnRecord(1, "run", 1, 1, False, False, False, False)

    def nested(levels):
        value = [record]
        for _ in range(levels):
            value = [value]
        return value

    codec = Codec(refs_out=True, remember=remember)
    codec.encode([record])  # remembered from here on, when the codec remembers
    codec.encode(nested(MAX_DEPTH - 2))
    with pytest.raises(WireError, match="nested too deeply"):
        codec.encode(nested(MAX_DEPTH - 1))
    Codec(refs_out=False).decode(_deep_data(MAX_DEPTH))
    with pytest.raises(WireError, match="nested too deeply"):
        Codec(refs_out=False).decode(_deep_data(MAX_DEPTH + 1))


def _deep_data(levels):
    data = 1
    for _ in range(levels):
        data = {"l": [data]}
    return data


@pytest.mark.parametrize("data", [{}, [], {"nt": [1], "o": "os:system"}, {"o": "ctx_reference.policy:Nope", "nt": []},
                                  {"o": "ctx_reference.nope:Nope", "nt": []}, {"zz": 1},
                                  {"o": "ctx_reference.policy:TurnRecord", "nt": [1, "run"]},
                                  {"o": "ctx_reference.policy:TurnRecord", "nt": ["1", "run", 1, 1, 0, 0, 0, 0]}],
                         ids=["empty", "bare-list", "outside-the-package", "unknown-class", "unknown-module", "tag",
                              "fields-missing", "fields-of-other-types"])
def test_malformed_data_is_refused(data):
    """Data that is no encoding of a value, names a class outside the declared ones, or gives a declared one
    fields that do not fit, raises WireError."""
    codec = Codec(refs_out=False)
    record = {"o": "ctx_reference.policy:TurnRecord", "nt": [1, "run", 1, 1, False, False, False, False]}
    codec.decode(record)  # a class read once is remembered: the refusals below must not depend on it
    with pytest.raises(WireError):
        codec.decode(data)


def test_the_answer_process_reads_a_record_sent_again_as_the_same_object_and_the_grader_never_does():
    """With ``reuse`` (the answer process), a record whose fields came before is the object read then; the
    grader's codec reads every record anew, so nothing a learner sent outlives its message there."""
    record = TurnRecord(3, "read", 300, 30, True, False, False, False)
    data = json.loads(json.dumps(Codec(refs_out=True).encode([record, record])))
    answer = _Codec(refs_out=False, types=registry(), reuse=True)
    first, again = answer.decode(data), answer.decode(data)
    assert first == [record, record] and first[0] is first[1] is again[0]
    grader = Codec(refs_out=True)
    one, two = grader.decode(data), grader.decode(data)
    assert one == two == [record, record] and one[0] is not two[0]
