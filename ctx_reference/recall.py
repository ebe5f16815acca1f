"""A toy model of recall: the longer the context, the less reliably a fact is found.

What this covers: the chance that a model finds one fact placed at token ``pos``
of an ``n``-token context, as the product of two effects,

    base(n)           = 1 / (1 + (n / half_at) ** steep)      -- longer is worse
    position factor   = 1 - middle * 4 * x * (1 - x),  x = (pos + 0.5) / n
                                                              -- the middle is worse
    recall(pos, n)    = base(n) * position factor

With the defaults, recall halves at 400,000 tokens and a fact in the exact middle
is found 30% less often than one at either end. Documents are 4,000 tokens and an
answer sits at the middle token of its document. On top of that the module
compares "stuff every document into the prompt" with "retrieve a few and put
only those in": retrieval multiplies the recall of a short context by the
retriever's own recall.

What it leaves out: everything real. The parameters are invented so that the
lesson's quoted numbers come out; no model was measured. ``LOST_IN_THE_MIDDLE``
holds one measured curve (Liu et al. 2023) to set beside it.

Vocabulary:
    n, pos      -- tokens, not characters or documents; pos is 0-based and pos < n.
    doc_index   -- 0-based document number in the order the documents are placed.
                   The notebooks' prose counts from 1: 第 k 篇 is doc_index k - 1.
    recall      -- a probability in [0, 1].
    seed        -- a number the lesson quotes; derived: one that follows from the model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ctx_reference._validate import require_int, require_real

from .i18n import _

DOC_TOKENS = 4_000  # tokens per document in the lesson's corpus
SMALL_DOC_TOKENS = 2_000  # tokens per document in the lesson's small corpus
MIDDLE_SHAPE = 4  # 4 * x * (1 - x) is 1 at x = 0.5 and 0 at both ends


def _require_number(value: object, name: str) -> float:
    """Return ``value`` as a float if it is a number (see ``require_real``) and not NaN.

    NaN compares False with everything, so the range checks would let it through.
    """
    number = require_real(value, name)
    if number != number:
        raise ValueError(f"{name} must not be NaN (got {value!r})")
    return number


def _require_probability(value: object, name: str) -> float:
    """Return ``value`` as a float if it lies in [0, 1], else raise ValueError."""
    number = _require_number(value, name)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be in [0, 1] (got {value!r})")
    return number


@dataclass(frozen=True)
class RecallModel:
    """The toy recall curve; defaults are the lesson's (half at 400k tokens, middle 30% lower).

    half_at: tokens where base recall is 0.5 (> 0).
    steep:   how fast recall falls around half_at (> 0); 1.5 makes 800k give 0.261.
    middle:  how much lower the exact middle is than the ends, in [0, 1].
    end_drop: how much lower the very end is than the very start (0: symmetric, the lesson's
             default); the position factor loses ``end_drop * x``. middle + end_drop <= 1.
    """

    half_at: float = 400_000
    steep: float = 1.5
    middle: float = 0.3
    end_drop: float = 0.0

    def __post_init__(self) -> None:
        if _require_number(self.half_at, "half_at") <= 0:
            raise ValueError(f"half_at must be > 0 (got {self.half_at!r})")
        if _require_number(self.steep, "steep") <= 0:
            raise ValueError(f"steep must be > 0 (got {self.steep!r})")
        _require_probability(self.middle, "middle")
        _require_probability(self.end_drop, "end_drop")
        if self.middle + self.end_drop > 1:
            raise ValueError(f"end_drop must be <= 1 - middle ({1 - self.middle!r}) "
                             f"(got {self.end_drop!r})")

    def base(self, n: int) -> float:
        """Return the recall of an n-token context before the position effect.

        >>> round(RecallModel().base(400_000), 3)  # (400k / 400k) ** 1.5 = 1 -> 1 / 2
        0.5
        >>> round(RecallModel().base(800_000), 3)  # 2 ** 1.5 = 2.828 -> 1 / 3.828
        0.261

        Used by notebook 03-recall.
        """
        require_int(n, "n", minimum=1)
        return 1.0 / (1.0 + (n / self.half_at) ** self.steep)

    def position_factor(self, pos: int, n: int) -> float:
        """Return 1 - middle * 4x(1 - x) - end_drop * x with x = (pos + 0.5) / n.

        With ``end_drop = 0``: 1 near the ends, 1 - middle in the middle.

        >>> round(RecallModel().position_factor(402_000, 800_000), 3)  # x = 0.5025
        0.7

        Used by notebook 03-recall.
        """
        require_int(n, "n", minimum=1)
        require_int(pos, "pos", minimum=0)
        if pos >= n:
            raise ValueError(f"pos must be < n={n} (got {pos!r})")
        x = (pos + 0.5) / n
        return 1.0 - self.middle * MIDDLE_SHAPE * x * (1.0 - x) - self.end_drop * x

    def recall(self, pos: int, n: int) -> float:
        """Return the chance of finding a fact at token ``pos`` of an ``n``-token context.

        >>> round(RecallModel().recall(402_000, 800_000), 3)  # 0.261 * 0.700
        0.183
        >>> round(RecallModel().recall(798_000, 800_000), 3)  # 0.261 * 0.997
        0.26

        Used by notebook 03-recall.
        """
        factor = self.position_factor(pos, n)
        return self.base(n) * factor


def answer_position(doc_index: int, doc_tokens: int = DOC_TOKENS) -> int:
    """Return the token position of an answer in the middle of document ``doc_index``.

    >>> answer_position(100)  # 100 * 4,000 + 2,000
    402000

    Used by notebook 03-recall.
    """
    require_int(doc_index, "doc_index", minimum=0)
    require_int(doc_tokens, "doc_tokens", minimum=1)
    return doc_index * doc_tokens + doc_tokens // 2


def stuffed_recall(model: RecallModel, n_docs: int, answer_doc: int, doc_tokens: int = DOC_TOKENS) -> float:
    """Return the recall when all ``n_docs`` documents go into the prompt and the answer is in ``answer_doc``.

    >>> round(stuffed_recall(RecallModel(), 200, 100), 3)  # 800k tokens, answer mid-way
    0.183
    >>> round(stuffed_recall(RecallModel(), 25, 12, doc_tokens=2_000), 3)  # small corpus, 50k
    0.67

    Used by notebook 03-recall and the CLI.
    """
    if not isinstance(model, RecallModel):
        raise ValueError(f"model must be a RecallModel (got {model!r})")
    require_int(n_docs, "n_docs", minimum=1)
    require_int(answer_doc, "answer_doc", minimum=0)
    if answer_doc >= n_docs:
        raise ValueError(f"answer_doc must be < n_docs={n_docs} (got {answer_doc!r})")
    pos = answer_position(answer_doc, doc_tokens)
    return model.recall(pos, n_docs * doc_tokens)


def retrieved_recall(
    model: RecallModel,
    k_docs: int,
    retriever_recall: float,
    answer_doc: int = 0,
    doc_tokens: int = DOC_TOKENS,
) -> float:
    """Return retriever_recall times the recall of a prompt holding only the ``k_docs`` retrieved documents.

    >>> round(retrieved_recall(RecallModel(), 8, 0.9), 3)  # 32k tokens, answer first: 0.9 * 0.909
    0.818

    ``answer_doc`` is where the answer lands among the retrieved documents (first
    by default: a retriever ranks the best match first). Used by notebook 03-recall
    and the CLI.
    """
    probability = _require_probability(retriever_recall, "retriever_recall")
    require_int(k_docs, "k_docs", minimum=1)
    require_int(answer_doc, "answer_doc", minimum=0)
    if answer_doc >= k_docs:
        raise ValueError(f"answer_doc must be < k_docs={k_docs} (got {answer_doc!r})")
    return probability * stuffed_recall(model, k_docs, answer_doc, doc_tokens)


@dataclass(frozen=True)
class ComparisonRow:
    """One line of the stuff-vs-retrieve table.

    key: a stable identifier; label: what the row means (shown to learners);
    n_tokens: context length; recall: the model's value; provenance: "seed" or "derived".
    """

    key: str
    label: str
    n_tokens: int
    recall: float
    provenance: str


def stuff_vs_retrieve(model: RecallModel = RecallModel()) -> list[ComparisonRow]:
    """Return the lesson's stuff-vs-retrieve rows, in the order the lesson discusses them.

    With the default model the recall values are, to 3 decimals: 0.500, 0.183,
    0.260, 0.261, 0.261, 0.818, 0.670, 0.553. ``provenance`` says which of them
    the lesson quotes ("seed") and which follow from the reconstruction
    ("derived"); for any other model every row is "derived".

    >>> [round(row.recall, 3) for row in stuff_vs_retrieve()][:3]
    [0.5, 0.183, 0.26]

    Used by notebook 03-recall and the CLI.
    """
    if not isinstance(model, RecallModel):
        raise ValueError(f"model must be a RecallModel (got {model!r})")
    flat = dataclasses.replace(model, middle=0.0)
    big_docs = 200
    big_middle_doc = 100
    big_last_doc = big_docs - 1
    retrieved_docs = 8
    small_docs = 25
    small_middle_doc = 12
    rows = [
        ("base_400k", _("基础召回率（40 万 token，不计位置）"), 400_000,
         model.base(400_000), "seed"),
        ("stuffed_middle", _("全塞 200 篇（80 万 token），答案在第 101 篇"), big_docs * DOC_TOKENS,
         stuffed_recall(model, big_docs, big_middle_doc), "derived"),
        ("stuffed_last", _("全塞 200 篇，答案在最后一篇（第 200 篇）"), big_docs * DOC_TOKENS,
         stuffed_recall(model, big_docs, big_last_doc), "derived"),
        ("stuffed_middle_flat", _("全塞 200 篇，答案在第 101 篇，不计中间劣势（middle=0）"), big_docs * DOC_TOKENS,
         stuffed_recall(flat, big_docs, big_middle_doc), "seed"),
        ("stuffed_last_flat", _("全塞 200 篇，答案在第 200 篇，不计中间劣势（middle=0）"), big_docs * DOC_TOKENS,
         stuffed_recall(flat, big_docs, big_last_doc), "seed"),
        ("retrieved_8", _("检索 8 篇（3.2 万 token），检索召回 0.9，答案排第一"), retrieved_docs * DOC_TOKENS,
         retrieved_recall(model, retrieved_docs, 0.9), "seed"),
        ("small_stuffed", _("小语料全塞 25 篇 × 2,000（5 万 token），答案在第 13 篇"),
         small_docs * SMALL_DOC_TOKENS,
         stuffed_recall(model, small_docs, small_middle_doc, SMALL_DOC_TOKENS), "derived"),
        ("small_retrieved", _("小语料检索 8 篇 × 2,000，检索召回 0.6，答案排第一"),
         retrieved_docs * SMALL_DOC_TOKENS,
         retrieved_recall(model, retrieved_docs, 0.6, doc_tokens=SMALL_DOC_TOKENS), "derived"),
    ]
    is_lesson_model = model == RecallModel()
    return [
        ComparisonRow(key, label, n_tokens, value, provenance if is_lesson_model else "derived")
        for key, label, n_tokens, value, provenance in rows
    ]


@dataclass(frozen=True)
class MeasuredCurve:
    """A measured accuracy-by-position curve to set beside the toy model."""

    model: str
    n_documents: int
    positions: tuple[int, ...]  # 1-based position of the answer document
    accuracy_percent: tuple[float, ...]  # accuracy at each position, in percent
    closed_book_percent: float  # accuracy with no documents at all, in percent
    citation: str


LOST_IN_THE_MIDDLE = MeasuredCurve(
    model="GPT-3.5-Turbo",
    n_documents=20,
    positions=(1, 5, 10, 15, 20),
    accuracy_percent=(75.8, 57.2, 53.8, 55.4, 63.2),
    closed_book_percent=56.1,
    citation=(
        "Liu, N. F. et al. (2023). Lost in the Middle: How Language Models Use Long Contexts. "
        "arXiv:2307.03172"
    ),
)
"""Multi-document QA accuracy from Liu et al. 2023 (20 documents, GPT-3.5-Turbo)."""


@dataclass(frozen=True)
class PositionFit:
    """The toy model's position curve fitted to a measured one, and how far it misses.

    base, middle, end_drop -- the fitted curve base * (1 - middle * 4x(1 - x) - end_drop * x);
    residuals -- measured minus fitted, one per position (fractions, not percent).
    """

    base: float
    middle: float
    end_drop: float
    residuals: tuple[float, ...]


def fit_position_curve(curve: MeasuredCurve | None = None) -> PositionFit:
    """Return the least-squares fit of the toy position curve to ``curve`` (LOST_IN_THE_MIDDLE).

    The answer document at 1-based position p of N sits at x = (p - 0.5) / N. The curve
    r(x) = base - (base * middle) * 4x(1 - x) - (base * end_drop) * x is linear in
    (base, base * middle, base * end_drop), so ``numpy.linalg.lstsq`` solves it exactly.

    >>> fit = fit_position_curve()
    >>> round(fit.base, 3), round(fit.middle, 3), round(fit.end_drop, 3)
    (0.76, 0.244, 0.136)

    Used by notebook 03-recall.
    """
    import numpy as np

    curve = LOST_IN_THE_MIDDLE if curve is None else curve
    if not isinstance(curve, MeasuredCurve):
        raise ValueError(f"curve must be a MeasuredCurve (got {curve!r})")
    if len(curve.positions) < 3:
        raise ValueError(f"curve must have at least 3 positions to fit 3 parameters "
                         f"(got {curve.positions!r})")
    x = (np.array(curve.positions, dtype=float) - 0.5) / curve.n_documents
    measured = np.array(curve.accuracy_percent, dtype=float) / 100
    design = np.column_stack([np.ones_like(x), -MIDDLE_SHAPE * x * (1 - x), -x])
    (base, scaled_middle, scaled_drop), *_ = np.linalg.lstsq(design, measured, rcond=None)
    residuals = measured - design @ np.array([base, scaled_middle, scaled_drop])
    return PositionFit(float(base), float(scaled_middle / base), float(scaled_drop / base),
                       tuple(float(r) for r in residuals))
