"""forgetting.studies.governance.world: the outcome model, the world's settings and one seeded session."""

from __future__ import annotations

from dataclasses import replace

import pytest

from forgetting.studies.executor import ProcessPool
from forgetting.studies.governance.batch import run_governance_seeds
from forgetting.studies.governance.policies import POLICIES, run_governance
from forgetting.studies.governance.world import (
    BOTH_STREAM,
    CROWD_STREAM,
    HARD_STREAM,
    OUTCOME_STREAM,
    WHICH_STREAM,
    GovernanceOutcome,
    GovernanceWorld,
    _session_draws,
    generate_governance_session,
    omission_world,
    session_arrays,
)
from forgetting.studies.worlds.model import substream


def test_outcome_probability_by_what_was_retrieved():
    model = GovernanceOutcome(0.9, 0.25, 0.05, 0.2)
    assert [
        model.probability(t, s) for t, s in [(True, False), (True, True), (False, True), (False, False)]
    ] == [0.9, 0.25, 0.05, 0.2]


def test_sessions_are_a_function_of_world_and_seed():
    world = GovernanceWorld(session_length=200, noise_per_turn=1)
    assert generate_governance_session(world, 3) == generate_governance_session(world, 3)
    assert generate_governance_session(world, 3) != generate_governance_session(world, 4)


def test_kept_draws_are_the_streams_own_whatever_was_drawn_before():
    world = GovernanceWorld(session_length=120, shift_turn=30)
    _session_draws.cache_clear()
    first = generate_governance_session(world, 5)  # drawn
    generate_governance_session(world, 6)
    kept = generate_governance_session(replace(world, co_retrieval=0.0, crowding=0.1), 5)  # kept
    _session_draws.cache_clear()
    again = generate_governance_session(world, 5)  # drawn again
    streams = (BOTH_STREAM, WHICH_STREAM, OUTCOME_STREAM, CROWD_STREAM, HARD_STREAM)
    plain = [tuple(substream(5, stream).random(len(first.task_turns)).tolist()) for stream in streams]
    for session in (first, kept, again):
        assert session.task_turns == first.task_turns
        assert [session.draw_both, session.draw_which, session.draw_outcome, session.draw_crowd,
                session.draw_hard] == plain  # fmt: skip
    turns, arrays = session_arrays(world, 5)
    assert turns == first.task_turns and [tuple(a.tolist()) for a in arrays] == plain
    assert not any(a.flags.writeable for a in arrays)  # what is kept cannot be changed


