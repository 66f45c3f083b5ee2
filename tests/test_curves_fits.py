"""Curve fits: recovery of known curves, the comparison statistics, golden values, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.curves.families import power_retention
from forgetting.pipeline.paths import repo_root
from forgetting.studies.curves.fits import (
    FAMILIES,
    MEASURE_LABELS,
    MEASURES,
    aicc,
    fit_all,
    fit_family,
    fit_glue_values,
    information_criteria,
    predict,
    rankings,
    rankings_differing,
    residual_variance_floor,
)
from forgetting.studies.curves.savings_data import SAVINGS_FILES, load_savings

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


def _floor_aic(savings, k):
    """AIC of a fit whose residual variance is at the floor: ``n ln(sigma_min^2) + 2 (k + 1)``."""
    return len(savings) * math.log(residual_variance_floor(savings)) + 2 * (k + 1)


def test_a_perfect_fit_is_finite_and_ranked_best():
    savings = [0.6 * math.exp(-t / 200.0) for t in HOURS]
    fits = {f.family: f for f in fit_all("synthetic", HOURS, savings)}
    for fit in fits.values():
        assert all(math.isfinite(v) for v in (fit.rmse, fit.aic, fit.bic, fit.loo_rmse)), fit.family
    exact = fits["exponential"]
    assert exact.aic == pytest.approx(_floor_aic(savings, 2), abs=1e-6)  # RSS / n at or below the floor
    assert min(fits, key=lambda name: fits[name].aic) == "exponential"
    assert min(fits, key=lambda name: fits[name].bic) == "exponential"
    # the nesting family fits it as well, and pays for its two extra parameters
    assert fits["two_exponential"].aic >= exact.aic + 4 - 1e-6


def test_a_zero_residual_sum_has_finite_criteria_at_the_floor():
    n, k, floor = 7, 2, 1e-32
    aic, bic = information_criteria(0.0, n, k, floor)
    assert aic == n * math.log(floor) + 2 * (k + 1)
    assert bic == n * math.log(floor) + (k + 1) * math.log(n)
    assert information_criteria(1e-40, n, k, floor) == (aic, bic)  # below the floor: the same
    assert information_criteria(7e-30, n, k, floor)[0] == pytest.approx(aic + n * math.log(100.0))
    # a perfect fit beats any imperfect one; between perfect fits the smaller family wins
    assert aic < information_criteria(1e-20, n, k, floor)[0]
    assert aic < information_criteria(0.0, n, k + 1, floor)[0]
    with pytest.raises(ValueError, match="variance_floor"):
        information_criteria(0.0, n, k, 0.0)


def test_the_floor_scales_with_the_data_and_is_never_zero():
    eps = np.finfo(float).eps
    assert residual_variance_floor([0.25, -0.5]) == (eps * 0.5) ** 2
    assert residual_variance_floor([]) == eps**2
    assert residual_variance_floor(np.array([0.0, 0.0])) == eps**2


def _log_uniform(low, high):
    return st.floats(math.log10(low), math.log10(high)).map(lambda x: 10.0**x)


#: Random parameters at which each family is identifiable on the seven Ebbinghaus delays
#: (20 minutes to a month): time scales the delays resolve (a fast store seen by three delays, so that
#: each leave-one-out refit still pins it), two stores at least 10x apart, a power law whose S is
#: not far below the first delay (there only a S^d is pinned).
EXACT_PARAMETERS = {
    "exponential": st.tuples(st.floats(0.05, 1.0), _log_uniform(1.0, 5_000.0)),
    "power": st.tuples(st.floats(0.3, 1.0), _log_uniform(0.1, 50.0), st.floats(0.2, 1.5)),
    "two_exponential": st.tuples(
        st.floats(0.1, 0.5), _log_uniform(1.0, 10.0), st.floats(0.1, 0.5), _log_uniform(100.0, 5_000.0)
    ),
    "ebbinghaus_log": st.tuples(_log_uniform(0.1, 20.0), st.floats(0.3, 3.0)),
}


def _canonical(family, values):
    """Parameters in a label-free order: the two exponential stores sorted by time scale."""
    if family == "two_exponential":
        stores = sorted([(values[1], values[0]), (values[3], values[2])])
        return [stores[0][1], stores[0][0], stores[1][1], stores[1][0]]
    return list(values)


@pytest.mark.parametrize("family", list(FAMILIES))
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_noise_free_curves_of_every_family_are_recovered_with_finite_statistics(family, data):
    assert set(EXACT_PARAMETERS) == set(FAMILIES)  # a new family needs its parameter ranges here
    truth = data.draw(EXACT_PARAMETERS[family], label="parameters")
    savings = predict(family, truth, HOURS)
    fit = fit_family(family, "exact", HOURS, savings)
    assert all(math.isfinite(v) for v in (fit.rmse, fit.aic, fit.bic, fit.loo_rmse))
    assert all(math.isfinite(e) or math.isnan(e) for e in fit.standard_errors.values())
    assert fit.rmse < 1e-9
    recovered = _canonical(family, [fit.parameters[name] for name in FAMILIES[family].parameters])
    assert recovered == pytest.approx(_canonical(family, truth), rel=1e-4)
    # sigma_min^2 bounds the variance from below (the solver may stop a little above it)
    assert fit.aic >= _floor_aic(savings, len(truth)) - 1e-6


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


def test_fits_on_ebbinghaus_nominal_delays():
    """Regression pin on the table's nominal delays (the chapter's fits-nominal table)."""
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


def published_fits() -> dict[str, dict[str, float]]:
    """The published fits to Ebbinghaus's data, by family (``data/results/decay-curves-fits.csv``)."""
    import csv

    path = repo_root() / "data" / "results" / "decay-curves-fits.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["dataset"] == "ebbinghaus1885"]
    return {r["family"]: {k: float(v) for k, v in r.items() if k in MEASURES + ("n_params",)} for r in rows}


