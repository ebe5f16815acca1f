"""Tests for ctx_reference.evaldiff: case-by-case diffs, the fake model, and seeded repeated runs."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.evaldiff import (
    I_DONT_KNOW,
    PROMPTS,
    SLIP_ANSWER,
    Case,
    Result,
    diff,
    fake_answer,
    fake_model,
    grade,
    lesson_cases,
    noisy_model,
    pass_rate,
    pass_rates,
    run_eval,
    run_version,
)

IDS = [f"c{i}" for i in range(6)]
CASES6 = [Case(i, f"问题 {i}", "答") for i in IDS]
OUTCOMES = st.lists(st.booleans(), min_size=6, max_size=6).map(lambda bs: Result(dict(zip(IDS, bs))))


def test_eval_diff():
    """Seed: v1 -> v2 fixes exactly the unanswerable case and breaks exactly the two answers that lose their unit."""
    cases = lesson_cases()
    fixed, broke = diff(cases, run_version("v1", cases), run_version("v2", cases))
    assert fixed == ["unknown"]
    assert broke == ["distance", "boiling"]


def test_seed_answers_under_v1_and_v2():
    """v2 turns 约 1200 公里 into 1200, 100 摄氏度 into 100, and a made-up lunch into 我不知道."""
    assert fake_model("v1", "从北京开车到上海大约多远？") == "约 1200 公里"
    assert fake_model("v2", "从北京开车到上海大约多远？") == "1200"
    assert fake_model("v1", "标准大气压下，水的沸点是多少？") == "100 摄氏度"
    assert fake_model("v2", "标准大气压下，水的沸点是多少？") == "100"
    assert fake_model("v1", "我昨天午饭吃了什么？") == "你昨天午饭吃的是牛肉面。"
    assert fake_model("v2", "我昨天午饭吃了什么？") == "我不知道"


def test_v2_adds_the_two_instructions_to_v1():
    """PROMPTS['v2'] is v1 plus 'number only' and 'say 我不知道 when unsure'; v1 has neither."""
    assert PROMPTS["v2"].startswith(PROMPTS["v1"])
    assert "只回答数字" in PROMPTS["v2"] and "我不知道" in PROMPTS["v2"]
    assert "只回答数字" not in PROMPTS["v1"] and "我不知道" not in PROMPTS["v1"]


def test_pass_counts_per_version():
    """v1 passes 5 of 7 (fails unknown, everest), v2 passes 4 of 7 (5 - 2 broke + 1 fixed), v3 passes 5 of 7."""
    assert pass_rate(run_version("v1")) == 5 / 7
    assert pass_rate(run_version("v2")) == 4 / 7
    assert pass_rate(run_version("v3")) == 5 / 7


def test_equal_pass_rate_can_hide_a_regression():
    """v1 and v3 both pass 5 of 7, yet v3 fixed 'unknown' and broke 'distance' (it keeps 公里 but drops 约)."""
    v1, v3 = run_version("v1"), run_version("v3")
    assert pass_rate(v1) == pass_rate(v3)
    assert diff(lesson_cases(), v1, v3) == (["unknown"], ["distance"])
    assert fake_model("v3", "从北京开车到上海大约多远？") == "1200 公里"


def test_v2_to_v3_only_fixes_the_boiling_point():
    """Putting the unit back (v3) restores 100 摄氏度 and breaks nothing relative to v2."""
    assert diff(lesson_cases(), run_version("v2"), run_version("v3")) == (["boiling"], [])


def test_diff_walks_cases_in_order():
    """fixed and broke follow the order of cases, not the order of the Result's keys."""
    cases = [Case("b", "q", "x"), Case("a", "q", "x"), Case("c", "q", "x")]
    base = Result({"a": False, "b": False, "c": True})
    after = Result({"c": False, "a": True, "b": True})
    assert diff(cases, base, after) == (["b", "a"], ["c"])


def test_diff_of_no_cases_is_empty():
    """Edge: no cases -> nothing fixed, nothing broke (extra ids in the Results are ignored)."""
    assert diff([], Result({"x": True}), Result({"x": False})) == ([], [])


@given(OUTCOMES)
def test_diff_with_itself_is_empty(result):
    """Property: diff(cases, a, a) is ([], [])."""
    assert diff(CASES6, result, result) == ([], [])


@given(OUTCOMES, OUTCOMES)
def test_fixed_and_broke_are_disjoint_and_swap(base, after):
    """Property: fixed and broke share no id, and swapping base and next swaps the two lists."""
    fixed, broke = diff(CASES6, base, after)
    assert not set(fixed) & set(broke)
    assert diff(CASES6, after, base) == (broke, fixed)


@given(OUTCOMES, OUTCOMES)
def test_pass_count_changes_by_fixed_minus_broke(base, after):
    """Property: passes(next) - passes(base) == len(fixed) - len(broke); equal rates allow a non-empty diff."""
    fixed, broke = diff(CASES6, base, after)
    assert sum(after.passed.values()) - sum(base.passed.values()) == len(fixed) - len(broke)


