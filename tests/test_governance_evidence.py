"""The effect interval (worth/evidence.py) and the three policies that keep the engine's
working set and deprecate otherwise: the newest fact wins, discounted worth, effect interval."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from forgetting.studies.governance import (
    EffectArms,
    GovernanceWorld,
    generate_governance_session,
    harmful,
    run_governance,
    run_governance_seeds,
)
from forgetting.studies.governance.world import STALE, TRUE

counts = st.integers(0, 400)


def agresti_caffo_upper(n1: int, k1: int, n0: int, k0: int, z: float) -> float:
    """The bound read directly from the formula, in floats."""
    p1, p0 = (k1 + 1) / (n1 + 2), (k0 + 1) / (n0 + 2)
    return p1 - p0 + z * math.sqrt(p1 * (1 - p1) / (n1 + 2) + p0 * (1 - p0) / (n0 + 2))


@settings(max_examples=300, deadline=None)
@given(n1=counts, n0=counts, data=st.data(), z=st.floats(0.0, 10.0))
def test_harmful_is_the_agresti_caffo_upper_bound_below_zero(n1, n0, data, z):
    k1, k0 = data.draw(st.integers(0, n1)), data.draw(st.integers(0, n0))
    upper = agresti_caffo_upper(n1, k1, n0, k0, z)
    assume(abs(upper) > 1e-9)  # the float reading is exact enough away from the boundary
    assert harmful(EffectArms(n1, k1, n0, k0), z) is (upper < 0)


@settings(max_examples=200, deadline=None)
@given(n1=counts, n0=counts, data=st.data(), z=st.floats(0.0, 5.0), more=st.floats(0.0, 5.0))
def test_a_larger_z_never_deprecates_more(n1, n0, data, z, more):
    arms = EffectArms(n1, data.draw(st.integers(0, n1)), n0, data.draw(st.integers(0, n0)))
    assert not (harmful(arms, z + more) and not harmful(arms, z))


def test_no_contrast_no_deprecation_at_the_default_z():
    # without an out arm (n0 = 0) even a fact that always fails is not shown to be harmful
    assert not harmful(EffectArms(10_000, 0, 0, 0))
    assert harmful(EffectArms(30, 0, 30, 30)) and not harmful(EffectArms(30, 30, 30, 0))


def test_arms_count_their_tasks_and_estimate_the_difference():
    arms = EffectArms()
    assert math.isnan(arms.estimate)
    for retrieved, success in [(True, True), (True, False), (False, False), (False, False), (True, True)]:
        arms.add(retrieved, success)
    assert (arms.n1, arms.k1, arms.n0, arms.k0) == (3, 2, 2, 0)
    assert arms.estimate == pytest.approx(2 / 3)


@pytest.mark.parametrize("z", [-0.1, 10.5, math.nan, "2"])
def test_a_bad_z_is_refused_by_name(z):
    with pytest.raises(ValueError, match="effect_z"):
        harmful(EffectArms(), z)


def test_the_newest_fact_wins_removes_the_stale_fact_at_the_shift_and_keeps_the_true_one():
    world = GovernanceWorld()
    for run in run_governance_seeds(world, 20, policies=("newest",))["newest"]:
        assert (run.stale_removed_turn, run.true_removed_turn) == (world.shift_turn, None)
        assert all(
            STALE not in retrieved
            for t, retrieved in zip(run.task_turns, run.retrieved)
            if t >= world.shift_turn
        )


def test_discounted_worth_at_gamma_one_is_the_combined_policy():
    runs = run_governance_seeds(GovernanceWorld(), 12, policies=("combined", "discounted"), discount=1.0)
    assert [replace(r, policy="-") for r in runs["combined"]] == [
        replace(r, policy="-") for r in runs["discounted"]
    ]


def test_discounting_changes_the_runs():
    runs = run_governance_seeds(GovernanceWorld(), 12, policies=("combined", "discounted"), discount=0.9)
    assert [r.stale_removed_turn for r in runs["combined"]] != [
        r.stale_removed_turn for r in runs["discounted"]
    ]


def replayed_effect_removals(run, world, z):
    """Deprecation turns of the effect policy re-derived from its run: contrast tasks are the
    tasks after the shift at which neither fact had been removed yet."""
    arms = {STALE: EffectArms(), TRUE: EffectArms()}
    removed: dict[str, int] = {}
    for turn, retrieved, success in zip(run.task_turns, run.retrieved, run.successes):
        if turn < world.shift_turn or removed:
            continue
        for fact, counts in arms.items():
            counts.add(fact in retrieved, success)
            if harmful(counts, z):
                removed[fact] = turn
    return removed.get(STALE), removed.get(TRUE)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    z=st.sampled_from([0.5, 1.0, 2.576]),
    co_retrieval=st.sampled_from([0.0, 0.3, 0.5, 0.9]),
)
def test_the_effect_policy_deprecates_exactly_when_a_replay_of_its_contrast_tasks_says_so(
    seed, z, co_retrieval
):
    world = GovernanceWorld(session_length=160, co_retrieval=co_retrieval, noise_per_turn=1)
    run = run_governance(generate_governance_session(world, seed), "effect", effect_z=z)
    assert (run.stale_removed_turn, run.true_removed_turn) == replayed_effect_removals(run, world, z)


def test_without_a_task_that_retrieves_one_fact_the_effect_policy_never_deprecates():
    runs = run_governance_seeds(GovernanceWorld(co_retrieval=1.0), 20, policies=("effect",))["effect"]
    assert all((r.stale_removed_turn, r.true_removed_turn) == (None, None) for r in runs)


@pytest.mark.parametrize(
    "rules, name",
    [({"discount": 0.0}, "discount"), ({"discount": 1.5}, "discount"), ({"effect_z": -1}, "effect_z")],
)
def test_bad_rules_of_the_new_policies_are_refused_by_name(rules, name):
    session = generate_governance_session(GovernanceWorld(), 0)
    with pytest.raises(ValueError, match=name):
        run_governance(session, "effect", **rules)


def test_the_contrast_estimates_the_effect_the_world_implies():
    """Under decay alone both facts stay available, so every post-shift task is a contrast task:
    pooled over sessions, in-arm minus out-arm success is the effect the outcome model implies,
    delta(A) = (c p_conflict + (1-c)/2 p_wrong) / (c + (1-c)/2) - p_ok and
    delta(B) = (c p_conflict + (1-c)/2 p_ok) / (c + (1-c)/2) - p_wrong."""
    world = GovernanceWorld(co_retrieval=0.5)
    o, c = world.outcome, world.co_retrieval
    expected = {
        STALE: (c * o.p_conflict + (1 - c) / 2 * o.p_wrong) / (c + (1 - c) / 2) - o.p_ok,
        TRUE: (c * o.p_conflict + (1 - c) / 2 * o.p_ok) / (c + (1 - c) / 2) - o.p_wrong,
    }
    arms = {STALE: EffectArms(), TRUE: EffectArms()}
    for run in run_governance_seeds(world, 200, policies=("decay",))["decay"]:
        for turn, retrieved, success in zip(run.task_turns, run.retrieved, run.successes):
            if turn > world.shift_turn:
                for fact, counts in arms.items():
                    counts.add(fact in retrieved, success)
    for fact, counts in arms.items():
        p1, p0 = counts.k1 / counts.n1, counts.k0 / counts.n0
        se = math.sqrt(p1 * (1 - p1) / counts.n1 + p0 * (1 - p0) / counts.n0)
        assert abs(counts.estimate - expected[fact]) < 4 * se, (fact, counts.estimate, expected[fact], se)
    assert expected[STALE] < 0 < expected[TRUE]


def _exact_harmful(n1, k1, n0, k0, z):
    p1, p0 = Fraction(k1 + 1, n1 + 2), Fraction(k0 + 1, n0 + 2)
    d = p1 - p0
    var = p1 * (1 - p1) / (n1 + 2) + p0 * (1 - p0) / (n0 + 2)
    return d < 0 and d * d > Fraction(z) ** 2 * var


@settings(max_examples=500, deadline=None)
@given(
    st.integers(0, 100_000).flatmap(lambda n1: st.tuples(st.just(n1), st.integers(0, n1))),
    st.integers(0, 100_000).flatmap(lambda n0: st.tuples(st.just(n0), st.integers(0, n0))),
    st.one_of(st.floats(0.0, 10.0), st.sampled_from([0.0, 1.0, 1.645, 1.96, 2.576, 3.291])),
)
def test_the_float_fast_path_decides_as_exact_rational_arithmetic(first, second, z):
    (n1, k1), (n0, k0) = first, second
    assert harmful(EffectArms(n1, k1, n0, k0), z) == _exact_harmful(n1, k1, n0, k0, z)


@pytest.mark.parametrize("n", [0, 1, 7, 40])
def test_equal_arms_are_never_harmful_and_the_boundary_is_exact(n):
    """Equal arms give a zero difference: never harmful at any z, even 0 (``d < 0`` fails)."""
    for k in range(n + 1):
        assert not harmful(EffectArms(n, k, n, k), 0.0)
        assert not harmful(EffectArms(n, k, n, k), 2.576)


def test_every_small_count_decides_as_exact_rational_arithmetic():
    """All arms of at most 12 tasks each, at the chapter's z values and at 0: where float noise
    would sit, right at small counts, the decision is the exact one."""
    for z in (0.0, 1.0, 1.645, 1.96, 2.576, 3.291):
        for n1 in range(13):
            for n0 in range(13):
                for k1 in range(n1 + 1):
                    for k0 in range(n0 + 1):
                        assert harmful(EffectArms(n1, k1, n0, k0), z) == _exact_harmful(n1, k1, n0, k0, z)
