"""Memory Worth's formulas and weights: values, arrays, bad input."""

import math

import numpy as np
import pytest

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
