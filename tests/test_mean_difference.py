"""forgetting.studies.mean_difference: two independent means, their difference and its standard error."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgetting.studies.mean_difference import consistent_indices, difference_of_means, standard_error
from forgetting.studies.stats import Z_95

means = st.floats(-10.0, 10.0, allow_nan=False)
ses = st.floats(1e-6, 10.0, allow_nan=False)


@given(means, ses, means, ses)
def test_the_difference_and_its_se_are_the_two_sample_formulas(a, se_a, b, se_b):
    result = difference_of_means(a, se_a, b, se_b)
    assert result.difference == a - b
    assert result.se == pytest.approx(math.hypot(se_a, se_b), rel=1e-12)
    assert result.z == pytest.approx((a - b) / math.hypot(se_a, se_b), rel=1e-9)
    assert result.consistent == (abs(a - b) <= Z_95 * result.se)


@given(means, ses, means, ses)
def test_swapping_the_means_flips_the_sign_only(a, se_a, b, se_b):
    forward, backward = difference_of_means(a, se_a, b, se_b), difference_of_means(b, se_b, a, se_a)
    assert forward.difference == -backward.difference and forward.se == backward.se
    assert forward.consistent == backward.consistent


def test_a_gap_of_two_standard_errors_is_not_consistent_and_one_is():
    # se of the difference: sqrt(0.03^2 + 0.04^2) = 0.05
    assert difference_of_means(0.1, 0.03, 0.0, 0.04).consistent is False
    assert difference_of_means(0.05, 0.03, 0.0, 0.04).consistent is True
    assert difference_of_means(0.1, 0.03, 0.0, 0.04, z_limit=2.5).consistent is True


@given(st.floats(0.0, 5.0), st.integers(1, 10_000))
def test_the_standard_error_is_sd_over_root_n(sd, n):
    assert standard_error(sd, n) * math.sqrt(n) == pytest.approx(sd, rel=1e-12, abs=1e-300)


def test_consistent_indices_apply_the_criterion_to_each_mean():
    means, errors = [0.95, 0.91, 0.895, 0.80], [0.001, 0.004, 0.004, 0.001]
    expected = [i for i in range(4) if abs(means[i] - 0.9) <= Z_95 * math.hypot(errors[i], 0.0045)]
    assert consistent_indices(means, errors, 0.9, 0.0045) == expected == [1, 2]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: difference_of_means(float("nan"), 0.1, 0.0, 0.1), "mean_a"),
        (lambda: difference_of_means(0.0, -0.1, 0.0, 0.1), "se_a"),
        (lambda: difference_of_means(0.0, 0.0, 0.0, 0.0), "must not both be 0.0"),
        (lambda: difference_of_means(0.0, 0.1, 0.0, 0.1, z_limit=0.0), "z_limit"),
        (lambda: standard_error(-1.0, 4), "sd"),
        (lambda: standard_error(1.0, 0), "n must be an int >= 1"),
        (lambda: consistent_indices([0.1, 0.2], [0.1], 0.0, 0.1), "same length"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
