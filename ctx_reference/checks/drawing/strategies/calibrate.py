"""Strategies of notebook 09's reconciling exercise ``fit_rates(receipts)``.

The text's domain ("``receipts`` is a list of ``Receipt``, each with ``.text`` (the text sent) and
``.prompt_tokens`` (the token count on the receipt)"; "ASCII means characters whose code point is
below ``128``, spaces and newlines included"; "when the receipts cannot determine both rates (no
receipts, all of one kind of script, or the same ratio of the two kinds in every receipt), raise
``ValueError``"): a list of ``Receipt`` (any text, a count of prompt tokens ≥ 0). The strategies
draw one to five receipts of texts of any Unicode characters (``_wide.any_text``), with a small
alphabet that straddles code point 128 as extra weight (``\\x7f`` is ASCII, ``\\x80`` is not;
spaces, newlines and tabs are ASCII; accented letters, CJK and emoji are not), and token counts
of every magnitude up to 100,000 (``_wide.magnitudes``; 0 to 20 weighted): receipts made exactly
from a pair of rates, receipts of one script each (any ASCII character, or any other), mixed
receipts that no pair of rates fits exactly, empty texts among them, one receipt sometimes twice
in the list as the same object (``_wide.with_one_twice``: a reconciliation sheet may hold a
receipt twice); and the receipts that cannot tell the two rates apart (none, one script only,
every receipt in the same proportion, only empty texts), which must raise ValueError. Narrower
than the text: texts of at most 12 characters (the fit depends only on the two counts of each).

Every drawn call whose fitted rates lie within 1e-9 of a rounding boundary of the 4th decimal is
left out: the check compares the rates rounded to 4 decimals, and two correct ways of solving
least squares may round such a value apart.
"""
from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from ....calibrate import Receipt, fit_rates
from . import Call, call
from ._wide import any_text, characters, magnitudes, weighted, with_one_twice

_ASCII = "ab \n\t{\x7f"
_OTHER = "\x80é账字🙂"
_TEXT = any_text(_ASCII + _OTHER, domain=characters(0, 127) | characters())  # ASCII as likely as not: both rates
_ASCII_TEXT = any_text(_ASCII, min_size=1, domain=characters(0, 127))
_OTHER_TEXT = any_text(_OTHER, min_size=1, domain=characters(128))
_TOKENS = weighted(range(21), magnitudes(0, 100_000))
_RATES = st.sampled_from([Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2)])


def _counts(text: str) -> tuple[int, int]:
    ascii_chars = sum(ord(ch) < 128 for ch in text)
    return ascii_chars, len(text) - ascii_chars


def _exact_fit(receipts: list[Receipt]) -> tuple[Fraction, Fraction] | None:
    """Return the least-squares rates of ``receipts`` as fractions (the normal equations), None if undetermined."""
    rows = [_counts(r.text) for r in receipts]
    saa = sum(a * a for a, _ in rows)
    snn = sum(n * n for _, n in rows)
    san = sum(a * n for a, n in rows)
    say = sum(a * r.prompt_tokens for (a, _), r in zip(rows, receipts))
    sny = sum(n * r.prompt_tokens for (_, n), r in zip(rows, receipts))
    det = saa * snn - san * san
    if det == 0:
        return None
    return Fraction(snn * say - san * sny, det), Fraction(saa * sny - san * say, det)


def _clear_of_rounding(receipts_call: Call) -> bool:
    """True if the call raises, or if both fitted rates are at least 1e-9 from a 4-decimal rounding boundary."""
    fit = _exact_fit(receipts_call[0][0])
    if fit is None:
        return True
    return all(abs((rate * 10_000) % 1 - Fraction(1, 2)) > Fraction(1, 100_000) for rate in fit)


@st.composite
def _made_from_rates(draw) -> Call:
    """Receipts whose tokens are exactly a × ASCII + b × non-ASCII characters (texts chosen so that it is whole)."""
    a, b = draw(_RATES), draw(_RATES)
    receipts = []
    for text in draw(st.lists(_TEXT, min_size=2, max_size=5)):  # the same text twice gives the same receipt
        ascii_chars, other = _counts(text)
        tokens = a * ascii_chars + b * other
        if tokens.denominator != 1:  # pad with "a" (or "字") until the count is whole
            pad, rate = next((pad, rate) for pad, rate in (("a", a), ("字", b)) if (rate * 4).denominator == 1
                             and any((tokens + rate * k).denominator == 1 for k in range(1, 5)))
            text += pad * next(k for k in range(1, 5) if (tokens + rate * k).denominator == 1)
            tokens = a * _counts(text)[0] + b * _counts(text)[1]
        receipts.append(Receipt(text, int(tokens)))
    return call(receipts)


@st.composite
def _one_script_each(draw) -> Call:
    """One or two receipts of ASCII only and one or two of non-ASCII only, in any order."""
    receipts = draw(st.lists(st.builds(Receipt, _ASCII_TEXT, _TOKENS), min_size=1, max_size=2))
    receipts += draw(st.lists(st.builds(Receipt, _OTHER_TEXT, _TOKENS), min_size=1, max_size=2))
    return call(draw(with_one_twice(st.permutations(receipts))))


_MIXED = with_one_twice(st.lists(st.builds(Receipt, _TEXT, _TOKENS), min_size=2, max_size=5)).map(call)


@st.composite
def _undetermined(draw) -> Call:
    """Receipts that cannot tell the rates apart: none, one script only, one proportion only, empty texts."""
    kind = draw(st.sampled_from(["none", "ascii", "other", "proportion", "empty", "one"]))
    if kind == "none":
        return call([])
    if kind in ("ascii", "other"):
        texts = _ASCII_TEXT if kind == "ascii" else _OTHER_TEXT
        return call(draw(st.lists(st.builds(Receipt, texts, _TOKENS), min_size=1, max_size=3)))
    if kind == "proportion":
        unit = draw(st.sampled_from(["a账", "ab字", " é", "\n🙂🙂", "\x7f\x80"]))
        return call([Receipt(unit * k, draw(_TOKENS)) for k in draw(st.lists(st.integers(1, 3), min_size=1,
                                                                                max_size=3))])
    if kind == "empty":
        return call([Receipt("", draw(_TOKENS)) for _ in range(draw(st.integers(1, 3)))])
    return call([Receipt(draw(_TEXT), draw(_TOKENS))])


ORACLES = {"fit_rates": fit_rates}

STRATEGIES = {
    "fit_rates": {
        "made-from-rates": _made_from_rates().filter(_clear_of_rounding),
        "one-script-each": _one_script_each().filter(_clear_of_rounding),
        "mixed": _MIXED.filter(_clear_of_rounding),
        "undetermined": _undetermined(),
    },
}

#: Calls drawn per strategy: about 3,000 visible cases per exercise (and as many hidden), ten to fifty
#: times the first banks; a case costs 0.03 to 0.2 ms in a check cell, so each cell stays well under 1 s
#: (``benchmarks/bench_checks.py``).
EXAMPLES = {"fit_rates": 750}