def test_published_aicc_is_aic_plus_the_small_sample_term():
    """decay-curves: AICc = AIC + 2K(K + 1)/(n - K - 1), K = parameters + 1 (the variance), n the
    number of delays, recomputed from the published AIC; defined for every family shown."""
    fits = published_fits()
    n = len(HOURS)
    for family, row in fits.items():
        k = row["n_params"] + 1
        assert n - k - 1 > 0, family
        assert row["aicc"] == pytest.approx(row["aic"] + 2 * k * (k + 1) / (n - k - 1), abs=2e-6), family


@settings(max_examples=200, deadline=None)
@given(value=st.floats(-1e3, 1e3), n=st.integers(1, 60), k=st.integers(0, 10))
def test_aicc_follows_its_formula_or_is_undefined(value, n, k):
    big_k = k + 1
    got = aicc(value, n, k)
    if n - big_k - 1 <= 0:
        assert math.isnan(got)
    else:
        assert got == value + 2 * big_k * (big_k + 1) / (n - big_k - 1)
        assert got > value


@pytest.mark.parametrize("n, k, message", [(7.0, 2, "n must be an int >= 1"), (7, -1, "k must be an int >= 0"),
                                           (0, 2, "n must be an int >= 1")])  # fmt: skip
def test_aicc_refuses_bad_counts(n, k, message):
    with pytest.raises(ValueError, match=message):
        aicc(0.0, n, k)


def test_a_fit_with_no_degrees_of_freedom_left_has_no_aicc():
    # k + 2 points: the fit is allowed, n - K - 1 = 0, so AICc is undefined (NaN) and unranked
    fit = fit_family("exponential", "tight", HOURS[:4], [0.5, 0.45, 0.4, 0.3])
    assert math.isnan(fit.aicc) and math.isfinite(fit.aic)
    ranked = rankings([fit], ("aic", "aicc"))
    assert ranked == {"aic": ["exponential"], "aicc": []}


def test_rankings_order_by_each_measure_and_refuse_unknown_ones():
    curve = load_savings(repo_root() / SAVINGS_FILES["ebbinghaus1885"])
    fits = fit_all(curve.name, curve.corrected_delay_hours, curve.savings)
    ranked = rankings(fits)
    assert list(ranked) == list(MEASURES)
    for measure, order in ranked.items():
        values = [getattr({f.family: f for f in fits}[name], measure) for name in order]
        assert values == sorted(values) and sorted(order) == sorted(FAMILIES), measure
    assert rankings_differing(fits, fits) == 0
    assert rankings_differing(fits, list(reversed(fits))) == 0  # a ranking does not depend on input order
    with pytest.raises(ValueError, match="measures must be among"):
        rankings(fits, ("r2",))


def test_glue_values_name_best_and_worst_from_the_rankings():
    curve = load_savings(repo_root() / SAVINGS_FILES["ebbinghaus1885"])
    fits = fit_all(curve.name, curve.corrected_delay_hours, curve.savings)
    values = fit_glue_values(fits)
    ranked = rankings(fits)
    for fit in fits:
        assert values[f"aicc_{fit.family}_{curve.name}"] == fit.aicc
        assert values[f"loo_{fit.family}_{curve.name}"] == fit.loo_rmse
        for side, index in (("best", 0), ("worst", -1)):
            named = values[f"{side}_by_{fit.family}_{curve.name}"]
            expected = [m for m in MEASURES if ranked[m][index] == fit.family]
            assert named == (", ".join(MEASURE_LABELS[m] for m in expected) or "none")
    assert values[f"ranking_aicc_{curve.name}"] == " < ".join(ranked["aicc"])
    with pytest.raises(ValueError, match="one data set"):
        fit_glue_values([*fits, fit_family("exponential", "other", HOURS, curve.savings)])


