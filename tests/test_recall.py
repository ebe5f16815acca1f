"""Tests for ctx_reference.recall: the toy recall curve and the stuff-vs-retrieve comparison."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.recall import (
    DOC_TOKENS,
    LOST_IN_THE_MIDDLE,
    RecallModel,
    answer_position,
    retrieved_recall,
    stuff_vs_retrieve,
    stuffed_recall,
)

THREE_DECIMALS = 5e-4
LENGTHS = st.integers(min_value=1, max_value=10_000_000)


@st.composite
def position_and_length(draw):
    """Draw (pos, n) with 0 <= pos < n."""
    n = draw(LENGTHS)
    pos = draw(st.integers(min_value=0, max_value=n - 1))
    return pos, n


MODELS = st.builds(
    RecallModel,
    half_at=st.integers(min_value=1_000, max_value=2_000_000),
    steep=st.floats(min_value=0.5, max_value=4.0),
    middle=st.floats(min_value=0.0, max_value=1.0),
)


def test_recall_shape():
    """Seed: half at 400k (1 / (1 + 1) = 0.500); the exact middle is 30% lower than the ends (factor 0.7)."""
    model = RecallModel()
    assert model.base(400_000) == pytest.approx(0.500, abs=THREE_DECIMALS)
    assert model.position_factor(0, 1) == pytest.approx(0.7)  # x = 0.5 / 1 = 0.5
    assert model.position_factor(1, 2) == pytest.approx(0.775)  # x = 0.75: 1 - 0.3 * 4 * 0.75 * 0.25
    assert model.position_factor(0, 1_000_000) == pytest.approx(1.0, abs=1e-5)  # x ~ 0: the start


def test_recall_defaults_are_the_lesson_numbers():
    """RecallModel() is half_at 400,000, steep 1.5, middle 0.3."""
    model = RecallModel()
    assert (model.half_at, model.steep, model.middle) == (400_000, 1.5, 0.3)


def test_base_at_800k():
    """Seed: steep 1.5 makes 800k give 1 / (1 + 2 ** 1.5) = 1 / 3.828 = 0.261."""
    assert RecallModel().base(800_000) == pytest.approx(0.261, abs=THREE_DECIMALS)


def test_recall_in_stuffed_800k_context():
    """Derived: 800k tokens, answer at 402,000 (doc 100) -> 0.261 * 0.700 = 0.183; at 798,000 (doc 199) -> 0.260."""
    model = RecallModel()
    assert model.recall(402_000, 800_000) == pytest.approx(0.183, abs=THREE_DECIMALS)
    assert model.recall(798_000, 800_000) == pytest.approx(0.260, abs=THREE_DECIMALS)


def test_answer_position():
    """An answer sits at the middle token of its document: doc 100 -> 100 * 4,000 + 2,000 = 402,000."""
    assert DOC_TOKENS == 4_000
    assert answer_position(0) == 2_000
    assert answer_position(100) == 402_000
    assert answer_position(199) == 798_000
    assert answer_position(12, doc_tokens=2_000) == 25_000  # 12 * 2,000 + 1,000


def test_stuffed_recall():
    """Derived: 200 docs stuffed -> 0.183 (doc 100), 0.260 (doc 199); seed with middle=0 -> 0.261 both."""
    model = RecallModel()
    flat = RecallModel(middle=0.0)
    assert stuffed_recall(model, 200, 100) == pytest.approx(0.183, abs=THREE_DECIMALS)
    assert stuffed_recall(model, 200, 199) == pytest.approx(0.260, abs=THREE_DECIMALS)
    assert stuffed_recall(flat, 200, 100) == pytest.approx(0.261, abs=THREE_DECIMALS)
    assert stuffed_recall(flat, 200, 199) == pytest.approx(0.261, abs=THREE_DECIMALS)


def test_retrieved_recall():
    """Seed: 8 docs (32k), retriever 0.9, answer first -> 0.9 * 0.909 = 0.818; derived small corpus 0.553."""
    model = RecallModel()
    assert retrieved_recall(model, 8, 0.9) == pytest.approx(0.818, abs=THREE_DECIMALS)
    assert retrieved_recall(model, 8, 0.6, doc_tokens=2_000) == pytest.approx(0.553, abs=THREE_DECIMALS)
    assert retrieved_recall(model, 8, 0.0) == 0.0


def test_stuff_vs_retrieve():
    """The comparison rows carry the docs/models.md §4 values and provenance; retrieval wins big,
    stuffing wins small."""
    rows = stuff_vs_retrieve()
    expected = [
        ("base_400k", 400_000, 0.500, "seed"),
        ("stuffed_middle", 800_000, 0.183, "derived"),
        ("stuffed_last", 800_000, 0.260, "derived"),
        ("stuffed_middle_flat", 800_000, 0.261, "seed"),
        ("stuffed_last_flat", 800_000, 0.261, "seed"),
        ("retrieved_8", 32_000, 0.818, "seed"),
        ("small_stuffed", 50_000, 0.670, "derived"),
        ("small_retrieved", 16_000, 0.553, "derived"),
    ]
    assert [(row.key, row.n_tokens, row.provenance) for row in rows] == [
        (key, n, provenance) for key, n, _, provenance in expected
    ]
    for row, (_, _, value, _) in zip(rows, expected):
        assert row.recall == pytest.approx(value, abs=THREE_DECIMALS), row.key
    by_key = {row.key: row.recall for row in rows}
    assert by_key["retrieved_8"] > by_key["stuffed_last"]  # 0.818 > 0.260: big corpus, retrieve
    assert by_key["small_stuffed"] > by_key["small_retrieved"]  # 0.670 > 0.553: small corpus, stuff


def test_stuff_vs_retrieve_rows_have_labels():
    """Every row has a non-empty learner-facing label and a unique key."""
    rows = stuff_vs_retrieve()
    assert all(row.label for row in rows)
    assert len({row.key for row in rows}) == len(rows)


def test_stuff_vs_retrieve_other_model_is_all_derived():
    """With parameters other than the lesson's, no row can claim to be a seed number."""
    rows = stuff_vs_retrieve(RecallModel(middle=0.5))
    assert {row.provenance for row in rows} == {"derived"}


