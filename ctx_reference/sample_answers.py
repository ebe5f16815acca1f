"""Sample answers of the free-response questions: ``sample_answer("q_why_early")`` once the learner wrote their own.

Covers: whether the learner has written an answer to a question (``written``: the answer cell of the
saved notebook is neither empty nor the release's "write your answer here"), which notebook the
kernel runs (``running_notebook``), and ``sample_answer``, which prints what a good answer covers
(its points, then a model answer) in the reader's language, from the package's answer key
(``answer_key/questions.<language>.json``, written from the solution notebooks by
``python -m ctx_course release``).

Leaves out: the same points shown to an instructor beside each answer in the Formgrader
(``ctx_course/grading/steps/rubric.py``), and what closes every answer (a grader, the course's
setting ``CTX_MODEL_ANSWERS=off``, no key: ``model_answers.closed``).

Vocabulary: a *question* is named by the ``grade_id`` of its answer cell (``q_why_early``); the
learner's answer is read from the notebook as last saved, so an answer typed but not saved is not
written yet.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from .i18n import N_, SESSION, _, language, using
from .model_answers import closed, key_file, read_key

ANSWER_STUB = N_("在这里写下你的回答。")
"""The text a released answer cell holds (nbgrader's text stub; ``ctx_course.editions.translate`` uses this one)."""


def release_texts() -> frozenset[str]:
    """Return the release's answer-cell text in every edition (an answer equal to one of them is not written)."""
    texts = {ANSWER_STUB}
    with using("en"):
        texts.add(_(ANSWER_STUB))
    return frozenset(texts)


def answer_text(notebook: Mapping, question: str) -> str | None:
    """Return the source of the answer cell ``question`` in a notebook (None: no such cell, or not text)."""
    cells = notebook.get("cells") if isinstance(notebook, Mapping) else None
    for cell in cells if isinstance(cells, list) else []:
        metadata = cell.get("metadata") if isinstance(cell, Mapping) else None
        marks = metadata.get("nbgrader") if isinstance(metadata, Mapping) else None
        if isinstance(marks, Mapping) and marks.get("grade_id") == question:
            source = cell.get("source")
            if isinstance(source, list) and all(isinstance(part, str) for part in source):
                source = "".join(source)
            return source if isinstance(source, str) else None
    return None


def written(answer: str | None, released: frozenset[str]) -> bool:
    """Return True when ``answer`` is the learner's own: not missing, not blank, not the release's text.

    >>> written("在这里写下你的回答。", frozenset({"在这里写下你的回答。"})), written("  ", frozenset())
    (False, False)
    >>> written("因为压缩本身也要占窗口。", frozenset({"在这里写下你的回答。"}))
    True
    """
    return answer is not None and bool(answer.strip()) and answer.strip() not in released


def running_notebook(environ: Mapping[str, str], user_ns: Mapping[str, object], cwd: Path) -> Path | None:
    """Return the notebook a kernel runs: the one Jupyter Server names (``JPY_SESSION_NAME``, as given or in
    the working folder), the one VS Code names, else the only notebook of the working folder; None if unknown."""
    for named in (environ.get(SESSION), user_ns.get("__vsc_ipynb_file__")):
        if isinstance(named, str) and named.endswith(".ipynb"):
            for path in (Path(named), cwd / Path(named).name):
                if path.is_file():
                    return path
    try:
        found = sorted(cwd.glob("*.ipynb"))
    except OSError:
        return None
    return found[0] if len(found) == 1 else None


def _read_notebook(path: Path) -> Mapping | None:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return notebook if isinstance(notebook, Mapping) else None


def _kernel_namespace() -> Mapping[str, object]:
    import sys

    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return getattr(shell, "user_ns", None) or {}


def sample_answer(question: str, notebook: str | os.PathLike | None = None) -> None:
    """Print what a good answer to ``question`` covers, once the learner's own answer is written and saved.

    Example (notebook 02): after the answer cell ``q_why_early`` holds the learner's words and the
    notebook is saved, ``sample_answer("q_why_early")`` prints the points and a model answer; before,
    one line asking for their own answer first. ``notebook`` names the notebook file when the kernel
    cannot find it (a Jupyter that does not say which notebook it runs).
    """
    if not isinstance(question, str):
        raise ValueError(f"question must be the id of a question, a str such as 'q_why_early' (got {question!r})")
    key = read_key(key_file(language(), part="questions"))
    why = closed(os.environ, key is not None)
    if why is not None or key is None:
        print(why)
        return
    if question not in key:
        raise ValueError(f"question must be one of: {', '.join(sorted(key))} (got {question!r})")
    path = Path(notebook) if notebook is not None else running_notebook(os.environ, _kernel_namespace(), Path.cwd())
    saved = _read_notebook(path) if path is not None else None
    if path is None or saved is None:
        message = _("找不到你的笔记本：请传入文件名，如 sample_answer(\"{question}\", notebook=\"remaining.ipynb\")。")
        print(message.format(question=question))
        return
    answer = answer_text(saved, question)
    if answer is None:
        print(_("笔记本 {name} 里没有问题 {question}：请在出这道题的笔记本里调用。").format(
            name=path.name, question=question))
        return
    if not written(answer, release_texts()):
        print(_("先写下你自己的回答，保存笔记本（Ctrl+S），再来看参考回答。"))
        return
    print(_("问题 {question}：好的回答应该讲到这些（老师批改时也按这些要点看）").format(question=question)
          + "\n\n" + key[question])


__all__ = ["ANSWER_STUB", "answer_text", "release_texts", "running_notebook", "sample_answer", "written"]
