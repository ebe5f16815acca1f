"""Which rule of an exercise's text each visible case and each hidden test decides.

Every exercise's record (``exercise.py``) holds, beside its cases, the rules its text states, each a
``Rule`` naming the phrase of the notebook that states it and the strategies whose generated cases
exercise it. What decides a rule is said once, where the deciding is done, and derived here: a visible
case names the rules it decides in its ``decides``, a hidden test in the ``decides=`` of its
``expect_digest`` call in the check cell's hidden part, and the hidden generated cases
(``expect_generated``) decide every rule with generated cases. The record fills each rule's ``visible``
and ``hidden`` in, from its cases and from the table ``python -m ctx_course release`` reads out of the
notebooks (``hidden_tests.py``). The tests hold the table to the notebooks and to the mutants in
tests/test_mutations.py: a rule without a visible case, or a case or hidden test naming a rule its
exercise does not state, fails the suite.

``rules_markdown`` renders the tables as docs/rules.md; regenerate that file with
``python -m ctx_reference.checks > docs/rules.md`` (after ``python -m ctx_course release`` where a
hidden test changed).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One rule an exercise's text states, and the cases that decide it.

    ``name`` is a short English tag (the mutants of the rule carry it); ``states`` is a phrase
    that appears word for word in the exercise's markdown (and a message: the failure line of a
    generated case shows it in the reader's language); ``visible`` names the labels of the cases that
    decide it, derived by the exercise's record from the cases' ``decides``, and ``hidden`` the labels of
    the hidden tests of the notebook's check cell that decide it, derived from their ``decides=`` (both
    left empty where a rule is written). ``generated``
    names the strategies (``drawing/strategies/``) whose cases, stored in the bank, exercise the rule;
    a rule no strategy can draw says why in ``not_generated`` instead.
    """

    name: str
    states: str
    visible: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()
    not_generated: str = ""

    def __post_init__(self):
        if self.generated and self.not_generated:
            raise ValueError(f"generated and not_generated exclude each other (got {self.generated!r} and "
                             f"{self.not_generated!r} for rule {self.name!r})")
        for field in ("visible", "hidden", "generated"):
            if type(getattr(self, field)) is not tuple:
                raise ValueError(f"{field} must be a tuple (got {getattr(self, field)!r} for rule {self.name!r})")


def _cell(text: str) -> str:
    """Return text fit for one cell of a Markdown table."""
    return text.replace("|", "\\|").replace("\n", " ")


def rules_markdown(tables: Sequence[tuple[str, str, Sequence[Rule]]]) -> str:
    """Return docs/rules.md: one table per exercise, for (notebook, exercise, rules) in the given order.

    ``rules_markdown([("02-remaining", "remaining", (Rule("negative", "可以是负数", ("超额",)),))])``
    gives a heading ``## 02-remaining · `remaining` `` and a table with one row; a rule's generated
    cases are its strategies' names, or the reason it has none.
    """
    lines = [
        "# Rules of the exercises",
        "",
        "Generated from the `RULES` tables in `ctx_reference/checks/`; do not edit by hand. Regenerate with",
        "`python -m ctx_reference.checks > docs/rules.md`.",
        "",
        "Each row is one rule an exercise's text states: the phrase of the notebook that states it, the",
        "visible cases that tell a plausible wrong variant apart, the strategies whose generated cases",
        "(the bank, `ctx_reference/checks/bank/`) exercise it, or why none can, and the hidden tests that",
        "decide it. Each case and each hidden test names the rules it decides (a hidden test in the",
        "`decides=` of its call in the notebook's check cell; the hidden generated cases decide every rule",
        "that has generated cases), and the columns are derived from them. tests/test_rules.py checks every",
        "phrase against the notebook and the hidden tests against the notebooks' check cells, and",
        "tests/test_mutations.py holds a wrong implementation for every rule that fails one of its visible",
        "cases. How strong the visible checks are, measured by a mutation tool, per exercise:",
        "[the checks' strength](mutation.md).",
    ]
    for notebook, exercise, rules in tables:
        lines += ["", f"## {notebook} · `{exercise}`", "",
                  "| rule | the text says | visible cases | generated cases | hidden tests |", "|---|---|---|---|---|"]
        for rule in rules:
            visible = "<br>".join(_cell(label) for label in rule.visible)
            generated = "<br>".join(f"`{name}`" for name in rule.generated) or _cell(f"— ({rule.not_generated})"
                                                                                      if rule.not_generated else "—")
            hidden = "<br>".join(_cell(label) for label in rule.hidden) or "—"
            lines.append(f"| `{rule.name}` | {_cell(rule.states)} | {visible} | {generated} | {hidden} |")
    return "\n".join(lines) + "\n"


def all_tables(
    rules: Mapping[str, Sequence[Rule]], notebooks: Mapping[str, str],
) -> list[tuple[str, str, Sequence[Rule]]]:
    """Return (notebook, exercise, rules) for every exercise, in the order of ``rules``."""
    return [(notebooks[name], name, table) for name, table in rules.items()]

