"""Tests for ctx_reference.widgets: static output outside Jupyter, sliders that redraw inside."""

import pytest

from ctx_reference.widgets import explore_recall, explore_strategies, live_frontend, recall_view, strategy_view


@pytest.mark.parametrize("env, expected", [
    ({}, False),                                                      # nbclient, nbval, a script
    ({"JPY_SESSION_NAME": "06.ipynb"}, True),                         # a kernel of Jupyter Server
    ({"JPY_SESSION_NAME": "06.ipynb", "NBGRADER_EXECUTION": "autograde"}, False),
    ({"CTX_WIDGETS": "1"}, True),
    ({"JPY_SESSION_NAME": "06.ipynb", "CTX_WIDGETS": "0"}, False),
])
def test_live_frontend(monkeypatch, env, expected):
    """Sliders only where Jupyter Server started the kernel and nbgrader is not grading; CTX_WIDGETS overrides."""
    for name in ("JPY_SESSION_NAME", "NBGRADER_EXECUTION", "CTX_WIDGETS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert live_frontend() is expected


def test_recall_view_middle_and_last():
    """200 documents: the answer in document 101 gives 0.183, in document 200 gives 0.260 (docs/models.md §4)."""
    assert recall_view(200, 101, 0.3)[0].splitlines()[-1].split()[-1] == "0.183"
    assert recall_view(200, 200, 0.3)[0].splitlines()[-1].split()[-1] == "0.260"


def test_recall_view_rejects_a_position_past_the_last_document():
    """position 11 of 10 documents is a ValueError naming position."""
    with pytest.raises(ValueError, match=r"position must be <= documents \(10\) \(got 11\)"):
        recall_view(10, 11, 0.3)


def test_strategy_view_keep_15():
    """keep 15 shows clear's 89,450 peak and 45 rewrites (docs/models.md §6)."""
    text, fig = strategy_view(15, 60_000, 0, None)
    clear_row = next(line for line in text.splitlines() if line.startswith("clear "))
    assert "89,450" in clear_row and " 45 " in clear_row
    assert fig.axes


def test_static_output_without_frontend(capsys, monkeypatch):
    """Outside Jupyter the explorers print the table once and create no widget."""
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("CTX_WIDGETS", raising=False)
    assert explore_strategies() is None
    assert "59,550" in capsys.readouterr().out


def test_sliders_redraw(capsys):
    """With live=True: four parameter sliders; moving keep to 15 redraws clear's 89,450 peak."""
    box = explore_strategies(live=True)
    keep, threshold, at_least = box.children[0].children
    unlimited, capacity = box.children[1].children
    assert (keep.value, threshold.value, at_least.value, unlimited.value) == (5, 60_000, 0, True)
    capsys.readouterr()
    keep.value = 15
    assert "89,450" in capsys.readouterr().out


@pytest.mark.parametrize("language", ["zh_CN", "en"])
def test_every_description_is_as_wide_as_its_text(language):
    """No slider or checkbox label is cut off: every description takes the width of its text, in either language."""
    from ctx_reference.i18n import using

    with using(language):
        boxes = [explore_recall(live=True), explore_strategies(live=True)]
    controls = [c for box in boxes for row in box.children[:-1] for c in row.children]
    assert len(controls) == 8
    assert all(c.style.description_width == "initial" and c.description for c in controls)


def test_recall_sliders_follow_document_count():
    """The position slider's maximum follows the number of documents."""
    box = explore_recall(live=True)
    docs, pos, mid = box.children[0].children
    docs.value = 50
    assert pos.max == 50 and pos.value <= 50


def test_no_widget_state_is_stored():
    """No source or released notebook stores widget state or a widget view (outputs stay static)."""
    import json

    from conftest import LESSONS, SOLUTIONS, notebooks

    for path in [*notebooks(SOLUTIONS), *notebooks(LESSONS)]:
        text = path.read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget" not in text, path.name
        assert "widgets" not in json.loads(text)["metadata"], path.name
