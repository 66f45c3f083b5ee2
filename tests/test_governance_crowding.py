"""The governance world's retrieval cost: noise in the working set crowds out a task's search.

The rule is read directly here: a task is crowded out when its own uniform is at or above
``1 / (1 + crowding * n)``, ``n`` the noise items in the working set at the task, decided as
in exact rational arithmetic. The store that never evicts (Memory Worth alone) holds
``noise_per_turn * t`` noise items at a task on turn ``t``, so its log can be replayed against
that reading with no engine at all.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies.governance import (
    ALL_POLICIES,
    co_retrieval_sweep,
    crowded_out,
    crowding_probability,
    crowding_summary,
    governance_digest,
    run_governance,
    run_governance_seeds,
    summarize_governance,
    sweep_table,
    world_sweep,
)
from forgetting.studies.governance.world import STALE, TRUE, GovernanceWorld, generate_governance_session


def exactly_crowded(draw: float, crowding: float, noise_items: int) -> bool:
    return Fraction(draw) * (1 + Fraction(crowding) * noise_items) >= 1


@settings(max_examples=400, deadline=None)
@given(
    st.floats(0.0, 1.0, exclude_max=True),
    st.floats(0.0, 1000.0),
    st.integers(0, 10**7),
)
def test_crowded_out_is_the_exact_rational_decision(draw, crowding, noise_items):
    assert crowded_out(draw, crowding, noise_items) == exactly_crowded(draw, crowding, noise_items)


@pytest.mark.parametrize("crowding, noise_items", [(1.0, 1), (0.25, 4), (0.5, 6), (0.001, 1000)])
def test_crowded_out_at_and_just_below_the_boundary(crowding, noise_items):
    """At ``draw = 1 / (1 + c n)`` (a binary fraction here, or the float nearest it) the exact
    decision is taken, and the float just below it is not crowded out when the product is."""
    boundary = 1 / (1 + crowding * noise_items)
    below = math.nextafter(boundary, 0.0)
    for draw in (boundary, below, math.nextafter(boundary, 1.0)):
        assert crowded_out(draw, crowding, noise_items) == exactly_crowded(draw, crowding, noise_items)
    assert not crowded_out(below, crowding, noise_items) or exactly_crowded(below, crowding, noise_items)


@pytest.mark.parametrize("crowding, noise_items", [(0.003, 80), (0.01, 26), (0.03, 600), (2.0, 3)])
def test_crowding_probability_is_the_share_of_uniform_draws_crowded_out(crowding, noise_items):
    """Over the grid ``k / N`` of draws the crowded share is ``c n / (1 + c n)`` within ``1 / N``."""
    grid = 20_000
    share = sum(crowded_out(k / grid, crowding, noise_items) for k in range(grid)) / grid
    expected = crowding * noise_items / (1 + crowding * noise_items)
    assert crowding_probability(crowding, noise_items) == pytest.approx(expected, rel=1e-15)
    assert abs(share - expected) <= 1 / grid


def test_no_noise_or_no_weight_never_crowds():
    assert not any(crowded_out(d, 1000.0, 0) for d in (0.0, 0.5, 0.999999))
    assert not any(crowded_out(d, 0.0, 10**6) for d in (0.0, 0.5, 0.999999))
    assert crowding_probability(0.0, 500) == 0.0 == crowding_probability(5.0, 0)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: GovernanceWorld(crowding=-0.1), "crowding"),
        (lambda: GovernanceWorld(crowding=float("nan")), "crowding"),
        (lambda: GovernanceWorld(crowding=2000.0), "crowding"),
        (lambda: GovernanceWorld(crowding="0.1"), "crowding"),
        (lambda: crowding_probability(-1.0, 3), "crowding"),
        (lambda: crowding_probability(0.1, -3), "noise_items"),
        (lambda: crowding_probability(0.1, 2.5), "noise_items"),
    ],
)
def test_bad_crowding_raises_value_error_naming_it(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def small_world(**changes):
    return GovernanceWorld(**{"session_length": 160, "shift_turn": 30, **changes})


def test_crowding_changes_no_draw_of_the_session():
    base, crowded = (
        generate_governance_session(small_world(), 4),
        generate_governance_session(small_world(crowding=0.5), 4),
    )
    for field in ("task_turns", "draw_both", "draw_which", "draw_outcome", "draw_crowd"):
        assert getattr(base, field) == getattr(crowded, field), field
    assert len(base.draw_crowd) == len(base.task_turns)


@pytest.mark.parametrize("crowding", [0.004, 0.05])
def test_the_store_that_keeps_everything_is_crowded_out_as_the_rule_reads(crowding):
    """Memory Worth alone holds ``noise_per_turn * t`` noise items at a task on turn ``t``; its
    log is each task crowded out exactly when the rule says, and a crowded-out task retrieved
    no deployment fact and succeeded by the no-fact probability."""
    world = small_world(crowding=crowding)
    outcome = world.outcome
    seen = 0
    for seed in range(6):
        session = generate_governance_session(world, seed)
        run = run_governance(session, "worth")
        for i, turn in enumerate(session.task_turns):
            expected = exactly_crowded(session.draw_crowd[i], crowding, world.noise_per_turn * turn)
            assert run.crowded_out[i] == expected, (seed, turn)
            if expected:
                seen += 1
                assert run.retrieved[i] == ()
                assert run.successes[i] == (session.draw_outcome[i] < outcome.p_none)
    assert seen > 20  # the test read crowded tasks, not only uncrowded ones


def test_without_noise_crowding_changes_nothing():
    world = small_world(noise_per_turn=0)
    plain = run_governance_seeds(world, 4, policies=ALL_POLICIES)
    heavy = run_governance_seeds(replace(world, crowding=1000.0), 4, policies=ALL_POLICIES)
    for p in ALL_POLICIES:
        assert [r.crowded_out for r in heavy[p]] == [r.crowded_out for r in plain[p]]
        assert not any(any(r.crowded_out) for r in heavy[p])
    assert governance_digest(plain) == governance_digest(heavy)


def test_a_crowded_out_search_retrieves_nothing_and_skips_the_recall():
    """With every search crowded out (noise arrives from turn 1 and weighs 1000) no task
    retrieves a deployment fact; decay alone then never recalls *A*, so it evicts it before
    the shift, while at crowding 0 the same sessions keep it to the end."""
    world = small_world(crowding=1000.0)
    runs = run_governance_seeds(world, 3, policies=("decay", "worth"))
    for p, rs in runs.items():
        for r in rs:
            assert all(r.crowded_out) and all(got == () for got in r.retrieved), p
            assert r.crowded_after_shift == 1.0
    assert all(r.stale_removed_turn < world.shift_turn for r in runs["decay"])
    assert all(r.stale_removed_turn is None for r in run_governance_seeds(small_world(), 3)["decay"])


def test_crowding_summary_adds_the_mean_crowded_share():
    runs = run_governance_seeds(small_world(crowding=0.02), 5, policies=("combined",))["combined"]
    summary = crowding_summary(runs)
    assert {k: v for k, v in summary.items() if k != "crowded_out"} == summarize_governance(runs)
    shares = [
        sum(c for t, c in zip(r.task_turns, r.crowded_out) if t > r.shift_turn)
        / sum(t > r.shift_turn for t in r.task_turns)
        for r in runs
    ]
    assert summary["crowded_out"].value == pytest.approx(math.fsum(shares) / len(shares), abs=1e-15)
    assert 0 < summary["crowded_out"].value < 1


def test_world_sweep_reruns_each_value_and_takes_what_it_is_given():
    world = small_world()
    values = [0.0, 0.02]
    fresh = world_sweep(
        world, "crowding", values, 4, 1, policies=("decay", "worth"), summarize=crowding_summary
    )
    direct = run_governance_seeds(replace(world, crowding=0.02), 4, 1, policies=("worth",))["worth"]
    assert fresh[0.02]["worth"] == crowding_summary(direct)
    known = {"worth": fresh[0.0]["worth"]}
    reused = world_sweep(
        world, "crowding", values, 4, 1, policies=("decay", "worth"), known=known, summarize=crowding_summary
    )
    assert reused == fresh
    marker = {"worth": {"marker": fresh[0.02]["worth"]["crowded_out"]}}  # taken as given, never rerun
    assert world_sweep(world, "crowding", [0.0], 4, 1, policies=("worth",), known=marker)[0.0] == marker
    rows = sweep_table(fresh, "crowding")
    assert [(row["crowding"], row["policy"]) for row in rows] == [
        (0.0, "decay alone"),
        (0.0, "Memory Worth alone"),
        (0.02, "decay alone"),
        (0.02, "Memory Worth alone"),
    ]
    assert "crowded_out_ci95_low" in rows[0]


def test_co_retrieval_sweep_is_the_world_sweep_of_co_retrieval():
    world = small_world()
    assert co_retrieval_sweep(world, [0.0, 1.0], 3) == world_sweep(world, "co_retrieval", [0.0, 1.0], 3)


@pytest.mark.parametrize(
    "field, values, message",
    [
        ("outcome", [0.5], "field must be one of"),
        ("crowd", [0.5], "field must be one of"),
        ("crowding", [0.1, -1.0], "crowding"),
    ],
)
def test_world_sweep_refuses_a_bad_field_or_value_before_any_run(monkeypatch, field, values, message):
    import forgetting.studies.governance.summary as summary

    monkeypatch.setattr(summary, "run_governance_seeds", lambda *a, **k: pytest.fail("a session was run"))
    with pytest.raises(ValueError, match=message):
        world_sweep(small_world(), field, values, 3)


def test_the_facts_are_not_counted_as_noise():
    """A task with both facts and no noise at all is never crowded out, however heavy the weight:
    only the noise items count in ``n``."""
    world = small_world(noise_per_turn=0, crowding=1000.0)
    session = generate_governance_session(world, 2)
    run = run_governance(session, "decay")
    assert not any(run.crowded_out)
    assert any(set(got) == {STALE, TRUE} for got in run.retrieved)
