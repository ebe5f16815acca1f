"""Strategies of notebook 09's exercises ``zone(used, limit)`` and ``measure(buckets, tokenizer, limit)``.

``zone``: the text's domain ("``used`` is how many tokens this call uses and ``limit`` is the window
limit; both are integers"; "when ``limit`` is not positive, or ``used`` is negative, raise
``ValueError``"; it shows a window of 10¹⁷ tokens) is two integers, anything else than ``used`` ≥ 0
and ``limit`` > 0 raising ValueError. The strategies draw windows of every magnitude up to 10**18
(``_wide.magnitudes``; 1, 2, 3, 5, 7, 10, 13, 20, 33, 99 to 101, 8,000 and 10,000 weighted: windows
that are and are not multiples of 20, so that a boundary falls between two integers), ``used``
exactly on each boundary the text names (60 %, 85 %, 100 % of the window) and one token either
side of it, ``used`` of any magnitude up to three windows, windows of 10**15 to 10**18 tokens
(too large for a float to tell 100 % from one token over), and bad arguments of every magnitude
(a negative ``used``, a window of 0 or less).

``measure``: the text's domain ("``buckets`` is a dict whose keys are bucket names (each one of the
four in ``BUCKETS``) and whose values are the buckets' texts; a bucket that is missing counts as 0
tokens"; "use the ``tokenizer.count(text)`` you are given"; "for a bucket name you don't recognize
(such as ``"memory"``), raise ``ValueError``") is a dict whose keys are some of the four bucket names
(in any order) and whose values are texts, any object with ``count(text) -> int`` as the tokenizer,
and a positive window. The strategies draw subsets of the buckets in shuffled order, texts of any
Unicode characters (``_wide.any_text``; ASCII, CJK, emoji, accented letters, spaces, newlines and
code points 127 and 128 weighted, empty and blank texts too, so that lengths leave every remainder
mod 4 and counting the joined text differs from counting each bucket), several tokenizers
(``len // 4``, one per character, one that counts the empty text as 1, the character-class
estimate), windows of every magnitude up to 10,000 (1 to 30 weighted, so that every zone occurs),
totals exactly on the zone boundaries, unknown bucket names of any text (near misses weighted), and
calls by keyword. Narrower than the text: the tokenizers are these four (a learner's function
must work with any; these tell apart counting the empty text, pooling remainders and summing),
and texts have at most 11 characters.
"""
from __future__ import annotations

from hypothesis import strategies as st

from ....calibrate import LinearEstimate
from ....ledger import BUCKETS, measure, zone
from ....tokens import FakeTokenizer
from ...ledger import CharTokenizer, PlusOneTokenizer
from . import Call, call
from ._wide import any_text, magnitudes, weighted

# Windows whose boundaries fall on integers (multiples of 20) and between them, and the smallest ones.
_LIMITS = weighted([1, 2, 3, 5, 7, 10, 13, 20, 33, 99, 100, 101, 8_000, 10_000], magnitudes(1, 10**18))
_PERCENTS = (60, 85, 100)


@st.composite
def _at_a_boundary(draw, percent: int) -> Call:
    """A call whose ``used`` is ``percent`` % of the window (floor or ceiling of it), or one token off."""
    limit = draw(_LIMITS)
    exact = percent * limit // 100 + draw(st.sampled_from([0, 1]))  # floor or ceiling of the share
    used = max(0, exact + draw(st.sampled_from([-1, 0, 1])))
    return call(used, limit)


