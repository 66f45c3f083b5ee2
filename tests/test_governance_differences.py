"""Per-session differences between policies and sweeps of one rule (governance/differences.py)."""

from __future__ import annotations

import math

import pytest

from forgetting.studies.governance import (
    GovernanceWorld,
    difference_table,
    mean_estimate,
    paired_difference,
    rule_sweep,
    rule_sweep_table,
    run_governance_seeds,
    session_value,
    summarize_governance,
)


@pytest.fixture(scope="module")
def runs():
    return run_governance_seeds(GovernanceWorld(), 30, policies=("decay", "combined", "effect"))


def test_session_values_read_the_run(runs):
    for run in runs["combined"]:
        assert session_value(run, "true_survives") == float(run.true_removed_turn is None)
        assert session_value(run, "stale_removed") == float(run.stale_removed_turn is not None)
        assert session_value(run, "success_after_shift") == run.success_after_shift


def test_the_paired_difference_is_the_mean_of_the_per_session_differences(runs):
    estimate = paired_difference(runs["combined"], runs["decay"], "success_after_shift")
    differences = [
        a.success_after_shift - b.success_after_shift for a, b in zip(runs["combined"], runs["decay"])
    ]
    assert estimate == mean_estimate(differences)
    assert estimate.value == pytest.approx(sum(differences) / len(differences))
    assert estimate.low <= estimate.value <= estimate.high


def test_a_policy_minus_itself_is_zero_with_a_zero_interval(runs):
    estimate = paired_difference(runs["effect"], runs["effect"], "true_survives")
    assert (estimate.value, estimate.low, estimate.high, estimate.n) == (0.0, 0.0, 0.0, 30)


def test_the_difference_of_shares_is_the_difference_of_the_shares(runs):
    shares = {p: summarize_governance(runs[p])["true_survives"].value for p in ("effect", "combined")}
    difference = paired_difference(runs["effect"], runs["combined"], "true_survives").value
    assert difference == pytest.approx(shares["effect"] - shares["combined"])


def test_the_difference_table_has_a_row_per_pair_and_measure(runs):
    rows = difference_table(runs, [("combined", "decay"), ("effect", "combined")])
    assert len(rows) == 6
    assert {row["minus"] for row in rows} == {"decay alone", "combined governance"}
    assert all(row["difference_ci95_low"] <= row["difference"] <= row["difference_ci95_high"] for row in rows)


def test_different_sessions_and_bad_measures_are_refused(runs):
    with pytest.raises(ValueError, match="same sessions"):
        paired_difference(runs["combined"], runs["decay"][1:], "true_survives")
    with pytest.raises(ValueError, match="same sessions"):
        paired_difference([], [], "true_survives")
    with pytest.raises(ValueError, match="measure must be one of"):
        paired_difference(runs["combined"], runs["decay"], "working_set")


def test_a_rule_sweep_runs_the_policy_at_each_value_on_the_same_sessions():
    world = GovernanceWorld(session_length=120)
    sweep = rule_sweep(world, "effect", "effect_z", [1.0, 3.0], 10)
    for z in (1.0, 3.0):
        direct = run_governance_seeds(world, 10, policies=("effect",), effect_z=z)["effect"]
        assert sweep[z] == summarize_governance(direct)
    rows = rule_sweep_table(sweep, "effect_z")
    assert [row["effect_z"] for row in rows] == [1.0, 3.0]
    assert not math.isnan(rows[0]["true_survives"])


def test_a_swept_rule_may_not_also_be_fixed():
    with pytest.raises(ValueError, match="effect_z"):
        rule_sweep(GovernanceWorld(), "effect", "effect_z", [1.0], 2, effect_z=2.0)


def test_known_values_of_a_sweep_are_taken_and_equal_a_rerun():
    world = GovernanceWorld(session_length=120)
    rerun = rule_sweep(world, "discounted", "discount", [0.8, 1.0], 10)
    combined = summarize_governance(run_governance_seeds(world, 10, policies=("combined",))["combined"])
    taken = rule_sweep(world, "discounted", "discount", [0.8, 1.0], 10, known={1.0: combined})
    assert taken[1.0] is combined and taken == rerun  # gamma = 1 is the cumulative estimator


def _summary(kept, removed, n=100):
    from forgetting.studies.governance import Estimate

    return {
        "true_survives": Estimate(kept, kept - 0.01, min(kept + 0.01, 1.0), n),
        "stale_removed": Estimate(removed, removed - 0.01, min(removed + 0.01, 1.0), n),
    }


