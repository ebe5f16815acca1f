"""docs/api-sources.md covers every API fact the code states, and the notebooks date their API facts once.

The facts are the ids of ``API_FACTS`` in ``ctx_reference.api_requests``, ``ctx_reference.window`` and
``ctx_reference.context_editing`` (their constants by name, the header and request rules, the model table's
rows). Each must have an entry in docs/api-sources.md with its page (an address), the sentence it rests on and
the date it was read; a rule's page and sentence there must be the code's; and a module's public constant that
is not one of its API facts must be listed in its ``LESSON_CONSTANTS``, so a new constant cannot slip in
without a source.
"""
from __future__ import annotations

import ast
import inspect
import json
import re

import pytest

from ctx_reference import api_requests, cache_prices, context_editing, window

from conftest import REPO

MODULES = (api_requests, window, context_editing, cache_prices)
DOC = REPO / "docs" / "api-sources.md"
#: Tables whose entries carry their own fact ids (checked through API_FACTS), and the registries themselves.
TABLES = {"HEADER_RULES", "REQUEST_RULES", "MODEL_TABLE", "CACHE_PRICES", "API_FACTS", "LESSON_CONSTANTS"}
READ = re.compile(r"\b\d{4}-\d{2}(-\d{2})?\b")
#: The notebooks that state API facts, and the date their text gives for them (the day their facts were last re-read).
READ_ON = {"01-window-math": "2026-12-05", "06-strategies": "2026-12-05", "07-render": "2026-12-02"}
DATED_NOTEBOOKS = tuple(READ_ON)


def entries(text: str) -> dict[str, dict[str, str]]:
    """Return {fact id: {field: text}} for every ``### `id` `` section of docs/api-sources.md."""
    found: dict[str, dict[str, str]] = {}
    for block in re.split(r"^### ", text, flags=re.M)[1:]:
        heading, _, body = block.partition("\n")
        fact = re.fullmatch(r"`([\w.\-]+)`", heading.strip())
        assert fact, heading
        fields = dict(re.findall(r"^- \*\*(\w[\w ]*):\*\* (.*)$", body, flags=re.M))
        found[fact.group(1)] = fields
    return found


def public_constants(module) -> set[str]:
    """Names of the module's own top-level UPPER_CASE assignments (imported names excluded)."""
    tree = ast.parse(inspect.getsource(module))
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]*", t.id)}
    return names - TABLES


DOC_ENTRIES = entries(DOC.read_text(encoding="utf-8"))


def test_entries_parse_into_page_sentence_and_date():
    """The parser reads a heading's id and its bold fields; a section without them is visible as missing fields."""
    sample = "### `x.y`\n- **Page:** [P](https://e.org)\n- **Sentence:** \"s\"\n- **Read:** 2026-12-02\n"
    assert entries(sample) == {"x.y": {"Page": "[P](https://e.org)", "Sentence": '"s"', "Read": "2026-12-02"}}


@pytest.mark.parametrize("fact", sorted(DOC_ENTRIES))
def test_every_entry_has_its_page_sentence_and_date(fact):
    """Each entry names a page by its address, quotes a sentence and says when it was read."""
    fields = DOC_ENTRIES[fact]
    assert "https://" in fields.get("Page", ""), fact
    assert fields.get("Sentence", "").strip(), fact
    assert READ.search(fields.get("Read", "")), fact


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_fact_of_the_code_has_an_entry(module):
    """Every id of the module's API_FACTS (constants, header rules, request rules, model rows) is documented."""
    assert sorted(set(module.API_FACTS) - set(DOC_ENTRIES)) == []


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_public_constant_is_a_fact_or_the_lessons(module):
    """A public constant of the module is named by one of its API facts or listed in its LESSON_CONSTANTS."""
    covered = {name for names in module.API_FACTS.values() for name in names} | set(module.LESSON_CONSTANTS)
    assert sorted(public_constants(module) - covered) == []
    assert sorted(covered - public_constants(module)) == []          # no fact names a constant that is gone


def test_the_rules_say_in_the_doc_what_they_say_in_the_code():
    """Each request rule's entry gives the rule's address and contains its sentence word for word; each header
    rule's entry gives the rule's page."""
    for rule in api_requests.REQUEST_RULES:
        fields = DOC_ENTRIES[rule.fact]
        assert f"({rule.url})" in fields["Page"], rule.id
        assert rule.sentence in fields["Sentence"], rule.id
    for header in api_requests.HEADER_RULES:
        assert f"({header.source})" in DOC_ENTRIES[header.fact]["Page"], header.feature


def test_a_new_constant_without_an_entry_is_caught():
    """The check bites: a module with one more constant that no fact names fails the coverage test."""
    class Fake:
        API_FACTS = {"default.compact-trigger": ("DEFAULT_COMPACT_TRIGGER",)}
        LESSON_CONSTANTS = ()

    covered = {name for names in Fake.API_FACTS.values() for name in names}
    assert public_constants(api_requests) - covered   # everything else in api_requests would be reported


@pytest.mark.parametrize("folder", DATED_NOTEBOOKS)
def test_the_notebooks_date_their_api_facts_once(folder):
    """01, 06 and 07 say once on which day their API facts were read, the doc's date, and point to the doc."""
    (path,) = (REPO / "solutions" / folder).glob("*.ipynb")
    text = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                   if c["cell_type"] == "markdown")
    assert text.count("docs/api-sources.md") == 1, folder
    assert READ_ON[folder] in text, folder
    assert READ_ON[folder] in DOC.read_text(encoding="utf-8")
