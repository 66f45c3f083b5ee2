"""Experiment 4 when the anchor decides: exact p+, both high without diversity, where that ends."""

import dataclasses

import numpy as np
import pytest

from forgetting.studies import worlds as W
from forgetting.studies.worlds import anchor_decides
from forgetting.worth import add_episodes


def test_anchor_decides_p_plus_equals_direct_simulation():
    world = W.AnchorDecidesWorld(
        n_memories=20, retrieved_per_episode=3, n_episodes=400_000, pair_rate=0.5, diversity_steps=4
    )
    for d in world.diversities:
        anchor, hitchhiker = W.anchor_decides_p_plus(world.anchor_success, world.other_success, d)
        # a direct reading of the formula: intact share 1 - d, hitchhiker alone share d / 2
        assert anchor == world.anchor_success
        weights = np.array([1 - d, d / 2])
        rates = np.array([world.anchor_success, world.other_success])
        assert hitchhiker == pytest.approx(weights @ rates / weights.sum(), abs=1e-14)
    # the simulation converges to it (about 200k pair episodes per run: se < 0.002)
    run = W.anchor_decides_experiment(world, n_seeds=2, seed=7)
    assert np.array_equal(run.diversities, world.diversities)
    assert np.abs(run.anchor_worth - run.exact_anchor).max() < 0.01
    assert np.abs(run.hitchhiker_worth - run.exact_hitchhiker).max() < 0.01


def test_anchor_decides_both_high_and_identical_without_diversity():
    result = W.anchor_decides_experiment(W.AnchorDecidesWorld(diversity_steps=10), n_seeds=30, seed=0)
    assert np.all(result.gap[:, 0] == 0.0)  # never apart: identical counters
    assert result.both_high_share[0] >= 0.95
    assert result.both_high_share[-1] == 0.0  # pair always broken: the hitchhiker is at p_lo
    assert np.all(np.diff(result.exact_hitchhiker) < 0) and np.all(result.exact_anchor == 0.9)


@pytest.mark.slow  # left out of the fast tier (make.py fast)
def test_anchor_decides_regime_ends_where_the_closed_form_says():
    world = W.AnchorDecidesWorld()
    exact = W.anchor_decides_regime_end(world.anchor_success, world.other_success, world.high_threshold)
    assert exact == pytest.approx(2 * (0.9 - 0.7) / (2 * 0.9 - 0.7 - 0.2))
    a, h = W.anchor_decides_p_plus(world.anchor_success, world.other_success, exact)
    assert h == pytest.approx(world.high_threshold, abs=1e-12) and a == world.anchor_success
    result = W.anchor_decides_experiment(world, n_seeds=40, seed=3)
    assert result.exact_regime_end == exact
    ends = result.regime_end_by_seed
    assert not np.isnan(ends).any()
    step = 1 / world.diversity_steps
    assert abs(ends.mean() - exact) < 2 * step
    assert np.all(np.abs(ends - exact) < 0.15)


def test_anchor_decides_regime_end_edges():
    assert W.anchor_decides_regime_end(0.6, 0.1, 0.7) == 0.0  # never high-value
    assert W.anchor_decides_regime_end(0.95, 0.8, 0.7) is None  # never ends
    assert W.anchor_decides_regime_end(0.9, 0.5, 0.9) == 0.0
    assert W.anchor_decides_regime_end(0.9, 0.2, 0.2 + 1e-9) == pytest.approx(1.0)


def test_anchor_decides_bad_input():
    with pytest.raises(ValueError, match=r"diversity must be a real number in \[0, 1\], got 1.5"):
        W.anchor_decides_p_plus(0.9, 0.2, 1.5)
    with pytest.raises(ValueError, match=r"anchor_success must be a real number in \[0, 1\], got 2"):
        W.anchor_decides_p_plus(2, 0.2, 0.5)
    with pytest.raises(ValueError, match=r"high_threshold must be a real number in \[0, 1\], got -0.1"):
        W.anchor_decides_regime_end(0.9, 0.2, -0.1)
    with pytest.raises(ValueError, match=r"other_success must be < anchor_success"):
        W.anchor_decides_regime_end(0.2, 0.9, 0.7)
    with pytest.raises(ValueError, match=r"AnchorDecidesWorld: other_success must be < anchor_success"):
        W.AnchorDecidesWorld(anchor_success=0.3, other_success=0.3)
    with pytest.raises(ValueError, match=r"diversity_steps must be an int in \[1, 10000\], got 0"):
        W.AnchorDecidesWorld(diversity_steps=0)
    with pytest.raises(ValueError, match=r"n_seeds"):
        W.anchor_decides_experiment(W.AnchorDecidesWorld(), n_seeds=1)