def test_the_target_is_both_shares_at_least_99_percent_on_the_point_estimates():
    from forgetting.studies.governance import TARGET_SHARE, meets_target

    assert TARGET_SHARE == 0.99
    assert meets_target(_summary(0.99, 1.0)) and meets_target(_summary(1.0, 0.99))
    assert not meets_target(_summary(0.989, 1.0)) and not meets_target(_summary(1.0, 0.789))


def test_the_true_fact_lost_is_one_minus_kept_with_the_interval_turned_round():
    from forgetting.studies.governance import lost_estimate

    lost = lost_estimate(_summary(0.991, 1.0))
    assert lost.value == pytest.approx(0.009) and lost.n == 100
    assert lost.low == pytest.approx(1 - 1.0) and lost.high == pytest.approx(1 - 0.981)


def test_meeting_and_target_texts_name_the_values_that_meet_it():
    from forgetting.studies.governance import meeting_text, target_text

    sweep = {1.0: _summary(0.9, 1.0), 1.96: _summary(1.0, 1.0), 2.576: _summary(1.0, 0.995)}
    assert meeting_text(sweep, "z") == "z in 1.96 and 2.576"
    assert meeting_text({1.0: _summary(0.5, 1.0)}, "γ") == "none of the swept γ"
    world = {0.0: {"effect": _summary(1.0, 1.0)}, 0.03: {"effect": _summary(0.991, 0.789)}}
    assert target_text(world, "effect") == {
        "meets": "0",
        "fails": "0.03",
        "target": "meets the target at 0 and not at 0.03",
    }
    assert target_text({0.0: {"effect": _summary(1.0, 1.0)}}, "effect")["target"] == (
        "meets the target at every swept value"
    )
    assert target_text({0.0: {"effect": _summary(0.1, 1.0)}}, "effect") == {
        "meets": "none",
        "fails": "0",
        "target": "meets the target at no swept value",
    }


def test_the_discount_floor_splits_the_silent_discounts_from_the_acting_ones():
    from forgetting.studies.governance import discount_floor

    sweep = {
        0.9: _summary(0.9, 1.0),
        0.5: _summary(1.0, 0.0),
        0.8: _summary(1.0, 0.0),
        1.0: _summary(0.7, 1.0),
    }
    assert discount_floor(sweep) == ([0.5, 0.8], [0.9, 1.0])


def test_rule_sweep_values_name_the_ends_the_best_z_and_the_discount_floor():
    from forgetting.studies.governance import Estimate, rule_sweep_values

    def summary(kept, removed, turns, success):
        return {
            **_summary(kept, removed),
            "turns_to_remove_stale": Estimate(turns, turns - 1, turns + 1, 100),
            "success_after_shift": Estimate(success, success - 0.01, success + 0.01, 100),
        }

    z_sweep = {
        1.0: summary(0.6, 1.0, 10.0, 0.80),
        1.96: summary(1.0, 1.0, 20.0, 0.87),
        3.291: summary(1.0, 1.0, 40.0, 0.84),
    }
    gamma_sweep = {
        0.5: summary(1.0, 0.0, math.nan, 0.36),
        0.8: summary(1.0, 0.0, math.nan, 0.36),
        0.9: summary(0.88, 1.0, 13.8, 0.80),
        1.0: summary(0.68, 1.0, 30.6, 0.62),
    }
    v = rule_sweep_values(z_sweep, gamma_sweep, min_evidence=5.0)
    assert (
        v["z_meeting_target"] == "z in 1.96 and 3.291" and v["gamma_meeting_target"] == "none of the swept γ"
    )
    assert (v["z_low"], v["z_high"], v["best_success_z"]) == (1.0, 3.291, 1.96)
    assert v["z_low_true_survives_text"] == "0.600 (95 % CI 0.590–0.610)"
    assert v["z_high_turns_to_remove_stale_text"] == "40.0 (95 % CI 39.0–41.0)"
    assert v["gamma_bound"] == pytest.approx(0.8) and v["min_evidence_value"] == 5.0
    assert v["gamma_silent_clause"] == "at γ = 0.5 and 0.8 the policy never deprecates and is decay alone"
    assert v["gamma_acting_low"] == "0.9"
    assert v["gamma_acting_low_turns_to_remove_stale_text"] == "13.8 (95 % CI 12.8–14.8)"
