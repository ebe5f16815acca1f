"""The exercises of notebook 03's fitting exercise: the toy position curve fitted by least squares.

``fit_position(positions, accuracy, n_docs)`` returns ``(base, middle, end_drop)`` of the curve
``base * (1 - middle * 4x(1 - x) - end_drop * x)``, x = (p - 0.5) / n_docs, that fits the measured
accuracies (fractions) best in the least-squares sense, as a tuple of three Python floats.

Cases: two sets of points computed by hand from known parameters (x = 0.025, 0.225, 0.475,
0.725, 0.975 on 20 documents; x = 0.05, 0.35, 0.65, 0.95 on 10 give 4x(1 - x) = 0.19, 0.91; a
least-squares fit must give them back exactly: 0.8 / 0.3 / 0.1 on the lesson's five positions,
and a symmetric 0.9 / 0.5 / 0 on four positions of 10 documents, passed as lists that must be
left unchanged), and the measured Liu et al. 2023 curve, whose best fit (0.760 / 0.244 / 0.136)
is checked to three decimals; tests/test_recall.py confirms that value is the minimum by
perturbing it. Every case requires a ``tuple`` of exact ``float`` values (``float(...)`` of a
numpy number), in the order base, middle, end_drop.
"""
from collections.abc import Callable, Mapping
from typing import Any

from ...i18n import N_
from ...recall import fit_position_curve
from ..exercise import Exercise
from ..generated import Generated
from ..rules import Rule
from ..runner import CheckCase

FIT_TOL = 5e-4
EXACT_TOL = 1e-4  # the values are shown rounded to 4 decimals (stable across machines)


def rounded(value):
    """Return the three fitted numbers, floats rounded to 4 decimals (-0.0 shown as 0.0).

    Values of any other type are left as they are, so that the plain-data check names them
    (a ``numpy.float64`` is not a ``float`` here: the prompt asks for ``float(...)``).
    """
    a, b, c = value
    return tuple(round(v, 4) + 0.0 if type(v) is float else v for v in (a, b, c))


POSITIONS = (1, 5, 10, 15, 20)


#: The visible cases of ``fit_position``.
CASES: tuple[CheckCase, ...] = (
    CheckCase(
        N_("由 base 0.8、middle 0.3、end_drop 0.1 手算出的 5 个点（20 篇，第 1/5/10/15/20 篇）："
        "0.7746、0.6146、0.5226、0.5506、0.6986，拟合应还原这三个参数，返回三个 float 组成的 tuple"),
        args=(POSITIONS, (0.7746, 0.6146, 0.5226, 0.5506, 0.6986), 20),
        expect=(0.8, 0.3, 0.1),
        project=rounded,
        tol=EXACT_TOL,
        returns=tuple,
        decides=('x-from-the-position', 'three-columns', 'ratios-of-coefficients', 'a-tuple-of-floats'),
    ),
    CheckCase(
        N_("对称的曲线（10 篇，第 1/4/7/10 篇，以 list 传入，不要改动它们）：base 0.9、middle 0.5、"
        "end_drop 0 手算出 0.8145、0.4905、0.4905、0.8145"),
        args=([1, 4, 7, 10], [0.8145, 0.4905, 0.4905, 0.8145], 10),
        expect=(0.9, 0.5, 0.0),
        project=rounded,
        tol=EXACT_TOL,
        returns=tuple,
        decides=('inputs-unchanged',),
    ),
    CheckCase(
        N_("Lost in the Middle 论文的实测（论文，不是原课给出的；GPT-3.5-Turbo，20 篇）："
        "75.8/57.2/53.8/55.4/63.2 %，以小数传入"),
        args=(POSITIONS, (0.758, 0.572, 0.538, 0.554, 0.632), 20),
        expect=(0.760, 0.244, 0.136),
        project=rounded,
        tol=FIT_TOL,
        returns=tuple,
        decides=('accuracy-as-a-fraction',),
    ),
)



#: The notebook these exercises belong to.
NOTEBOOK = '03-recall'

#: The rules ``fit_position``'s text states (rules.py; the cases and hidden tests that decide one name it).
RULES: tuple[Rule, ...] = (
    Rule(
        'x-from-the-position',
        N_('x = \\frac{p - 0.5}{N}'),
        generated=('known-parameters',),
    ),
    Rule(
        'three-columns',
        N_('每个测量点一行 $[1,\\ -4x(1-x),\\ -x]$'),
        generated=('measured-values', 'three-points'),
    ),
    Rule(
        'ratios-of-coefficients',
        N_('再换回 $\\text{middle} = c_1 / c_0$'),
        generated=('known-parameters', 'three-points'),
    ),
    Rule(
        'accuracy-as-a-fraction',
        N_('`accuracy` 是小数'),
        generated=('measured-values',),
    ),
    Rule(
        'a-tuple-of-floats',
        N_('返回一个 tuple `(base, middle, end_drop)`，三个都是 Python 的 `float`'),
        generated=('known-parameters', 'three-points', 'measured-values'),
    ),
    Rule(
        'inputs-unchanged',
        N_('不要改动传进来的它们'),
        generated=('known-parameters', 'three-points', 'measured-values'),
    ),
)


def _fit_position_as_learners(namespace: Mapping[str, Any]) -> Callable:
    """Return ``fit_position(positions, accuracy, n_docs)`` through ``namespace``'s ``fit_position_curve``."""
    curve_type, fit_curve = namespace["MeasuredCurve"], namespace["fit_position_curve"]

    def fit_position(positions, accuracy, n_docs):
        curve = curve_type("fit", n_docs, tuple(positions), tuple(100 * a for a in accuracy), 0.0, "")
        fit = fit_curve(curve)
        return fit.base, fit.middle, fit.end_drop
    return fit_position


#: The exercises of this notebook, one record each.
EXERCISES = (
    Exercise(
        'fit_position', NOTEBOOK,
        references=(fit_position_curve,),
        learner_call=_fit_position_as_learners,
        cases=CASES,
        rules=RULES,
        compare=Generated(tol=1e-6, places=4, returns=tuple),
    ),
)