def test_a_diversity_does_not_depend_on_what_else_is_run(monkeypatch):
    world = W.AnchorDecidesWorld(n_memories=20, retrieved_per_episode=3, n_episodes=600, diversity_steps=4)
    every = W.anchor_decides_experiment(world, n_seeds=3, seed=2)
    fewer = W.anchor_decides_experiment(dataclasses.replace(world, diversity_steps=2), n_seeds=3, seed=2)
    assert np.array_equal(fewer.anchor_worth, every.anchor_worth[:, ::2])  # d = 0, 0.5, 1 in both
    assert np.array_equal(fewer.hitchhiker_worth, every.hitchhiker_worth[:, ::2])
    monkeypatch.setattr(W.model, "BLOCK_EPISODES", 5)
    blocks = W.anchor_decides_experiment(world, n_seeds=3, seed=2)
    assert np.array_equal(blocks.anchor_worth, every.anchor_worth)
    assert np.array_equal(blocks.hitchhiker_worth, every.hitchhiker_worth)


def recorded_pair_episodes(monkeypatch, world):
    """Per (seed, diversity) run of seed 5, the (retrieved, outcomes) added to the counters."""
    added = []

    def record(successes, failures, retrieved, outcomes):
        added.append((retrieved.copy(), np.asarray(outcomes).copy()))
        add_episodes(successes, failures, retrieved, outcomes)

    monkeypatch.setattr(anchor_decides, "add_episodes", record)
    W.anchor_decides_experiment(world, n_seeds=2, seed=5)
    monkeypatch.undo()
    return added


def test_a_short_run_is_the_start_of_a_long_one(monkeypatch):
    """A per-episode pair coin (no up-front binomial count): at every diversity, the pair
    episodes of a run of E episodes are the first pair episodes of a run of 4E, with the same
    retrieved sets and outcomes (issue 18)."""
    world = W.AnchorDecidesWorld(n_memories=20, retrieved_per_episode=3, n_episodes=500, diversity_steps=2)
    short = recorded_pair_episodes(monkeypatch, world)
    long = recorded_pair_episodes(monkeypatch, dataclasses.replace(world, n_episodes=2000))
    assert len(short) == len(long) == 2 * len(world.diversities)
    for (rows, wins), (long_rows, long_wins) in zip(short, long, strict=True):
        assert 0 < len(rows) < len(long_rows)
        assert np.array_equal(long_rows[: len(rows)], rows)
        assert np.array_equal(long_wins[: len(wins)], wins)
    # the same episodes as Experiment 4 of the same seed: only the outcome model differs
    child = W.seed_streams(5, 2)[0]
    co_world = W.CoRetrievalWorld(n_memories=20, retrieved_per_episode=3, n_episodes=500)
    assert np.array_equal(W.pair_episodes(world, 0.5, child)[1], W.pair_episodes(co_world, 0.5, child)[1])
    assert np.array_equal(short[1][0], W.pair_episodes(world, 0.5, child)[1])


def test_regime_values_and_rows_read_the_run_directly():
    world = W.AnchorDecidesWorld(n_memories=20, retrieved_per_episode=3, n_episodes=2_000, diversity_steps=4)
    run = W.anchor_decides_experiment(world, n_seeds=5, seed=0)
    values = W.regime_values(run, 1.645)
    ends = run.regime_end_by_seed
    found = ends[~np.isnan(ends)]
    assert values["regime_step"] == 0.25 and values["n_regime_diversities"] == 5
    assert values["regime_end_exact"] == run.exact_regime_end
    assert values["regime_end_seeds"] == found.size
    assert values["regime_gap_zero_max"] == 0.0  # identical counters while the pair travels together
    assert values["regime_anchor_zero_mean"] == values["regime_hitchhiker_zero_mean"]
    assert values["regime_both_high_zero"] == round(run.both_high_share[0] * 5)
    rows = W.regime_rows(run)
    assert [r["diversity"] for r in rows] == list(run.diversities) and {r["seeds"] for r in rows} == {5}
    assert rows[0]["anchor_mw_mean"] == values["regime_anchor_zero_mean"]
    assert rows[-1]["hitchhiker_mw_mean"] == values["regime_hitchhiker_full_mean"]
