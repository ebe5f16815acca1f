"""Sample answers of the free-response questions (ctx_reference/sample_answers.py) and their rubric in the
Formgrader (ctx_course/grading/steps/rubric.py)."""
from __future__ import annotations

import json
import re
import shutil

import nbformat
import pytest
from nbconvert.exporters import HTMLExporter
from nbgrader.server_extensions.formgrader import handlers
from traitlets.config.loader import PyFileConfigLoader

from ctx_course.editions.answer_key import question_key
from ctx_course.editions.translate import TEXT_STUB, has_chinese
from ctx_course.grading.steps.feedback_page import FeedbackExporter
from ctx_reference.i18n import LANGUAGES, using
from ctx_reference.model_answers import key_file, read_key
from ctx_reference.sample_answers import ANSWER_STUB, running_notebook, sample_answer

from conftest import REPO

QUESTION = "q_why_early"  # 02-remaining, question 2 (1 point)


@pytest.fixture(autouse=True)
def self_study(monkeypatch):
    """Each test runs as a self-study learner's kernel: no grader, model answers on, no notebook named."""
    for name in ("NBGRADER_EXECUTION", "CTX_MODEL_ANSWERS", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)


def notebook_questions() -> dict[str, list[str]]:
    """Every source notebook's manually graded markdown answer cells, read from the notebooks."""
    found = {}
    for path in sorted((REPO / "solutions").glob("*/*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        found[path.parent.name] = [cell["metadata"]["nbgrader"]["grade_id"] for cell in notebook["cells"]
                                   if cell["cell_type"] == "markdown"
                                   and cell["metadata"].get("nbgrader", {}).get("solution")
                                   and cell["metadata"]["nbgrader"].get("grade")]
    return found


def bullets(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]


def workspace_copy(tmp_path, edition: str = "zh_CN"):
    """A learner's copy of the released 02-remaining in ``edition`` (lessons/ or lessons-en/)."""
    release = "lessons" if edition == "zh_CN" else "lessons-en"
    target = tmp_path / "remaining.ipynb"
    shutil.copyfile(REPO / release / "02-remaining" / "remaining.ipynb", target)
    return target


def answer(path, question: str, text: str) -> None:
    """Write ``text`` into the answer cell ``question`` of the notebook at ``path`` and save it."""
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == question)
    cell.source = text
    nbformat.write(notebook, path)


def test_every_question_has_a_sample_answer_in_both_editions():
    """The 32 free-response questions the notebooks hold are the questions of both editions' keys."""
    derived = {q for questions in notebook_questions().values() for q in questions}
    assert len(derived) == 32
    for language in LANGUAGES:
        assert set(read_key(key_file(language, part="questions"))) == derived, language


def test_each_sample_answer_starts_with_its_points():
    """Each sample answer lists two to four points, then a model answer; the English has as many points."""
    chinese, english = read_key(key_file("zh_CN", part="questions")), read_key(key_file("en", part="questions"))
    for question, text in chinese.items():
        assert text.startswith("**要点**\n\n- ") and "\n\n**参考回答**\n\n" in text, question
        assert english[question].startswith("**Points**\n\n- ") and "\n\n**A model answer**\n\n" in english[question]
        assert 2 <= len(bullets(text)) <= 4 and len(bullets(english[question])) == len(bullets(text)), question


def test_english_points_are_english():
    """The English points hold no Chinese but the words a question quotes as data (in “…”)."""
    english = read_key(key_file("en", part="questions"))
    for question, text in english.items():
        for point in bullets(text):
            assert not has_chinese(re.sub(r"“[^”]*”", "", point)), (question, point)


def test_the_question_key_is_in_step_with_the_solutions():
    """Both editions' question keys are what the source notebooks and catalogues give (python -m ctx_course release)."""
    from ctx_course.editions.answer_key import key_path, key_text

    for language in LANGUAGES:
        assert key_path(REPO, language, "questions").read_text(encoding="utf-8") == key_text(
            question_key(REPO, language)), language


def test_the_release_stub_is_nbgraders():
    """The text a learner's untouched answer holds is the course's nbgrader text stub."""
    assert ANSWER_STUB == TEXT_STUB


def test_no_sample_answer_before_the_learners_own(tmp_path, capsys):
    """The released notebook, untouched or with a blank answer, gets one line asking for the learner's answer."""
    path = workspace_copy(tmp_path)
    sample_answer(QUESTION, notebook=path)
    assert capsys.readouterr().out == "先写下你自己的回答，保存笔记本（Ctrl+S），再来看参考回答。\n"
    answer(path, QUESTION, "   \n")
    sample_answer(QUESTION, notebook=path)
    assert capsys.readouterr().out.startswith("先写下你自己的回答")


def test_the_sample_answer_after_the_learners_own(tmp_path, capsys):
    """Once the answer cell holds the learner's words (saved), the points and the model answer are printed."""
    path = workspace_copy(tmp_path)
    answer(path, QUESTION, "压缩也要占窗口，所以要早一点做。")
    sample_answer(QUESTION, notebook=path)
    out = capsys.readouterr().out
    assert out.startswith("问题 q_why_early：好的回答应该讲到这些")
    assert "- 压缩本身是一次调用：旧内容、摘要提示和摘要输出都要占窗口；" in out
    assert out.endswith(read_key(key_file("zh_CN", part="questions"))[QUESTION] + "\n")


