"""A stuck learner in a real browser: hints, the model answer and a sample answer in notebook 02.

The learner's lab is started as `make lab` starts it (``python -m ctx_course lab``) on a temporary
copy of the course's Chinese release. In headless Chromium the learner types a ``remaining`` that
clips a negative margin to 0 and runs every cell: the check cell fails and ends with the line that
offers a hint. In the notebook's own kernel, as a cell the learner adds would, ``hint("remaining")``
then gives the hint for the rule the check saw broken (not the first one), ``show_solution`` the
notebook's model answer, and ``sample_answer`` first asks for the learner's own answer, then, once
it is typed into the question's cell and the notebook saved, finds the notebook through Jupyter
Server (``JPY_SESSION_NAME``) and prints the question's points.
"""
from __future__ import annotations

import json

import pytest
from chromium import open_document

from browser.conftest import LAB_TEST_OPTIONS, VIEWPORT, _lab_environment
from browser.test_english_edition import ANSWER_AND_RUN_JS, RUN_TIMEOUT_MS, WAIT_JS

from conftest import REPO
from labserver import copy_course, start_learner_lab

NAME = "02-remaining/remaining.ipynb"
QUESTION = "q_why_early"
CLIPPED = '''def remaining(window, read, write, input, max_tokens):
    left = window - (read + write + input) - max_tokens
    return max(left, 0), left < window / 10
'''

# Waits until the open notebook is loaded and its kernel idle.
READY_JS = """
async ([timeout]) => {
""" + WAIT_JS + """  const panel = app.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  await until(() => panel.sessionContext.session?.kernel?.status === 'idle', 'the kernel to be idle');
}
"""

# Runs ``code`` in the open notebook's kernel and returns what it printed (as a cell the learner adds would).
KERNEL_JS = """
async ([code, timeout]) => {
""" + WAIT_JS + """  const panel = app.shell.currentWidget;
  await until(() => panel.sessionContext.session?.kernel?.status === 'idle', 'the kernel to be idle');
  const future = panel.sessionContext.session.kernel.requestExecute({ code, store_history: false });
  let printed = '';
  future.onIOPub = (msg) => {
    if (msg.header.msg_type === 'stream') printed += msg.content.text;
    if (msg.header.msg_type === 'error') printed += msg.content.ename + ': ' + msg.content.evalue;
  };
  await future.done;
  return printed;
}
"""

# Types ``text`` into the cell ``id`` and saves the notebook, as the learner does with Ctrl+S.
ANSWER_AND_SAVE_JS = """
async ([id, text, timeout]) => {
""" + WAIT_JS + """  const panel = app.shell.currentWidget;
  const cell = [...panel.content.widgets].find((c) => c.model.id === id);
  if (!cell) throw new Error(`no cell ${id}`);
  cell.model.sharedModel.setSource(text);
  await app.commands.execute('docmanager:save');
  await until(() => !panel.context.model.dirty, 'the notebook to be saved');
}
"""


def _cell_id(grade_id: str) -> str:
    cells = json.loads((REPO / "lessons" / NAME).read_text(encoding="utf-8"))["cells"]
    return next(c["id"] for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


@pytest.fixture(scope="module")
def help_lab(tmp_path_factory):
    """The learner's lab (`make lab`) on its own copy of lessons/."""
    root = copy_course(tmp_path_factory.mktemp("course-help"), ("lessons",))
    folder = tmp_path_factory.mktemp("lab-help")
    server = start_learner_lab(root, folder / "lab.log", LAB_TEST_OPTIONS, _lab_environment(folder))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def stuck(browser, help_lab) -> dict:
    """The learner's path, in order: a wrong answer run, a hint, the model answer, the sample answer before and
    after their own answer is written and saved."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(90_000)
    open_document(page, help_lab.url(f"lab/tree/{NAME}"), NAME)
    page.evaluate(READY_JS, [RUN_TIMEOUT_MS])
    run = page.evaluate(ANSWER_AND_RUN_JS, [{_cell_id("remaining"): CLIPPED}, RUN_TIMEOUT_MS])

    def kernel(code: str) -> str:
        return page.evaluate(KERNEL_JS, [code, RUN_TIMEOUT_MS])

    path = {
        "check": next(cell["text"] for cell in run if cell["id"] == _cell_id("check_remaining")),
        "hint": kernel('from ctx_reference.hints import hint\nhint("remaining")'),
        "solution": kernel('from ctx_reference.model_answers import show_solution\nshow_solution("remaining")'),
        "sample_before": kernel(f'from ctx_reference.sample_answers import sample_answer\nsample_answer("{QUESTION}")'),
    }
    page.evaluate(ANSWER_AND_SAVE_JS, [_cell_id(QUESTION), "压缩本身也要占窗口，所以要早一点动手。", RUN_TIMEOUT_MS])
    path["sample_after"] = kernel(f'sample_answer("{QUESTION}")')
    page.close()
    return path


def test_a_failed_check_ends_with_how_to_ask_for_a_hint(stuck):
    """The clipped `remaining` fails its check, whose last line offers a hint."""
    lines = stuck["check"].strip().splitlines()
    assert any(line.startswith("× 超额时余量是负数") for line in lines), stuck["check"]
    assert lines[-1] == '卡住了？运行 from ctx_reference.hints import hint; hint("remaining") 看一条提示。'


def test_the_first_hint_is_the_broken_rules(stuck):
    """The first hint is the one about a negative margin, the rule the check saw broken."""
    assert stuck["hint"] == "提示 3/3（remaining）：超额时余量就是负数，照实返回，不要截成 0。\n"


def test_the_model_answer_after_the_check(stuck):
    """After the check ran, show_solution prints the notebook's own remaining and why it is written so."""
    assert stuck["solution"].startswith("练习 remaining 的参考答案")
    assert "    left = window - (read + write + input) - max_tokens\n" in stuck["solution"]
    assert "为什么这样写：" in stuck["solution"]


def test_the_sample_answer_after_the_learners_own(stuck):
    """Before the learner's answer, one line asks for it; once it is saved, the question's points are printed."""
    assert stuck["sample_before"] == "先写下你自己的回答，保存笔记本（Ctrl+S），再来看参考回答。\n"
    assert stuck["sample_after"].startswith("问题 q_why_early：好的回答应该讲到这些")
    assert "- 压缩本身是一次调用：旧内容、摘要提示和摘要输出都要占窗口；" in stuck["sample_after"]