def test_lost_in_the_middle_data():
    """Liu et al. 2023, GPT-3.5-Turbo, 20 docs: 75.8/57.2/53.8/55.4/63.2 % at 1/5/10/15/20, closed-book 56.1 %."""
    curve = LOST_IN_THE_MIDDLE
    assert curve.model == "GPT-3.5-Turbo"
    assert curve.n_documents == 20
    assert curve.positions == (1, 5, 10, 15, 20)
    assert curve.accuracy_percent == (75.8, 57.2, 53.8, 55.4, 63.2)
    assert curve.closed_book_percent == 56.1
    assert "Liu" in curve.citation and "2023" in curve.citation


def test_lost_in_the_middle_is_u_shaped():
    """The measured curve is U-shaped, and its middle (53.8 %) is below the closed-book score (56.1 %)."""
    accuracy = LOST_IN_THE_MIDDLE.accuracy_percent
    lowest = min(accuracy)
    assert accuracy[0] > lowest and accuracy[-1] > lowest
    assert lowest < LOST_IN_THE_MIDDLE.closed_book_percent


@given(MODELS, position_and_length())
def test_recall_is_a_probability_within_its_envelope(model, pos_n):
    """recall lies in [0, 1], between base * (1 - middle) and base."""
    pos, n = pos_n
    value = model.recall(pos, n)
    base = model.base(n)
    assert 0.0 <= value <= 1.0
    assert base * (1 - model.middle) - 1e-12 <= value <= base + 1e-12


@given(MODELS, LENGTHS, st.integers(min_value=1, max_value=1_000_000))
def test_base_decreases_with_length(model, n, extra):
    """A longer context never has a higher base recall."""
    assert model.base(n + extra) <= model.base(n)


@given(MODELS, position_and_length())
def test_position_factor_is_symmetric(model, pos_n):
    """The start and the end are treated alike: factor(pos, n) == factor(n - 1 - pos, n)."""
    pos, n = pos_n
    assert model.position_factor(pos, n) == pytest.approx(model.position_factor(n - 1 - pos, n), abs=1e-9)