def test_the_english_learner_gets_english(tmp_path, capsys):
    """The English release's untouched stub is not an answer; once answered, the points read in English."""
    path = workspace_copy(tmp_path, "en")
    with using("en"):
        sample_answer(QUESTION, notebook=path)
        assert capsys.readouterr().out.startswith("Write your own answer first")
        answer(path, QUESTION, "Compacting needs room itself.")
        sample_answer(QUESTION, notebook=path)
    out = capsys.readouterr().out
    assert out.startswith("Question q_why_early: a good answer covers these points")
    assert "- Compacting is itself a call" in out


def test_the_kernel_finds_its_notebook(tmp_path, monkeypatch, capsys):
    """Without a path, the notebook Jupyter Server names (JPY_SESSION_NAME) is read; none found is one line."""
    path = workspace_copy(tmp_path)
    answer(path, QUESTION, "压缩也要占窗口。")
    assert running_notebook({"JPY_SESSION_NAME": str(path)}, {}, tmp_path / "elsewhere") == path
    assert running_notebook({}, {}, tmp_path) == path  # the only notebook of the working folder
    monkeypatch.chdir(tmp_path)
    sample_answer(QUESTION)
    assert capsys.readouterr().out.startswith("问题 q_why_early")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    sample_answer(QUESTION)
    assert capsys.readouterr().out.startswith("找不到你的笔记本")


def test_a_question_of_another_notebook(tmp_path, capsys):
    """Asking in notebook 02 for a question of notebook 01 says so, and shows nothing."""
    path = workspace_copy(tmp_path)
    sample_answer("q_window_contents", notebook=path)
    said = capsys.readouterr().out
    assert said == "笔记本 remaining.ipynb 里没有问题 q_window_contents：请在出这道题的笔记本里调用。\n"


def test_closed_by_the_setting_and_under_a_grader(tmp_path, monkeypatch, capsys):
    """CTX_MODEL_ANSWERS=off, or a grader, shows no sample answer even to a learner who answered."""
    path = workspace_copy(tmp_path)
    answer(path, QUESTION, "压缩也要占窗口。")
    monkeypatch.setenv("CTX_MODEL_ANSWERS", "off")
    sample_answer(QUESTION, notebook=path)
    assert capsys.readouterr().out.startswith("这门课关闭了参考答案")
    monkeypatch.delenv("CTX_MODEL_ANSWERS")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    sample_answer(QUESTION, notebook=path)
    assert capsys.readouterr().out == "评分时不提供参考答案。\n"


def test_unknown_question_is_one_clear_error(tmp_path):
    """A question id no notebook has raises ValueError naming the argument and the value."""
    with pytest.raises(ValueError, match=r"question must be one of: .* \(got 'q_nothing'\)"):
        sample_answer("q_nothing", notebook=workspace_copy(tmp_path))


def course_config():
    """The course's nbgrader_config.py as the Formgrader loads it, with the Formgrader's own exporter settings."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    config.HTMLExporter.template_name = "formgrade"  # what nbgrader's formgrader.py sets
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    return config


def formgrader_resources() -> dict:
    """The resources nbgrader's SubmissionHandler renders one submission with."""
    return {"assignment_id": "02-remaining", "notebook_id": "remaining", "submission_id": "abc123", "index": 0,
            "total": 1, "base_url": "", "student": "ada", "last_name": "", "first_name": "",
            "notebook_path": "/autograded/ada/02-remaining/remaining.ipynb"}


def answered_release(tmp_path, edition: str = "zh_CN"):
    path = workspace_copy(tmp_path, edition)
    answer(path, QUESTION, "LEARNER-ANSWER: 压缩也要占窗口。")
    return nbformat.read(path, as_version=4)


def test_the_formgrader_shows_the_rubric_under_the_answer(tmp_path):
    """The Formgrader's exporter, configured by nbgrader_config.py, puts the rubric after the learner's answer."""
    html, _ = HTMLExporter(config=course_config()).from_notebook_node(answered_release(tmp_path),
                                                                      resources=formgrader_resources())
    learner = html.index("LEARNER-ANSWER")
    rubric = html.index("评分参考", learner)
    assert learner < rubric < html.index("压缩本身是一次调用")
    assert html.count("评分参考") == 2  # the two questions of notebook 02


def test_the_formgrader_rubric_of_an_english_submission_is_english(tmp_path):
    """An English submission's rubric is the English sample answer."""
    html, _ = HTMLExporter(config=course_config()).from_notebook_node(answered_release(tmp_path, "en"),
                                                                      resources=formgrader_resources())
    assert "Rubric" in html and "Compacting is itself a call" in html and "评分参考" not in html


def test_feedback_never_shows_the_rubric(tmp_path):
    """The feedback exporter, with the same configuration, shows the learner's answer and no rubric."""
    html, _ = FeedbackExporter(config=PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
                               ).from_notebook_node(answered_release(tmp_path), resources={})
    assert "LEARNER-ANSWER" in html
    assert "评分参考" not in html and "压缩本身是一次调用" not in html
