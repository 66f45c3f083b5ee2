"""forgetting.governance.summary: seed means, the digest, and the chapter's table rows."""

from __future__ import annotations

import math

import pytest

from forgetting.governance.policies import POLICIES, run_governance_seeds
from forgetting.governance.summary import (
    POLICY_LABELS,
    co_retrieval_sweep,
    governance_digest,
    late_success,
    late_window,
    policy_table,
    summarize_governance,
)
from forgetting.governance.world import GovernanceWorld


def small_world(**changes):
    return GovernanceWorld(**{"session_length": 200, "noise_per_turn": 1, **changes})


def test_runs_are_deterministic():
    world = small_world()
    assert governance_digest(run_governance_seeds(world, 4, 7)) == governance_digest(
        run_governance_seeds(world, 4, 7)
    )
    assert governance_digest(run_governance_seeds(world, 4, 7)) != governance_digest(
        run_governance_seeds(world, 4, 8)
    )


def test_combined_policy_deprecates_the_stale_fact_in_the_default_world():
    world = GovernanceWorld()  # the chapter's published world
    runs = run_governance_seeds(world, 10)
    assert all(
        r.stale_removed_turn is not None and r.stale_removed_turn > world.shift_turn for r in runs["combined"]
    )
    combined, decay = summarize_governance(runs["combined"]), summarize_governance(runs["decay"])
    assert combined["stale_removed"] == 1.0 and math.isnan(decay["turns_to_remove_stale"])
    assert combined["success_after_shift"] > decay["success_after_shift"]
    assert combined["true_survives"] < 1.0 == decay["true_survives"]


def test_without_co_retrieval_the_true_fact_survives_and_decay_bounds_the_footprint():
    runs = run_governance_seeds(small_world(co_retrieval=0.0), 5)
    assert summarize_governance(runs["combined"])["true_survives"] == 1.0
    assert (
        summarize_governance(runs["combined"])["working_set"]
        < summarize_governance(runs["worth"])["working_set"] / 3
    )


def test_late_window_is_the_second_half_of_the_post_shift_turns():
    assert late_window(GovernanceWorld()) == (171, 300)
    for length, shift in ((41, 40), (42, 40), (101, 40)):
        first, last = late_window(GovernanceWorld(session_length=length, shift_turn=shift))
        assert last == length and last - first + 1 == (length - shift) // 2  # the last half, rounded down


def test_tables_have_one_row_per_policy_and_value():
    world = small_world()
    runs = run_governance_seeds(world, 3)
    rows = policy_table(runs, world)
    assert [r["policy"] for r in rows] == [POLICY_LABELS[p] for p in POLICIES]
    first, last = late_window(world)
    assert rows[0]["success, late turns"] == late_success(runs["decay"], first, last)
    sweep = co_retrieval_sweep(world, [0.0, 1.0], 3)
    assert [(r["co_retrieval"], r["policy"]) for r in sweep] == [
        (0.0, "decay alone"),
        (0.0, "combined governance"),
        (1.0, "decay alone"),
        (1.0, "combined governance"),
    ]
    assert (
        sweep[1]["true_survives"]
        == summarize_governance(run_governance_seeds(small_world(co_retrieval=0.0), 3)["combined"])[
            "true_survives"
        ]
    )


@pytest.mark.parametrize("runs", [[], ["run"]])
def test_summarize_refuses_what_is_not_runs(runs):
    with pytest.raises(ValueError, match="runs"):
        summarize_governance(runs)
