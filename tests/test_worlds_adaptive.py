"""The history-dependent world: retrieval by a softmax over current Memory Worth, p+ = u exactly."""

import dataclasses
import math

import numpy as np
import pytest

from forgetting.studies import worlds as W
from forgetting.studies.worlds import adaptive


def _direct_run(world: W.AdaptiveWorld, seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """One seed, read straight from the docstring, one episode at a time: n Gumbel keys from the
    retrieval stream, one coin from the outcome stream, pick the softmax winner, count, update."""
    n = world.n_memories
    utilities = np.random.default_rng(seed).uniform(0.0, 1.0, n)
    keys_stream, coin_stream = W.substream(seed, W.RETRIEVAL_STREAM), W.substream(seed, W.OUTCOME_STREAM)
    successes, retrievals, worth = [0] * n, [0] * n, [0.5] * n
    counts = []
    for episode in range(1, world.checkpoints[-1] + 1):
        gumbel, coin = keys_stream.gumbel(size=n), coin_stream.random()
        keys = [worth[m] / world.temperature + gumbel[m] for m in range(n)]
        chosen = keys.index(max(keys))
        retrievals[chosen] += 1
        successes[chosen] += bool(coin < utilities[chosen])
        worth[chosen] = successes[chosen] / retrievals[chosen]
        if episode in world.checkpoints:
            counts.append(list(retrievals))
    return utilities, np.array(counts)


def test_the_vectorised_run_is_the_direct_reading_of_the_policy():
    world = W.AdaptiveWorld(n_memories=5, temperature=0.3, checkpoints=(7, 300, 5000))
    result = W.adaptive_check(world, n_seeds=3, seed=4)
    for index, child in enumerate(W.seed_streams(4, 3)):
        utilities, counts = _direct_run(world, child)
        assert np.array_equal(result.utilities[index], utilities)
        assert np.array_equal(result.retrievals[index], counts)


def test_seeds_and_checkpoints_do_not_change_each_other():
    world = W.AdaptiveWorld(n_memories=4, checkpoints=(100, 1000, 6000))
    five = W.adaptive_check(world, n_seeds=5, seed=1)
    three = W.adaptive_check(world, n_seeds=3, seed=1)
    assert np.array_equal(five.error[:3], three.error)
    one_mark = W.adaptive_check(W.AdaptiveWorld(n_memories=4, checkpoints=(1000,)), n_seeds=3, seed=1)
    assert np.array_equal(one_mark.error[:, 0], three.error[:, 1])
    many = W.adaptive_check(
        W.AdaptiveWorld(n_memories=4, checkpoints=(1, 2, 100, 999, 6000)), n_seeds=3, seed=1
    )
    assert np.array_equal(many.error[:, [2, 4]], three.error[:, [0, 2]])
    assert np.array_equal(many.retrievals[:, [2, 4]], three.retrievals[:, [0, 2]])


def test_the_block_size_does_not_change_a_run(monkeypatch):
    world = W.AdaptiveWorld(n_memories=4, checkpoints=(10, 100, 250))
    whole = W.adaptive_check(world, n_seeds=2, seed=3)
    monkeypatch.setattr(adaptive, "BLOCK", 7)
    blocks = W.adaptive_check(world, n_seeds=2, seed=3)
    assert np.array_equal(blocks.error, whole.error) and np.array_equal(blocks.retrievals, whole.retrievals)


def test_z_is_the_standardised_error_and_nan_before_a_first_retrieval():
    result = W.adaptive_check(
        W.AdaptiveWorld(n_memories=30, temperature=0.05, checkpoints=(5, 2000)), n_seeds=2
    )
    u = result.utilities[:, None, :]
    retrieved = result.retrievals > 0
    assert (~retrieved[:, 0]).any()  # 5 episodes cannot reach 30 memories
    assert np.isnan(result.z[~retrieved]).all()
    expected = result.error * np.sqrt(result.retrievals) / np.sqrt(u * (1 - u))
    assert np.allclose(result.z[retrieved], expected[retrieved])
    assert np.array_equal(result.retrievals.sum(axis=2), np.array([[5, 2000]] * 2))


def test_retrieval_follows_the_history_and_worth_still_converges_to_utility():
    result = W.adaptive_check(W.AdaptiveWorld(checkpoints=(50_000,)), n_seeds=4, seed=2)
    share = result.retrievals[:, -1] / 50_000
    best = result.utilities.argmax(axis=1)
    assert (share[np.arange(4), best] > 2 * share.min(axis=1)).all()  # far from uniform retrieval
    # every memory within 5 of its own standard errors of u: MW -> p+ = u
    assert np.nanmax(np.abs(result.z)) < 5
    assert result.mean_abs_z.mean() == pytest.approx(W.NORMAL_MEAN_ABS, abs=0.25)


def test_bad_worlds_are_named():
    with pytest.raises(
        ValueError, match=r"AdaptiveWorld: temperature must be a real number in \[0.001, 1000.0\], got 0"
    ):
        W.AdaptiveWorld(temperature=0)
    with pytest.raises(ValueError, match="n_memories must be an int"):
        W.AdaptiveWorld(n_memories=1)
    with pytest.raises(ValueError, match="checkpoints must be >= 1"):
        W.AdaptiveWorld(checkpoints=(0, 10))
    with pytest.raises(ValueError, match="n_seeds"):
        W.adaptive_check(n_seeds=0)
    assert math.isclose(W.NORMAL_MEAN_ABS, math.sqrt(2 / math.pi))


def test_adaptive_summary_reads_the_checks_and_names_each_failed_claim():
    world = W.AdaptiveWorld(n_memories=4, temperature=0.5, checkpoints=(20, 200))
    result = W.adaptive_check(world, n_seeds=5, seed=1)
    summary = adaptive.adaptive_summary(result)
    assert np.array_equal(summary.bias.gap, result.mean_z.mean(axis=0))
    v = summary.values
    assert (v["adaptive_memories"], v["adaptive_temperature"]) == (4, 0.5)
    assert v["normal_mean_abs"] == math.sqrt(2 / math.pi)
    assert v["adaptive_min_retrievals"] == result.retrievals[:, -1].min()
    assert v["adaptive_bias_z_first"] == summary.bias.z[0] and v["adaptive_bias_last"] == summary.bias.gap[-1]
    assert [r["episodes"] for r in summary.rows] == [20, 200]
    assert [r["min_retrievals"] for r in summary.rows] == list(result.retrievals.min(axis=(0, 2)))
    # each claim, failed alone (a tolerance of 2: an early z of -5 is clearly below zero, a late 0 faded)
    spread = dataclasses.replace(summary.spread, z=np.zeros(2), tolerance=2.0)
    bias = dataclasses.replace(summary.bias, z=np.array([-5.0, 0.0]), tolerance=2.0)
    assert dataclasses.replace(summary, bias=bias, spread=spread).failed_claims() == []
    cases = {
        "mean |z| leaves sqrt(2/pi)": dict(spread=dataclasses.replace(spread, z=np.array([0.0, 3.0]))),
        "the early bias is not clearly below zero": dict(
            bias=dataclasses.replace(bias, z=np.array([-1.0, 0.0]))
        ),
        "the bias has not faded by the last checkpoint": dict(
            bias=dataclasses.replace(bias, z=np.array([-5.0, 3.0]))
        ),
    }
    for claim, change in cases.items():
        failed = dataclasses.replace(summary, **{"bias": bias, "spread": spread, **change}).failed_claims()
        assert len(failed) == 1 and failed[0].startswith(claim), (claim, failed)
