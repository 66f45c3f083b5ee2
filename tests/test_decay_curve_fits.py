"""Curve fits: recovery of known curves, the comparison statistics, golden values, bad input."""

import math

import numpy as np
import pytest

from forgetting.decay.curve_fits import FAMILIES, fit_all, fit_family, predict
from forgetting.decay.families import power_retention
from forgetting.decay.savings_data import SAVINGS_FILES, load_savings
from forgetting.pipeline.paths import repo_root

HOURS = load_savings(repo_root() / SAVINGS_FILES["ebbinghaus1885"]).delay_hours


def test_exact_power_law_is_recovered():
    savings = [0.7 * power_retention(t, 0.05, 0.3) for t in HOURS]
    fit = fit_family("power", "synthetic", HOURS, savings)
    assert fit.parameters["d"] == pytest.approx(0.3, abs=1e-3)
    assert fit.rmse < 1e-6


def test_exact_exponential_is_recovered():
    savings = [0.6 * math.exp(-t / 200.0) for t in HOURS]
    fit = fit_family("exponential", "synthetic", HOURS, savings)
    assert fit.parameters["S"] == pytest.approx(200.0, rel=1e-3)


def test_statistics_follow_their_formulas():
    curve = load_savings(repo_root() / SAVINGS_FILES["ebbinghaus1885"])
    fit = fit_family("exponential", curve.name, curve.delay_hours, curve.savings)
    n, k = len(curve.savings), 2
    rss = n * fit.rmse**2
    assert fit.aic == pytest.approx(n * math.log(rss / n) + 2 * (k + 1), abs=1e-4)
    assert fit.bic == pytest.approx(n * math.log(rss / n) + (k + 1) * math.log(n), abs=1e-4)
    predicted = predict("exponential", list(fit.parameters.values()), curve.delay_hours)
    assert np.allclose(np.array(predicted) - curve.savings, fit.residuals, atol=1e-5)
    assert fit.loo_rmse >= fit.rmse


def test_published_fits_on_ebbinghaus():
    """Regression pin: the chapter's comparison (exponential worst, Ebbinghaus's own form best)."""
    curve = load_savings(repo_root() / SAVINGS_FILES["ebbinghaus1885"])
    fits = {f.family: f for f in fit_all(curve.name, curve.delay_hours, curve.savings)}
    assert list(fits) == list(FAMILIES)
    assert round(fits["exponential"].rmse, 3) == 0.091
    assert round(fits["power"].rmse, 3) == 0.020
    assert round(fits["power"].parameters["d"], 2) == 0.13
    assert max(fits, key=lambda name: fits[name].aic) == "exponential"
    assert min(fits, key=lambda name: fits[name].aic) == "ebbinghaus_log"


@pytest.mark.parametrize(
    "family, hours, savings, message",
    [
        ("gompertz", HOURS, [0.5] * 7, "family must be one of"),
        ("two_exponential", HOURS[:5], [0.5] * 5, "same length >= 6"),
        ("power", HOURS, [0.5] * 6, "same length"),
    ],
)
def test_bad_fits_are_refused(family, hours, savings, message):
    with pytest.raises(ValueError, match=message):
        fit_family(family, "bad", hours, savings)
