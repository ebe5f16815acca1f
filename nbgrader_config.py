"""nbgrader configuration of the context-engineering workbook.

Source notebooks (with solutions and hidden tests) live in ``solutions/``; the student release that
nbgrader generates from them lives in ``lessons/``. Everything an instructor's grading run writes
(gradebook, collected submissions, autograded notebooks, feedback, exports) goes under ``grading/``,
which git ignores.
"""
import os

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = "grading"

c.CourseDirectory.course_id = "context-engineering"
c.CourseDirectory.root = HERE
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "lessons"
c.CourseDirectory.submitted_directory = os.path.join(WORK, "submitted")
c.CourseDirectory.autograded_directory = os.path.join(WORK, "autograded")
c.CourseDirectory.feedback_directory = os.path.join(WORK, "feedback")
c.CourseDirectory.solution_directory = os.path.join(WORK, "solution")
c.CourseDirectory.source_with_tests_directory = os.path.join(WORK, "source_with_tests")
os.makedirs(os.path.join(HERE, WORK), exist_ok=True)
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(HERE, WORK, "gradebook.db")

# Seconds one cell may run before the autograder stops it (an endless loop costs one cell, not
# the class).
c.Execute.timeout = 60

# What an answer cell holds until the learner writes it (the English release gets their English, from
# the catalogue: ctx_course/editions/translate.py).
from ctx_course.editions.translate import CODE_STUB, TEXT_STUB  # noqa: E402

c.ClearSolutions.code_stub = {"python": CODE_STUB}
c.ClearSolutions.text_stub = TEXT_STUB

# Every cell's nbgrader metadata is first put back as released (a duplicated cell: the last copy
# carries the metadata; every copy of an answer runs where it stands). Read-only check cells a
# student deleted are put back before grading, and so are deleted answer cells (as released):
# nbgrader's own restorer fails when both an answer and its check are gone.
# The kernel runs the check cells as released: the hidden tests are removed before it starts, and
# every check cell is scored on the grader's side from what the learner's functions return
# (see ctx_course/grading/steps/behaviour.py).
c.OverwriteCells.add_missing_cells = True
# StartEvaluation starts each notebook's evaluation beside its kernel's run, ScoreFromBehaviour scores
# it after Execute: they meet in this set of evaluations (ctx_course/grading/steps/evaluations.py).
from ctx_course.grading.steps.evaluations import Evaluations  # noqa: E402

c.ScoreFromBehaviour.evaluations = Evaluations()
c.Autograde.sanitize_preprocessors = [
    "nbgrader.preprocessors.ClearOutput",
    "ctx_course.grading.steps.metadata.RestoreMetadata",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "ctx_course.grading.steps.preprocessors.RestoreCells",
    "ctx_course.grading.steps.preprocessors.RemoveHiddenTests",
    "ctx_course.grading.steps.preprocessors.ShowEdition",
    "nbgrader.preprocessors.CheckCellMetadata",
    "ctx_course.grading.steps.behaviour.StartEvaluation",
]
# The edition a notebook belongs to (zh_CN, or en for lessons-en/) survives autograding, so its
# feedback is written in its language.
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {("language_info", "name"), ("ctx_edition",)}

# `python -m ctx_course grade` runs every student's kernel in a bubblewrap sandbox (no network,
# no view of solutions/ or grading/, nothing outlives the notebook) with these limits per
# notebook; `--memory-limit`, `--cpu-limit` and `--no-sandbox` override them for one run.
c.SandboxSettings.enabled = True
c.SandboxSettings.memory_limit = "2G"  # address space of one kernel
c.SandboxSettings.cpu_limit = 600  # CPU seconds of one notebook's kernel

# Student output is capped and hidden tests are kept out of the feedback, for nbgrader's own
# commands and the formgrader as for `python -m ctx_course grade` (see ctx_course/grading/steps/preprocessors.py).
# The same submission gives the same bytes on every run: what a cell printed is one output per
# stream however often the kernel flushed (ctx_course/grading/steps/streams.py), and no cell
# records when it ran.
c.Execute.record_timing = False
c.Autograde.autograde_preprocessors = [
    "nbgrader.preprocessors.Execute",
    "ctx_course.grading.steps.streams.MergeStreams",
    "ctx_course.grading.steps.behaviour.ScoreFromBehaviour",
    "ctx_course.grading.steps.preprocessors.ScoreFromErrorsOnly",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "ctx_course.grading.steps.preprocessors.CapOutput",
    "ctx_course.grading.steps.inert.MakeInert",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.GenerateFeedback.preprocessors = [
    "ctx_course.grading.steps.streams.MergeStreams",
    "nbgrader.preprocessors.GetGrades",
    "ctx_course.grading.deadlines.ShowLateness",
    "ctx_course.grading.steps.preprocessors.HideHiddenTests",
    "ctx_course.grading.steps.preprocessors.ShowEditionStubs",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
# What a learner's notebook holds reaches an instructor's browser as inert content only: every output,
# markdown and raw cell, attachment and metadata is sanitized when the autograded notebook is written
# (MakeInert above), and again by every HTMLExporter that renders one: the Formgrader's (on the Jupyter
# server's own origin) and the feedback's. nbconvert's own `sanitize_html` is left off: it escapes
# headings, paragraphs and table rows into visible tags (see ctx_course/grading/steps/inert.py).
# Then the Formgrader shows each free-response question's rubric (its points and a model answer) under
# the learner's answer; only on the Formgrader's page of a submission, never in feedback
# (ctx_course/grading/steps/rubric.py); the rubric is the course's own text, added after MakeInert.
c.HTMLExporter.preprocessors = [
    "ctx_course.grading.steps.inert.MakeInert",
    "ctx_course.grading.steps.rubric.ShowRubric",
]
# Kernels report errors only, instead of a transport warning per notebook.
c.Execute.extra_arguments = ["--IPKernelApp.log_level=ERROR"]

# nbgrader's exchange (release_assignment, collect, release_feedback, and the learners' commands):
# the same commands, with one clear line for a broken notebook, an assignment not released, an
# exchange root that cannot be used, and feedback of a submission that did not come through the
# exchange (see ctx_course/exchange.py). The exchange root is set on the hub (hub/learner/).
from ctx_course.exchange import use_course_exchange  # noqa: E402

use_course_exchange(c)
