"""Model answers after trying: ``show_solution("remaining")`` shows the course's own answer to an exercise.

Covers: whether a model answer may be shown (``refusal``, a pure function of the exercise's
attempt, the environment and whether the key is there: only after the exercise's check ran in this
kernel, never under a grader, never when the course turns model answers off), reading the answer
key shipped with the package (``read_key``: ``answer_key/<language>.json``, written from the
solution notebooks by ``python -m ctx_course release``), and ``show_solution``, which prints the
answer in the reader's language, its comments saying why it is written that way.

Leaves out: writing the key (``ctx_course/editions/answer_key.py``); hiding it from graded code (the grading
sandbox shows an empty folder in its place, and the reference build graded code runs against
leaves it out).

Vocabulary: the *answer key* is one JSON object per edition, exercise → source code of the
notebook's answer cell. The setting ``CTX_MODEL_ANSWERS=off`` (also ``0``, ``no``, ``false``) is
an instructor's: a graded course turns model answers off for every learner (the hub does by default).
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from .attempts import Attempt, attempt, grading
from .i18n import _, language

KEY_FOLDER = "answer_key"
"""The package folder holding the answer key, one ``<language>.json`` per edition."""
SETTING = "CTX_MODEL_ANSWERS"
"""The environment variable an instructor sets to ``off`` to turn model answers off."""
OFF = frozenset({"off", "0", "no", "false"})


def answers_off(environ: Mapping[str, str]) -> bool:
    """Return True when ``environ`` turns model answers off (``CTX_MODEL_ANSWERS=off``, any case).

    >>> answers_off({"CTX_MODEL_ANSWERS": "Off"}), answers_off({}), answers_off({"CTX_MODEL_ANSWERS": "on"})
    (True, False, False)
    """
    return environ.get(SETTING, "").strip().lower() in OFF


def closed(environ: Mapping[str, str], key_found: bool) -> str | None:
    """Return why no answer of the key may be shown at all (a message), or None: a grader runs the notebook,
    the course turned model answers off, or the package holds no answer key (in that order)."""
    if grading(environ):
        return _("评分时不提供参考答案。")
    if answers_off(environ):
        return _("这门课关闭了参考答案（{setting}=off），请向老师求助。").format(setting=SETTING)
    if not key_found:
        return _("这份安装里没有参考答案。")
    return None


def refusal(exercise: str, tried: Attempt, environ: Mapping[str, str], key_found: bool) -> str | None:
    """Return why the model answer of ``exercise`` may not be shown now (a message), or None when it may.

    In this order: ``closed`` says why (a grader, the setting, no key); the exercise's check has
    not run in this kernel.
    """
    if (why := closed(environ, key_found)) is not None:
        return why
    if tried.runs == 0:
        return _("先自己试一试：运行一次练习 {exercise} 的检查格，之后就能看参考答案了。").format(exercise=exercise)
    return None


def key_file(edition: str, folder: Path | None = None, part: str = "exercises") -> Path:
    """Return the answer key file of ``edition`` in ``folder`` (the package's ``answer_key/`` by default).

    ``part`` is ``exercises`` (the model answers: ``zh_CN.json``) or ``questions`` (the sample
    answers: ``questions.zh_CN.json``).
    """
    if part not in ("exercises", "questions"):
        raise ValueError(f"part must be exercises or questions (got {part!r})")
    name = f"{edition}.json" if part == "exercises" else f"questions.{edition}.json"
    return (folder or Path(__file__).with_name(KEY_FOLDER)) / name


def read_key(path: Path) -> dict[str, str] | None:
    """Return the answer key at ``path`` (exercise → source), or None when it is missing, unreadable or malformed."""
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(key, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in key.items()):
        return None
    return key


def format_solution(exercise: str, source: str) -> str:
    """Return the model answer of ``exercise`` as shown: a heading line, then its source."""
    return _("练习 {exercise} 的参考答案（注释说明了为什么这样写；和你的写法不同也没关系，检查通过就对）：").format(
        exercise=exercise) + "\n\n" + source


def show_solution(exercise: str) -> None:
    """Print the model answer of ``exercise`` in the reader's language, once its check has run in this kernel.

    Example (notebook 02): after ``check_exercise("remaining", remaining)`` has run,
    ``show_solution("remaining")`` prints the notebook's own ``remaining``; before, one line saying
    to run the check first. Under a grader, or with ``CTX_MODEL_ANSWERS=off``, it shows nothing of
    the answer.
    """
    from .checks import EXERCISES  # the checks import attempts.py, as this module does

    if exercise not in EXERCISES:
        raise ValueError(f"exercise must be one of: {', '.join(sorted(EXERCISES))} (got {exercise!r})")
    key = None if grading() or answers_off(os.environ) else read_key(key_file(language()))
    found = key is not None and exercise in key
    why = refusal(exercise, attempt(exercise), os.environ, found)
    if why is not None or key is None:
        print(why)
        return
    print(format_solution(exercise, key[exercise]))


__all__ = ["KEY_FOLDER", "SETTING", "answers_off", "closed", "format_solution", "key_file", "read_key", "refusal",
           "show_solution"]
