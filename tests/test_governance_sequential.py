"""The sequential test of harm (forgetting.worth.evidence.HarmTest) and its policy.

Its guarantee rests on one identity: given the past, a contrast task's factor ``1 - lam * W``
has mean ``1 - 2 * lam * delta``, so exactly 1 when the fact has no effect. That identity is
checked in rational arithmetic, the float fast path against the exact decision, the level
against a world where no fact matters, and the policy's deprecations against a replay of its
own log through a fresh test.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.governance import (
    DEFAULT_ALPHA,
    SEQUENTIAL,
    GovernanceOutcome,
    GovernanceWorld,
    HarmTest,
    generate_governance_session,
    null_level_rows,
    null_world,
    retrieval_chance,
    run_governance,
    run_governance_seeds,
    share_estimate,
    summarize_governance,
)
from forgetting.governance.world import STALE, TRUE

OUTCOMES = ((True, True), (True, False), (False, True), (False, False))


def one_step(co_retrieval: float) -> dict[tuple[bool, bool], Fraction]:
    """The mixture's exact value after one contrast task of each kind."""
    steps = {}
    for retrieved, success in OUTCOMES:
        test = HarmTest(co_retrieval)
        test.add(retrieved, success)
        steps[(retrieved, success)] = test.exact_evidence()
    return steps


@pytest.mark.parametrize("co_retrieval", [0.0, 0.25, 0.5, 0.75, 0.9])
@pytest.mark.parametrize(
    "p1, p0",
    [
        (Fraction(1, 2),) * 2,
        (Fraction(1, 5),) * 2,
        (Fraction(9, 10),) * 2,
        (Fraction(3, 5), Fraction(2, 5)),
        (Fraction(1, 4), Fraction(9, 10)),
    ],
)
def test_one_step_mean_is_one_minus_twice_the_bet_times_the_effect(co_retrieval, p1, p0):
    """``E[mixture after one task] = 1 - 2 * delta * mean(lam)``: exactly 1 at no effect, below
    1 for a helpful fact, above for a harmful one (the supermartingale the level rests on)."""
    q = retrieval_chance(co_retrieval)
    assert q == (1 + Fraction(co_retrieval)) / 2
    step = one_step(co_retrieval)
    mean = q * (p1 * step[(True, True)] + (1 - p1) * step[(True, False)]) + (1 - q) * (
        p0 * step[(False, True)] + (1 - p0) * step[(False, False)]
    )
    bet = (Fraction(1, 4) + Fraction(1, 2) + Fraction(3, 4)) / 3 * min(q, 1 - q)
    assert mean == 1 - 2 * bet * (p1 - p0)
    assert all(
        Fraction(1, 4) <= value <= Fraction(7, 4) for value in step.values()
    )  # factors in [1 - s, 1 + s]


def test_evidence_grows_on_harm_and_shrinks_on_help():
    step = one_step(0.5)
    assert step[(True, False)] > 1 > step[(True, True)]  # retrieved and failed: evidence of harm
    assert step[(False, True)] > 1 > step[(False, False)]  # withheld and succeeded: evidence of harm


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(OUTCOMES), max_size=250),
    st.sampled_from([0.0, 0.3, 0.5, 0.8]),
    st.sampled_from([1e-3, 0.01, 0.05, 0.3]),
)
def test_the_float_fast_path_decides_as_the_exact_products(tasks, co_retrieval, alpha):
    test = HarmTest(co_retrieval, alpha)
    for retrieved, success in tasks:
        test.add(retrieved, success)
        exact = test.exact_evidence()
        assert test.harmful() == (Fraction(alpha) * exact >= 1)
        assert test.evidence == pytest.approx(float(exact), rel=1e-12)


def test_a_run_of_failures_with_the_fact_rejects_and_the_boundary_is_exact():
    test = HarmTest(0.0, 0.01)
    count = 0
    while not test.harmful():
        test.add(True, False)
        count += 1
    # each failure with the fact multiplies share s's product by 1 + s: the first n whose
    # mean (1.25**n + 1.5**n + 1.75**n) / 3 reaches 100
    n = next(
        n for n in range(1, 100) if (Fraction(5, 4) ** n + Fraction(3, 2) ** n + Fraction(7, 4) ** n) >= 300
    )
    assert count == n


