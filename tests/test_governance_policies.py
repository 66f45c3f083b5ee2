"""forgetting.governance.policies: decay keeps contradicting facts, outcome evidence deprecates.

The golden test pins, for a dozen sessions of the chapter's default world, the turn at which
each policy lost each fact. It fails if a policy stops deprecating (or deprecates
differently) -- e.g. a combined policy that never deprecates the true fact.
"""

from __future__ import annotations

import math

import pytest

from forgetting.governance.policies import POLICIES, decay_fact_states, run_governance, run_governance_seeds
from forgetting.governance.world import STALE, TRUE, GovernanceWorld, generate_governance_session

#: (stale_removed_turn, true_removed_turn) per seed 0..11 of ``GovernanceWorld()`` with the
#: default rules; regression pins of this code, checked against the published chapter's digest.
GOLDEN_REMOVALS = {
    "decay": [(None, None)] * 12,
    "worth": [
        (115, None),
        (57, None),
        (100, None),
        (68, None),
        (64, None),
        (52, None),
        (133, None),
        (61, 53),
        (47, 47),
        (56, 51),
        (82, 53),
        (53, 48),
    ],
}
GOLDEN_REMOVALS["combined"] = GOLDEN_REMOVALS["worth"]


def small_world(**changes):
    return GovernanceWorld(**{"session_length": 200, "noise_per_turn": 1, **changes})


def test_golden_removal_turns_of_every_policy():
    runs = run_governance_seeds(GovernanceWorld(), 12)
    for policy in POLICIES:
        assert [(r.stale_removed_turn, r.true_removed_turn) for r in runs[policy]] == GOLDEN_REMOVALS[
            policy
        ], policy


def test_combined_governance_can_lose_the_true_fact_and_says_when():
    runs = run_governance_seeds(GovernanceWorld(), 12)["combined"]
    lost = [r for r in runs if r.true_removed_turn is not None]
    assert lost  # outcome evidence is wrong about B in some sessions: the chapter's cost
    for run in lost:
        assert run.true_removed_turn >= run.shift_turn
        after = [r for t, r in zip(run.task_turns, run.retrieved) if t > run.true_removed_turn]
        assert all(TRUE not in r for r in after)  # a deprecated fact is never retrieved again


def test_policies_share_the_same_tasks():
    runs = run_governance_seeds(small_world(), 3)
    for k in range(3):
        assert len({runs[p][k].task_turns for p in POLICIES}) == 1


def test_decay_alone_keeps_both_contradicting_facts():
    for run in run_governance_seeds(small_world(co_retrieval=0.5), 5)["decay"]:
        assert run.stale_removed_turn is None and run.true_removed_turn is None
        assert any(set(r) == {STALE, TRUE} for r in run.retrieved)  # both recalled together


def test_decay_fact_states_are_read_from_the_engine_that_played():
    session = generate_governance_session(GovernanceWorld(), 0)
    states = decay_fact_states(session)
    decay = run_governance(session, "decay")
    for fact in (STALE, TRUE):
        assert states[fact].recalls == sum(fact in r for r in decay.retrieved)
        assert 0.2 < states[fact].retention <= 1.0 and states[fact].stability > 8.0


def test_working_set_excludes_deprecated_items_and_worth_alone_keeps_the_noise():
    runs = run_governance_seeds(small_world(co_retrieval=0.0), 3)
    for worth_run in runs["worth"]:
        assert worth_run.worth_trace is not None
        assert worth_run.working_set[-1] == 1 + 200 * 1 + 1 - (worth_run.stale_removed_turn is not None) - (
            worth_run.true_removed_turn is not None
        )
    assert all(r.worth_trace is None for r in runs["decay"])


def test_success_between_checks_its_turns():
    run = run_governance(generate_governance_session(small_world(), 0), "decay")
    assert 0.0 <= run.success_between(1, 200) <= 1.0
    assert math.isnan(run.success_between(500, 600))
    with pytest.raises(ValueError, match="first_turn"):
        run.success_between(-1, 10)
    with pytest.raises(ValueError, match="last_turn"):
        run.success_between(1, "10")


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: run_governance("session", "decay"), "session"),
        (lambda: run_governance(generate_governance_session(GovernanceWorld(), 0), "oracle"), "policy"),
        (
            lambda: run_governance(
                generate_governance_session(GovernanceWorld(), 0), "combined", eviction_threshold=1.0
            ),
            "eviction_threshold",
        ),
        (
            lambda: run_governance(
                generate_governance_session(GovernanceWorld(), 0), "combined", min_evidence=0
            ),
            "min_evidence",
        ),
        (
            lambda: run_governance(
                generate_governance_session(GovernanceWorld(), 0), "combined", low_threshold=0.8
            ),
            "low_threshold",
        ),
        (lambda: run_governance_seeds(GovernanceWorld(), 0), "n_seeds"),
        (lambda: run_governance_seeds(GovernanceWorld(), 1, -3), "base_seed"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