@given(st.integers(min_value=1, max_value=300), st.floats(min_value=0.0, max_value=1.0))
def test_retriever_recall_scales_linearly(k_docs, retriever):
    """Retrieved recall is the retriever's recall times the recall of the short stuffed context."""
    model = RecallModel()
    assert retrieved_recall(model, k_docs, retriever) == pytest.approx(
        retriever * stuffed_recall(model, k_docs, 0), abs=1e-12
    )


@pytest.mark.parametrize("kwargs, pattern", [
    ({"half_at": 0}, r"half_at must be > 0 \(got 0\)"),
    ({"half_at": -400_000}, r"half_at must be > 0 \(got -400000\)"),
    ({"half_at": "400k"}, r"half_at must be a number \(got '400k'\)"),
    ({"steep": 0}, r"steep must be > 0 \(got 0\)"),
    ({"steep": True}, r"steep must be a number \(got True\)"),
    ({"middle": 1.5}, r"middle must be in \[0, 1\] \(got 1.5\)"),
    ({"middle": -0.1}, r"middle must be in \[0, 1\] \(got -0.1\)"),
    ({"middle": float("nan")}, r"middle must not be NaN \(got nan\)"),
])
def test_recall_model_rejects_bad_parameters(kwargs, pattern):
    """RecallModel raises ValueError naming the bad parameter and echoing it."""
    with pytest.raises(ValueError, match=pattern):
        RecallModel(**kwargs)


@pytest.mark.parametrize("pos, n, pattern", [
    (0, 0, r"n must be >= 1 \(got 0\)"),
    (0, -5, r"n must be >= 1 \(got -5\)"),
    (-1, 10, r"pos must be >= 0 \(got -1\)"),
    (10, 10, r"pos must be < n=10 \(got 10\)"),
    (0.5, 10, r"pos must be an int \(got 0.5\)"),
    (0, 10.0, r"n must be an int \(got 10.0\)"),
])
def test_recall_rejects_bad_position(pos, n, pattern):
    """recall() raises ValueError naming `pos` or `n` and echoing the value."""
    with pytest.raises(ValueError, match=pattern):
        RecallModel().recall(pos, n)


def test_base_rejects_bad_length():
    """base() of a zero-token context raises ValueError naming `n`."""
    with pytest.raises(ValueError, match=r"n must be >= 1 \(got 0\)"):
        RecallModel().base(0)


@pytest.mark.parametrize("call, pattern", [
    (lambda: answer_position(-1), r"doc_index must be >= 0 \(got -1\)"),
    (lambda: answer_position(3, doc_tokens=0), r"doc_tokens must be >= 1 \(got 0\)"),
    (lambda: stuffed_recall(RecallModel(), 0, 0), r"n_docs must be >= 1 \(got 0\)"),
    (lambda: stuffed_recall(RecallModel(), 200, 200), r"answer_doc must be < n_docs=200 \(got 200\)"),
    (lambda: stuffed_recall("model", 200, 0), r"model must be a RecallModel \(got 'model'\)"),
    (lambda: retrieved_recall(RecallModel(), 8, 1.2), r"retriever_recall must be in \[0, 1\] \(got 1.2\)"),
    (lambda: retrieved_recall(RecallModel(), 8, -0.1), r"retriever_recall must be in \[0, 1\] \(got -0.1\)"),
    (lambda: retrieved_recall(RecallModel(), 0, 0.9), r"k_docs must be >= 1 \(got 0\)"),
    (lambda: retrieved_recall(RecallModel(), 8, 0.9, answer_doc=8), r"answer_doc must be < k_docs=8 \(got 8\)"),
    (lambda: stuff_vs_retrieve(None), r"model must be a RecallModel \(got None\)"),
])
def test_helpers_reject_bad_input(call, pattern):
    """The stuff-vs-retrieve helpers raise ValueError naming the bad argument and echoing it."""
    with pytest.raises(ValueError, match=pattern):
        call()


def test_error_message_echoes_value_exactly():
    """The echoed value is the repr of what was passed, so a learner can find it in their code."""
    with pytest.raises(ValueError, match=re.escape("(got '12')")):
        answer_position("12")
