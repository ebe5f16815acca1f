"""Tests for the asymmetric recall model and its least-squares fit to Liu et al. 2023 (notebook 03)."""

import numpy as np
import pytest

from ctx_reference.checks import check_exercise
from ctx_reference.recall import LOST_IN_THE_MIDDLE, MeasuredCurve, RecallModel, fit_position_curve


def _sse(base, middle, end_drop):
    """Sum of squared errors of a position curve against the measured points."""
    x = (np.array(LOST_IN_THE_MIDDLE.positions) - 0.5) / 20
    measured = np.array(LOST_IN_THE_MIDDLE.accuracy_percent) / 100
    fitted = base * (1 - middle * 4 * x * (1 - x) - end_drop * x)
    return float(((measured - fitted) ** 2).sum())


def test_end_drop_zero_keeps_the_lesson_numbers():
    """The default end_drop 0 leaves the middle factor at 0.700 and the end at 0.997."""
    assert round(RecallModel().position_factor(402_000, 800_000), 3) == 0.7
    assert RecallModel().end_drop == 0.0


def test_end_drop_lowers_the_end_linearly():
    """middle 0, end_drop 0.2: the factor at x = 0.5 is 0.9 (pos 4,999.5 of 10,000 -> x 0.5)."""
    assert RecallModel(middle=0, end_drop=0.2).position_factor(4_999, 10_000) == pytest.approx(0.9, abs=1e-4)


@pytest.mark.parametrize("middle, end_drop", [(0.3, 0.71), (0.0, 1.01), (0.0, -0.1)])
def test_end_drop_range(middle, end_drop):
    """end_drop outside [0, 1 - middle] is a ValueError naming end_drop."""
    with pytest.raises(ValueError, match="end_drop"):
        RecallModel(middle=middle, end_drop=end_drop)


def test_fit_values_and_residuals():
    """Liu et al.: base 0.760, middle 0.244, end_drop 0.136; residuals sum to ~0 (intercept)."""
    fit = fit_position_curve()
    assert (round(fit.base, 3), round(fit.middle, 3), round(fit.end_drop, 3)) == (0.76, 0.244, 0.136)
    assert len(fit.residuals) == 5
    assert abs(sum(fit.residuals)) < 1e-9
    assert max(abs(r) for r in fit.residuals) < 0.04


def test_fit_is_a_minimum():
    """Moving any fitted parameter by ±0.01 increases the sum of squared errors."""
    fit = fit_position_curve()
    best = _sse(fit.base, fit.middle, fit.end_drop)
    for i in range(3):
        for step in (-0.01, 0.01):
            params = [fit.base, fit.middle, fit.end_drop]
            params[i] += step
            assert _sse(*params) > best


def test_fit_recovers_known_parameters():
    """Points made from base 0.8, middle 0.3, end_drop 0.1 fit back to those values."""
    x = (np.array([1, 5, 10, 15, 20]) - 0.5) / 20
    acc = 100 * 0.8 * (1 - 0.3 * 4 * x * (1 - x) - 0.1 * x)
    curve = MeasuredCurve("toy", 20, (1, 5, 10, 15, 20), tuple(acc), 0.0, "")
    fit = fit_position_curve(curve)
    assert (fit.base, fit.middle, fit.end_drop) == pytest.approx((0.8, 0.3, 0.1))


def test_check_cases_pass_the_reference():
    """The visible fit_position cases pass a numpy least-squares fit written like the notebook's
    (numpy's numbers turned into float, as the prompt asks)."""
    def fit_position(positions, accuracy, n_docs):
        x = (np.array(positions, dtype=float) - 0.5) / n_docs
        a = np.column_stack([np.ones_like(x), -4 * x * (1 - x), -x])
        (b, bm, be), *_ = np.linalg.lstsq(a, np.array(accuracy), rcond=None)
        return float(b), float(bm / b), float(be / b)

    check_exercise("fit_position", fit_position)


def test_fit_plot_has_points_and_curve():
    """The fit plot draws the 5 measured points and one fitted curve starting near 74 %."""
    from ctx_reference.plots import plot_position_fit

    fit = fit_position_curve()
    fig = plot_position_fit(fit.base, fit.middle, fit.end_drop)
    lines = {line.get_gid(): line for line in fig.axes[0].lines}
    assert list(lines["measured"].get_ydata()) == [75.8, 57.2, 53.8, 55.4, 63.2]
    assert lines["fit"].get_ydata()[0] == pytest.approx(100 * fit.base * (1 - fit.middle * 4 * 0.025 * 0.975
                                                                          - fit.end_drop * 0.025))
