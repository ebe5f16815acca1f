"""The autograde steps that score check cells from what the learner's functions return, judged on the grader's side.

Covers: ``StartEvaluation`` (last sanitising step: a notebook's evaluation started beside its kernel's run),
``ScoreFromBehaviour`` (after ``Execute``: each check cell's verdict made what nbgrader scores), ``apply_verdict``.

``ScoreFromBehaviour`` reads the notebook's check cells from the gradebook (hidden tests included)
and its release, plans what each side runs (``plan.py``) and evaluates it (``judge.py``): a check
cell's visible cases get the verdict the learner saw in JupyterLab, and the hidden tests only add.
Learner-written code only ever runs in the answer process; the notebook's kernel runs the check
cells as released. The evaluation needs nothing the kernel computes, so ``StartEvaluation`` starts
it in a thread while the kernel runs, and ``ScoreFromBehaviour`` waits for it; the two meet through
the ``Evaluations`` handed to both in the configuration (``evaluations.py``), as ``policy`` (the
sandbox of the learner's process) and ``builds`` (``reference_build.py``) are.

Leaves out: running the notebook for its visible output (its kernel: ``sandbox/kernels.py`` and
``sandbox/execute.py``), which cells each side runs (``plan.py``), the evaluation itself (``judge.py``).

Vocabulary: a *verdict* is one check cell's outcome (``judge.Verdict``); the *release* is the
notebook as released, in the submission's edition.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Any as AnyTrait
from traitlets import Instance, Integer

from ctx_reference.i18n import N_, _, using

from ...editions.translate import in_edition, submitted_edition
from .evaluations import Evaluations
from .judge import Verdict, evaluate
from .plan import notebook_cells, release_names
from .reference_build import ReferenceBuilds, graded_exercises, withheld_objects

NOT_RUN = N_("这一格的检查没有运行：{why}")
NOT_IN_GRADER = N_("评分程序里没有这一格")
# Where the autograded notebook keeps a check cell's verdict for the instructor (item analysis):
# ``{"hidden_test": label}``, the label of the first hidden check it failed ("" for none). The
# feedback page does not show cell metadata, so the label stays out of what the learner sees.
VERDICT_KEY = "ctx_verdict"
# What a check cell's error from the kernel becomes when the grader's evaluation passed it.
KERNEL_ERROR_NOTE = N_("（笔记本里这一格报错 {ename}，评分以评分程序单独运行的检查为准："
                       "这一格通过。）\n")


def apply_verdict(cell, verdict: Verdict) -> None:
    """Make a check cell's outputs say what the verdict says, for nbgrader to score.

    The kernel's stderr becomes stdout (it never costs points). A passed cell loses the kernel's
    errors (each becomes one note line); a failed cell keeps them, and gets one error with the
    verdict's line when the kernel raised none. The cell's ``VERDICT_KEY`` metadata gets the first
    hidden check it failed (whatever the submission held there is replaced).
    """
    outputs = []
    for output in cell.outputs:
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            output = nbformat.v4.new_output("stream", name="stdout", text=output.get("text", ""))
        if output.get("output_type") == "error" and verdict.passed:
            note = _(KERNEL_ERROR_NOTE).format(ename=output.get("ename", ""))
            output = nbformat.v4.new_output("stream", name="stdout", text=note)
        outputs.append(output)
    if not verdict.passed:
        kernel_errors = any(o.get("output_type") == "error" for o in outputs)
        explained = verdict.visible and kernel_errors
        if not explained:  # the kernel's own error explains a visible failure; anything else gets the verdict's line
            outputs = [o for o in outputs if o.get("output_type") != "error"]
            error = {"ename": "CheckFailed", "evalue": verdict.line, "traceback": [f"CheckFailed: {verdict.line}"]}
            outputs.append(nbformat.v4.new_output("error", **error))
    cell.outputs = outputs
    cell.metadata[VERDICT_KEY] = {"hidden_test": "" if verdict.passed else verdict.hidden_test}


class ScoreFromBehaviour(NbGraderPreprocessor):
    """Score every check cell from the learner's functions' behaviour, evaluated outside the kernel.

    Runs right after ``Execute``. For the notebook being autograded it builds (or takes from
    ``builds``) a ``ctx_reference`` without the notebook's exercise functions, evaluates each
    check cell as the gradebook holds it (``evaluate``), and rewrites the check cells' outputs
    with ``apply_verdict``. ``policy`` (a ``SandboxPolicy``) puts the learner's process in the
    sandbox; without one (nbgrader's own commands) it runs as a plain process.
    ``resources["ctx_verdicts"]`` keeps the verdicts, with details, for the instructor. The
    evaluation ``StartEvaluation`` started for the notebook is taken from ``evaluations``; without
    one, the notebook is evaluated here.
    """

    policy = AnyTrait(None, allow_none=True, help="the SandboxPolicy of the learner's process").tag(config=True)
    builds = AnyTrait(None, allow_none=True, help="ReferenceBuilds shared by a grading run").tag(config=True)
    evaluations = Instance(Evaluations, allow_none=True,
                           help="where StartEvaluation leaves the evaluations it started").tag(config=True)
    timeout = Integer(0, help="seconds one call of a learner's function may run (0: Execute.timeout)").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        started = self.evaluations.take(info) if self.evaluations is not None else None
        verdicts = started.result() if started is not None else self.evaluation(nb, info)()
        if verdicts is None:  # the notebook is not in the gradebook
            return nb, resources
        with using(submitted_edition(nb)):  # the feedback speaks the language of the submission
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                    missing = Verdict(False, _(NOT_RUN).format(why=_(NOT_IN_GRADER)))
                    verdict = verdicts.get(meta.get("grade_id"), missing)
                    apply_verdict(cell, verdict)
                    if not verdict.passed:
                        self.log.info("%s: %s", meta.get("grade_id"), verdict.detail)
        resources["ctx_verdicts"] = verdicts
        return nb, resources

    def evaluation(self, nb, info) -> Callable[[], dict[str, Verdict] | None]:
        """Return the evaluation of a (sanitised) notebook as a function to call, in this thread or another."""
        edition = submitted_edition(nb)
        release = self._release(info, edition)
        with Gradebook(info["db_url"]) as gb:
            try:
                notebook = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return lambda: None
            answers = {c.name for c in notebook.solution_cells}
            graded = [c.name for c in notebook.grade_cells if c.cell_type == "code" and c.name not in answers]
            sources = {c.name: c.source for c in notebook.source_cells}
        checks = {name: sources.get(name) or "" for name in graded}
        cells = notebook_cells(release, checks, nb)
        reserved = release_names(release)
        withheld = withheld_objects(graded_exercises(checks.values()))
        timeout = self.timeout or int(getattr(self.config.Execute, "timeout", 60) or 60)
        shared, policy = self.builds, self.policy

        def run() -> dict[str, Verdict]:
            # The verdicts' lines in the submission's language: a thread does not inherit ``using``.
            with using(edition):
                builds = shared if shared is not None else ReferenceBuilds()
                try:
                    return evaluate(
                        cells, build=builds.path(withheld), timeout=timeout, policy=policy, reserved=reserved
                    )
                finally:
                    if shared is None:
                        builds.close()

        return run

    def _release(self, info, edition: str = "zh_CN") -> dict:
        """Return the release notebook, in ``edition``, of the notebook being graded (JSON), or an empty one."""
        course = self.config.CourseDirectory
        root = Path(course.root or ".")
        release = Path(course.release_directory or "release")
        if not release.is_absolute():
            release = root / release
        path = release / info["assignment"] / f"{info['notebook']}.ipynb"
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"cells": []}
        # A submission of the English edition is compared with the English release (its cells as released).
        return in_edition(notebook, root, info["assignment"], edition)


class StartEvaluation(ScoreFromBehaviour):
    """The last sanitising step: start the notebook's evaluation beside the kernel's run.

    The evaluation needs nothing the kernel computes (the answer cells come from the sanitised
    notebook, the check cells from the gradebook), so it runs in a thread of the grader while the
    notebook runs in its kernel; ``ScoreFromBehaviour`` waits for it after ``Execute``. Configured
    like ``ScoreFromBehaviour`` (``c.ScoreFromBehaviour.policy`` and the rest apply to both).
    """

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        if self.evaluations is not None:  # without them, ScoreFromBehaviour evaluates after Execute
            self.evaluations.start(info, self.evaluation(nb, info))
        return nb, resources
