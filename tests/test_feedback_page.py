"""The feedback exporter writes the document nbconvert's HTMLExporter writes, and compiles its templates once."""
from __future__ import annotations

import copy
from pathlib import Path

import jinja2
import nbformat
import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbgrader.converters.generate_feedback import GenerateFeedback
from traitlets.config import Config

from ctx_course.grading.autograde import grading_config
from ctx_course.grading.steps.feedback_page import MISSING_ALT, FeedbackExporter, describe_images

REPO = Path(__file__).resolve().parents[1]
# Solution notebooks with stored plots (image/png outputs) and without.
NOTEBOOKS = ["03-recall/recall.ipynb", "09-context-ledger/context_ledger.ipynb", "02-remaining/remaining.ipynb"]


def feedback_config() -> Config:
    """The exporter configuration nbgrader's generate_feedback gives HTMLExporter (its feedback template)."""
    return GenerateFeedback(config=Config()).config


def resources(name: str) -> dict:
    return {"nbgrader": {"notebook": name, "score": 3.0, "max_score": 5.0, "late_penalty": 0.0}}


def graded(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` whose graded cells carry a score, as nbgrader's GetGrades leaves them."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        grading = cell.metadata.get("nbgrader", {})
        if grading.get("grade") or grading.get("task"):
            grading["score"] = grading.get("points", 0)
    return notebook


def page(exporter_class, notebook: nbformat.NotebookNode, name: str) -> str:
    html, _ = exporter_class(config=feedback_config()).from_notebook_node(graded(notebook), resources(name))
    return html


@pytest.mark.parametrize("relative", NOTEBOOKS)
def test_the_feedback_page_is_the_document_html_exporter_writes(relative):
    notebook = nbformat.read(REPO / "solutions" / relative, as_version=4)
    name = Path(relative).stem
    ours, theirs = page(FeedbackExporter, notebook, name), page(HTMLExporter, notebook, name)
    assert str(BeautifulSoup(ours, "html.parser")) == str(BeautifulSoup(theirs, "html.parser"))
    images = BeautifulSoup(ours, "html.parser").find_all("img")
    assert all(img.get("alt") for img in images)
    if "image/png" in (REPO / "solutions" / relative).read_text(encoding="utf-8"):
        assert any(img.get("alt") == MISSING_ALT for img in images)


def test_a_second_exporter_compiles_no_template(monkeypatch):
    notebook = nbformat.read(REPO / "solutions" / NOTEBOOKS[0], as_version=4)
    first = page(FeedbackExporter, notebook, "recall")
    compiled = []
    original = jinja2.Environment.compile

    def counting(self, *args, **kwargs):
        compiled.append(args[1] if len(args) > 1 else kwargs.get("name"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counting)
    assert page(FeedbackExporter, notebook, "recall") == first
    assert compiled == []
    page(HTMLExporter, notebook, "recall")  # the spy sees what nbconvert's own exporter compiles again
    assert compiled


def test_an_edited_template_is_compiled_again(tmp_path):
    template = tmp_path / "mine"
    template.mkdir()
    (template / "conf.json").write_text('{"base_template": "base", "mimetypes": {"text/html": true}}')
    index = template / "index.html.j2"
    index.write_text("first {{ nb.cells | length }}")
    config = Config()
    config.HTMLExporter.extra_template_basedirs = [str(tmp_path)]
    config.HTMLExporter.template_name = "mine"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")])
    assert FeedbackExporter(config=config).from_notebook_node(notebook)[0] == "first 1"
    index.write_text("second {{ nb.cells | length }}")
    assert FeedbackExporter(config=config).from_notebook_node(notebook)[0] == "second 1"


def test_the_grading_config_renders_feedback_with_the_feedback_exporter(tmp_path):
    config = grading_config(REPO, work=tmp_path / "work")
    assert config.GenerateFeedback.exporter_class is FeedbackExporter


@pytest.mark.parametrize("tag, described", [
    ('<img src="a.png">', True),
    ('<IMG SRC="a.png"/>', True),
    ('<img title="no alt=here" src="a.png">', True),
    ('<img src="a>b.png">', True),
    ('<img data-alt="x" src="a.png">', True),
    ('<img alt="" src="a.png">', False),
    ('<img ALT="plot" src="a.png">', False),
    ("<img alt src='a.png'>", False),
    ('<imgs src="a.png">', False),
])
def test_describe_images_gives_alt_text_to_exactly_the_images_without(tag, described):
    out = describe_images(f"<p>{tag}</p>")
    assert (out != f"<p>{tag}</p>") is described
    images = BeautifulSoup(out, "html.parser").find_all("img")
    assert all(img.has_attr("alt") for img in images)
    if described:
        assert images[0]["alt"] == MISSING_ALT
