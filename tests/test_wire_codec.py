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


def _referring() -> _Codec:
    """The grader's session codec: it remembers records and refers to the ones the answer process holds."""
    return _Codec(refs_out=True, remember=True, refer=True, types=registry())


def _answering() -> _Codec:
    return _Codec(refs_out=False, types=registry(), reuse=True)


def _in_full(text: str) -> int:
    """Return how many records a message's text sends in full (the others go as numbers)."""
    return text.count('"keep"')


def _views(count: int, turns: int = 40) -> list:
    """What a simulation sends turn after turn: the records so far (a few replaced by new ones), and the turn."""
    records: list[TurnRecord] = []
    views = []
    for turn in range(1, turns + 1):
        records.append(TurnRecord(turn, "read", 100 * turn, 10 * turn, turn % 3 == 0, False, False, False))
        if turn % 7 == 0:  # a clearing replaces older records by new objects
            records[: turn // 2] = [r._replace(cleared=True) for r in records[: turn // 2]]
        views.append(((tuple(records), turn), {"records": list(records)}))
    return views[:count]


def test_a_record_the_answer_process_holds_crosses_as_its_number_and_reads_back_the_same():
    """After a call whose reply said "ok", the records it sent cross as ``{"kept": n}``: the messages shrink, and
    the answer process reads every view equal to what was sent, a record sent again as the same object."""
    grader, answer = _referring(), _answering()
    sizes, plain = [], []
    first_seen: dict = {}
    for view in _views(40):
        text = json.dumps(grader.encode(view))
        grader.commit()
        read = answer.decode(json.loads(text))
        assert read == view
        for record in read[0][0]:
            assert first_seen.setdefault(record, record) is record
        sizes.append(len(text))
        plain.append(len(_wire(Codec(refs_out=True), view)))
    assert _in_full(text) < len(view[1]["records"]) and sum(sizes) * 3 < sum(plain)


def test_records_of_a_message_not_read_whole_cross_in_full_again():
    """Numbers given in a message count as held only once committed: after ``commit(held=False)`` (the call
    did not run: the answer process may not have read it all) and after ``forget_kept`` (a new process), every
    record crosses in full, and a fresh answer process reads the next message."""
    views = _views(3)
    grader = _referring()
    grader.encode(views[0])
    grader.commit(held=False)
    assert _in_full(json.dumps(grader.encode(views[1]))) == 2 * 2  # two records, in two places each
    grader.commit()
    assert _in_full(json.dumps(grader.encode(views[2]))) == 2  # the third record only
    grader.commit()
    grader.forget_kept()
    text = json.dumps(grader.encode(views[2]))
    assert _in_full(text) == 2 * 3 and _answering().decode(json.loads(text)) == views[2]


def test_numbers_run_out_and_are_given_again_oldest_first():
    """Past KNOWN_OBJECTS numbered records the numbers are given again; a record whose number went to another
    crosses in full again, and the answer process reads every message right."""
    grader, answer = _referring(), _answering()
    records = [TurnRecord(t, "run", t, t, False, False, False, False) for t in range(KNOWN_OBJECTS + 300)]
    for start in range(0, len(records), 100):
        message = [records[0], records[start: start + 100], records[1]]
        data = json.loads(json.dumps(grader.encode(message)))
        grader.commit()
        assert answer.decode(data) == message
    assert answer.decode(json.loads(json.dumps(grader.encode([records])))) == [records]
    assert len(grader._kept) <= KNOWN_OBJECTS and len(answer._held) <= KNOWN_OBJECTS


@pytest.mark.parametrize("data", [{"kept": 0}, {"keep": 0, "v": 1}, {"l": [{"kept": 0}]}, {"kl": [0]}, {"kt": []},
                                  {"keep": 0, "v": {"o": "ctx_reference.policy:TurnRecord",
                                                    "nt": [1, "run", 1, 1, False, False, False, False]}}],
                         ids=["kept", "keep", "kept-in-a-list", "held-list", "held-tuple", "keep-a-record"])
def test_the_grader_refuses_what_only_the_grader_may_send(data):
    """``keep`` and ``kept`` go from the grader to the answer process only: the grader's codecs refuse them."""
    for grader in (Codec(refs_out=True), _referring()):
        with pytest.raises(WireError, match="malformed"):
            grader.decode(data)


@pytest.mark.parametrize("data", [{"kept": 5}, {"kept": -1}, {"kept": KNOWN_OBJECTS}, {"kept": "0"}, {"kept": True},
                                  {"keep": 1}, {"keep": 1, "kept": 1}, {"kept": 1, "v": 1}, {"kl": [5]},
                                  {"kl": [1, "1"]}, {"kt": [1.0]}, {"kl": 1}, {"kl": [1], "x": 1}, {"kl": [True]}])
def test_the_answer_process_refuses_a_number_it_was_not_sent(data):
    answer = _answering()
    answer.decode({"keep": 1, "v": 2})
    with pytest.raises(WireError):
        answer.decode([data])


@SETTINGS
@given(st.lists(VALUES, min_size=1, max_size=4))
def test_any_value_sent_again_by_number_reads_back_equal(values):
    """Whatever the grader sends, once and again (its records then by number), the answer process reads it equal."""
    grader, answer = _referring(), _answering()
    for _ in range(2):
        for value in values:
            data = json.loads(json.dumps(grader.encode(value)))
            grader.commit()
            assert answer.decode(data) == value
