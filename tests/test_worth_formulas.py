"""Memory Worth's formulas and weights: values, arrays, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.worth import (
    MemoryWorth,
    evidence_volume,
    memory_worth,
    oracle_weights,
    score_weights,
    uniform_weights,
)


def test_memory_worth_formula_on_arrays():
    pos = np.array([0.0, 3.0, 0.0, 2.5])
    neg = np.array([0.0, 1.0, 4.0, 2.5])
    assert memory_worth(pos, neg, prior=0.5).tolist() == [0.5, 0.75, 0.0, 0.5]
    assert evidence_volume(pos, neg).tolist() == [0.0, 4.0, 4.0, 5.0]
    assert isinstance(memory_worth(1.0, 1.0), float)


def test_weight_helpers():
    assert uniform_weights(3).tolist() == [1.0, 1.0, 1.0]
    assert score_weights([1.0, 3.0]).tolist() == [0.25, 0.75]
    assert score_weights([1.0, 3.0], normalize=False).tolist() == [1.0, 3.0]
    assert oracle_weights([2, 0], [0.1, 0.5, 0.9]).tolist() == [0.9, 0.1]
    assert oracle_weights([2, 0], [0.1, 0.5, 0.9], normalize=True).tolist() == [0.9, 0.1]
    assert score_weights([1.0, 1.0, 1.0]).sum() == 1.0
    mw = MemoryWorth().update(["x", "y"], True, weights=score_weights([2.0, 6.0]))
    assert mw.counters("x") == (0.25, 0.0) and mw.counters("y") == (0.75, 0.0)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: score_weights([1.0, -0.2]), "scores must be finite and >= 0"),
        (lambda: score_weights([0.0, 0.0]), "scores must not all be 0"),
        (lambda: score_weights([]), "scores must be a non-empty 1-d sequence"),
        (lambda: score_weights([1.0, math.nan]), "scores must be finite and >= 0"),
        (lambda: oracle_weights([3], [0.1, 0.2]), "retrieved indices must be in"),
        (lambda: oracle_weights([0.5], [0.1, 0.2]), "retrieved must be a 1-d sequence of int indices"),
        (lambda: uniform_weights(0), "n_retrieved must be an int >= 1"),
        (lambda: oracle_weights([0], [[0.1, 0.2]]), r"utilities must be 1-d .*, got shape \(1, 2\)"),
        (lambda: oracle_weights([1], [[0.1], [0.2]]), r"utilities must be 1-d .*, got shape \(2, 1\)"),
        (lambda: uniform_weights(True), "n_retrieved must be an int >= 1"),
    ],
)
def test_weight_helpers_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    "successes, failures, name",
    [
        (-1, 2, "successes"),
        (1, -0.5, "failures"),
        (float("nan"), 1, "successes"),
        (1, float("inf"), "failures"),
        (np.array([1.0, -1.0]), np.array([1.0, 1.0]), "successes"),
        (1.0, np.array([0.0, np.nan]), "failures"),
        ("a", 1, "successes"),
        (1, None, "failures"),
        (10**400, 1, "successes"),
        (True, 1, "successes"),
    ],
)
def test_formulas_refuse_negative_or_non_finite_counters(successes, failures, name):
    for formula in (memory_worth, evidence_volume):
        with pytest.raises(ValueError, match=name):
            formula(successes, failures)


# --- overflowing sums, the prior, flags ----------------------------------------------------------

MAX = 1.7976931348623157e308


def test_memory_worth_of_counters_whose_sum_overflows_is_the_true_ratio():
    assert memory_worth(1e308, 1e308) == 0.5
    assert memory_worth(MAX, MAX) == 0.5
    assert memory_worth(1.5e308, 0.5e308) == 0.75
    assert memory_worth(np.array([MAX, 1.0, 0.0]), np.array([MAX, 3.0, 0.0])).tolist() == [0.5, 0.25, 0.5]


finite = st.floats(0.0, MAX, allow_subnormal=True)


@settings(max_examples=300, deadline=None)
@given(finite, finite)
def test_memory_worth_is_the_direct_formula_wherever_the_sum_is_finite(pos, neg):
    """Bit for bit ``h+ / (h+ + h-)`` on every ordinary input; in [0, 1] and scale-free beyond."""
    total = pos + neg
    if total == 0:
        assert memory_worth(pos, neg) == 0.5
    elif math.isfinite(total):
        assert memory_worth(pos, neg) == pos / total
    else:  # the halved counters give the same ratio as the exact sum would
        assert memory_worth(pos, neg) == (pos / 2) / (pos / 2 + neg / 2)
        assert memory_worth(pos, neg) == memory_worth(pos / 4, neg / 4)
    assert 0.0 <= memory_worth(pos, neg) <= 1.0


def test_evidence_volume_refuses_a_sum_that_overflows():
    with pytest.raises(ValueError, match=r"successes \+ failures must be finite"):
        evidence_volume(1e308, 1e308)
    assert evidence_volume(1e308, 7e307) == 1e308 + 7e307


@pytest.mark.parametrize("prior", [2, -0.1, math.nan, math.inf, True, "0.5", None])
def test_the_prior_must_be_a_real_number_in_zero_one(prior):
    with pytest.raises(ValueError, match=r"prior must be a real number in \[0, 1\], got"):
        memory_worth(0, 0, prior=prior)
    assert memory_worth(0, 0, prior=0) == 0.0 and memory_worth(0, 0, prior=1.0) == 1.0


@pytest.mark.parametrize("counter", ["3", np.array(["1", "2"]), 1 + 2j, [True, False]])
def test_strings_complex_numbers_and_bools_are_never_counters(counter):
    for formula in (memory_worth, evidence_volume):
        with pytest.raises(ValueError, match="successes must be finite real numbers >= 0"):
            formula(counter, 1.0)


@pytest.mark.parametrize("flag", ["no", 0, 1, None, 1.0])
def test_weight_helpers_refuse_a_flag_that_is_not_a_bool(flag):
    with pytest.raises(ValueError, match="normalize must be a bool"):
        score_weights([1.0, 3.0], normalize=flag)
    with pytest.raises(ValueError, match="normalize must be a bool"):
        oracle_weights([0], [0.5], normalize=flag)
    assert score_weights([1.0, 3.0], normalize=np.bool_(False)).tolist() == [1.0, 3.0]