def test_pre_shift_recalls_are_spaced_and_post_shift_tasks_follow_the_rate():
    world = GovernanceWorld()
    session = generate_governance_session(world, 0)
    before = [t for t in session.task_turns if t < world.shift_turn]
    gaps = [b - a for a, b in zip([1, *before], before)]
    assert all(later > earlier for earlier, later in zip(gaps, gaps[1:]))  # gaps grow
    after = [t for t in session.task_turns if t > world.shift_turn]
    assert list(session.task_turns) == sorted(session.task_turns)
    assert (
        len(session.draw_both)
        == len(session.draw_which)
        == len(session.draw_outcome)
        == len(session.task_turns)
    )
    assert 0.6 < len(after) / (world.session_length - world.shift_turn) < 1.0


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: GovernanceOutcome(p_ok=1.5), "p_ok"),
        (lambda: GovernanceOutcome(p_conflict=float("nan")), "p_conflict"),
        (lambda: GovernanceOutcome(p_wrong=True), "p_wrong"),
        (lambda: GovernanceOutcome(p_none="0.2"), "p_none"),
        (lambda: GovernanceWorld(session_length=1), "session_length"),
        (lambda: GovernanceWorld(shift_turn=300, session_length=300), "shift_turn"),
        (lambda: GovernanceWorld(task_rate=-0.1), "task_rate"),
        (lambda: GovernanceWorld(co_retrieval=2), "co_retrieval"),
        (lambda: GovernanceWorld(noise_per_turn=-1), "noise_per_turn"),
        (lambda: GovernanceWorld(first_gap=0), "first_gap"),
        (lambda: GovernanceWorld(outcome=0.5), "outcome"),
        (lambda: generate_governance_session("world", 0), "world"),
        (lambda: generate_governance_session(GovernanceWorld(), -1), "seed"),
        (lambda: generate_governance_session(GovernanceWorld(), 1.0), "seed"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_every_bad_setting_is_named_at_once():
    with pytest.raises(ValueError, match="task_rate.*co_retrieval"):
        GovernanceWorld(task_rate=2.0, co_retrieval=-1.0)


def test_a_seeds_runs_do_not_depend_on_what_else_is_run():
    """Sessions are drawn up front from the seed alone: the policies run beside one, the seed
    range and the co_retrieval value (common random numbers) change nothing (executors:
    tests/test_executor.py)."""
    world = GovernanceWorld(session_length=120, shift_turn=20)
    every = run_governance_seeds(world, 4, base_seed=3)
    alone = run_governance_seeds(world, 2, base_seed=4, policies=("combined",))
    assert alone["combined"] == every["combined"][1:3]
    base, other = (
        generate_governance_session(world, 5),
        generate_governance_session(replace(world, co_retrieval=0.9), 5),
    )
    assert (other.task_turns, other.draw_both, other.draw_which, other.draw_outcome) == (
        base.task_turns,
        base.draw_both,
        base.draw_which,
        base.draw_outcome,
    )


@pytest.mark.parametrize("short_length", [41, 150, 299])
def test_a_shorter_session_is_the_start_of_a_longer_one(short_length):
    """Each kind of draw has its own stream, read in turn order: the tasks and draws up to turn
    ``short_length`` are the same in a session of 300 turns, and so is what every policy does
    on them (issue 18; a single generator drew the task block after all task coins)."""
    world = GovernanceWorld(session_length=300)
    short_world = replace(world, session_length=short_length)
    for seed in range(4):
        short, long = generate_governance_session(short_world, seed), generate_governance_session(world, seed)
        tasks = len(short.task_turns)
        assert long.task_turns[:tasks] == short.task_turns
        assert all(t > short_length for t in long.task_turns[tasks:])
        for field in ("draw_both", "draw_which", "draw_outcome", "draw_crowd"):
            assert getattr(long, field)[:tasks] == getattr(short, field), field
        for policy in POLICIES:
            a, b = run_governance(short, policy), run_governance(long, policy)
            assert (b.successes[:tasks], b.retrieved[:tasks]) == (a.successes, a.retrieved), policy
            assert b.working_set[:short_length] == a.working_set, policy
            assert b.worth_trace is None or b.worth_trace[:tasks] == a.worth_trace, policy
            for turn in ("stale_removed_turn", "true_removed_turn"):
                later = getattr(b, turn)
                assert getattr(a, turn) == (later if later is not None and later <= short_length else None)


def test_sessions_do_not_depend_on_the_workers():
    """workers=1 and workers=2 (local processes) give the runs of this process, in seed order."""
    world = GovernanceWorld(session_length=120, shift_turn=20)
    here = run_governance_seeds(world, 5, base_seed=2)
    for workers in (1, 2):
        assert run_governance_seeds(world, 5, base_seed=2, executor=ProcessPool(workers)) == here, workers


@pytest.mark.parametrize(("co_retrieval", "omission"), [(1.0, 0.25), (0.8, 0.5), (0.5, 0.0), (1.0, 1.0)])
def test_an_agent_that_withholds_one_fact_at_random_is_the_world_at_a_lower_co_retrieval(
    co_retrieval, omission
):
    import numpy as np

    world = omission_world(GovernanceWorld(co_retrieval=co_retrieval), omission)
    assert world.co_retrieval == pytest.approx(co_retrieval * (1 - omission))
    # the agent read off its definition: the world's coin, then its own, then which fact to withhold
    rng = np.random.default_rng(3)
    n = 200_000
    both = rng.random(n) < co_retrieval
    withhold = both & (rng.random(n) < omission)
    stale_alone = np.where(both, withhold & (rng.random(n) < 0.5), rng.random(n) < 0.5)
    observed = [np.mean(both & ~withhold), np.mean(stale_alone)]
    expected = [world.co_retrieval, (1 - world.co_retrieval) / 2]
    for share, p in zip(observed, expected):
        assert abs(share - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12


def test_omission_world_refuses_a_bad_rate_or_world():
    with pytest.raises(ValueError, match=r"omission must be a probability"):
        omission_world(GovernanceWorld(), 1.5)
    with pytest.raises(ValueError, match=r"world must be a GovernanceWorld, got 3"):
        omission_world(3, 0.5)


def test_a_confound_ties_which_fact_comes_back_alone_to_difficulty_but_not_its_overall_share():
    world = GovernanceWorld(confound=0.6, difficulty=0.5)
    assert world.stale_alone(True) == pytest.approx(0.2) and world.stale_alone(False) == pytest.approx(0.8)
    assert (world.stale_alone(True) + world.stale_alone(False)) / 2 == pytest.approx(0.5)
    assert world.success_probability(True, False, True) == pytest.approx(0.45)
    assert world.success_probability(True, False, False) == 0.9
    plain = GovernanceWorld()
    assert plain.stale_alone(True) == plain.stale_alone(False) == 0.5
    assert all(plain.success_probability(t, s, True) == plain.outcome.probability(t, s)
               for t in (True, False) for s in (True, False))  # fmt: skip


def test_the_confound_and_difficulty_draw_from_their_own_stream_and_move_no_other_draw():
    plain, confounded = GovernanceWorld(), GovernanceWorld(confound=1.0, difficulty=0.5)
    a, b = generate_governance_session(plain, 4), generate_governance_session(confounded, 4)
    assert (a.task_turns, a.draw_both, a.draw_which, a.draw_outcome, a.draw_crowd, a.draw_hard) == (
        b.task_turns, b.draw_both, b.draw_which, b.draw_outcome, b.draw_crowd, b.draw_hard)  # fmt: skip
    assert len(a.draw_hard) == len(a.task_turns)


def test_with_a_full_confound_hard_tasks_get_the_true_fact_alone_and_easy_ones_the_stale_one():
    world = GovernanceWorld(confound=1.0, difficulty=0.5, co_retrieval=0.0)
    for seed in range(3):
        session = generate_governance_session(world, seed)
        run = run_governance(session, "decay")
        for turn, draw, got in zip(session.task_turns, session.draw_hard, run.retrieved):
            if turn > world.shift_turn and len(got) == 1:
                assert got == (("B",) if draw < 0.5 else ("A",))


def test_confound_and_difficulty_must_be_probabilities():
    with pytest.raises(
        ValueError, match=r"confound must be a probability in \[0, 1\], got 2.*difficulty must be"
    ):
        GovernanceWorld(confound=2.0, difficulty=-1.0)
