"""Model answers after trying (ctx_reference/model_answers.py) and their key (ctx_course/editions/answer_key.py)."""
from __future__ import annotations

import json
import runpy

import pytest

from ctx_course.editions.answer_key import answer_key, key_path, key_text
from ctx_course.grading.steps.reference_build import build_reference
from ctx_course.sandbox.policy import SandboxPolicy
from ctx_reference import attempts
from ctx_reference.attempts import Attempt
from ctx_reference.checks import EXERCISES, CheckFailed, check_exercise
from ctx_reference.i18n import LANGUAGES, using
from ctx_reference.model_answers import key_file, read_key, refusal, show_solution

from conftest import REPO

TRIED = Attempt(1, ("negative-when-over",))
UNTRIED = Attempt(0)


@pytest.fixture(autouse=True)
def fresh_kernel(monkeypatch):
    """Each test starts as a fresh kernel, outside any grader, with model answers on."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("CTX_MODEL_ANSWERS", raising=False)
    attempts.forget()
    yield
    attempts.forget()


def wrong_remaining(window, read, write, input, max_tokens):
    """A ``remaining`` that forgets ``max_tokens``."""
    left = window - (read + write + input)
    return left, left < window / 10


def source_cell(assignment: str, name: str, grade_id: str) -> str:
    """The answer cell ``grade_id`` of a source notebook, as the file holds it."""
    notebook = json.loads((REPO / "solutions" / assignment / name).read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)
    return "".join(cell["source"])


def test_refusal_in_order_of_what_rules_it_out():
    """A grader rules out before the setting, the setting before a missing key, a missing key before no attempt."""
    assert refusal("remaining", TRIED, {"NBGRADER_EXECUTION": "autograde"}, True) == "评分时不提供参考答案。"
    assert refusal("remaining", UNTRIED, {"NBGRADER_EXECUTION": "validate", "CTX_MODEL_ANSWERS": "off"},
                   True) == "评分时不提供参考答案。"
    assert refusal("remaining", TRIED, {"CTX_MODEL_ANSWERS": "OFF"}, True).startswith("这门课关闭了参考答案")
    assert refusal("remaining", TRIED, {"CTX_MODEL_ANSWERS": "0"}, True).startswith("这门课关闭了参考答案")
    assert refusal("remaining", TRIED, {}, False) == "这份安装里没有参考答案。"
    assert refusal("remaining", UNTRIED, {}, True).startswith("先自己试一试")
    assert refusal("remaining", TRIED, {"CTX_MODEL_ANSWERS": "on"}, True) is None


def test_the_key_is_in_step_with_the_solutions():
    """Both editions' answer keys in the package are what the source notebooks give (python -m ctx_course release)."""
    for language in LANGUAGES:
        assert key_path(REPO, language).read_text(encoding="utf-8") == key_text(answer_key(REPO, language)), language


def test_the_key_holds_every_exercise_in_both_editions():
    """Every exercise has a model answer in each edition; the capstone's three share the notebook's my_policy."""
    for language in LANGUAGES:
        key = read_key(key_file(language))
        assert key is not None and set(key) == set(EXERCISES)
        assert key["context_policy"] == key["beat_compact"] == key["beat_clear_notes"]
        assert key["context_policy"].startswith("def my_policy(view):")


def test_the_chinese_answer_is_the_solution_cell_without_its_markers():
    """The Chinese key's remaining is the source notebook's cell, the two solution marker lines taken out."""
    cell = source_cell("02-remaining", "remaining.ipynb", "remaining")
    expected = "\n".join(line for line in cell.splitlines() if "### BEGIN SOLUTION" not in line
                         and "### END SOLUTION" not in line)
    assert read_key(key_file("zh_CN"))["remaining"] == expected


def test_the_english_answer_has_english_comments():
    """The English key has the same code lines as the Chinese one; its docstrings and comments are in English."""
    chinese, english = read_key(key_file("zh_CN")), read_key(key_file("en"))
    assert chinese["remaining"].splitlines()[0] == english["remaining"].splitlines()[0]
    assert '"""Return (room left, whether to compact)."""' in english["remaining"]
    assert "# when compacting, keep only the newest 2 turns in full" in english["context_policy"]
    assert "压缩时只留最新 2 轮原文" in chinese["context_policy"]
    assert "压缩时只留最新 2 轮原文" not in english["context_policy"]


def test_no_model_answer_before_the_check_ran(capsys):
    """Before the exercise's check ran in this kernel, show_solution says to run it, and shows no code."""
    show_solution("remaining")
    out = capsys.readouterr().out
    assert out.startswith("先自己试一试：写好练习 remaining，运行一次它的检查格") and "def remaining" not in out


def test_the_untouched_stub_is_no_attempt(capsys):
    """Running the check on the release's stub (it raises NotImplementedError) does not open the model answer."""
    def remaining(window, read, write, input, max_tokens):
        raise NotImplementedError()

    with pytest.raises(CheckFailed):
        check_exercise("remaining", remaining)
    capsys.readouterr()
    show_solution("remaining")
    assert capsys.readouterr().out.startswith("先自己试一试：写好练习 remaining")


