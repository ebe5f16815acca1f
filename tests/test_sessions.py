"""Tests for ctx_reference.sessions: the progress file, its budget, restoring it, and the hand-off simulation."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctx_reference.sessions import (
    HANDOFFS,
    KINDS,
    PROGRESS_HEADER,
    Record,
    SessionParams,
    format_record,
    parse_record,
    record_tokens,
    render_progress,
    restore,
    session_records,
    simulate_sessions,
    write_progress,
)

DONE = Record("done", 1, "建好用户表")          # "[done] t1: " 11 ASCII -> 3, + 5 = 8 tokens
FAILED = Record("failed", 2, "缓存加锁：死锁")   # "[failed] t2: " 13 ASCII -> 4, + 7 = 11 tokens
NEXT = Record("next", 3, "给导出接口加分页")      # "[next] t3: " 11 ASCII -> 3, + 8 = 11 tokens

RECORDS = st.lists(
    st.builds(Record, st.sampled_from(KINDS), st.integers(1, 200),
              st.text(alphabet="abc 中文改测试", min_size=1, max_size=12).map(str.strip).filter(bool)),
    max_size=12,
)


def test_record_line_and_its_cost():
    """A record's line is "[kind] t<turn>: text"; its cost is estimate_tokens of the line (3 + 5 = 8)."""
    assert format_record(DONE) == "[done] t1: 建好用户表"
    assert [record_tokens(r) for r in (DONE, FAILED, NEXT)] == [8, 11, 11]


def test_write_progress_keeps_next_then_failed_then_done_under_the_budget():
    """Budget 25: next (11) and failed (11) fit, done (8) does not fit in the 3 left; output in input order."""
    assert write_progress([DONE, FAILED, NEXT], 25) == [FAILED, NEXT]


def test_write_progress_skips_a_record_that_does_not_fit_and_takes_a_smaller_one():
    """Budget 19: next (11) fits, failed (11) does not fit in the 8 left, done (8) does."""
    assert write_progress([DONE, FAILED, NEXT], 19) == [DONE, NEXT]


def test_write_progress_keeps_only_the_newest_next_step():
    """Two next records: only the newest (turn 40) is kept, even with budget to spare."""
    old_next = Record("next", 20, "写接口")
    new_next = Record("next", 40, "写测试")
    assert write_progress([old_next, new_next], 1_000) == [new_next]


def test_write_progress_prefers_newer_records_within_a_kind():
    """Three 8-token done records, budget 16: the two newest (turns 3 and 2) are kept."""
    done = [Record("done", t, "建好用户表") for t in (1, 2, 3)]
    assert write_progress(done, 16) == done[1:]


def test_write_progress_edge_cases():
    """No records gives []; budget 0 keeps nothing; a budget for everything keeps everything."""
    assert write_progress([], 100) == []
    assert write_progress([DONE, FAILED, NEXT], 0) == []
    assert write_progress([DONE, FAILED, NEXT], 30) == [DONE, FAILED, NEXT]


@given(RECORDS, st.integers(0, 300))
def test_write_progress_never_exceeds_the_budget_and_never_mutates(records, budget):
    """The kept lines cost at most the budget, are a subsequence of the input, and the input is unchanged."""
    before = list(records)
    kept = write_progress(records, budget)
    assert sum(record_tokens(r) for r in kept) <= budget
    assert records == before
    it = iter(records)
    assert all(any(r is x for x in it) for r in kept)


@given(RECORDS)
def test_restore_reads_back_what_render_progress_wrote(records):
    """restore(render_progress(rs)) holds the same records as rs (the file groups them by kind)."""
    back = restore(render_progress(records))
    def key(r):
        return (r.kind, r.turn, r.text)

    assert sorted(back, key=key) == sorted(records, key=key)


def test_render_progress_groups_by_kind_in_file_order():
    """The file is the header, then next, failed, decision, done lines, each group oldest first."""
    text = render_progress([DONE, NEXT, FAILED])
    assert text.splitlines() == [PROGRESS_HEADER, "[next] t3: 给导出接口加分页", "[failed] t2: 缓存加锁：死锁",
                                 "[done] t1: 建好用户表"]


def test_restore_skips_blank_and_comment_lines():
    """Blank lines and # lines are skipped; record lines come back in file order."""
    assert restore("# progress\n\n[next] t3: 给导出接口加分页\n# note\n[done] t1: 建好用户表\n") == [NEXT, DONE]


