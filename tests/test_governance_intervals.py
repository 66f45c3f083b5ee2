"""forgetting.studies.governance.intervals: Wilson's interval against scipy and against its exact
coverage, the bootstrap against the normal approximation, determinism and bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from forgetting.studies.governance.intervals import (
    BOOTSTRAP_DECIMALS,
    BOOTSTRAP_RESAMPLES,
    NO_SESSION,
    Z_95,
    Estimate,
    bootstrap_interval,
    mean_estimate,
    share_estimate,
    wilson_interval,
)


def test_z_is_the_normal_quantile():
    assert pytest.approx(stats.norm.ppf(0.975), abs=1e-15) == Z_95


@given(n=st.integers(1, 5000), data=st.data())
def test_wilson_matches_scipy(n, data):
    k = data.draw(st.integers(0, n))
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = wilson_interval(k, n)
    assert low == pytest.approx(expected.low, abs=1e-12) and high == pytest.approx(expected.high, abs=1e-12)
    assert 0.0 <= low <= k / n <= high <= 1.0


@pytest.mark.parametrize("n, p", [(50, 0.3), (200, 0.1), (1000, 0.654)])
def test_wilson_covers_close_to_95_percent(n, p):
    # Exact coverage: the binomial probability of every k whose interval contains p.
    ks = np.arange(n + 1)
    covered = [wilson_interval(int(k), n)[0] <= p <= wilson_interval(int(k), n)[1] for k in ks]
    coverage = float(stats.binom.pmf(ks, n, p)[covered].sum())
    assert 0.925 < coverage < 0.975


def test_wilson_is_not_degenerate_at_the_ends():
    assert wilson_interval(0, 1000)[0] == 0.0 < wilson_interval(0, 1000)[1]
    assert wilson_interval(1000, 1000)[0] < 1.0 == wilson_interval(1000, 1000)[1]
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_bootstrap_agrees_with_the_normal_approximation_for_a_large_sample():
    values = np.random.default_rng(1).random(1000)
    low, high = bootstrap_interval(values.tolist())
    half = Z_95 * values.std(ddof=1) / math.sqrt(values.size)
    assert low == pytest.approx(values.mean() - half, abs=0.15 * half)
    assert high == pytest.approx(values.mean() + half, abs=0.15 * half)


def test_bootstrap_is_deterministic_and_seeded():
    values = np.random.default_rng(2).random(50).tolist()
    assert bootstrap_interval(values) == bootstrap_interval(values)
    assert bootstrap_interval(values) != bootstrap_interval(values, seed=1)
    assert all(math.isnan(x) for x in bootstrap_interval([]))
    assert bootstrap_interval([0.25] * 7) == (0.25, 0.25)


def plain_bootstrap(values, resamples, seed):
    """The docstring's resampling, read directly: fresh draws every time."""
    array = np.asarray(values, dtype=np.float64)
    draws = np.random.default_rng(seed).integers(0, array.size, size=(resamples, array.size))
    means = np.sort(np.round(array[draws].mean(axis=1), BOOTSTRAP_DECIMALS))
    low, high = math.floor(0.025 * resamples), math.ceil(0.975 * resamples) - 1
    return float(means[low]), float(means[max(low, high)])


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40), st.integers(1, 300), st.integers(0, 2))
def test_bootstrap_with_kept_resampling_indices_is_the_plain_bootstrap(values, resamples, seed):
    expected = plain_bootstrap(values, resamples, seed)
    assert bootstrap_interval(values, resamples, seed) == expected
    assert bootstrap_interval(values, resamples, seed) == expected  # the kept indices, unchanged
    assert bootstrap_interval(values[::-1], resamples, seed) == plain_bootstrap(values[::-1], resamples, seed)


def test_bootstrap_reads_order_statistics_without_interpolation():
    values = [0.0, 1.0]
    low, high = bootstrap_interval(values, resamples=BOOTSTRAP_RESAMPLES)
    assert {low, high} <= {0.0, 0.5, 1.0}  # every mean of two draws from {0, 1}


def test_estimates_count_and_format():
    share = share_estimate([True, False, True, True])
    assert (share.value, share.n) == (0.75, 4) and (share.low, share.high) == wilson_interval(3, 4)
    mean = mean_estimate([0.5, float("nan"), 1.0])
    assert (mean.value, mean.n) == (0.75, 2)
    assert Estimate(0.654, 0.6239, 0.6828, 1000).text(3) == "0.654 (95 % CI 0.624–0.683)"
    assert Estimate(32.456, 30.8, 34.06, 998).text(1) == "32.5 (95 % CI 30.8–34.1)"
    empty = mean_estimate([float("nan")])
    assert empty.n == 0 and math.isnan(empty.value) and empty.text() == "nan (no session)"
    assert NO_SESSION.n == 0 and math.isnan(NO_SESSION.value) and NO_SESSION.text() == "nan (no session)"
    constant = mean_estimate([27.046153846153846] * 4)
    assert constant.low <= constant.value <= constant.high


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: wilson_interval(5, 4), "successes must be an int >= 0 and <= 4"),
        (lambda: wilson_interval(-1, 4), "successes must be an int >= 0"),
        (lambda: wilson_interval(1, 2.0), "n must be an int >= 0"),
        (lambda: wilson_interval(1, 2, z=0), "z must be a finite real number > 0"),
        (lambda: bootstrap_interval([1.0, float("nan")]), "values must be a 1-d sequence of finite numbers"),
        (lambda: bootstrap_interval([1.0], resamples=0), "resamples must be an int >= 1"),
        (lambda: bootstrap_interval([1.0], seed=-1), "seed must be an int >= 0"),
        (lambda: share_estimate([1, 0]), "flags must be bools"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("estimate", [mean_estimate, share_estimate])
@pytest.mark.parametrize("values", [[], (), None, 3.0, "0.5"])
def test_estimates_refuse_no_values_at_all(estimate, values):
    name = "values" if estimate is mean_estimate else "flags"
    with pytest.raises(ValueError, match=f"{name} must be a non-empty sequence"):
        estimate(values)


@pytest.mark.parametrize("bad", [True, "1", math.inf, -math.inf, None])
def test_mean_estimate_refuses_values_that_are_not_numbers(bad):
    with pytest.raises(ValueError, match="values must be finite real numbers or NaN"):
        mean_estimate([0.5, bad])
    assert mean_estimate([0.5, np.float64(1.0), np.int64(0)]).n == 3
