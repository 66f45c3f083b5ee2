"""Curve families: invariants, the FSRS form against the fsrs package, the exact eviction delay."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.curves.families import (
    ebbinghaus_log_savings,
    equivalent_exponential_threshold,
    matched_power_stability,
    power_crossing_time,
    power_eviction_delay,
    power_factor,
    power_retention,
    two_exponential_retention,
    wickelgren_retention,
)
from forgetting.decay.curves import NEVER_TURN, decay_eviction_delay, reinforced_stability
from forgetting.studies.curves import fsrs_reference
from forgetting.studies.curves.fsrs_reference import (
    FSRS_DECAY_BOUNDS,
    fsrs_max_abs_difference,
    fsrs_retrievability,
)

decays = st.floats(0.05, 3.0)
stabilities = st.floats(0.01, 1e4)


@given(stability=stabilities, decay=decays)
def test_power_law_starts_at_one_and_is_point_nine_at_its_stability(stability, decay):
    assert power_retention(0, stability, decay) == 1.0
    assert power_retention(stability, stability, decay) == pytest.approx(0.9, abs=1e-12)


@given(stability=stabilities, decay=decays, t=st.floats(0.0, 1e5), dt=st.floats(1e-3, 1e3))
def test_power_law_decreases_and_stays_in_the_unit_interval(stability, decay, t, dt):
    now, later = power_retention(t, stability, decay), power_retention(t + dt, stability, decay)
    assert 0.0 <= later <= now <= 1.0


@given(decay=decays)
def test_factor_makes_one_plus_factor_to_minus_d_point_nine(decay):
    assert (1 + power_factor(decay)) ** (-decay) == pytest.approx(0.9, rel=1e-12)


def test_power_law_has_the_heavier_tail_at_equal_crossing():
    s = matched_power_stability(8.0, 0.2, 0.5)
    assert power_retention(1, s, 0.5) < math.exp(-1 / 8)  # steeper start
    assert power_retention(100, s, 0.5) > math.exp(-100 / 8)  # heavier tail


def test_other_families_are_one_at_zero_and_decreasing():
    assert wickelgren_retention(0, 1.0, 0.3, 0.5) == 1.0
    assert wickelgren_retention(10, 1.0, 0.3, 0.5) < wickelgren_retention(1, 1.0, 0.3, 0.5)
    assert two_exponential_retention(0, 0.4, 1.0, 0.6, 100.0) == pytest.approx(1.0)
    assert ebbinghaus_log_savings(1, 1.84, 1.25) == 100.0


def test_wickelgren_is_the_fsrs_form_with_a_free_time_unit():
    for t in (0.5, 3.0, 40.0):
        assert wickelgren_retention(t, 1.0, power_factor(0.4) / 5.0, 0.4) == pytest.approx(
            power_retention(t, 5.0, 0.4), rel=1e-12
        )


def test_ebbinghaus_own_fit_reproduces_his_calculated_column():
    # Ebbinghaus (1913 translation, p. 78): t = 20, 64, 526 minutes -> calculated 57.0, 46.7, 34.5,
    # computed by hand with log tables, so agreement is to his last digit (within 0.1)
    calculated = [ebbinghaus_log_savings(t, 1.84, 1.25) for t in (20, 64, 526)]
    assert calculated == pytest.approx([57.0, 46.7, 34.5], abs=0.1)


def test_fsrs_form_equals_the_fsrs_package_on_a_grid():
    days = range(0, 3651, 37)
    assert (
        fsrs_max_abs_difference(days, [0.001, 0.3, 1.0, 8.0, 250.0, 36500.0], [0.1, 0.1542, 0.3, 0.5, 0.8])
        <= 1e-12
    )


@settings(max_examples=60, deadline=None)
@given(t=st.integers(0, 5000), stability=st.floats(0.01, 1e4), decay=st.floats(*FSRS_DECAY_BOUNDS))
def test_fsrs_form_equals_the_fsrs_package_anywhere(t, stability, decay):
    assert abs(power_retention(t, stability, decay) - fsrs_retrievability(t, stability, decay)) <= 1e-12


def test_fsrs_grid_must_not_be_empty():
    with pytest.raises(ValueError, match="empty grid"):
        fsrs_max_abs_difference([], [1.0], [0.5])


@settings(max_examples=300)
@given(stability=st.floats(0.001, 1e5), theta=st.floats(0.01, 0.99), decay=decays)
def test_eviction_delay_is_the_first_whole_turn_below_theta(stability, theta, decay):
    delay = power_eviction_delay(stability, theta, decay)
    if delay is None:  # beyond any session: only when the crossing itself is
        assert power_crossing_time(stability, theta, decay) >= NEVER_TURN
        return
    assert delay >= 1
    assert power_retention(delay, stability, decay) < theta
    assert delay == 1 or not power_retention(delay - 1, stability, decay) < theta


@given(theta=st.floats(0.05, 0.95), decay=decays, recalls=st.integers(0, 8))
def test_matched_items_stay_matched_after_recalls(theta, decay, recalls):
    exponential, power = 8.0, matched_power_stability(8.0, theta, decay)
    assert power_crossing_time(power, theta, decay) == pytest.approx(8.0 * math.log(1 / theta), rel=1e-9)
    for touch in range(2, recalls + 2):
        exponential, power = reinforced_stability(exponential, touch), reinforced_stability(power, touch)
    ratio = power_crossing_time(power, theta, decay) / (exponential * math.log(1 / theta))
    assert ratio == pytest.approx(1.0, rel=1e-9)


def test_matched_plain_item_has_the_exponential_grace_period():
    for decay in (0.1542, 0.2, 0.3, 0.5, 1.0):
        assert power_eviction_delay(
            matched_power_stability(8.0, 0.2, decay), 0.2, decay
        ) == decay_eviction_delay(8.0, 0.2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"baseline_stability": 0.0}, "baseline_stability"),
        ({"eviction_threshold": 1.0}, "eviction_threshold"),
        ({"decay": -0.5}, "decay"),
        ({"decay": float("nan")}, "decay"),
    ],
)
def test_matching_refuses_bad_arguments(kwargs, message):
    arguments = {"baseline_stability": 8.0, "eviction_threshold": 0.2, "decay": 0.5} | kwargs
    with pytest.raises(ValueError, match=message):
        matched_power_stability(**arguments)


def test_power_factor_refuses_a_zero_decay():
    with pytest.raises(ValueError, match="decay must be"):
        power_factor(0.0)


def test_the_default_decay_is_read_from_the_fsrs_package() -> None:
    from fsrs.scheduler import DEFAULT_PARAMETERS

    assert fsrs_reference.fsrs_default_decay() == DEFAULT_PARAMETERS[20]
    lowest, highest = fsrs_reference.FSRS_DECAY_BOUNDS
    assert lowest <= fsrs_reference.fsrs_default_decay() <= highest


@pytest.mark.parametrize("stability", [0.0, -8.0, math.nan, True, None])
def test_power_law_functions_refuse_a_stability_that_is_not_positive(stability):
    calls = [
        lambda: power_retention(5, stability, 0.5),
        lambda: power_crossing_time(stability, 0.2, 0.5),
        lambda: power_eviction_delay(stability, 0.2, 0.5),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"stability must be a real number > 0"):
            call()
    with pytest.raises(ValueError, match="exponential_stability must be a real number > 0"):
        equivalent_exponential_threshold(8.0, 0.2, 0.5, stability)


@pytest.mark.parametrize(
    "t, stability, decay, name",
    [
        (math.nan, 8.0, 0.5, "turns_since_touch"),
        (math.inf, 8.0, 0.5, "turns_since_touch"),
        (5, 8.0, 0.0, "decay"),
        (5, 8.0, math.inf, "decay"),
        (5, 8.0, True, "decay"),
    ],
)
def test_power_retention_refuses_a_bad_time_or_decay(t, stability, decay, name):
    with pytest.raises(ValueError, match=f"{name} must be"):
        power_retention(t, stability, decay)


def test_power_law_with_an_infinite_stability_never_decays():
    assert power_retention(10**6, math.inf, 0.5) == 1.0
    assert power_eviction_delay(math.inf, 0.2, 0.5) is None
    with pytest.raises(ValueError, match="eviction_threshold must be"):
        power_eviction_delay(8.0, math.nan, 0.5)


def test_decay_checks_cover_every_exponent_with_the_reference_that_exists():
    from forgetting.studies.curves.fsrs_reference import FSRS_V4_DECAY, decay_check_summary, fsrs_decay_checks

    rows = fsrs_decay_checks([0.5, 1.0, 2.0, 0.5, *FSRS_DECAY_BOUNDS], [0, 1, 30, 365], [0.5, 8.0])
    assert [r["decay"] for r in rows] == [0.1, 0.5, 0.8, 1.0, 2.0]  # distinct, ascending
    assert [r["reference"] for r in rows] == ["fsrs package"] * 3 + ["srs-benchmark FSRS v4", None]
    assert all(r["grid_points"] == 8 for r in rows)
    assert rows[-1]["max_abs_diff"] is None
    assert all(0.0 <= r["max_abs_diff"] <= 1e-12 for r in rows[:-1])
    summary = decay_check_summary(rows, [0.5, FSRS_V4_DECAY, 2.0])
    assert summary["package_triples"] == 24 and summary["package_decays"] == "0.1, 0.5, 0.8"
    assert summary["v4_decays"] == "1" and summary["engine_unchecked"] == 1
    assert decay_check_summary(rows, [0.5, 1.0])["engine_unchecked"] == 0
    with pytest.raises(ValueError, match=r"engine_decays \[0.3\] have no row"):
        decay_check_summary(rows, [0.3])
    with pytest.raises(ValueError, match="empty grid"):
        fsrs_decay_checks([0.5], [], [1.0])


@settings(max_examples=100, deadline=None)
@given(t=st.integers(0, 36500), stability=st.floats(0.001, 1e5))
def test_fsrs_form_at_d_one_is_the_benchmarks_fsrs_v4_curve(t, stability):
    from forgetting.studies.curves.fsrs_reference import fsrs_v4_retrievability

    direct = 1.0 / (1.0 + t / (9.0 * stability))  # F = 0.9^-1 - 1 = 1/9
    assert fsrs_v4_retrievability(t, stability) == pytest.approx(direct, rel=1e-15)
    assert abs(power_retention(float(t), stability, 1.0) - fsrs_v4_retrievability(t, stability)) <= 1e-12


def test_fsrs_v4_curve_refuses_bad_arguments():
    from forgetting.studies.curves.fsrs_reference import fsrs_v4_retrievability

    with pytest.raises(ValueError, match="elapsed_days must be >= 0 and stability > 0"):
        fsrs_v4_retrievability(-1, 1.0)
    with pytest.raises(ValueError, match="elapsed_days must be >= 0 and stability > 0"):
        fsrs_v4_retrievability(1, 0.0)
