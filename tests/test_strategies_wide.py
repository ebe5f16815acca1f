"""The strategies draw as wide as their texts: numbers of every magnitude, and docstrings that quote the text.

``_wide.magnitudes`` and ``_wide.positive_reals`` are drawn with the bank's own drawing (fixed
seed, no database), and every strategies module's docstring is read against the English edition of
its notebook: each sentence it quotes as the text's must be found there.
"""
from __future__ import annotations

import importlib
import json
import math
import pkgutil
import re

import pytest

from ctx_reference.checks.drawing import strategies
from ctx_reference.checks.drawing.strategies._wide import magnitudes, positive_reals
from ctx_reference.checks.drawing.write_bank import draw

from conftest import REPO

MODULES = sorted(info.name for info in pkgutil.iter_modules(strategies.__path__) if not info.name.startswith("_"))
#: strategies module → the English notebook whose text its docstring quotes.
NOTEBOOKS = {
    "window_math": "01-window-math", "remaining": "02-remaining", "recall": "03-recall", "recall_fit": "03-recall",
    "assembly": "04-assembly", "trim": "05-trim-lines", "simulation": "06-strategies", "render": "07-render",
    "evaldiff": "08-eval-diff", "ledger": "09-context-ledger", "calibrate": "09-context-ledger",
    "sessions": "10-sessions", "capstone": "11-capstone",
}


def test_magnitudes_draws_every_count_of_digits_within_its_bounds():
    """magnitudes(0, 1_000_000) gives numbers of 1 to 7 digits, none outside the bounds, in 300 draws."""
    drawn = draw(magnitudes(0, 1_000_000), 300, 1)
    assert all(0 <= n <= 1_000_000 for n in drawn)
    assert {len(str(n)) for n in drawn} == set(range(1, 8))


def test_magnitudes_keeps_a_lower_bound_above_a_power_of_ten():
    """magnitudes(150, 2_000) never draws below 150 or above 2,000, and draws both 3- and 4-digit numbers."""
    drawn = draw(magnitudes(150, 2_000), 200, 2)
    assert min(drawn) >= 150 and max(drawn) <= 2_000
    assert {len(str(n)) for n in drawn} == {3, 4}


@pytest.mark.parametrize(("low", "high"), [(-1, 5), (7, 3)])
def test_magnitudes_refuses_bounds_out_of_order_naming_them(low, high):
    with pytest.raises(ValueError, match=rf"\(got {low}, {high}\)"):
        draw(magnitudes(low, high), 1, 1)


def test_positive_reals_spread_over_orders_of_magnitude():
    """positive_reals(0.1, 5.0) stays within its bounds and draws below 0.5 as well as above 2."""
    drawn = draw(positive_reals(0.1, 5.0), 200, 3)
    assert all(0.1 <= x <= 5.0 and math.isfinite(x) for x in drawn)
    assert min(drawn) < 0.5 and max(drawn) > 2


def _words(text: str) -> str:
    """Text with its code marks, Markdown emphasis and runs of whitespace taken out, for comparing quotes."""
    return re.sub(r"\s+", " ", re.sub(r"[`*$]", "", text)).strip()


def _english(folder: str) -> str:
    path = next((REPO / "lessons-en" / folder).glob("*.ipynb"))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return _words(" ".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown"))


def _quotes(doc: str) -> list[str]:
    """The pieces of the sentences a docstring quotes, ``("…"; "…")``, split at their ellipses."""
    found = re.findall(r'(?:\(|; )"((?:[^"]|"[^"]{1,12}")+?)"[;),]', doc)
    return [piece.strip(" .,;") for quote in found for piece in quote.split("…") if len(piece.strip()) >= 12]


@pytest.mark.parametrize("name", [name for name in MODULES if name != "capstone"])
def test_every_strategies_docstring_quotes_its_text_in_english(name):
    """Each strategies module's docstring quotes at least one sentence of its notebook's English text, and
    every sentence it quotes is there, word for word."""
    doc = importlib.import_module(f"{strategies.__name__}.{name}").__doc__ or ""
    text = _english(NOTEBOOKS[name])
    pieces = [_words(piece) for piece in _quotes(doc) if not re.search(r"[\u4e00-\u9fff]", piece)]
    assert pieces, f"{name}: its docstring quotes no sentence of its text"
    missing = [piece for piece in pieces if piece not in text]
    assert not missing, f"{name}: quoted but not in the English text: {missing}"


@pytest.mark.parametrize("name", [name for name in MODULES if name != "capstone"])
def test_every_strategies_docstring_says_where_it_is_narrower(name):
    """Each strategies module's docstring says where its draws are narrower than its text, and why."""
    assert "Narrower than the text" in _words(importlib.import_module(f"{strategies.__name__}.{name}").__doc__ or "")