def test_missing_case_id_raises():
    """A case id absent from a Result is an error naming the id and which Result, not a silent 'failed'."""
    cases = [Case("a", "q", "x"), Case("b", "q", "x")]
    with pytest.raises(ValueError, match=r"next has no entry for case id 'b'"):
        diff(cases, Result({"a": True, "b": True}), Result({"a": True}))
    with pytest.raises(ValueError, match=r"base has no entry for case id 'a'"):
        diff(cases, Result({"b": True}), Result({"a": True, "b": True}))


def test_duplicate_case_ids_raise():
    """Two cases with the same id raise ValueError naming the id, in diff, run_eval and pass_rates."""
    cases = [Case("dup", "q1", "x"), Case("dup", "q2", "y")]
    result = Result({"dup": True})
    with pytest.raises(ValueError, match=r"case id 'dup' more than once"):
        diff(cases, result, result)
    with pytest.raises(ValueError, match=r"case id 'dup' more than once"):
        run_eval(cases, lambda q: "x")
    with pytest.raises(ValueError, match=r"case id 'dup' more than once"):
        pass_rates(cases, lambda s: (lambda q: "x"), runs=1, seed=0)


def test_grade_is_substring_match():
    """The answer passes iff it contains the expected text: 约 1200 公里 passes, 1200 and 1200 公里 fail."""
    case = Case("distance", "从北京开车到上海大约多远？", "约 1200 公里")
    assert grade(case, "大概约 1200 公里吧") is True
    assert grade(case, "1200") is False
    assert grade(case, "1200 公里") is False


def test_run_eval_asks_each_question_once():
    """run_eval calls answer_fn once per case, with that case's question, and grades every answer."""
    asked = []

    def answer(question):
        asked.append(question)
        return "100 摄氏度"

    cases = [Case("a", "沸点？", "100 摄氏度"), Case("b", "距离？", "约 1200 公里")]
    assert run_eval(cases, answer) == Result({"a": True, "b": False})
    assert asked == ["沸点？", "距离？"]


def test_unknown_question_gets_a_confident_guess_or_i_dont_know():
    """A question the fake model has no entry for: v1 guesses (答案是 42。), v2 and v3 say 我不知道."""
    assert fake_model("v1", "火星上现在几点？") == "答案是 42。"
    assert fake_model("v2", "火星上现在几点？") == I_DONT_KNOW
    assert fake_model("v3", "火星上现在几点？") == I_DONT_KNOW


def test_fake_answer_follows_instructions_in_the_prompt_text():
    """fake_answer reacts to the instruction phrases in any prompt text, not to the version's name."""
    assert fake_answer("随便什么提示词", "一周有几天？") == "一周有 7 天。"
    assert fake_answer(PROMPTS["v2"], "一周有几天？") == "7"
    assert fake_answer(PROMPTS["v3"], "一周有几天？") == "7 天"
    assert fake_answer(PROMPTS["v2"], "中国的首都是哪座城市？") == "北京。"


def test_noisy_model_is_reproducible_and_seed_dependent():
    """Same version, seed and question -> same answer; over 50 seeds both outcomes occur with p_slip 0.5."""
    question = "一周有几天？"
    first = [noisy_model("v1", s, p_slip=0.5)(question) for s in range(50)]
    again = [noisy_model("v1", s, p_slip=0.5)(question) for s in range(50)]
    assert first == again
    assert set(first) == {"一周有 7 天。", SLIP_ANSWER}


def test_noisy_model_extremes():
    """p_slip 0 always answers like fake_model; p_slip 1 always slips."""
    question = "标准大气压下，水的沸点是多少？"
    assert noisy_model("v1", 3, p_slip=0)(question) == "100 摄氏度"
    assert noisy_model("v1", 3, p_slip=1)(question) == SLIP_ANSWER


def test_noisy_answer_does_not_depend_on_call_order():
    """Asking questions in reverse order gives each question the same answer (no shared random state)."""
    questions = [c.question for c in lesson_cases()]
    ask_a, ask_b = noisy_model("v2", 11, p_slip=0.5), noisy_model("v2", 11, p_slip=0.5)
    forward = {q: ask_a(q) for q in questions}
    backward = {q: ask_b(q) for q in reversed(questions)}
    assert forward == backward


def test_pass_rates_are_reproducible():
    """Seeded runs: the same arguments give identical per-case pass shares, each in [0, 1] and a multiple of 1/20."""
    cases = lesson_cases()
    a = pass_rates(cases, lambda s: noisy_model("v2", s), runs=20, seed=7)
    b = pass_rates(cases, lambda s: noisy_model("v2", s), runs=20, seed=7)
    assert a == b
    assert list(a) == ["distance", "boiling", "unknown", "week", "capital", "everest", "sum"]
    assert all(0 <= r <= 1 and (r * 20) == int(r * 20) for r in a.values())


