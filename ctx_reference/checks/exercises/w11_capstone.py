"""The exercises of notebook 11, the context-policy capstone.

The learner writes a policy (``policy(view) -> None | action | [actions]``). Three exercises,
each run on the capstone's visible workloads (``ctx_reference.workloads.visible_workloads``):

* ``context_policy`` -- the two rules the prompt states, on every workload: the run never
  overflows (expect ``None`` for the overflow turn) and no asked fact is lost (expect 0). A
  decision that is not None, an action or a list of actions, or an action the context cannot
  take (clearing a result twice, a protected one, compacting nothing) is reported with the
  simulation's message.
* ``beat_clear_notes`` / ``beat_compact`` -- on every workload the policy is safe and, where
  that built-in is safe, costs less than it (the built-in is run beside the learner's policy).

The expectations are literals (``{"overflow_turn": None, "facts_lost": 0}``, "更便宜"); only the runs
themselves use the reference simulation, as notebook 06's checks do with the learner's hooks.

References: the built-in policies (``keep_everything``, ``ClearOldest``, ``CompactOld``, the
values of ``BUILTIN_POLICIES``) are what the learner must not hand in or call. The bonus checks
compare with a built-in's cost, so the built-ins' runs are computed when the adapter is made,
before the learner's policy runs: while it runs, only the learner's own calls are watched, and
the harness ``simulate_policy`` is not a reference.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ...i18n import N_, _
from ...policy import ClearOldest, CompactOld, keep_everything
from ...policy_score import builtin_results
from ...sim import simulate_policy
from ...workloads import VISIBLE_SHAPES, generate, visible_workloads
from ..exercise import Exercise
from ..generated import Generated
from ..rules import Rule
from ..runner import CheckCase

CHEAPER = N_("更便宜")  # a message: the bonus cases compare with it in the reader's language

_WORKLOADS = {w.name: w for w in visible_workloads()}
_SHAPES = {shape.name: shape for shape in VISIBLE_SHAPES}


def _safety(policy: Callable) -> Callable:
    """Return f(workload name, seed) -> (overflow turn, facts lost) of ``policy`` on that workload.

    Without a seed the workload is the visible one of that name; with one, it is drawn from the
    visible shape of that name with that seed (the generated cases sweep the seeds of each shape).
    """
    def run(name: str, seed: int | None = None) -> tuple:
        workload = _WORKLOADS[name] if seed is None else generate(replace(_SHAPES[name], seed=seed))
        r = simulate_policy(policy, workload)
        return (r.overflow_turn, r.facts_lost)
    return run


def _against(builtin: str) -> Callable[[Callable], Callable]:
    """Return an adapter: f(workload name) -> CHEAPER, or why the policy does not beat ``builtin``."""
    def adapt(policy: Callable) -> Callable:
        # the built-in's runs, made now: the learner's policy runs watched, and it alone
        others = {name: builtin_results(w)[builtin] for name, w in _WORKLOADS.items()}

        def run(name: str) -> str:
            mine = simulate_policy(policy, _WORKLOADS[name])
            if mine.overflow_turn is not None:
                return _("第 {turn} 轮溢出").format(turn=mine.overflow_turn)
            if mine.facts_lost:
                return _("丢了 {lost}/{asked} 条事实").format(lost=mine.facts_lost, asked=mine.facts_asked)
            other = others[name]
            if other.overflow_turn is not None or other.facts_lost:
                return _(CHEAPER)       # the built-in is not safe here: being safe is enough
            if mine.input_equivalent < other.input_equivalent:
                return _(CHEAPER)
            return _("输入当量 {mine:,.0f}，不低于 {builtin} 的 {other:,.0f}").format(
                mine=mine.input_equivalent, builtin=builtin, other=other.input_equivalent)
        return run
    return adapt


def _overflow_and_lost(value: tuple) -> dict:
    """Return (overflow turn, facts lost) as the dict shown in a feedback line.

    Its keys are the names of the run's attributes (``SimResult.overflow_turn``, ``facts_lost``),
    the same in both editions: the learner reads them in the notebook's code.
    """
    overflow, lost = value
    return {"overflow_turn": overflow, "facts_lost": lost}


_SAFE = {"overflow_turn": None, "facts_lost": 0}


def _case(template: str, name: str, **kwargs) -> CheckCase:
    """Return the case of workload ``name``, labelled ``template`` (a message) formatted with its facts."""
    values = {"name": name, "turns": _WORKLOADS[name].turns, "window": _WORKLOADS[name].window}
    return CheckCase(template.format(**values), args=(name,), label_template=template, label_values=values, **kwargs)


#: The visible cases of ``context_policy``.
CONTEXT_POLICY_CASES: tuple[CheckCase, ...] = tuple(
    _case(N_("任务 {name}：{turns} 轮、窗口 {window:,}，不溢出、不丢被问到的事实"), name, expect=_SAFE,
          project=_overflow_and_lost, decides=("never-overflows", "no-asked-fact-lost", "actions-it-can-take"))
    for name in _WORKLOADS)

#: The visible cases of ``beat_clear_notes``.
BEAT_CLEAR_NOTES_CASES: tuple[CheckCase, ...] = tuple(
    _case(N_("任务 {name}：安全，而且比 clear_notes 便宜"), name, expect=CHEAPER, message=True,
          decides=("safe-and-cheaper-than-clear-notes",))
    for name in _WORKLOADS)

#: The visible cases of ``beat_compact``.
BEAT_COMPACT_CASES: tuple[CheckCase, ...] = tuple(
    _case(N_("任务 {name}：安全，而且比 compact 便宜"), name, expect=CHEAPER, message=True,
          decides=("safe-and-cheaper-than-compact",))
    for name in _WORKLOADS)

def _broken_rule(value: dict | None) -> str:
    """Return the rule a failed run breaks: an overflow, a lost fact, or (no run came back) an action it cannot take."""
    if value is None:
        return "actions-it-can-take"
    return "never-overflows" if value["overflow_turn"] is not None else "no-asked-fact-lost"


#: The reference objects every exercise of the capstone grades against: calling them scores 0.
_REFERENCES = (keep_everything, ClearOldest, CompactOld)

#: The notebook these exercises belong to.
NOTEBOOK = '11-capstone'

# The bonus promises "cheaper" on the named workloads and the hidden ones, not on every seed of a shape.
_NOT_SWEPT = ("cheaper than a built-in is stated for the visible and the hidden workloads, not for every seed "
              "of a shape: a safe policy may cost more than the built-in on some seeds")

#: The rules ``context_policy``'s text states (rules.py; the cases and hidden tests that decide one name it).
CONTEXT_POLICY_RULES: tuple[Rule, ...] = (
    Rule(
        'never-overflows',
        N_('永远不溢出'),
        generated=('seed-sweep',),
    ),
    Rule(
        'no-asked-fact-lost',
        N_('不丢任何被问到的事实'),
        generated=('seed-sweep',),
    ),
    Rule(
        'actions-it-can-take',
        N_('只返回 `None`、一个动作或动作列表，而且动作做得到'),
        generated=('seed-sweep',),
    ),
)

#: The rules ``beat_clear_notes``'s text states (rules.py; the cases and hidden tests that decide one name it).
BEAT_CLEAR_NOTES_RULES: tuple[Rule, ...] = (
    Rule(
        'safe-and-cheaper-than-clear-notes',
        N_('你的策略都安全，而且比 `clear_notes` 便宜'),
        not_generated=_NOT_SWEPT,
    ),
)

#: The rules ``beat_compact``'s text states (rules.py; the cases and hidden tests that decide one name it).
BEAT_COMPACT_RULES: tuple[Rule, ...] = (
    Rule(
        'safe-and-cheaper-than-compact',
        N_('比 `compact` 便宜'),
        not_generated=_NOT_SWEPT,
    ),
)


def _policy_exercise(name: str, cases: tuple[CheckCase, ...], rules: tuple[Rule, ...],
                     adapter: Callable[[Callable], Callable], compare: Generated | None = None) -> Exercise:
    """Return an exercise of the capstone: each grades the notebook's ``my_policy``, run by ``adapter``."""
    return Exercise(name, NOTEBOOK, references=_REFERENCES, cases=cases, rules=rules,
                    compare=compare if compare is not None else Generated(), learner_name="my_policy", adapter=adapter)


#: The exercises of this notebook, one record each.
EXERCISES = (
    _policy_exercise("context_policy", CONTEXT_POLICY_CASES, CONTEXT_POLICY_RULES, _safety,
                     compare=Generated(project=_overflow_and_lost, label=N_("任务形状 {shape}，种子 {seed}"),
                                       label_fields=("shape", "seed"), rule_for=_broken_rule)),
    _policy_exercise("beat_clear_notes", BEAT_CLEAR_NOTES_CASES, BEAT_CLEAR_NOTES_RULES, _against("clear_notes")),
    _policy_exercise("beat_compact", BEAT_COMPACT_CASES, BEAT_COMPACT_RULES, _against("compact")),
)
