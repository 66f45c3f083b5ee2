"""forgetting.studies.governance.summary: estimates over sessions, the cost split, the loss order,
the digest and the chapter's tables -- each against a direct count over the runs."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from forgetting.studies.governance.batch import run_governance_seeds
from forgetting.studies.governance.intervals import mean_estimate, share_estimate
from forgetting.studies.governance.policies import POLICIES, GovernanceRun, decay_fact_states
from forgetting.studies.governance.summary import (
    MEASURE_DIGITS,
    MEASURES,
    POLICY_LABELS,
    co_retrieval_sweep,
    cost_split,
    cost_split_table,
    describe_decay_fates,
    governance_digest,
    late_window,
    loss_order,
    policy_table,
    same_removals,
    summarize_governance,
    sweep_table,
)
from forgetting.studies.governance.world import GovernanceWorld, generate_governance_session


def small_world(**changes):
    return GovernanceWorld(**{"session_length": 200, "noise_per_turn": 1, **changes})


def fake_run(seed, stale, true, successes=(True, False), shift=10, length=40):
    """A run with chosen removal turns: two tasks after the shift, constant working set."""
    return GovernanceRun(
        "combined",
        seed,
        shift,
        (shift + 1, shift + 2),
        successes,
        (("A",), ("B",)),
        (3,) * length,
        None,
        stale,
        true,
    )


@pytest.fixture(scope="module")
def default_runs():
    return run_governance_seeds(GovernanceWorld(), 12)


def test_runs_are_deterministic():
    world = small_world()
    assert governance_digest(run_governance_seeds(world, 4, 7)) == governance_digest(
        run_governance_seeds(world, 4, 7)
    )
    assert governance_digest(run_governance_seeds(world, 4, 7)) != governance_digest(
        run_governance_seeds(world, 4, 8)
    )


def test_shares_are_direct_counts_over_the_runs():
    runs = [fake_run(0, 15, None), fake_run(1, 12, 11), fake_run(2, None, None), fake_run(3, 20, 20)]
    summary = summarize_governance(runs)
    assert list(summary) == list(MEASURES)
    assert summary["true_survives"] == share_estimate([True, False, True, False])
    assert summary["stale_removed"] == share_estimate([True, True, False, True])
    assert summary["both_at_end"] == share_estimate([False, False, True, False])
    assert summary["true_left_first"] == share_estimate([False, True, False, False])  # same turn is not first
    assert summary["turns_to_remove_stale"] == mean_estimate([5, 2, 10])
    assert summary["turns_to_lose_true"] == mean_estimate([1, 10])
    assert summary["success_after_shift"].value == 0.5 and summary["working_set"].value == 3.0


def test_golden_summary_of_the_default_world(default_runs):
    # 4 of the 12 golden sessions lose the true fact (test_governance_policies.GOLDEN_REMOVALS).
    combined, decay = (
        summarize_governance(default_runs["combined"]),
        summarize_governance(default_runs["decay"]),
    )
    assert combined["true_survives"].value == 8 / 12 and decay["true_survives"].value == 1.0
    assert combined["stale_removed"].value == 1.0 and decay["stale_removed"].value == 0.0
    assert combined["true_left_first"].value == 4 / 12  # seeds 2, 8, 9, 11: every loss has B go first
    assert math.isnan(decay["turns_to_remove_stale"].value) and decay["turns_to_remove_stale"].n == 0
    assert combined["success_after_shift"].value > decay["success_after_shift"].value


def test_loss_order_counts_how_each_loss_happened(default_runs):
    runs = [
        fake_run(0, 15, None),
        fake_run(1, 12, 11),
        fake_run(2, None, 30),
        fake_run(3, 20, 20),
        fake_run(4, 5, 9),
    ]
    assert loss_order(runs) == {"lost": 4, "true_first": 2, "same_turn": 1, "stale_first": 1}
    # (stale, true) removal turns of the losing seeds 2, 8, 9, 11: (66,49) (60,45) (53,48) (58,49)
    golden = loss_order(default_runs["combined"])
    assert golden == {"lost": 4, "true_first": 4, "same_turn": 0, "stale_first": 0}


def test_cost_split_separates_sessions_that_keep_and_lose_the_true_fact(default_runs):
    split = cost_split(default_runs)
    kept, lost, every = split["true fact kept"], split["true fact lost"], split["all sessions"]
    assert (kept.sessions, lost.sessions, every.sessions) == (8, 4, 12)
    combined, decay = default_runs["combined"], default_runs["decay"]
    lost_ids = [i for i, r in enumerate(combined) if r.true_removed_turn is not None]
    assert lost.success_combined == mean_estimate([combined[i].success_after_shift for i in lost_ids])
    assert lost.success_decay == mean_estimate([decay[i].success_after_shift for i in lost_ids])
    worse = [c.success_after_shift < d.success_after_shift for c, d in zip(combined, decay)]
    assert every.combined_worse == share_estimate(worse)
    assert kept.combined_worse.value == 0.0 and lost.combined_worse.value == 1.0  # the chapter's split
    rows = cost_split_table(split)
    assert [r["group"] for r in rows] == list(split)
    assert rows[1]["success_combined_ci95_low"] == lost.success_combined.low


def test_cost_split_refuses_runs_of_different_sessions(default_runs):
    shifted = {
        "combined": default_runs["combined"],
        "decay": default_runs["decay"][1:] + default_runs["decay"][:1],
    }
    with pytest.raises(ValueError, match="same sessions"):
        cost_split(shifted)
    with pytest.raises(ValueError, match="same sessions"):
        same_removals(default_runs["worth"], shifted["decay"])


def test_memory_worth_alone_removes_like_combined_in_the_default_world(default_runs):
    assert same_removals(default_runs["worth"], default_runs["combined"]) == 12
    assert same_removals(default_runs["decay"], default_runs["combined"]) == 0


def test_without_co_retrieval_the_true_fact_survives_and_decay_bounds_the_footprint():
    runs = run_governance_seeds(small_world(co_retrieval=0.0), 5)
    assert summarize_governance(runs["combined"])["true_survives"].value == 1.0
    assert (
        summarize_governance(runs["combined"])["working_set"].value
        < summarize_governance(runs["worth"])["working_set"].value / 3
    )


def test_late_window_is_the_second_half_of_the_post_shift_turns():
    assert late_window(GovernanceWorld()) == (171, 300)
    for length, shift in ((41, 40), (42, 40), (101, 40)):
        first, last = late_window(GovernanceWorld(session_length=length, shift_turn=shift))
        assert last == length and last - first + 1 == (length - shift) // 2  # the last half, rounded down


def test_tables_have_one_row_per_policy_and_measure_and_per_value():
    world = small_world()
    runs = run_governance_seeds(world, 3)
    rows = policy_table(runs)
    assert [(r["policy"], r["measure"]) for r in rows] == [
        (POLICY_LABELS[p], label) for p in POLICIES for label in MEASURES.values()
    ]
    first, last = late_window(world)
    late = mean_estimate([r.success_between(first, last) for r in runs["decay"]])
    assert rows[1]["value"] == late.value and rows[1]["sessions"] == 3
    sweep = co_retrieval_sweep(world, [0.0, 1.0], 3)
    assert list(sweep) == [0.0, 1.0] and list(sweep[0.0]) == ["decay", "combined"]
    assert sweep[0.0]["combined"] == summarize_governance(
        run_governance_seeds(small_world(co_retrieval=0.0), 3)["combined"]
    )
    table = sweep_table(sweep)
    assert [(r["co_retrieval"], r["policy"]) for r in table] == [
        (0.0, "decay alone"),
        (0.0, "combined governance"),
        (1.0, "decay alone"),
        (1.0, "combined governance"),
    ]
    assert table[3]["true_survives_ci95_high"] == sweep[1.0]["combined"]["true_survives"].high
    assert set(MEASURE_DIGITS) == set(MEASURES)


@pytest.mark.parametrize(
    "changes, rules",
    [
        ({"task_rate": 0.0}, {}),  # no task after the shift: every rate is over no session
        ({}, {"eviction_threshold": 0.9}),  # decay evicts both deployment facts
        ({"session_length": 3, "shift_turn": 2}, {"min_evidence": 1.0, "low_threshold": 0.69}),
    ],
)
def test_the_chapters_library_path_runs_at_the_edges_of_the_registry(changes, rules):
    world = replace(GovernanceWorld(), **changes)
    runs = run_governance_seeds(world, 4, **rules)
    for p in POLICIES:
        for estimate in summarize_governance(runs[p]).values():
            assert estimate.n == 0 or estimate.low <= estimate.value <= estimate.high
            assert estimate.text(3)
    assert len(policy_table(runs)) == len(POLICIES) * len(MEASURES)
    assert sum(cost_split(runs)[g].sessions for g in ("true fact kept", "true fact lost")) == 4
    assert loss_order(runs["combined"])["lost"] == sum(
        r.true_removed_turn is not None for r in runs["combined"]
    )
    assert same_removals(runs["worth"], runs["combined"]) <= 4
    sweep = co_retrieval_sweep(world, [0.0, 1.0], 2, **rules)
    assert len(sweep_table(sweep)) == 4
    states = decay_fact_states(generate_governance_session(world, 0), rules.get("eviction_threshold", 0.2))
    assert describe_decay_fates(states, rules.get("eviction_threshold", 0.2))


def test_a_rate_over_no_session_is_nan_not_an_error():
    summary = summarize_governance(run_governance_seeds(GovernanceWorld(task_rate=0.0), 3)["combined"])
    assert summary["success_after_shift"].n == 0 and math.isnan(summary["success_after_shift"].value)
    assert summary["success_after_shift"].text(3) == "nan (no session)"
    assert summary["true_survives"].value == 0.0  # B, never retrieved, decays away in every session


def test_describe_decay_fates_says_what_the_engine_did():
    kept = decay_fact_states(generate_governance_session(GovernanceWorld(), 0))
    assert describe_decay_fates(kept, 0.2).startswith("at the last turn the lower of their two retentions is")
    assert "above the threshold θ = 0.20" in describe_decay_fates(kept, 0.2)
    lost = decay_fact_states(generate_governance_session(GovernanceWorld(task_rate=0.0), 0))
    expected = f"it evicts B at turn {lost['B'].evicted_turn}, and keeps A to the end"
    assert describe_decay_fates(lost, 0.2) == expected


@pytest.mark.parametrize("runs", [[], ["run"], "runs"])
def test_summaries_refuse_what_is_not_runs(runs):
    with pytest.raises(ValueError, match="runs must be a non-empty sequence of GovernanceRun"):
        summarize_governance(runs)
    with pytest.raises(ValueError, match="runs must be a non-empty sequence of GovernanceRun"):
        loss_order(runs)


@pytest.mark.parametrize("runs", [{}, {"decay": [], "worth": []}, [], None])
def test_policy_table_and_cost_split_name_the_policies_they_need(runs):
    with pytest.raises(ValueError, match=r"runs must (hold the runs of every policy|be a mapping).*"):
        policy_table(runs)
    with pytest.raises(ValueError, match=r"runs must (hold the runs of every policy|be a mapping)"):
        cost_split(runs)


def test_policy_table_says_which_policy_is_missing(default_runs):
    partial = {p: default_runs[p] for p in ("decay", "worth")}
    with pytest.raises(ValueError, match=r"missing \['combined'\]"):
        policy_table(partial)
    split = cost_split(default_runs)
    assert all(group.sessions == 0 or group.success_combined.n > 0 for group in split.values())
