"""The rubric of each free-response question, shown to the instructor in the Formgrader beside the learner's answer.

Covers: the rubric cells put after every manually graded answer of a submission (``with_rubrics``,
a pure function of the notebook's cells, the sample answers and a heading), whether an export is
the Formgrader's page of one submission (``formgrader_page``) and ``ShowRubric``, the nbconvert
preprocessor ``nbgrader_config.py`` gives the Formgrader's exporter (``HTMLExporter.preprocessors``).

Leaves out: the sample answers themselves (the points at the top of each question's solution in
``solutions/``, shipped in ``ctx_reference/answer_key/`` by ``python -m ctx_course release``) and
showing them to a self-study learner (``ctx_reference/sample_answers.py``).

Vocabulary: a *rubric cell* is a plain markdown cell (no nbgrader metadata, so nothing is scored
or saved from it) holding the question's points and a model answer, in the submission's edition.
It exists only in the page the Formgrader renders: the autograded notebook and the learner's
feedback (also an ``HTMLExporter``, whose resources name no submission) are never given one.
"""
from __future__ import annotations

from collections.abc import Mapping

import nbformat
from nbconvert.preprocessors import Preprocessor

from ctx_reference.i18n import N_, _, using
from ctx_reference.model_answers import key_file, read_key

from ...editions.translate import submitted_edition

HEADING = N_("**评分参考**（只有老师看得到：好的回答应该讲到的要点，和一个参考回答）")
RUBRIC_MARK = "ctx_rubric"
"""The metadata key a rubric cell carries (its value: the question's grade id)."""


def _question(cell: Mapping) -> str | None:
    marks = cell.get("metadata", {}).get("nbgrader", {})
    if cell.get("cell_type") == "markdown" and marks.get("solution") and marks.get("grade"):
        return marks.get("grade_id")
    return None


def with_rubrics(cells: list, rubrics: Mapping[str, str], heading: str) -> list:
    """Return ``cells`` with a rubric cell after each manually graded markdown answer that ``rubrics`` names.

    >>> answer = nbformat.v4.new_markdown_cell("my answer", metadata={"nbgrader": {
    ...     "grade_id": "q_a", "solution": True, "grade": True, "points": 1}})
    >>> [cell.source for cell in with_rubrics([answer], {"q_a": "- point"}, "**Rubric**")]
    ['my answer', '**Rubric**\\n\\n- point']
    """
    out = []
    for cell in cells:
        out.append(cell)
        question = _question(cell)
        if question is not None and question in rubrics:
            out.append(nbformat.v4.new_markdown_cell(f"{heading}\n\n{rubrics[question]}",
                                                     metadata={RUBRIC_MARK: question}))
    return out


def formgrader_page(resources: Mapping) -> bool:
    """Return True when an export is the Formgrader's page of one submission (its handler passes these keys).

    >>> formgrader_page({"submission_id": "5c1", "index": 0, "total": 3}), formgrader_page({"nbgrader": {}})
    (True, False)
    """
    return bool(resources.get("submission_id")) and "index" in resources and "total" in resources


class ShowRubric(Preprocessor):
    """Put the rubric after every free-response answer, in the submission's edition, on the Formgrader's page only."""

    def preprocess(self, nb, resources):
        if not formgrader_page(resources):
            return nb, resources
        edition = submitted_edition(nb)
        rubrics = read_key(key_file(edition, part="questions"))
        if rubrics:
            with using(edition):
                heading = _(HEADING)
            nb.cells = with_rubrics(list(nb.cells), rubrics, heading)
        return nb, resources


__all__ = ["HEADING", "RUBRIC_MARK", "ShowRubric", "formgrader_page", "with_rubrics"]
