"""The learner's progress, read from the saved notebooks of a workspace without running them.

Covers: per notebook of the workspace, how its check cells ended in their last saved run (passed:
run, and no error among its outputs; failed: an error output, which a failing check and an unfinished
exercise both leave; not run: no execution count and no output), how many of its questions are
answered (the answer markdown cell differs from the release the learner copied, as the workspace's
manifest records it, or, without a record, from the release's empty stub), and which notebook to
open next: the first in reading order with a check not passed or a question not answered. A
notebook that cannot be read is reported as such, and the others still are.

Leaves out: what is only in the browser (save the notebook first: the page says so), running any
cell, hidden tests (a released check cell shows only the visible ones), and the grader's score.

Vocabulary: a *check* is a check cell (graded, not an answer; notebook 11 has three for its one
exercise); a *question* an answer markdown cell; the *record* is the manifest's digest of each
released cell (``notebook_merge.release_record``). Everything read is the learner's own file, so
nothing in it is trusted: a value of the wrong type counts as nothing, and a file that is not a
notebook is named, never a traceback.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctx_reference.i18n import _, language, using

from ..cells import is_answer, is_check_cell, source_text
from ..editions.translate import METADATA_KEY, stubs
from .course_map import START_PAGE, lesson_facts
from .notebook_merge import cell_digest, cell_key
from .workspace import BACKUPS, WorkspaceError, read_manifest, read_notebook


@dataclass(frozen=True)
class NotebookProgress:
    """What the saved copy of one notebook shows."""

    path: str  # inside the workspace, e.g. "02-remaining/remaining.ipynb"
    title: str  # "02 · How much window is left? …", or the path when the notebook cannot be read
    checks: int = 0
    passed: int = 0
    failed: int = 0  # ran and ended in an error; checks − passed − failed were not run
    questions: int = 0
    answered: int = 0
    problem: str | None = None  # why the notebook could not be read

    @property
    def started(self) -> bool:
        return self.passed + self.failed + self.answered > 0

    @property
    def done(self) -> bool:
        return self.problem is None and self.passed == self.checks and self.answered == self.questions


def check_state(cell: Mapping) -> str:
    """Return how a check cell's last saved run ended: "passed", "failed" or "not run".

    >>> check_state({"execution_count": 3, "outputs": [{"output_type": "stream", "text": "✓ ..."}]})
    'passed'
    >>> check_state({"execution_count": 3, "outputs": [{"output_type": "error", "ename": "CheckFailed"}]})
    'failed'
    >>> check_state({"execution_count": None, "outputs": []})
    'not run'
    """
    outputs = cell.get("outputs")
    outputs = [output for output in outputs if isinstance(output, Mapping)] if isinstance(outputs, list) else []
    if any(output.get("output_type") == "error" for output in outputs):
        return "failed"
    count = cell.get("execution_count")
    return "passed" if outputs or (type(count) is int and count > 0) else "not run"


def is_answered(cell: Mapping, recorded: str | None, stub: str) -> bool:
    """Return whether an answer markdown cell holds an answer: changed from the release the learner copied.

    ``recorded`` is the manifest's digest of the released cell (None without a record: then the cell
    must differ from the release's stub). A cell left empty is not answered.

    >>> is_answered({"cell_type": "markdown", "source": "Write your answer here."}, None, "Write your answer here.")
    False
    >>> is_answered({"cell_type": "markdown", "source": "Because the cache ..."}, None, "Write your answer here.")
    True
    """
    text = source_text(cell.get("source", ""))
    if not isinstance(text, str) or not text.strip():
        return False
    if recorded is not None:
        return cell_digest(cell) != recorded
    return text.strip() != stub.strip()


def notebook_progress(path: str, notebook: Mapping, record: Mapping[str, str], stub: str,
                      prerequisites_label: str) -> NotebookProgress:
    """Return the progress a saved notebook shows (``record``: its cells' digests in the manifest, maybe {})."""
    cells = [cell for cell in notebook.get("cells", []) if isinstance(cell, Mapping)]
    try:
        facts = lesson_facts(path, notebook, prerequisites_label)
        title = f"{facts.number} · {facts.title}"
    except ValueError:
        title = path
    states = [check_state(cell) for cell in cells if is_check_cell(cell)]
    questions = [cell for cell in cells if is_answer(cell) and cell.get("cell_type") == "markdown"]
    answered = 0
    for cell in questions:
        key = cell_key(cell)
        recorded = record.get(key) if key is not None else None
        answered += is_answered(cell, recorded if isinstance(recorded, str) else None, stub)
    return NotebookProgress(path=path, title=title, checks=len(states), passed=states.count("passed"),
                            failed=states.count("failed"), questions=len(questions), answered=answered)


def _notebooks(folder: Path) -> list[Path]:
    return sorted(path for path in folder.glob("*/*.ipynb")
                  if ".ipynb_checkpoints" not in path.parts and path.parts[-2] != BACKUPS)


def workspace_progress(folder: str | os.PathLike, edition: str | None = None) -> list[NotebookProgress]:
    """Return the progress of every notebook of a workspace, in reading order, reading only saved files.

    ``edition`` is the workspace's language (by default the reader's). Raises ValueError when
    ``folder`` is not a folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"folder must be an existing workspace folder (got {str(folder)!r})")
    edition = edition or language()
    with using(edition):
        label = _("先修")
    stub = stubs(edition)["markdown"]
    try:
        manifest = read_manifest(folder)
    except WorkspaceError:
        manifest = {}  # an unreadable manifest: every question is judged against the stub
    found = []
    for path in _notebooks(folder):
        name = path.relative_to(folder).as_posix()
        try:
            notebook = read_notebook(path, Path(name))
        except WorkspaceError as exc:
            found.append(NotebookProgress(path=name, title=name, problem=str(exc)))
            continue
        entry = manifest.get(name)
        cells = entry.get("cells") if isinstance(entry, Mapping) else None
        record: Mapping[str, str] = cells if isinstance(cells, Mapping) else {}
        found.append(notebook_progress(name, notebook, record, stub, label))
    return found


def next_notebook(progress: Sequence[NotebookProgress]) -> NotebookProgress | None:
    """Return the first notebook, in reading order, with a check not passed or a question not answered."""
    return next((item for item in progress if item.problem is None and not item.done), None)


def format_progress(progress: Sequence[NotebookProgress], folder: str) -> list[str]:
    """Return the lines of the progress view (reader's language): one per notebook, what its mark means, then what
    to open next."""
    lines = [_("{folder} 里保存过的笔记本（只读了文件，没有运行它们；没保存的改动不算）：").format(folder=folder)]
    width = max((len(item.title) for item in progress), default=0)
    shown_width = min(width, 60)
    for item in progress:
        title = item.title if len(item.title) <= shown_width else item.title[:shown_width - 1] + "…"
        if item.problem is not None:
            lines.append(f"! {title:<{shown_width}}  " + _("读不了：{problem}").format(problem=item.problem))
            continue
        mark = "✓" if item.done else ("·" if not item.started else "×" if item.failed else "…")
        checks = _("检查 {passed}/{checks} 通过").format(passed=item.passed, checks=item.checks)
        if item.failed:
            checks += _("（{failed} 个没通过）").format(failed=item.failed)
        questions = _("问答 {answered}/{questions} 已答").format(answered=item.answered, questions=item.questions)
        lines.append(_("{mark} {title}  {checks}，{questions}").format(
            mark=mark, title=f"{title:<{shown_width}}", checks=checks, questions=questions))
    if progress:
        lines.append(_("（✓ 做完了；× 有检查没通过；… 做了一部分；· 还没开始）"))
    upcoming = next_notebook(progress)
    if upcoming is None and progress and all(item.problem is None for item in progress):
        lines.append(_("全部 {count} 本都完成了：每个检查都通过，每道问答题都答了。").format(count=len(progress)))
    elif upcoming is not None:
        left = upcoming.checks - upcoming.passed
        todo = _("还有 {checks} 个检查没通过、{questions} 道问答题没答").format(
            checks=left, questions=upcoming.questions - upcoming.answered)
        lines.append(_("下一步：打开 {path}（{todo}）").format(path=upcoming.path, todo=todo))
    return lines


def progress_report(folder: str | os.PathLike = ".", edition: str | None = None) -> str:
    """Return the progress view of a workspace as text (what the start page's cell and ``progress`` print).

    ``edition`` defaults to the workspace's: the language the start page at its top names, else the
    reader's.
    """
    folder = Path(folder)
    edition = edition or _page_edition(folder) or language()
    with using(edition):
        shown = folder.resolve().name + "/"
        return "\n".join(format_progress(workspace_progress(folder, edition), shown))


def _page_edition(folder: Path) -> str | None:
    """The edition the start page of ``folder`` is in, or None when it has none or cannot be read."""
    try:
        page = read_notebook(folder / START_PAGE, Path(START_PAGE))
    except (WorkspaceError, OSError):
        return None
    edition = page.get("metadata", {}).get(METADATA_KEY)
    return edition if edition in ("zh_CN", "en") else None


__all__ = ["NotebookProgress", "check_state", "format_progress", "is_answered", "next_notebook",
           "notebook_progress", "progress_report", "workspace_progress"]