def test_pass_rates_without_noise_equal_the_single_run():
    """With p_slip 0 every run is the deterministic one: shares are 1.0 where v1 passes and 0.0 where it fails."""
    rates = pass_rates(lesson_cases(), lambda s: noisy_model("v1", s, p_slip=0), runs=5, seed=1)
    assert rates == {"distance": 1.0, "boiling": 1.0, "unknown": 0.0, "week": 1.0,
                     "capital": 1.0, "everest": 0.0, "sum": 1.0}


def test_pass_rates_never_exceed_the_deterministic_model():
    """A slip never passes a case: a case that v2 fails deterministically has share 0.0 under noise too."""
    rates = pass_rates(lesson_cases(), lambda s: noisy_model("v2", s), runs=30, seed=3)
    assert rates["distance"] == rates["boiling"] == rates["everest"] == 0.0


def test_run_seeds_differ_between_runs():
    """pass_rates hands every run its own seed, drawn from random.Random(seed): 10 runs, 10 distinct seeds."""
    seen = []

    def factory(run_seed):
        seen.append(run_seed)
        return lambda q: ""

    pass_rates(lesson_cases(), factory, runs=10, seed=42)
    assert len(seen) == 10 and len(set(seen)) == 10
    again = []
    pass_rates(lesson_cases(), lambda s: again.append(s) or (lambda q: ""), runs=10, seed=42)
    assert again == seen


def test_case_and_result_are_frozen_copies():
    """Case cannot be reassigned; Result copies the caller's dict and cannot be written to."""
    case = Case("a", "q", "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.id = "b"
    source = {"a": True}
    result = Result(source)
    source["a"] = False
    assert result.passed["a"] is True
    with pytest.raises(TypeError):
        result.passed["a"] = False


def test_pass_rate_of_empty_result_is_zero():
    """Edge: a Result with no entries has pass rate 0.0 rather than dividing by zero."""
    assert pass_rate(Result({})) == 0.0


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: Case(1, "q", "x"), r"id must be a str \(got 1\)"),
        (lambda: Case("a", None, "x"), r"question must be a str \(got None\)"),
        (lambda: Case("a", "q", 100), r"expect must be a str \(got 100\)"),
        (lambda: Case("  ", "q", "x"), r"id must not be empty \(got '  '\)"),
        (lambda: Result([("a", True)]), r"passed must be a mapping of case id to bool \(got \[\('a', True\)\]\)"),
        (lambda: Result({"a": 1}), r"passed\['a'\] must be a bool \(got 1\)"),
        (lambda: Result({2: True}), r"passed keys must be case ids \(str\) \(got key 2\)"),
        (lambda: diff("abc", Result({}), Result({})), r"cases must be a list or tuple of Case \(got 'abc'\)"),
        (lambda: diff([{"id": "a"}], Result({}), Result({})), r"cases\[0\] must be a Case \(got \{'id': 'a'\}\)"),
        (lambda: diff([Case("a", "q", "x")], {"a": True}, Result({"a": True})),
         r"base must be a Result \(got \{'a': True\}\)"),
        (lambda: grade("a", "x"), r"case must be a Case \(got 'a'\)"),
        (lambda: grade(Case("a", "q", "x"), None), r"answer must be a str \(got None\)"),
        (lambda: run_eval(lesson_cases(), "v1"), r"answer_fn must be callable \(got 'v1'\)"),
        (lambda: pass_rate({"a": True}), r"result must be a Result \(got \{'a': True\}\)"),
        (lambda: fake_model("v9", "q"), r"prompt_version must be one of \['v1', 'v2', 'v3'\] \(got 'v9'\)"),
        (lambda: fake_model(["v1"], "q"), r"prompt_version must be one of .* \(got \['v1'\]\)"),
        (lambda: fake_model("v1", 7), r"question must be a str \(got 7\)"),
        (lambda: fake_answer(None, "q"), r"prompt must be a str \(got None\)"),
        (lambda: run_version("V1"), r"prompt_version must be one of .* \(got 'V1'\)"),
        (lambda: noisy_model("v1", -1), r"seed must be >= 0 \(got -1\)"),
        (lambda: noisy_model("v1", True), r"seed must be an int \(got True\)"),
        (lambda: noisy_model("v1", 0, p_slip=1.5), r"p_slip must be a number between 0 and 1 \(got 1.5\)"),
        (lambda: noisy_model("v1", 0)(3), r"question must be a str \(got 3\)"),
        (lambda: pass_rates(lesson_cases(), lambda s: str, runs=0, seed=0), r"runs must be >= 1 \(got 0\)"),
        (lambda: pass_rates(lesson_cases(), lambda s: str, runs=2.0, seed=0), r"runs must be an int \(got 2.0\)"),
        (lambda: pass_rates(lesson_cases(), lambda s: str, runs=1, seed="7"), r"seed must be an int \(got '7'\)"),
        (lambda: pass_rates(lesson_cases(), None, runs=1, seed=0), r"answer_fn_factory must be callable \(got None\)"),
    ],
)
def test_bad_input_is_rejected(build, match):
    """Every validation raises ValueError naming the argument and echoing the value."""
    with pytest.raises(ValueError, match=match):
        build()