def test_ebbinghaus_formula_is_read_at_his_t_the_delay_plus_one_minute():
    # his t counts from one minute before the end of learning: the delay 19 minutes is his t = 20
    assert predict("ebbinghaus_log", [1.84, 1.25], [19 / 60])[0] == pytest.approx(0.570, abs=5e-4)
    assert predict("ebbinghaus_log", [1.84, 1.25], [0.0]) == [1.0]  # 100 % at the end of learning


def test_published_ebbinghaus_formula_ranks_first_by_every_measure_and_the_worst_follow_the_rankings():
    """decay-curves and decay-retention: Ebbinghaus's own formula fits his data best by each of the
    five published measures; the exponential is last by all but AICc, the two exponentials by AICc."""
    fits = published_fits()
    for measure in MEASURES:
        ranked = sorted(fits, key=lambda family: fits[family][measure])
        assert ranked[0] == "ebbinghaus_log", (measure, ranked)
        assert ranked[-1] == ("two_exponential" if measure == "aicc" else "exponential"), (measure, ranked)


def test_standard_errors_keep_three_significant_digits_and_parameters_six():
    """The rounding the docstring states: a standard error to STANDARD_ERROR_DIGITS digits, whose
    sixth digit an exp four ulp off once moved; parameters to PARAMETER_DIGITS."""
    from forgetting.studies.curves.fits import PARAMETER_DIGITS, STANDARD_ERROR_DIGITS

    assert STANDARD_ERROR_DIGITS == 3 < PARAMETER_DIGITS == 6
    savings = predict("two_exponential", [0.4, 1.0, 0.3, 1500.0], HOURS)
    noisy = [s + 0.01 * (-1) ** i for i, s in enumerate(savings)]
    fit = fit_family("two_exponential", "noisy", HOURS, noisy)
    for value in fit.standard_errors.values():
        if math.isfinite(value):
            assert value == float(f"{value:.3g}")
    assert any(value != float(f"{value:.3g}") for value in fit.parameters.values())
    assert all(value == float(f"{value:.6g}") for value in fit.parameters.values())


# --- what the fits figure plots (decay-curves cell 9 calls these) ------------------------------


def test_exact_log10_is_decimals_log_and_refuses_non_positive_values():
    from decimal import Decimal

    from forgetting.studies.curves.fits import log10_exact

    assert log10_exact([1, 10, 0.1, 100.0]) == [0.0, 1.0, -1.0, 2.0]
    assert log10_exact([0.07]) == [float(Decimal("0.07").log10())]
    assert log10_exact([2]) == pytest.approx([math.log10(2)], abs=1e-15)
    for bad in (0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="> 0"):
            log10_exact([bad])


def test_the_log_grid_spans_its_ends_evenly_in_log10():
    from forgetting.studies.curves.fits import log10_exact, log_grid

    positions, hours = log_grid(0.05, 2000, 300)
    assert len(positions) == len(hours) == 300
    assert positions[0] == log10_exact([0.05])[0] and positions[-1] == log10_exact([2000])[0]
    assert np.allclose(np.diff(positions), np.diff(positions)[0])
    assert hours[0] == pytest.approx(0.05, rel=1e-15) and hours[-1] == pytest.approx(2000, rel=1e-15)
    assert np.allclose(np.log10(hours), positions, atol=1e-14)
    with pytest.raises(ValueError, match="points"):
        log_grid(0.05, 2000, 1)
    with pytest.raises(ValueError, match="below"):
        log_grid(10, 1, 5)


def test_residuals_are_fitted_minus_observed_and_the_limit_rounds_up_to_a_twentieth():
    from forgetting.studies.curves.fits import fit_residuals, symmetric_limit

    savings = load_savings(repo_root() / SAVINGS_FILES["ebbinghaus1885"])
    fits = fit_all(savings.name, savings.corrected_delay_hours, savings.savings)
    residuals = fit_residuals(fits, savings.corrected_delay_hours, savings.savings)
    for fit, residual in zip(fits, residuals, strict=True):
        fitted = predict(fit.family, list(fit.parameters.values()), savings.corrected_delay_hours)
        assert list(residual) == [f - s for f, s in zip(fitted, savings.savings, strict=True)]
        assert np.allclose(residual, fit.residuals, atol=1e-5)  # the published, rounded residuals
    assert symmetric_limit([np.array([0.01, -0.12])]) == 0.15
    assert symmetric_limit([np.array([0.1])]) == 0.1
    assert symmetric_limit([np.array([0.3])], steps_per_unit=2) == 0.5
    largest = max(float(np.abs(r).max()) for r in residuals)
    assert largest <= symmetric_limit(residuals) < largest + 0.05
    with pytest.raises(ValueError, match="at least one"):
        symmetric_limit([])
    with pytest.raises(ValueError, match="steps_per_unit"):
        symmetric_limit([np.array([0.1])], steps_per_unit=0)
    with pytest.raises(ValueError, match="one length"):
        fit_residuals(fits, savings.corrected_delay_hours[:-1], savings.savings)