def test_the_model_answer_after_a_failed_check(capsys):
    """After a failed check of remaining, show_solution prints the key's answer under its heading."""
    with pytest.raises(CheckFailed):
        check_exercise("remaining", wrong_remaining)
    capsys.readouterr()
    show_solution("remaining")
    out = capsys.readouterr().out
    assert out.startswith("练习 remaining 的参考答案")
    assert "\n\n" + read_key(key_file("zh_CN"))["remaining"] + "\n\n为什么这样写：" in out
    assert "left = window - (read + write + input) - max_tokens" in out
    assert out.endswith("为什么这样写：余量照实相减，超额时就是负数；和窗口的十分之一比用除法 window / 10，"
                        "窗口不是 10 的倍数时整除会挪动边界。\n")


def test_the_model_answer_in_english(capsys):
    """In the English edition the heading and the answer's docstring read in English."""
    with pytest.raises(CheckFailed):
        check_exercise("remaining", wrong_remaining)
    capsys.readouterr()
    with using("en"):
        show_solution("remaining")
    out = capsys.readouterr().out
    assert out.startswith("Model answer of remaining")
    assert "Return (room left, whether to compact)." in out
    assert "\n\nWhy it is written this way: The margin is a plain subtraction" in out


def test_the_setting_turns_model_answers_off(monkeypatch, capsys):
    """With CTX_MODEL_ANSWERS=off, a check that ran does not open the model answer."""
    monkeypatch.setenv("CTX_MODEL_ANSWERS", "off")
    with pytest.raises(CheckFailed):
        check_exercise("remaining", wrong_remaining)
    capsys.readouterr()
    show_solution("remaining")
    out = capsys.readouterr().out
    assert out.startswith("这门课关闭了参考答案（CTX_MODEL_ANSWERS=off）") and "def remaining" not in out


def test_never_under_a_grader(monkeypatch, capsys):
    """Under nbgrader's autograde, a check that ran does not open the model answer."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    attempts.record("remaining", ())
    show_solution("remaining")
    assert capsys.readouterr().out == "评分时不提供参考答案。\n"


def test_unknown_exercise_is_one_clear_error():
    """An exercise the checks do not know raises ValueError naming the argument and the value."""
    with pytest.raises(ValueError, match=r"exercise must be one of: .* \(got 'remainder'\)"):
        show_solution("remainder")


def test_the_reference_build_leaves_the_answer_key_out(tmp_path):
    """The package graded code runs against has no answer_key folder (the real package has one)."""
    source = key_file("zh_CN").parent.parent
    assert (source / "answer_key" / "zh_CN.json").is_file()
    built = build_reference(source, tmp_path, [])
    assert not (built / "answer_key").exists()
    assert (built / "model_answers.py").is_file()


def test_the_sandbox_hides_the_answer_key(tmp_path):
    """A graded kernel's sandbox binds the course package but hides its answer_key folder."""
    policy = SandboxPolicy.for_course(REPO, tmp_path / "work")
    folder = str(key_file("zh_CN").parent.resolve())
    assert folder in policy.hidden
    argv = policy.command(["python3"], tmp_path / "kernel")
    assert ["--tmpfs", folder] == argv[argv.index(folder) - 1: argv.index(folder) + 1]


def hub_environment(monkeypatch, tmp_path, **settings) -> dict:
    """The environment hub/jupyterhub_config.py gives every learner's server, with ``settings`` in the hub's."""
    from traitlets.config import Config

    monkeypatch.setenv("COURSE_HUB_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("COURSE_LEARNERS", "ada")
    monkeypatch.setenv("COURSE_GRADER", "nobody")  # the config refuses root and a missing account as the grader
    monkeypatch.delenv("COURSE_MODEL_ANSWERS", raising=False)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    config = Config()
    runpy.run_path(str(REPO / "hub" / "jupyterhub_config.py"), init_globals={"get_config": lambda: config})
    return dict(config.Spawner.environment)


def test_the_hub_turns_model_answers_off_by_default(monkeypatch, tmp_path):
    """A hub started without COURSE_MODEL_ANSWERS gives learners CTX_MODEL_ANSWERS=off; with it on, on."""
    assert hub_environment(monkeypatch, tmp_path)["CTX_MODEL_ANSWERS"] == "off"
    assert hub_environment(monkeypatch, tmp_path, COURSE_MODEL_ANSWERS="on")["CTX_MODEL_ANSWERS"] == "on"
    assert hub_environment(monkeypatch, tmp_path, COURSE_MODEL_ANSWERS="yes please")["CTX_MODEL_ANSWERS"] == "off"


def test_every_model_answer_says_why_it_is_written_so():
    """Every exercise has its "why it is written this way", and it reads differently in English."""
    from ctx_reference.model_answers import WHY, _

    assert set(WHY) == set(EXERCISES)
    for exercise, why in WHY.items():
        with using("en"):
            assert _(why) != why, exercise
