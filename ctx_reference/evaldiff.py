"""Compare two prompt versions case by case, not only by pass rate.

What the model covers: an evaluation set of `Case`s, a `Result` (which case
ids passed), and `diff`, which walks the cases in order and lists the ones a
new prompt version fixed and the ones it broke. A deterministic fake model
shows why this matters: prompt v2 adds two sensible instructions ("answer
with the number only", "say 我不知道 when unsure"); it fixes one case and
breaks two, because a prompt change affects every input, not only the one it
was written for. A third version, v3, reaches exactly v1's pass rate while
still swapping one passing case for another -- equal rates can hide a
regression. Finally a seeded noisy model stands in for a real, random model:
the same case is run several times and compared by the share of runs it
passes.

What it leaves out: the fake model is a lookup table plus three instruction
phrases it recognises, not a language model; the grader is a plain substring
check; there is no statistics beyond the per-case pass share (no confidence
intervals, no significance tests).

Vocabulary:
- case id: a short English identifier, unique within a case set.
- prompt version: a key of `PROMPTS` ("v1", "v2", "v3").
- passed: the grader accepted the answer; a case id absent from a `Result`
  is an error (ValueError naming the id), never silently "failed".
- fixed: fails under the base version, passes under the next one; broke: the reverse.
- pass share / pass rate: passed runs (or cases) divided by all runs (or cases), in [0, 1].

Used by the notebook on treating prompts like code (eval diff).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ctx_reference._validate import require_callable, require_int, require_str

__all__ = [
    "Case",
    "Result",
    "diff",
    "grade",
    "run_eval",
    "pass_rate",
    "PROMPTS",
    "NUMBER_ONLY",
    "ADMIT_UNSURE",
    "KEEP_UNIT",
    "I_DONT_KNOW",
    "UNKNOWN_GUESS",
    "SLIP_ANSWER",
    "DEFAULT_P_SLIP",
    "Knowledge",
    "KNOWLEDGE",
    "fake_answer",
    "fake_model",
    "run_version",
    "lesson_cases",
    "noisy_model",
    "pass_rates",
]


@dataclass(frozen=True)
class Case:
    """One evaluation case: an id, the question asked, and the text the answer must contain.

    >>> Case("boiling", "标准大气压下，水的沸点是多少？", "100 摄氏度").expect
    '100 摄氏度'

    Used by the eval-diff notebook.
    """

    id: str
    question: str
    expect: str

    def __post_init__(self) -> None:
        for name in ("id", "question", "expect"):
            require_str(getattr(self, name), name)
        if not self.id.strip():
            raise ValueError(f"id must not be empty (got {self.id!r})")


@dataclass(frozen=True)
class Result:
    """Which case ids passed under one prompt version (case id -> bool).

    The mapping is copied and made read-only.

    >>> Result({"boiling": True, "unknown": False}).passed["unknown"]
    False

    Used by the eval-diff notebook.
    """

    passed: Mapping[str, bool]

    def __post_init__(self) -> None:
        if not isinstance(self.passed, Mapping):
            raise ValueError(f"passed must be a mapping of case id to bool (got {self.passed!r})")
        for key, value in self.passed.items():
            if not isinstance(key, str):
                raise ValueError(f"passed keys must be case ids (str) (got key {key!r})")
            if not isinstance(value, bool):
                raise ValueError(f"passed[{key!r}] must be a bool (got {value!r})")
        object.__setattr__(self, "passed", MappingProxyType(dict(self.passed)))

    def __deepcopy__(self, memo: dict) -> Result:
        """Return the result itself: it cannot change (a read-only mapping of str to bool), so a copy is the same."""
        return self

    # A mapping is unhashable; Results are compared with ==, never used as keys.
    __hash__ = None  # type: ignore[assignment]


def _check_cases(cases: object) -> tuple[Case, ...]:
    if isinstance(cases, (str, bytes)) or not isinstance(cases, Sequence):
        raise ValueError(f"cases must be a list or tuple of Case (got {cases!r})")
    seen: set[str] = set()
    for i, case in enumerate(cases):
        if not isinstance(case, Case):
            raise ValueError(f"cases[{i}] must be a Case (got {case!r})")
        if case.id in seen:
            raise ValueError(f"cases contains the case id {case.id!r} more than once")
        seen.add(case.id)
    return tuple(cases)


def _passed(result: object, role: str, case_id: str) -> bool:
    if not isinstance(result, Result):
        raise ValueError(f"{role} must be a Result (got {result!r})")
    if case_id not in result.passed:
        raise ValueError(f"{role} has no entry for case id {case_id!r}")
    return result.passed[case_id]


def diff(cases: Sequence[Case], base: Result, next: Result) -> tuple[list[str], list[str]]:
    """Return (fixed, broke): case ids that went fail -> pass and pass -> fail, in case order.

    `next` is named as in the lesson (it shadows the builtin only inside this
    function). A case id missing from either result raises ValueError naming
    the id: a typo must not pass for a regression. Ids present in a result
    but not among `cases` are ignored.

    The lesson's seed: v2 fixes the unanswerable question and breaks the two
    answers whose unit it drops.

    >>> cases = lesson_cases()
    >>> diff(cases, run_version("v1", cases), run_version("v2", cases))
    (['unknown'], ['distance', 'boiling'])

    Used by the eval-diff notebook.
    """
    checked = _check_cases(cases)
    fixed: list[str] = []
    broke: list[str] = []
    for case in checked:
        before = _passed(base, "base", case.id)
        after = _passed(next, "next", case.id)
        if not before and after:
            fixed.append(case.id)
        elif before and not after:
            broke.append(case.id)
    return fixed, broke


def grade(case: Case, answer: str) -> bool:
    """Return True when `case.expect` appears verbatim in `answer`.

    A crude grader, like many "must contain" checks in practice: a dropped
    unit or a dropped 约 fails it.

    >>> grade(Case("distance", "从北京开车到上海大约多远？", "约 1200 公里"), "1200")
    False

    Used by the eval-diff notebook.
    """
    if not isinstance(case, Case):
        raise ValueError(f"case must be a Case (got {case!r})")
    require_str(answer, "answer")
    return case.expect in answer


def run_eval(cases: Sequence[Case], answer_fn: Callable[[str], str]) -> Result:
    """Return the Result of asking `answer_fn` every case's question once and grading the answer.

    >>> run_eval(lesson_cases(), lambda q: fake_model("v1", q)).passed["distance"]
    True

    Used by the eval-diff notebook.
    """
    checked = _check_cases(cases)
    require_callable(answer_fn, "answer_fn")
    return Result({case.id: grade(case, answer_fn(case.question)) for case in checked})


def pass_rate(result: Result) -> float:
    """Return the share of entries in `result` that passed (0.0 for an empty result).

    >>> round(pass_rate(run_version("v1")), 3), round(pass_rate(run_version("v2")), 3)
    (0.714, 0.571)

    Used by the eval-diff notebook.
    """
    if not isinstance(result, Result):
        raise ValueError(f"result must be a Result (got {result!r})")
    if not result.passed:
        return 0.0
    return sum(result.passed.values()) / len(result.passed)


# ---------------------------------------------------------------------------
# A deterministic fake model
# ---------------------------------------------------------------------------

#: Instruction phrases the fake model recognises in a prompt.
NUMBER_ONLY = "只回答数字，不要其他文字。"  # data
ADMIT_UNSURE = "不确定时，回答“我不知道”。"  # data
KEEP_UNIT = "数字后面写上单位。"  # data

#: What the model says when told to admit it is unsure and it does not know.
I_DONT_KNOW = "我不知道"  # data

#: What the fake model says, confidently and wrongly, about a question it has no entry for.
UNKNOWN_GUESS = "答案是 42。"  # data

_BASE_PROMPT = "你是一个问答助手，请回答用户的问题。"  # data

#: Prompt versions. v2 = v1 + number only + admit when unsure; v3 = v2 + keep the unit.
PROMPTS: Mapping[str, str] = MappingProxyType(
    {
        "v1": _BASE_PROMPT,
        "v2": _BASE_PROMPT + NUMBER_ONLY + ADMIT_UNSURE,
        "v3": _BASE_PROMPT + NUMBER_ONLY + ADMIT_UNSURE + KEEP_UNIT,
    }
)


@dataclass(frozen=True)
class Knowledge:
    """What the fake model 'knows' about one question.

    full: its default answer; number: the bare number it gives when told to
    answer with the number only (None when the answer has no number); unit:
    the unit it appends when also told to keep the unit; known: False when
    `full` is a made-up answer to a question it cannot know.
    """

    full: str
    number: str | None = None
    unit: str = ""
    known: bool = True


#: The fake model's table, keyed by question. Invented for the lesson.
KNOWLEDGE: Mapping[str, Knowledge] = MappingProxyType(
    {
        "从北京开车到上海大约多远？": Knowledge("约 1200 公里", "1200", "公里"),  # data
        "标准大气压下，水的沸点是多少？": Knowledge("100 摄氏度", "100", "摄氏度"),  # data
        "我昨天午饭吃了什么？": Knowledge("你昨天午饭吃的是牛肉面。", known=False),  # data
        "一周有几天？": Knowledge("一周有 7 天。", "7", "天"),  # data
        "中国的首都是哪座城市？": Knowledge("北京。"),  # data
        "珠穆朗玛峰有多高？": Knowledge("约 8848 米", "8848", "米"),  # data
        "3 加 4 等于几？": Knowledge("3 加 4 等于 7。", "7"),  # data
    }
)


def fake_answer(prompt: str, question: str) -> str:
    """Return the fake model's answer to `question` under the system prompt `prompt`.

    The model obeys the instruction phrases it finds in the prompt:
    `ADMIT_UNSURE` makes it say 我不知道 instead of guessing; `NUMBER_ONLY`
    reduces an answer with a number to the bare number; `KEEP_UNIT` (with
    `NUMBER_ONLY`) puts the unit back after the number -- but not a leading 约.
    A question missing from `KNOWLEDGE` is treated as one it cannot know.

    >>> fake_answer(PROMPTS["v1"], "从北京开车到上海大约多远？")
    '约 1200 公里'
    >>> fake_answer(PROMPTS["v2"], "从北京开车到上海大约多远？")
    '1200'

    Used by the eval-diff notebook.
    """
    require_str(prompt, "prompt")
    require_str(question, "question")
    fact = KNOWLEDGE.get(question, Knowledge(UNKNOWN_GUESS, known=False))
    if not fact.known:
        return I_DONT_KNOW if ADMIT_UNSURE in prompt else fact.full
    if NUMBER_ONLY in prompt and fact.number is not None:
        if KEEP_UNIT in prompt and fact.unit:
            return f"{fact.number} {fact.unit}"
        return fact.number
    return fact.full


def _check_version(prompt_version: object) -> str:
    if not isinstance(prompt_version, str) or prompt_version not in PROMPTS:
        raise ValueError(f"prompt_version must be one of {sorted(PROMPTS)} (got {prompt_version!r})")
    return prompt_version


def fake_model(prompt_version: str, question: str) -> str:
    """Return the fake model's answer under the prompt `PROMPTS[prompt_version]`.

    >>> fake_model("v1", "我昨天午饭吃了什么？"), fake_model("v2", "我昨天午饭吃了什么？")
    ('你昨天午饭吃的是牛肉面。', '我不知道')

    Used by the eval-diff notebook.
    """
    return fake_answer(PROMPTS[_check_version(prompt_version)], question)


def lesson_cases() -> list[Case]:
    """Return the lesson's seven cases, in the order `diff` walks them.

    distance and boiling expect a unit, unknown cannot be answered, everest's
    expected height is one the fake model gets wrong under every version.

    >>> [c.id for c in lesson_cases()]
    ['distance', 'boiling', 'unknown', 'week', 'capital', 'everest', 'sum']

    Used by the eval-diff notebook.
    """
    return [
        Case("distance", "从北京开车到上海大约多远？", "约 1200 公里"),  # data
        Case("boiling", "标准大气压下，水的沸点是多少？", "100 摄氏度"),  # data
        Case("unknown", "我昨天午饭吃了什么？", I_DONT_KNOW),  # data
        Case("week", "一周有几天？", "7"),  # data
        Case("capital", "中国的首都是哪座城市？", "北京"),  # data
        Case("everest", "珠穆朗玛峰有多高？", "8848.86 米"),  # data
        Case("sum", "3 加 4 等于几？", "7"),  # data
    ]


def run_version(prompt_version: str, cases: Sequence[Case] | None = None) -> Result:
    """Return the fake model's Result for one prompt version (default cases: `lesson_cases()`).

    v1 passes 5 of 7 (fails unknown, everest); v2 passes 4 of 7; v3 passes 5 of 7.

    >>> sum(run_version("v3").passed.values())
    5

    Used by the eval-diff notebook.
    """
    _check_version(prompt_version)
    chosen = lesson_cases() if cases is None else cases
    return run_eval(chosen, lambda question: fake_model(prompt_version, question))


# ---------------------------------------------------------------------------
# A seeded noisy model: real models are random
# ---------------------------------------------------------------------------

#: The noisy model's default chance of slipping on any one question.
DEFAULT_P_SLIP = 0.2

#: What the noisy model says when it slips: a vague non-answer that passes no case.
SLIP_ANSWER = "嗯……这个问题不好说。"  # data


def noisy_model(prompt_version: str, seed: int, p_slip: float = DEFAULT_P_SLIP) -> Callable[[str], str]:
    """Return an answer function that gives `fake_model`'s answer, or slips with chance `p_slip`.

    Each answer draws from its own ``random.Random`` seeded with the version,
    the seed and the question (string seeds are hashed with SHA-512, so the
    draw is the same in every process): no global random state, and the
    answer to a question does not depend on which questions were asked before.

    >>> ask = noisy_model("v1", seed=1)
    >>> ask("一周有几天？") == noisy_model("v1", seed=1)("一周有几天？")
    True

    Used by the eval-diff notebook.
    """
    _check_version(prompt_version)
    require_int(seed, "seed", minimum=0)
    if isinstance(p_slip, bool) or not isinstance(p_slip, (int, float)) or not 0 <= p_slip <= 1:
        raise ValueError(f"p_slip must be a number between 0 and 1 (got {p_slip!r})")

    def answer(question: str) -> str:
        require_str(question, "question")
        rng = random.Random(f"{prompt_version}|{seed}|{question}")
        if rng.random() < p_slip:
            return SLIP_ANSWER
        return fake_model(prompt_version, question)

    return answer


def pass_rates(
    cases: Sequence[Case],
    answer_fn_factory: Callable[[int], Callable[[str], str]],
    runs: int,
    seed: int,
) -> dict[str, float]:
    """Return, per case id, the share of `runs` runs whose answer passed.

    Run seeds are drawn from ``random.Random(seed)``; ``answer_fn_factory(run_seed)``
    builds the answer function for one run. Same arguments, same shares.
    Compare two versions by calling it once per version with the same seed.

    >>> rates = pass_rates(lesson_cases(), lambda s: noisy_model("v1", s), runs=20, seed=7)
    >>> rates["unknown"], rates["everest"]
    (0.0, 0.0)

    Used by the eval-diff notebook.
    """
    checked = _check_cases(cases)
    require_callable(answer_fn_factory, "answer_fn_factory")
    require_int(runs, "runs", minimum=1)
    require_int(seed, "seed", minimum=0)
    rng = random.Random(seed)
    passes = {case.id: 0 for case in checked}
    for _ in range(runs):
        result = run_eval(checked, answer_fn_factory(rng.randrange(2**32)))
        for case_id, ok in result.passed.items():
            passes[case_id] += ok
    return {case_id: count / runs for case_id, count in passes.items()}
