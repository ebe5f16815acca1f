"""The mutation campaign (ctx_course/mutation): its harness, its reviewed survivors and its report.

The full campaign (`make mutation`, every exercise) takes minutes, too long for every run of the
suite. Here the suite runs it live on a fixed small subset of exercises (SUBSET) and holds the
result to the last full run's data, and holds that data to the reviewed list and to
docs/mutation.md. So a change of the checks or of a reference that changes what a mutant does
fails here until `make mutation` is run again and its survivors are reviewed.
"""
from __future__ import annotations

import subprocess
import textwrap
import types

import pytest

from ctx_course.mutation.campaign import ExerciseRun, Mutant, judge_command, judge_server, run_campaign
from ctx_course.mutation.compare import first_difference, mutant_source
from ctx_course.mutation.judge import KILLED, SURVIVED, judge
from ctx_course.mutation.report import REPORT, load_run, mutation_markdown
from ctx_course.mutation.survivors import KINDS, load_equivalents, review, without_stale
from ctx_course.mutation.targets import ADAPT, learner_function, private_helpers, targets
from ctx_reference.assemble import Item
from ctx_reference.checks import EXERCISES, REFERENCES, CheckFailed, check_exercise
from ctx_reference.checks.bank import cases as bank_cases

# Exercises whose campaign runs live on every run of the suite: small sources, quick checks.
SUBSET = ("check", "estimate_tokens")

REMAINING_RULE = "compact = left * COMPACT_FRACTION_DENOMINATOR < window"


def test_every_exercise_has_a_target():
    """Every exercise of the checks is mutated: its reference objects, or the capstone's model answer."""
    assert list(targets()) == list(EXERCISES)
    for name, target in targets().items():
        defined = {n.split(".")[0] for n in target.names + target.constants}
        assert target.spans and {m.split(".")[0] for m in target.mutated} <= defined
        if target.module is not None:
            assert {obj.__qualname__ for obj in REFERENCES[name]} <= set(target.names)


def test_only_what_the_exercise_reaches_is_mutated():
    """recall's references include stuffed_recall (a learner must not call it), which recall never runs:
    its lines are not mutated; the model's methods that recall runs, and its field defaults, are."""
    target = targets()["recall"]
    assert "stuffed_recall" in target.names and "stuffed_recall" not in target.mutated
    assert {"RecallModel", "RecallModel.recall", "RecallModel.base", "RecallModel.position_factor"} <= set(
        target.mutated)


@pytest.mark.parametrize("name", list(EXERCISES))
def test_an_unmutated_copy_passes_as_a_learners_function(name):
    """The harness hands the check a copy of the reference, not the reference: the check judges it
    by its behaviour (a function that is the reference would be refused), and it passes."""
    target = targets()[name]
    func = learner_function(name, target.source, target.filename)
    assert not any(func is obj for obj in REFERENCES[name])
    check_exercise(name, func, quiet=True)


def _edited(name: str, old: str, new: str) -> str:
    source = targets()[name].source
    assert source.count(old) == 1
    return source.replace(old, new)


def test_a_mutated_copy_is_killed_by_the_case_that_tells_it_apart(tmp_path):
    """`<` turned into `<=` in remaining's compact rule fails its visible check, and the judge says so."""
    path = tmp_path / "window.py"
    path.write_text(_edited("remaining", REMAINING_RULE, REMAINING_RULE.replace("<", "<=")), encoding="utf-8")
    status, why = judge("remaining", path)
    assert status == KILLED and "remaining" in why
    path.write_text(targets()["remaining"].source, encoding="utf-8")
    assert judge("remaining", path) == (SURVIVED, "survived: every visible case passed")


def test_a_mutant_of_a_helper_is_judged_through_the_exercise():
    """trim_lines's private helper `_trim` is mutated too: a wrong count in its marker fails trim_lines's check."""
    assert "_trim" in targets()["trim_lines"].names
    marker = "copied[:head] + [omission_marker(omitted, path)]"
    func = learner_function("trim_lines", _edited("trim_lines", marker, marker.replace("omitted", "omitted + 1")))
    with pytest.raises(CheckFailed):
        check_exercise("trim_lines", func, quiet=True)


def test_a_copy_that_reaches_the_real_helper_is_refused():
    """Were a helper of the exercise left real, the copy would call the reference: the check refuses it."""
    func = learner_function("trim_lines", _edited("trim_lines", "def _trim(", "def _trim_renamed("))
    with pytest.raises(CheckFailed, match="_trim"):
        check_exercise("trim_lines", func, quiet=True)


