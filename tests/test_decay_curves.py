"""The forgetting curve and eviction delays: published numbers and the boundary property."""

from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.decay.curves import (
    decay_eviction_delay,
    naive_eviction_turn,
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
