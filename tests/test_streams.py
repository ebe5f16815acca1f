"""Consecutive stream outputs of one name become one, in order, whatever the kernel's flushes were."""
from __future__ import annotations

import copy

import nbformat
from hypothesis import given, settings
from hypothesis import strategies as st
from nbclient import NotebookClient
from nbgrader.preprocessors import Execute

from ctx_course.grading.autograde import grading_config
from ctx_course.grading.steps.preprocessors import AUTOGRADE_PREPROCESSORS, FEEDBACK_PREPROCESSORS
from ctx_course.grading.steps.streams import MergeStreams, merge_streams

from conftest import KERNEL_MANAGER, REPO


def stream(name, text):
    return nbformat.v4.new_output("stream", name=name, text=text)


def shown(outputs):
    """What a reader sees of a list of outputs: (kind, name, text) of each."""
    return [(o["output_type"], o.get("name"), "".join(o.get("text", "")) if "text" in o else o.get("data"))
            for o in outputs]


def test_a_print_flushed_in_two_is_one_output():
    """print("✓ done") sent as "✓ done" then "\\n" is the one output "✓ done\\n" a single flush gives."""
    assert shown(merge_streams([stream("stdout", "✓ done"), stream("stdout", "\n")])) == [
        ("stream", "stdout", "✓ done\n")]


def test_nothing_is_reordered():
    """stdout, stderr, stdout stay three outputs in that order; a display between two stdouts keeps them apart."""
    figure = nbformat.v4.new_output("display_data", data={"text/plain": "<Figure>"})
    outputs = [stream("stdout", "a\n"), stream("stderr", "w\n"), stream("stdout", "b\n"), figure,
               stream("stdout", "c"), stream("stdout", "d\n")]
    assert shown(merge_streams(outputs)) == [
        ("stream", "stdout", "a\n"), ("stream", "stderr", "w\n"), ("stream", "stdout", "b\n"),
        ("display_data", None, {"text/plain": "<Figure>"}), ("stream", "stdout", "cd\n")]


def test_text_stored_as_a_list_of_lines_is_joined():
    """A notebook file may store a stream's text as a list of lines: ["a\\n", "b"] + "c\\n" is "a\\nbc\\n"."""
    merged = merge_streams([{"output_type": "stream", "name": "stdout", "text": ["a\n", "b"]},
                            {"output_type": "stream", "name": "stdout", "text": "c\n"}])
    assert merged == [{"output_type": "stream", "name": "stdout", "text": "a\nbc\n"}]


def test_edge_cases():
    """No outputs give none; one output is returned as it is (the same object)."""
    assert merge_streams([]) == []
    alone = stream("stderr", "x")
    assert merge_streams([alone])[0] is alone


def test_the_outputs_given_are_not_changed():
    """Merging copies the first output of a run: the caller's outputs keep their text."""
    outputs = [stream("stdout", "a"), stream("stdout", "b")]
    before = copy.deepcopy(outputs)
    merge_streams(outputs)
    assert outputs == before


NAMES = st.sampled_from(["stdout", "stderr"])
TEXTS = st.text(alphabet="ab\n✓", max_size=6)


@settings(derandomize=True, database=None, max_examples=200)
@given(st.lists(st.tuples(NAMES, TEXTS), max_size=8), st.data())
def test_any_split_of_what_was_printed_merges_to_the_same_outputs(printed, data):
    """Each write split anywhere into several messages merges to what one message per write merges to,
    no two neighbours are streams of one name, and merging again changes nothing."""
    whole = [stream(name, text) for name, text in printed]
    split = []
    for name, text in printed:
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=3)))
        bounds = [0, *cuts, len(text)]
        split += [stream(name, text[i:j]) for i, j in zip(bounds, bounds[1:])]
    merged = merge_streams(split)
    assert shown(merged) == shown(merge_streams(whole))
    assert all(a["name"] != b["name"] for a, b in zip(merged, merged[1:]))
    assert shown(merge_streams(merged)) == shown(merged)
    assert "".join(o["text"] for o in merged) == "".join(text for _, text in printed)


def test_a_real_kernel_flushing_twice_gives_one_output_after_the_step():
    """A cell that flushes stdout in the middle of a line makes two outputs in nbclient; MergeStreams, one."""
    cell = nbformat.v4.new_code_cell('import sys\nprint("✓ 全部", end="")\nsys.stdout.flush()\nprint(" 通过")')
    nb = nbformat.v4.new_notebook(cells=[cell])
    NotebookClient(nb, timeout=60, kernel_name="python3", kernel_manager_class=KERNEL_MANAGER,
                   extra_arguments=["--HistoryManager.hist_file=:memory:"], record_timing=False).execute()
    assert len(nb.cells[0].outputs) == 2, nb.cells[0].outputs  # the cause: one output per message
    nb, _ = MergeStreams().preprocess(nb, {})
    assert shown(nb.cells[0].outputs) == [("stream", "stdout", "✓ 全部 通过\n")]
    assert "execution" not in nb.cells[0].metadata


def test_the_step_runs_after_the_kernel_and_first_in_the_feedback(tmp_path):
    """In the autograde steps MergeStreams comes right after Execute (before any cap counts outputs),
    in the feedback steps first (a notebook autograded before it existed); no cell records its timing."""
    assert AUTOGRADE_PREPROCESSORS[AUTOGRADE_PREPROCESSORS.index(Execute) + 1] is MergeStreams
    assert FEEDBACK_PREPROCESSORS[0] is MergeStreams
    config = grading_config(REPO, work=tmp_path)
    assert config.Execute.record_timing is False
