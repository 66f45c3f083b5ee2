"""The forgetting curve and eviction delays: published numbers and the boundary property."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay.curves import (
    NEVER_TURN,
    decay_eviction_delay,
    naive_eviction_turn,
    reinforced_stability,
    retention,
    stability_after_recalls,
)


def test_published_retention_numbers():
    stability = stability_after_recalls(4)
    assert round(stability) == 292
    assert round(retention(15, 8.0), 3) == 0.153
    assert round(retention(15, stability), 3) == 0.950
    assert round(retention(111, stability), 3) == 0.684


def test_published_grace_periods():
    assert [round(naive_eviction_turn(s, 0.2), 2) for s in (2, 4, 6, 8)] == [3.22, 6.44, 9.66, 12.88]


@settings(max_examples=300, deadline=None)
@given(stability=st.floats(0.05, 1e5), theta=st.floats(1e-3, 0.999))
def test_eviction_delay_is_first_turn_below_threshold(stability, theta):
    delay = decay_eviction_delay(stability, theta)
    assert retention(delay, stability) < theta
    assert delay == 1 or retention(delay - 1, stability) >= theta


@settings(max_examples=200, deadline=None)
@given(boundary=st.integers(1, 10**7), estimate=st.floats(-10.0, 2e7))
def test_first_turn_below_finds_the_boundary_from_any_estimate(boundary, estimate):
    from forgetting.decay.curves import first_turn_below

    assert first_turn_below(lambda t: t >= boundary, estimate) == boundary
    assert first_turn_below(lambda t: True, float("inf")) is None


# --- the domain of every curve function: refused with a ValueError naming the argument -------------

BAD_STABILITIES = [0, 0.0, -8, -1e-300, math.nan, -math.inf, True, "8", None]


@pytest.mark.parametrize("stability", BAD_STABILITIES)
def test_curve_functions_refuse_a_stability_that_is_not_positive(stability):
    calls = [
        lambda: retention(5, stability),
        lambda: reinforced_stability(stability, 2),
        lambda: stability_after_recalls(2, stability),
        lambda: naive_eviction_turn(stability, 0.2),
        lambda: decay_eviction_delay(stability, 0.2),
    ]
    for call in calls:
        with pytest.raises(
            ValueError, match=r"stability must be a real number > 0 \(inf: never decays\), got"
        ):
            call()


@pytest.mark.parametrize("t", [math.nan, math.inf, -math.inf, True, "5", None, 10**400])
def test_retention_refuses_a_time_that_is_not_a_finite_number(t):
    with pytest.raises(ValueError, match="turns_since_touch must be a finite real number, got"):
        retention(t, 8.0)


def test_the_domain_edges_that_are_allowed():
    assert retention(-3, 8.0) == 1.0 == retention(0, 8.0)  # before the touch: R = 1, as documented
    assert retention(np.int64(15), np.float64(8.0)) == retention(15, 8.0)
    assert retention(10**6, math.inf) == 1.0  # S = inf (reinforcement overflowed): never decays
    assert reinforced_stability(math.inf, 2) == math.inf
    assert decay_eviction_delay(math.inf, 0.2) is None
    assert reinforced_stability(8.0, np.int64(2)) == reinforced_stability(8.0, 2)
    assert decay_eviction_delay(8, 0.2) == decay_eviction_delay(8.0, 0.2) == 13


@pytest.mark.parametrize("count", [-1, 2.0, True, None])
def test_reinforcement_needs_a_non_negative_int_touch_count(count):
    with pytest.raises(ValueError, match="touch_count must be an int >= 0"):
        reinforced_stability(8.0, count)
    with pytest.raises(ValueError, match="recalls must be an int >= 0"):
        stability_after_recalls(count)


@pytest.mark.parametrize("theta", [0.0, 1.0, 1.5, math.nan, True])
def test_eviction_rules_refuse_a_threshold_outside_zero_one(theta):
    for call in (lambda: decay_eviction_delay(8.0, theta), lambda: naive_eviction_turn(8.0, theta)):
        with pytest.raises(ValueError, match=r"eviction_threshold must be a real number in \(0, 1\)"):
            call()


@settings(max_examples=200, deadline=None)
@given(stability=st.floats(allow_nan=True, allow_infinity=True), theta=st.floats(1e-3, 0.999))
def test_a_nan_or_non_positive_stability_is_never_read_as_never_evicted(stability, theta):
    """Whatever float comes in, the answer is a turn, ``None`` for ``S = inf`` only, or a ValueError."""
    try:
        delay = decay_eviction_delay(stability, theta)
    except ValueError as error:
        assert "stability must be" in str(error) and not stability > 0
    else:
        assert stability > 0 and (delay is None) == (stability * math.log(1 / theta) >= NEVER_TURN)
