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
from .i18n import N_, _, language

KEY_FOLDER = "answer_key"
"""The package folder holding the answer key, one ``<language>.json`` per edition."""
SETTING = "CTX_MODEL_ANSWERS"
"""The environment variable an instructor sets to ``off`` to turn model answers off."""
OFF = frozenset({"off", "0", "no", "false"})

WHY: dict[str, str] = {
    "check": N_("先判输入、再判输入加输出：输入本身超窗口时请求发不出去，这一种必须先排除；两处都用严格的 >，正好等"
              "于窗口还放得下。"),
    "estimate_tokens": N_("ASCII 字符整段合起来数、最后只向上取整一次；-(-a // 4) 是只用整数做的向上取整，不经过浮点"
              "数。"),
    "remaining": N_("余量照实相减，超额时就是负数；和窗口的十分之一比用除法 window / 10，窗口不是 10 的倍数时整除会"
              "挪动边界。"),
    "recall": N_("两个系数分开写、再相乘，和模型的公式一一对应；x 取答案那个 token 的中点，所以是 pos + 0.5。"),
    "fit_position": N_("把模型展开成对 c0、c1、c2 线性的形式，一次 lstsq 就解出来；middle 和 end_drop 是 c1、c2 除以"
              " c0；最后转成 Python 的 float。"),
    "assemble": N_("先放必需项再按优先级挑，每一项先判重复再判放不下，丢弃的原因才对；输出顺序单独排：稳定在前，组内"
              "保持输入顺序。"),
    "trim_lines": N_("先把输入变成新的 list，元组也一样返回 list；放得下就原样返回，否则头、说明行、尾三段拼起来，说"
              "明行用给定的函数生成。"),
    "select_to_clear": N_("两道闸门：没超过阈值不清；可清的腾不出 clear_at_least 也不清。可清的是不晚于 turn − keep "
              "的轮次，按从旧到新的顺序返回。"),
    "request_cost": N_("首轮或改写过的一轮没有可读的缓存，整段按写入价；否则上一轮的输入按读价，新增部分按写入价。价"
              "格都取自 params。"),
    "render": N_("渲染和检查分开：先按固定顺序拼出文本，动态区的键排序，缓存因此认得出相同的内容；检查逐个字段扫一遍"
              "，每个字段最多一条警告。"),
    "diff": N_("按 cases 的顺序走，只看两版结果变了的用例；不在 cases 里的 id 自然不会出现。"),
    "zone": N_("先检查参数；比较用 used × 100 和 limit × 门槛的百分比，都是整数，"
               "边界上不会有浮点误差；每个比较符号决定那一端算哪个区。"),
    "measure": N_("先拒绝不认识的桶；每个桶分别数（没给的算 0），在新字典里按 BUCKETS 的顺序放；水位区用 zone 算，不"
              "改动传进来的字典。"),
    "fit_rates": N_("每张回执一行方程、两列（ASCII 数、其余数），没有常数列；秩小于 2 时两个比率分不开，报错而不是给"
              "一个任意解；结果转成 float。"),
    "write_progress": N_("先只留一条最新的 next，再按（种类优先级、轮次从新到旧、出现顺序）排好逐条试放；放不下就跳"
              "过；最后按原顺序输出新列表。"),
    "restore": N_("逐行处理：去掉首尾空白，跳过空行和注释；用锚定整行的正则解析，种类只认四个小写词；不匹配就报错，"
              "写出行号和原行。"),
    "context_policy": N_("只在越过阈值时动手；不会再问的结果直接清、不记笔记；只折叠到摘要还装得下的地方，装不下的要"
              "紧结果改记笔记；清除和压缩放在同一轮，只算一次改写。"),
}
"""Why each model answer is written the way it is (a message), shown under its code."""
WHY["beat_clear_notes"] = WHY["beat_compact"] = WHY["context_policy"]  # the capstone's one policy


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
        message = _("先自己试一试：写好练习 {exercise}，运行一次它的检查格，之后就能看参考答案了。")
        return message.format(exercise=exercise)
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
    """Return the model answer of ``exercise`` as shown: a heading line, its source, then why it is written so."""
    heading = _("练习 {exercise} 的参考答案（和你的写法不同也没关系，检查通过就对）：").format(exercise=exercise)
    why = _("为什么这样写：{why}").format(why=_(WHY[exercise]))
    return f"{heading}\n\n{source}\n\n{why}"


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
