"""forgetting.studies.worlds.exploration: Experiment 3 with a share epsilon of uniform episodes."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.studies import worlds as W
from forgetting.studies.stats import Z_95
from forgetting.studies.worlds import exploration as X
from forgetting.worth import UnitCounters, memory_worth

SMALL = W.PolicyWorld(n_memories=20, retrieved_per_episode=3, n_episodes=300, temperature=0.05)
STREAMS = ("RETRIEVAL_STREAM", "OUTCOME_STREAM", "TASK_STREAM", "PAIR_STREAM", "BREAK_STREAM", "KEEP_STREAM")


def test_the_exploration_stream_is_its_own():
    assert X.EXPLORE_STREAM not in {getattr(W, name) for name in STREAMS}


def test_epsilon_zero_is_experiment_3_draw_for_draw():
    plain = W.policy_experiment(SMALL, n_seeds=3, seed=4)
    mixed = X.exploration_experiment(SMALL, 0.0, n_seeds=3, seed=4)
    for field in dataclasses.fields(plain):
        a, b = getattr(plain, field.name), getattr(mixed, field.name)
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, field.name
    assert np.array_equal(mixed.explored, np.zeros(3))


def test_the_explore_flags_are_the_streams_uniforms_below_epsilon():
    """A seed explores in exactly the episodes whose exploration uniform is below epsilon."""
    epsilon = 0.3
    result = X.exploration_experiment(SMALL, epsilon, n_seeds=2, seed=1)
    for s, child in enumerate(W.seed_streams(1, 2)):
        tosses = W.substream(child, X.EXPLORE_STREAM).random(SMALL.n_episodes)
        assert result.explored[s] == np.count_nonzero(tosses < epsilon) / SMALL.n_episodes


def test_a_run_does_not_depend_on_the_block_size_or_the_other_seeds(monkeypatch):
    long = X.exploration_experiment(SMALL, 0.2, n_seeds=2, seed=2)
    monkeypatch.setattr(X, "BLOCK_EPISODES", 7)
    blocked = X.exploration_experiment(SMALL, 0.2, n_seeds=2, seed=2)
    assert np.array_equal(blocked.worth, long.worth) and np.array_equal(blocked.retrievals, long.retrievals)
    alone = X.exploration_experiment(SMALL, 0.2, n_seeds=1, seed=2)  # one seed does not depend on the others
    assert np.array_equal(alone.worth[0], long.worth[0])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(2, 12), data=st.data())
def test_mixed_retrieval_ignores_the_worth_exactly_where_it_explores(seed, n, data):
    k = data.draw(st.integers(1, n - 1))
    rng = np.random.default_rng(seed)
    worth, gumbel = rng.random((4, n)), rng.gumbel(size=(4, n))
    explore = np.array([True, False, True, False])
    picked = X.mixed_retrieval(worth, gumbel, 0.1, k, explore)
    assert np.array_equal(picked[~explore], W.softmax_retrieval(worth[~explore], gumbel[~explore], 0.1, k))
    # an exploring row is the top k of the Gumbel keys alone, whatever the worth
    top = np.argsort(-gumbel[explore], axis=1, kind="stable")[:, :k]
    assert np.array_equal(picked[explore], top)
    other = X.mixed_retrieval(rng.random((4, n)), gumbel, 0.1, k, explore)
    assert np.array_equal(other[explore], picked[explore])


def test_exploring_rows_are_uniform_subsets():
    """Over many rows every memory is picked by an exploring row about k/n of the time."""
    rng = np.random.default_rng(0)
    n, k, rows = 8, 3, 40_000
    worth = np.tile(np.linspace(0.0, 1.0, n), (rows, 1))
    picked = X.mixed_retrieval(worth, rng.gumbel(size=(rows, n)), 0.01, k, np.ones(rows, dtype=bool))
    share = np.bincount(picked.ravel(), minlength=n) / rows
    assert np.all(np.abs(share - k / n) < 0.02)


def test_exploration_widens_a_cold_loop():
    """At a cold temperature uniform episodes spread retrieval: entropy rises with epsilon."""
    entropy = [X.exploration_experiment(SMALL, e, n_seeds=3, seed=0).entropy.mean() for e in (0.0, 0.5, 1.0)]
    assert entropy[0] < entropy[1] < entropy[2]


def test_the_grid_played_side_by_side_is_each_setting_played_alone():
    temperatures, epsilons = (1.0, 0.05, 0.02), (0.0, 0.1, 0.5)
    grid = X.exploration_grid(epsilons, temperatures, SMALL, n_seeds=3, seed=7)
    for (t, e), together in grid.items():
        alone = X.exploration_experiment(dataclasses.replace(SMALL, temperature=t), e, n_seeds=3, seed=7)
        for field in dataclasses.fields(alone):
            a, b = getattr(alone, field.name), getattr(together, field.name)
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, (t, e, field.name)


def test_rows_and_interval_read_the_results():
    grid = X.exploration_grid((0.0, 0.5), (0.05,), SMALL, n_seeds=3, seed=0)
    assert list(grid) == [(0.05, 0.0), (0.05, 0.5)]
    rows = X.exploration_rows(grid)
    for row, result in zip(rows, grid.values()):
        half = Z_95 * float(np.std(result.rho, ddof=1)) / math.sqrt(3)
        assert row["rho_mean"] == pytest.approx(float(np.mean(result.rho)))
        assert row["rho_ci95_low"] == pytest.approx(row["rho_mean"] - half)
        assert row["rho_ci95_high"] == pytest.approx(row["rho_mean"] + half)
        assert row["success_rate"] == pytest.approx(float(result.success_rate.mean()))
        assert row["coverage_min"] == float(result.coverage.min())


def _row(t, e, rho, success, half=0.01):
    return {
        "temperature": t,
        "epsilon": e,
        "rho_mean": rho,
        "rho_ci95_low": rho - half,
        "rho_ci95_high": rho + half,
        "success_rate": success,
    }


def test_plain_loops_beaten_needs_a_rho_interval_above_and_a_higher_success():
    rows = [
        _row(1.0, 0.0, 0.9, 0.5),
        _row(1.0, 0.5, 0.91, 0.51),  # higher means, overlapping intervals: does not beat it
        _row(0.1, 0.0, 0.3, 0.6),
        _row(0.1, 0.2, 0.5, 0.65),
        _row(0.02, 0.0, 0.1, 0.7),
        _row(0.02, 0.2, 0.6, 0.6),  # better rho, lower payoff than the plain loop at 0.02
        _row(0.02, 0.5, 0.4, 0.75),
    ]
    beaten = X.plain_loops_beaten(rows)
    assert [b["temperature"] for b in beaten] == [0.1, 0.02]
    assert (beaten[0]["mix_temperature"], beaten[0]["mix_epsilon"]) == (0.1, 0.2)
    assert (beaten[1]["mix_temperature"], beaten[1]["mix_epsilon"]) == (0.02, 0.5)
    assert X.plain_loops_beaten([r for r in rows if r["epsilon"] > 0]) == []


@pytest.mark.parametrize("epsilon", [-0.1, 1.5, math.nan, "0.1", True])
def test_bad_epsilon_is_refused(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        X.exploration_experiment(SMALL, epsilon, n_seeds=2)
    with pytest.raises(ValueError, match=r"epsilons\[1\]"):
        X.exploration_grid((0.0, epsilon), (0.1,), SMALL, n_seeds=2)


def test_explore_flags_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match="explore must have shape"):
        X.mixed_retrieval(np.zeros((2, 5)), np.zeros((2, 5)), 0.1, 2, np.zeros(3, dtype=bool))


def _plain_exploration(world, temperatures, epsilons, n_seeds, seed):
    """The exploration loop read plainly, one setting at a time: the worth recomputed from the
    counters every episode and :func:`mixed_retrieval` on the whole array."""
    n, k = world.n_memories, world.retrieved_per_episode
    out = []
    for temperature, epsilon in zip(temperatures, epsilons):
        children = W.seed_streams(seed, n_seeds)
        utilities = np.stack([np.random.default_rng(child).uniform(0.0, 1.0, n) for child in children])
        streams = [
            [W.substream(c, i) for c in children]
            for i in (W.RETRIEVAL_STREAM, W.OUTCOME_STREAM, X.EXPLORE_STREAM)
        ]
        counters = UnitCounters(n_seeds * n)
        offset = (np.arange(n_seeds) * n)[:, None]
        explored = np.zeros(n_seeds)
        for _ in range(world.n_episodes):
            gumbel = np.stack([rng.gumbel(size=n) for rng in streams[0]])
            draws, toss = (np.array([rng.random() for rng in s]) for s in streams[1:])
            explored += toss < epsilon
            chosen = X.mixed_retrieval(
                counters.worth().reshape(n_seeds, n), gumbel, temperature, k, toss < epsilon
            )
            flat = chosen + offset
            counters.add(flat, draws < W.success_probability(utilities.ravel(), flat))
        worth = memory_worth(counters.successes, counters.failures).reshape(n_seeds, n)
        out.append((worth, (counters.successes + counters.failures).reshape(n_seeds, n), explored))
    return out


def test_the_grid_is_the_plain_loop_of_each_setting_bit_for_bit():
    temperatures, epsilons = (1.0, 0.05, 0.01), (0.0, 0.3, 1.0)
    grid = X.exploration_grid(epsilons, temperatures, SMALL, n_seeds=2, seed=9)
    settings = [(t, e) for t in temperatures for e in epsilons]
    plain = _plain_exploration(SMALL, *zip(*settings), n_seeds=2, seed=9)
    for (t, e), (worth, retrievals, explored) in zip(settings, plain):
        result = grid[(t, e)]
        assert np.array_equal(result.worth, worth) and np.array_equal(result.retrievals, retrievals), (t, e)
        assert np.array_equal(result.explored, explored / SMALL.n_episodes)


def test_plain_loops_beaten_at_their_own_temperature_ignore_the_other_temperatures_mixes():
    rows = [
        _row(0.1, 0.0, 0.5, 0.6),
        _row(0.1, 0.5, 0.8, 0.55),  # better ranking at its own temperature, but lower payoff
        _row(0.05, 0.0, 0.2, 0.65),
        _row(0.05, 0.5, 0.7, 0.66),  # beats both plain loops
    ]
    assert [b["temperature"] for b in X.plain_loops_beaten(rows)] == [0.1, 0.05]
    same = X.plain_loops_beaten(rows, same_temperature=True)
    assert [(b["temperature"], b["mix_temperature"]) for b in same] == [(0.05, 0.05)]


def test_exploration_summary_reads_the_grid_and_checks_each_sentence():
    temperatures, epsilons = (1.0, 0.05), (0.0, 0.1, 0.5)
    grid = X.exploration_grid(epsilons, temperatures, SMALL, n_seeds=3, seed=1)
    plain = controlled_rows = W.controlled.temperature_rows(
        W.temperature_sweep(temperatures, SMALL, n_seeds=3, seed=1)
    )
    summary = X.exploration_summary(grid, controlled_rows, uniform_rho=0.99, success_at_chosen=0.5)
    rows = X.exploration_rows(grid)
    assert summary.rows == rows and summary.plain == plain
    at = {(r["temperature"], r["epsilon"]): r for r in rows}
    v = summary.values
    assert (v["eps_small"], v["eps_large"], v["epsilons_text"], v["n_plain"]) == (0.1, 0.5, "0, 0.1, 0.5", 2)
    assert v["mix_coldest_small_rho_mean"] == at[(0.05, 0.1)]["rho_mean"]
    assert v["mix_coldest_large_success_rate"] == at[(0.05, 0.5)]["success_rate"]
    beaten = X.plain_loops_beaten(rows)
    assert v["n_plain_beaten"] == len(beaten) and v["success_at_chosen"] == 0.5
    same = X.plain_loops_beaten(rows, same_temperature=True)
    assert v["n_plain_beaten_same"] == len(same)
    elsewhere = [b for b in beaten if b["temperature"] not in {s["temperature"] for s in same}]
    if elsewhere:  # the first plain loop only a mix at another temperature beats
        assert v["elsewhere_temperature"] == elsewhere[0]["temperature"]
    else:  # every key is there, quoting nothing
        assert math.isnan(v["elsewhere_temperature"]) and v["plain_beaten_elsewhere_temperatures"] == "none"
    assert summary.claims[
        "the plain loops are the epsilon 0 rows"
    ]  # epsilon 0 is the plain loop, draw for draw
    assert set(summary.failed_claims()) == {name for name, holds in summary.claims.items() if not holds}
    worse = [dict(r, rho_mean=r["rho_mean"] + 1) for r in plain]  # no longer the epsilon 0 rows
    changed = X.exploration_summary(grid, worse, uniform_rho=0.99, success_at_chosen=0.5)
    assert "the plain loops are the epsilon 0 rows" in changed.failed_claims()
    assert (
        "no mix reaches uniform retrieval's rho at the coldest temperature"
        in X.exploration_summary(grid, plain, uniform_rho=-1.0, success_at_chosen=0.5).failed_claims()
    )
    with pytest.raises(ValueError, match="at least one share above 0"):
        X.exploration_summary(
            {k: r for k, r in grid.items() if k[1] == 0.0}, plain, uniform_rho=0.99, success_at_chosen=0.5
        )