def test_private_helpers_are_those_the_exercise_alone_uses():
    module = types.ModuleType("helpers_example")
    exec(textwrap.dedent("""
        def _only(x): return _deeper(x)
        def _deeper(x): return x
        def _shared(x): return x
        def exercise(x): return _only(x) + _shared(x)
        def other(x): return _shared(x)
    """), module.__dict__)
    for func in vars(module).values():
        if isinstance(func, types.FunctionType):
            func.__module__ = module.__name__
    assert private_helpers(module, ("exercise",)) == ("_only", "_deeper")


def test_adapters_call_the_reference_through_the_learners_signature():
    assert set(ADAPT) <= set(EXERCISES)
    check = learner_function("check", targets()["check"].source)
    assert check(10, 10, 1).name == "MAY_TRUNCATE"


@pytest.mark.heavy
def test_a_mutant_that_hangs_is_killed_by_the_timeout(tmp_path):
    """A mutant looping forever is ended by the judge's alarm and counted as killed by the timeout."""
    path = tmp_path / "window.py"
    path.write_text(_edited("remaining", REMAINING_RULE, "while True:\n        pass\n    " + REMAINING_RULE),
                    encoding="utf-8")
    with judge_server(timeout=1.0) as server:
        done = subprocess.run(judge_command("remaining", path, server), capture_output=True, text=True, timeout=60)
    assert done.returncode == KILLED
    assert "timeout" in done.stdout


# ---- the reviewed survivors and the last full run --------------------------------------------


def test_reviewed_entries_name_a_line_of_their_exercise():
    """Each entry names a function the campaign mutates and a line that is in it, with a reason."""
    for entry in load_equivalents():
        target = targets()[entry.exercise]
        assert entry.function in target.mutated, entry
        assert entry.kind in KINDS, entry
        assert all(line in target.source for line in entry.line.split("\n")), entry


def test_the_last_run_covers_every_exercise():
    data = load_run()
    assert list(data["exercises"]) == list(EXERCISES)
    for run in data["exercises"].values():
        assert run.mutants == run.killed + len(run.survivors) and run.mutants > 0


def test_every_survivor_of_the_last_run_is_reviewed_and_no_entry_is_stale():
    """A survivor not in the reviewed list fails; so does an entry whose mutant no longer survives."""
    finding = review(load_run()["exercises"].values(), load_equivalents())
    assert [m.identity for m in finding.unlisted] == []
    assert [e.identity for e in finding.stale] == []


# The call that shows each reviewed gap, by (exercise, operator, a piece of the mutated text): the
# input its reason names, on which the mutant and the reference part. A gap that no longer survives
# becomes a stale entry and fails above; none is listed today.
GAP_CALLS: dict[tuple[str, str, str], tuple[tuple, dict]] = {}

# assemble's last gap (an index kept by identity, `is`, where the text compares positions): CPython
# shares the integers up to 256 only, so the two differ on lists of more than 256 items.
IDENTITY_LINE = "in_order = [index for index in range(len(candidates)) if index in kept]"
IDENTITY_MUTANT = Mutant("assemble", "assemble", "learner/MembershipToIdentity", IDENTITY_LINE,
                         IDENTITY_LINE.replace("if index in kept", "if any(_item is index for _item in kept)"))


def _gap_call(entry):
    (call,) = [call for (exercise, operator, piece), call in GAP_CALLS.items()
               if (exercise, operator) == (entry.exercise, entry.operator) and piece in entry.mutated]
    return call


def test_every_gap_is_shown_by_the_input_its_reason_names():
    """A gap is a survivor wrong on an input the text covers: on that input the mutant and its reference differ."""
    gaps = [e for e in load_equivalents() if e.kind == "gap"]
    assert len(gaps) == len(GAP_CALLS)
    for entry in gaps:
        args, kwargs = _gap_call(entry)
        mutant = Mutant(entry.exercise, entry.function, entry.operator, entry.line, entry.mutated)
        reference = learner_function(entry.exercise, targets()[entry.exercise].source)
        changed = learner_function(entry.exercise, mutant_source(mutant))
        assert reference(*args, **kwargs) != changed(*args, **kwargs), entry