@st.composite
def _huge(draw) -> Call:
    """A window of 10**15 to 10**18 tokens, ``used`` on a boundary or one token off (floats cannot tell them apart)."""
    limit = draw(st.integers(10**15, 10**18) | st.builds(lambda e, m: m * 10**e, st.integers(15, 17),
                                                         st.sampled_from([1, 3, 7])))
    percent = draw(st.sampled_from(_PERCENTS))
    return call(percent * limit // 100 + draw(st.sampled_from([-1, 0, 1])), limit)


@st.composite
def _anywhere(draw) -> Call:
    """Any use from 0 to three windows."""
    limit = draw(_LIMITS)
    return call(draw(weighted([0, limit], magnitudes(0, 3 * limit))), limit)


_NEGATIVE = magnitudes(1, 10**18).map(lambda n: -n)
_BAD = st.one_of(
    st.builds(call, weighted(range(21), magnitudes(0, 10**18)), weighted([0, -1, -20], _NEGATIVE | st.just(0))),
    st.builds(call, weighted([-1, -20], _NEGATIVE), weighted([1, 20], magnitudes(1, 10**18))),
)

# Texts of a small alphabet: ASCII letters, CJK, emoji, an accented letter, a space, a newline, a tab.
_CHARS = "abx \n\t#字账🙂é\x7f\x80"
_TEXTS = weighted(["", " ", "\n", "  \n ", "abcd", "abc", "abcde"], any_text(_CHARS, max_size=11))
_MEASURE_LIMITS = weighted(range(1, 31), magnitudes(1, 10_000))
_TOKENIZERS = st.sampled_from([FakeTokenizer(), CharTokenizer(), PlusOneTokenizer(), LinearEstimate(0.25, 1.0)])


@st.composite
def _buckets(draw, texts=_TEXTS) -> dict:
    """Some of the four buckets (none, all, any subset), in a shuffled order."""
    names = draw(st.permutations(BUCKETS))
    chosen = names[: draw(st.integers(0, len(BUCKETS)))]
    return {name: draw(texts) for name in chosen}


@st.composite
def _measure_call(draw) -> Call:
    """Any of the buckets, any of the tokenizers, a window of 1 to 30 tokens."""
    return call(draw(_buckets()), draw(_TOKENIZERS), draw(_MEASURE_LIMITS))


@st.composite
def _missing_buckets(draw) -> Call:
    """Fewer than four buckets, with a tokenizer that counts the empty text as 1 (a missing bucket still counts 0)."""
    buckets = draw(_buckets())
    if len(buckets) == len(BUCKETS):
        buckets.pop(next(iter(buckets)))
    return call(buckets, draw(st.sampled_from([PlusOneTokenizer(), FakeTokenizer()])), draw(_MEASURE_LIMITS))


@st.composite
def _separately(draw) -> Call:
    """Two to four buckets of 1 to 7 ASCII characters each, counted by len // 4: the remainders add up when joined."""
    names = draw(st.permutations(BUCKETS))[: draw(st.integers(2, 4))]
    buckets = {name: draw(st.sampled_from(["a", "ab", "abc", "abcde", "abcdefg", "a\nb", " x "])) for name in names}
    return call(buckets, FakeTokenizer(), draw(_MEASURE_LIMITS))


@st.composite
def _zone_boundary(draw) -> Call:
    """The four buckets in order, one holding a total (one token per character) on a boundary share, or one off."""
    limit = draw(weighted([1, 5, 20, 40, 100], magnitudes(1, 300)))
    percent = draw(st.sampled_from(_PERCENTS))
    total = max(0, percent * limit // 100 + draw(st.sampled_from([-1, 0, 1])))
    full = draw(st.sampled_from(BUCKETS))
    return call({name: "字" * total if name == full else "" for name in BUCKETS}, CharTokenizer(), limit)


@st.composite
def _unknown_bucket(draw) -> Call:
    """A known bucket or two and a name that is not one of the four (a near miss, another case, a memory)."""
    buckets = draw(_buckets())
    wrong = draw(weighted(["memory", "System", "tool_result", "histories", "", " system", "task-state"],
                          any_text(max_size=12).filter(lambda name: name not in BUCKETS)))
    buckets[wrong] = draw(_TEXTS)
    return call(buckets, draw(_TOKENIZERS), draw(_MEASURE_LIMITS))


@st.composite
def _by_keyword(draw) -> Call:
    """The same calls made with keyword arguments, as the stated signature allows."""
    (buckets, tokenizer, limit), _ = draw(_measure_call())
    return (), {"buckets": buckets, "tokenizer": tokenizer, "limit": limit}


ORACLES = {
    "zone": zone,
    "measure": lambda buckets, tokenizer, limit: measure(buckets, tokenizer, limit),
}

STRATEGIES = {
    "zone": {
        "at-60": _at_a_boundary(60),
        "at-85": _at_a_boundary(85),
        "at-100": _at_a_boundary(100),
        "anywhere": _anywhere(),
        "huge-windows": _huge(),
        "bad-arguments": _BAD,
    },
    "measure": {
        "any-buckets": _measure_call(),
        "missing-buckets": _missing_buckets(),
        "counted-separately": _separately(),
        "zone-boundary": _zone_boundary(),
        "unknown-bucket": _unknown_bucket(),
        "by-keyword": _by_keyword(),
    },
}

#: Calls drawn per strategy: about 9,000 visible cases for zone, whose case costs about 0.02 ms in a
#: check cell, and about 3,000 for measure, whose case costs ten times that (``benchmarks/bench_checks.py``).
EXAMPLES = {"zone": 1500, "measure": 500}