def test_without_an_out_arm_nothing_is_ever_deprecated():
    test = HarmTest(1.0, 0.3)
    for _ in range(500):
        test.add(True, False)
    assert test.evidence == 1.0 and not test.harmful()


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: HarmTest(0.5, 0.0), "alpha"),
        (lambda: HarmTest(0.5, 1.0), "alpha"),
        (lambda: HarmTest(0.5, float("nan")), "alpha"),
        (lambda: HarmTest(1.5), "co_retrieval"),
        (lambda: retrieval_chance(-0.1), "co_retrieval"),
        (
            lambda: run_governance(generate_governance_session(GovernanceWorld(), 0), SEQUENTIAL, alpha=2.0),
            "alpha",
        ),
        (lambda: null_world(GovernanceWorld(), 1.5), "success"),
        (lambda: null_world("world", 0.5), "world"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_null_world_gives_every_task_the_same_chance():
    world = null_world(GovernanceWorld(shift_turn=30), 0.4)
    assert world.outcome == GovernanceOutcome(0.4, 0.4, 0.4, 0.4)
    assert world.shift_turn == 30


def contrast_tasks(run, session, world):
    """A sequential run's contrast tasks, read from its log: after the shift, up to the first
    deprecation (that task included), not crowded out."""
    first = min(
        t for t in (run.stale_removed_turn, run.true_removed_turn, world.session_length) if t is not None
    )
    return [
        i
        for i, turn in enumerate(session.task_turns)
        if world.shift_turn < turn <= first and not run.crowded_out[i]
    ]


@pytest.mark.parametrize(
    "world", [GovernanceWorld(session_length=200), GovernanceWorld(session_length=200, crowding=0.01)]
)
def test_the_policy_deprecates_exactly_when_a_fresh_test_on_its_log_rejects(world):
    replayed = 0
    for seed in range(8):
        session = generate_governance_session(world, seed)
        run = run_governance(session, SEQUENTIAL)
        tests = {m: HarmTest(world.co_retrieval, DEFAULT_ALPHA) for m in (STALE, TRUE)}
        rejected = {}
        for i in contrast_tasks(run, session, world):
            for m, test in tests.items():
                test.add(m in run.retrieved[i], run.successes[i])
                if test.harmful() and m not in rejected:
                    rejected[m] = session.task_turns[i]
            replayed += 1
        assert rejected.get(STALE) == run.stale_removed_turn, seed
        assert rejected.get(TRUE) == run.true_removed_turn, seed
    assert replayed > 100


def test_in_a_world_where_nothing_matters_it_deprecates_at_most_alpha():
    """The level is a promise per fact and session; over 400 null sessions the measured share
    is consistent with it (its Wilson interval reaches below alpha), while the effect interval
    at z = 1 deprecates far more often than that."""
    world = null_world(GovernanceWorld(session_length=200), 0.5)
    alpha = 0.1
    runs = run_governance_seeds(world, 400, policies=(SEQUENTIAL, "effect"), alpha=alpha, effect_z=1.0)
    lost = share_estimate([r.true_removed_turn is not None for r in runs[SEQUENTIAL]])
    stale = share_estimate([r.stale_removed_turn is not None for r in runs[SEQUENTIAL]])
    assert lost.low <= alpha and stale.low <= alpha
    interval = share_estimate([r.true_removed_turn is not None for r in runs["effect"]])
    assert interval.low > alpha


def test_null_level_rows_read_the_sweeps():
    world = null_world(GovernanceWorld(session_length=120, shift_turn=20), 0.5)
    z = {
        1.0: summarize_governance(
            run_governance_seeds(world, 6, policies=("effect",), effect_z=1.0)["effect"]
        )
    }
    a = {
        0.3: summarize_governance(
            run_governance_seeds(world, 6, policies=(SEQUENTIAL,), alpha=0.3)[SEQUENTIAL]
        )
    }
    rows = null_level_rows(z, a)
    assert [(r["test"], r["setting"]) for r in rows] == [
        ("effect interval", "z = 1"),
        ("sequential test", "alpha = 0.3"),
    ]
    assert rows[1]["promised"] == 0.3 and rows[0]["promised"] != rows[0]["promised"]  # NaN: no promise
    for row, summary in zip(rows, (z[1.0], a[0.3])):
        assert row["true_lost"] == 1 - summary["true_survives"].value
        assert row["stale_lost"] == summary["stale_removed"].value
        assert row["true_lost_ci95_low"] <= row["true_lost"] <= row["true_lost_ci95_high"]
