"""Strategies of notebook 03's exercise ``fit_position(positions, accuracy, n_docs)``.

The text's domain ("``positions`` (which document, counted from 1) and ``accuracy`` may be lists or
tuples; do not change the ones passed in"; "``accuracy`` is a fraction (0.758, not 75.8)"; "``N`` is
the number of documents", 20 in the paper's measurement and up to 200 in the lesson): the 1-based
positions of the answer document among ``n_docs`` documents, the accuracy measured at each, and
the least-squares fit of ``base * (1 - middle * 4x(1 - x) - end_drop * x)``, x = (p - 0.5) / N.
The strategies draw among 3 to 200 documents (``_wide.magnitudes``; 3, 4, 5, 10 and 20 weighted)
three to seven distinct positions of any magnitude up to ``n_docs`` (the first and the last
often), sometimes with a position measured twice (the text does not ask for distinct positions),
in any order, as a list or a tuple; accuracies computed from known parameters of two decimals
(middle 0 and negative end_drop included: a flat or a rising curve), which the fit must give back,
and any fractions from 0 to 1 (a few weighted, so that ties and repeated values occur), which it
must fit. Narrower than the text: at least three distinct positions (fewer leave the three
parameters undetermined, which the text does not treat); calls whose least-squares problem is
ill-conditioned (nearly equal positions among many documents) or whose fitted base is near 0 (the
ratios c1 / c0 and c2 / c0 then depend on rounding noise) are left out, and so are calls whose
result lies on a rounding tie at the hidden digests' 4 places.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .... import recall
from ..signatures import LEARNER_CALLS
from . import Call
from ._floats import without_ties
from ._wide import magnitudes, weighted

PLACES = 4  # the hidden digests' rounding (checks/recall_fit.py GENERATED)
MAX_CONDITION = 1e4  # of the design matrix: a fit by normal equations stays exact to about 1e-8
MIN_BASE = 0.2  # the fitted base below which middle and end_drop are left out


_fit_position = LEARNER_CALLS["fit_position"](vars(recall))


def _design(positions, n_docs) -> np.ndarray:
    x = (np.asarray(positions, dtype=float) - 0.5) / n_docs
    return np.column_stack([np.ones_like(x), -4 * x * (1 - x), -x])


def _well_posed(call: Call) -> bool:
    (positions, accuracy, n_docs), _ = call
    design = _design(positions, n_docs)
    if np.linalg.cond(design) > MAX_CONDITION:
        return False
    (c0, _, _), *_ = np.linalg.lstsq(design, np.asarray(accuracy, dtype=float), rcond=None)
    return bool(c0 > MIN_BASE)


@st.composite
def _positions(draw, count=None) -> tuple[list[int] | tuple[int, ...], int]:
    """1-based positions among n_docs documents, ``count`` (or 3 to 7) distinct ones, sometimes one of them twice;
    in any order, as a list or a tuple; the ends often."""
    n_docs = draw(weighted((3, 4, 5, 10, 20), magnitudes(3, 200)))
    size = count if count is not None else draw(st.integers(3, min(n_docs, 7)))
    one = st.just(1) | st.just(n_docs) | magnitudes(1, n_docs)
    positions = draw(st.lists(one, min_size=size, max_size=size, unique=True))
    if count is None and draw(st.booleans()):
        positions.insert(draw(st.integers(0, len(positions))), draw(st.sampled_from(positions)))
    if draw(st.booleans()):
        positions.sort()
    return (tuple(positions) if draw(st.booleans()) else positions), n_docs


_BASES = st.sampled_from((0.5, 0.6, 0.75, 0.8, 0.9, 1.0)) | st.integers(30, 100).map(lambda k: k / 100)
_MIDDLES = st.sampled_from((0.0, 0.2, 0.3, 0.5)) | st.integers(0, 60).map(lambda k: k / 100)
_DROPS = st.sampled_from((0.0, 0.1, -0.1, 0.2)) | st.integers(-30, 30).map(lambda k: k / 100)


@st.composite
def _exact_curve(draw, count=None) -> Call:
    """Accuracies computed from known parameters (rounded to 6 decimals, as measured values would be)."""
    positions, n_docs = draw(_positions(count))
    base, middle, end_drop = draw(_BASES), draw(_MIDDLES), draw(_DROPS)
    x = [(p - 0.5) / n_docs for p in positions]
    values = [round(base * (1 - middle * 4 * v * (1 - v) - end_drop * v), 6) for v in x]
    accuracy = tuple(values) if type(positions) is tuple and draw(st.booleans()) else values
    return (positions, accuracy, n_docs), {}


@st.composite
def _measured(draw) -> Call:
    """Accuracies from a small set of fractions: ties, repeats, a dip or none."""
    positions, n_docs = draw(_positions())
    values = weighted((0.5, 0.55, 0.6, 0.75, 0.8), st.integers(30, 100).map(lambda k: k / 100) | st.floats(0, 1))
    accuracy = draw(st.lists(values, min_size=len(positions), max_size=len(positions)))
    return (positions, tuple(accuracy) if draw(st.booleans()) else accuracy, n_docs), {}


def _kept(calls: st.SearchStrategy[Call]) -> st.SearchStrategy[Call]:
    return without_ties(calls.filter(_well_posed), _fit_position, PLACES)


ORACLES = {"fit_position": _fit_position}

STRATEGIES = {
    "fit_position": {
        "known-parameters": _kept(_exact_curve()),
        "three-points": _kept(_exact_curve(count=3) | _measured().filter(lambda c: len(c[0][0]) == 3)),
        "measured-values": _kept(_measured()),
    },
}

#: Calls drawn per strategy: about 3,000 visible cases per exercise (and as many hidden), ten to fifty
#: times the first banks; a case costs 0.03 to 0.2 ms in a check cell, so each cell stays well under 1 s
#: (``benchmarks/bench_checks.py``).
EXAMPLES = {"fit_position": 1000}