def test_restore_names_a_malformed_line():
    """A line that is not a record raises ValueError naming its line number."""
    with pytest.raises(ValueError, match="line 2"):
        restore("# progress\nTODO: 写测试")
    with pytest.raises(ValueError, match="not a progress record"):
        parse_record("[todo] t1: x")


def test_record_rejects_bad_fields():
    """Unknown kind, turn 0 and a two-line text raise ValueError naming the field."""
    for kwargs, name in ((dict(kind="todo", turn=1, text="x"), "kind"), (dict(kind="done", turn=0, text="x"), "turn"),
                         (dict(kind="done", turn=1, text="a\nb"), "text"),
                         (dict(kind="done", turn=1, text=" a"), "text")):
        with pytest.raises(ValueError, match=name):
            Record(**kwargs)


def test_workload_is_seeded_and_every_session_ends_with_a_next_step():
    """Same seed, same records; another seed, other records; each session's last record is its next step."""
    assert session_records(SessionParams(seed=1)) == session_records(SessionParams(seed=1))
    assert session_records(SessionParams(seed=1)) != session_records(SessionParams(seed=2))
    sessions = session_records()
    assert [rs[-1].kind for rs in sessions] == ["next"] * 4
    assert [rs[-1].turn for rs in sessions] == [20, 40, 60, 80]


def test_transcript_handoff_crowds_then_overflows():
    """Transcript: session 2 starts at 8,000 + 72,000 = 80,000 (crowded), session 3 at 152,000 > 100,000 (overflow)."""
    starts = simulate_sessions("transcript").starts
    assert [(s.start_tokens, s.status) for s in starts] == [(80_000, "crowded"), (152_000, "overflow"),
                                                            (224_000, "overflow")]
    assert all(sum(s.known.values()) == 0 for s in starts[1:])


def test_no_handoff_knows_only_the_commit_log():
    """No hand-off: every session starts at the 8,000 base and knows only done steps, at most the 5 in the log."""
    for s in simulate_sessions("none").starts:
        assert s.start_tokens == 8_000 and s.status == "ok"
        assert s.known["next"] == s.known["failed"] == s.known["decision"] == 0
        assert s.known["done"] == min(5, s.total["done"])
        assert s.retried == s.total["failed"]


def test_progress_handoff_stays_small_and_keeps_next_and_failed():
    """Budget 400: every start is 8,000 plus at most 400 + the header; the next step and every failure are known."""
    result = simulate_sessions("progress")
    for s in result.starts:
        assert 8_000 < s.start_tokens <= 8_000 + 400 + 3
        assert s.status == "ok"
        assert s.known["next"] == 1 and s.retried == 0
    assert len(result.progress_files) == 3


def test_a_bigger_budget_never_knows_less():
    """Doubling the budget from 400 to 800 never lowers what any session knows, kind by kind."""
    small = simulate_sessions("progress", SessionParams(handoff_budget=400)).starts
    big = simulate_sessions("progress", SessionParams(handoff_budget=800)).starts
    for a, b in zip(small, big):
        assert all(b.known[k] >= a.known[k] for k in KINDS)


def test_learner_functions_plug_in():
    """simulate_sessions calls the given write_progress and restore (a hand-off that keeps nothing knows
    no next step)."""
    result = simulate_sessions("progress", write_progress=lambda records, budget: [], restore=lambda text: [])
    assert all(s.known["next"] == 0 for s in result.starts)


@pytest.mark.parametrize("call, name", [
    (lambda: simulate_sessions("dump"), "handoff"),
    (lambda: write_progress([DONE], -1), "budget"),
    (lambda: write_progress("abc", 10), "records"),
    (lambda: SessionParams(sessions=1), "sessions"),
    (lambda: SessionParams(p_done=0.9, p_failed=0.2), "p_done"),
    (lambda: restore(None), "progress_text"),
])
def test_bad_arguments_raise_value_error_naming_them(call, name):
    """Bad input raises ValueError whose message names the argument."""
    with pytest.raises(ValueError, match=name):
        call()


def test_handoffs_are_the_three_documented():
    """The simulation knows exactly none, progress and transcript."""
    assert HANDOFFS == ("none", "progress", "transcript")