def test_the_visible_bank_holds_a_call_past_256_items_that_tells_identity_from_position():
    """The former gap is closed by the bank itself: a visible call of more than 256 items on which assemble and its
    identity mutant part (the mutant keeps 257 of 300 items, ``([Item(f"d{i}", 1) for i in range(300)], 1_000)``)."""
    reference = learner_function("assemble", targets()["assemble"].source)
    changed = learner_function("assemble", mutant_source(IDENTITY_MUTANT))
    items = [Item(f"d{i}", 1) for i in range(300)]
    assert reference(items, 1_000) != changed(items, 1_000)
    parting = [case for case in bank_cases("assemble") if len(case.args[0]) > 256
               and reference(*case.args, **case.kwargs) != changed(*case.args, **case.kwargs)]
    assert parting


def test_compare_finds_the_call_that_tells_a_killed_mutant_apart():
    """trim_lines keeping one head line too many (a killed mutant) differs on a drawn call; estimate_tokens's
    `* 1` made `// 1` (a reviewed equivalent) agrees on every call drawn."""
    marker = "return copied[:head] + [omission_marker(omitted, path)] + copied[len(copied) - tail:]"
    killed = Mutant("trim_lines", "_trim", "learner/SliceOffByOne", marker, marker.replace("[:head]", "[:head + 1]"))
    found = first_difference(killed, count=20)
    assert found is not None and found[3] != found[4]
    line = "return ascii_tokens + non_ascii_chars * NON_ASCII_TOKENS_PER_CHAR"
    same = Mutant("estimate_tokens", "estimate_tokens", "core/ReplaceBinaryOperator_Mul_FloorDiv", line,
                  line.replace("*", "//"))
    assert first_difference(same, count=20) is None


def test_a_text_constant_is_compiled_from_the_mutated_copy():
    """restore's pattern `_LINE` is mutated with parse_record, which reads it: a copy whose pattern wants `T`
    for the turn fails restore's check, so the copy's constant, not the module's, is what the mutant runs."""
    target = targets()["restore"]
    assert "_LINE" in target.constants and "_LINE" in target.mutated
    func = learner_function("restore", _edited("restore", "] t(\\d+): ", "] T(\\d+): "))
    with pytest.raises(CheckFailed):
        check_exercise("restore", func, quiet=True)


def test_report_is_the_last_runs_data():
    """docs/mutation.md is what `python -m ctx_course.mutation report` writes from the data."""
    assert REPORT.read_text(encoding="utf-8") == mutation_markdown(load_run(), load_equivalents())


def test_review_tells_unlisted_from_stale():
    mutant = Mutant("zone", "zone", "core/NumberReplacer", "x = 1", "x = 2", 10)
    run = ExerciseRun("zone", mutants=1, survivors=[mutant])
    finding = review([run], [])
    assert finding.unlisted == (mutant,) and finding.stale == ()
    assert review([ExerciseRun("zone", mutants=1, killed=1)], []).unlisted == ()


def test_prune_drops_only_the_stale_entries(tmp_path):
    """An entry whose mutant no longer survives goes; the others and the header comment stay as they were."""
    path = tmp_path / "equivalent_mutants.toml"
    entries = load_equivalents()[:3]
    path.write_text("# header\n\n" + "\n".join(_entry(e) for e in entries), encoding="utf-8")
    assert without_stale([entries[1]], path) == 1
    assert load_equivalents(path) == [entries[0], entries[2]]
    assert path.read_text(encoding="utf-8").startswith("# header\n\n[[mutant]]")


def _entry(entry) -> str:
    import json

    return "[[mutant]]\n" + "".join(f"{name} = {json.dumps(getattr(entry, name), ensure_ascii=False)}\n" for name in (
        "exercise", "function", "operator", "line", "mutated", "kind", "reason"))


@pytest.mark.heavy
def test_the_campaign_of_a_subset_finds_what_the_last_run_found():
    """cosmic-ray over SUBSET, live: the same mutants, killed and surviving, as the last full run."""
    last = load_run()["exercises"]
    runs = run_campaign(SUBSET, jobs=2)
    for name in SUBSET:
        assert (runs[name].mutants, runs[name].killed) == (last[name].mutants, last[name].killed), name
        assert sorted(m.identity for m in runs[name].survivors) == sorted(m.identity for m in last[name].survivors)
    finding = review(runs.values(), load_equivalents())
    assert finding.unlisted == () and finding.stale == ()
