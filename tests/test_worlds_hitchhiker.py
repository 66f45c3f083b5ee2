"""Experiment 4: exact p+ of the pair, separation needs diversity, thresholds."""

import dataclasses
import itertools
import math

import numpy as np
import pytest

from forgetting.studies import worlds as W
from forgetting.studies.worlds import hitchhiker
from forgetting.worth import add_episodes, memory_worth

SMALL = {
    W.theory_check: W.TheoryWorld(n_memories=8, retrieved_per_episode=2, checkpoints=(10, 100, 1000)),
    W.controlled_experiment: W.ControlledWorld(
        n_memories=20, retrieved_per_episode=3, n_episodes=500, checkpoints=(0, 100, 500)
    ),
    W.confound_experiment: W.ConfoundWorld(
        n_generalists=10, n_specialists=10, retrieved_per_episode=3, n_episodes=500
    ),
    W.policy_experiment: W.PolicyWorld(n_memories=20, retrieved_per_episode=3, n_episodes=300),
    W.co_retrieval_experiment: W.CoRetrievalWorld(
        n_memories=20, retrieved_per_episode=3, n_episodes=500, diversities=(0.0, 0.5, 1.0)
    ),
}


def test_co_retrieval_p_plus_equals_enumeration():
    world = W.CoRetrievalWorld(n_memories=6, retrieved_per_episode=3)
    utilities = np.array([1.0, 0.0, 0.2, 0.6, 0.3, 0.8])
    others = range(2, 6)
    for d in (0.0, 0.3, 1.0):
        sums = {W.ANCHOR: [0.0, 0.0], W.HITCHHIKER: [0.0, 0.0]}
        for companions in itertools.combinations(others, 1):  # intact: pair + 1 other
            p = utilities[[0, 1, *companions]].mean()
            for m in (0, 1):
                sums[m][0] += (1 - d) / 4 * p
                sums[m][1] += (1 - d) / 4
        for m in (0, 1):  # kept alone: m + 2 others
            for companions in itertools.combinations(others, 2):
                sums[m][0] += d / 2 / 6 * utilities[[m, *companions]].mean()
                sums[m][1] += d / 2 / 6
        anchor, hitchhiker = W.co_retrieval_p_plus(world, utilities, d)
        assert anchor == pytest.approx(sums[0][0] / sums[0][1], abs=1e-14)
        assert hitchhiker == pytest.approx(sums[1][0] / sums[1][1], abs=1e-14)


def test_experiment4_hitchhiker_needs_diversity_to_separate():
    result = W.co_retrieval_experiment()
    assert np.all(result.gap[:, 0] == 0.0)  # never apart: identical counters
    assert np.all(np.diff(result.exact_gap, axis=1) > 0)  # exact gap grows with diversity
    assert np.abs(result.gap.mean(axis=0) - result.exact_gap.mean(axis=0)).max() < 0.01
    assert 0.2 <= result.diversity_threshold <= 0.4  # published: about 30 %
    assert not result.separated[0] and result.separated[-1]


def test_co_retrieval_threshold_at_other_z():
    result = W.co_retrieval_experiment(SMALL[W.co_retrieval_experiment], n_seeds=5, seed=2)
    assert result.threshold_at(W.SEPARATION_Z) == result.diversity_threshold
    assert np.array_equal(result.separated_at(W.SEPARATION_Z), result.separated)
    assert result.threshold_at(1e6) is None and not result.separated_at(1e6).any()
    # a stricter z can only move the threshold up (or lose it)
    strict, lax = result.threshold_at(1.96), result.threshold_at(1.645)
    assert strict is None or (lax is not None and strict >= lax)


def test_co_retrieval_share_threshold():
    result = W.co_retrieval_experiment(SMALL[W.co_retrieval_experiment], n_seeds=6, seed=2)
    share = result.ranked_first_share
    assert share[0] == 0.0  # never apart: identical worth, never strictly first
    assert np.array_equal(share, (result.anchor_worth > result.hitchhiker_worth).mean(axis=0))
    assert result.share_threshold(0.0) == 0.0 and result.share_threshold(1.01) is None
    expected = next((float(d) for j, d in enumerate(result.diversities) if (share[j:] >= 0.5).all()), None)
    assert result.share_threshold(0.5) == expected


def test_threshold_sensitivity_rows():
    world = W.CoRetrievalWorld(
        n_memories=20, retrieved_per_episode=3, n_episodes=500, diversities=(0.0, 0.5, 1.0)
    )
    result = W.co_retrieval_experiment(world, n_seeds=4, seed=0)
    rows = W.threshold_sensitivity(result, 0, 4, 1.645, 1.96, [1], 3, 2, 0.5)
    assert [r["setting"] for r in rows] == [
        "headline",
        "other base seed",
        "fewer seeds",
        "fewer seeds",
        "k = 2",
        "pair rate 0.5",
    ]
    assert [(r["base_seed"], r["seeds"]) for r in rows] == [(0, 4), (1, 4), (0, 3), (1, 3), (0, 4), (0, 4)]
    assert rows[0]["threshold_z1.645"] == W.threshold_or_nan(result.threshold_at(1.645))
    other = W.co_retrieval_experiment(world, n_seeds=4, seed=1)
    assert rows[1]["threshold_z1.96"] == W.threshold_or_nan(other.threshold_at(1.96)) or (
        math.isnan(rows[1]["threshold_z1.96"]) and other.threshold_at(1.96) is None
    )
    assert rows[4]["k"] == 2 and rows[5]["pair_rate"] == 0.5
    assert math.isnan(W.threshold_or_nan(None)) and W.threshold_or_nan(0.3) == 0.3


def test_a_diversity_does_not_depend_on_what_else_is_run(monkeypatch):
    """Each (seed, diversity) run reads its own seed's streams: the diversities tested alongside
    and the block size of the retrieval draws change nothing."""
    world = SMALL[W.co_retrieval_experiment]
    every = W.co_retrieval_experiment(world, n_seeds=3, seed=2)
    some = W.co_retrieval_experiment(dataclasses.replace(world, diversities=(0.5,)), n_seeds=3, seed=2)
    assert np.array_equal(some.anchor_worth[:, 0], every.anchor_worth[:, 1])
    assert np.array_equal(some.hitchhiker_worth[:, 0], every.hitchhiker_worth[:, 1])
    monkeypatch.setattr(W.model, "BLOCK_EPISODES", 5)
    blocks = W.co_retrieval_experiment(world, n_seeds=3, seed=2)
    assert np.array_equal(blocks.anchor_worth, every.anchor_worth)
    assert np.array_equal(blocks.hitchhiker_worth, every.hitchhiker_worth)


def recorded_pair_episodes(monkeypatch, module, experiment, world, seed):
    """Run ``experiment`` and return, per (seed, diversity) run, the (retrieved, outcomes) that
    ``module`` added to the counters (a spy on its ``add_episodes``)."""
    added = []

    def record(successes, failures, retrieved, outcomes):
        added.append((retrieved.copy(), np.asarray(outcomes).copy()))
        add_episodes(successes, failures, retrieved, outcomes)

    monkeypatch.setattr(module, "add_episodes", record)
    experiment(world, n_seeds=2, seed=seed)
    monkeypatch.undo()
    return added


def test_a_short_run_is_the_start_of_a_long_one(monkeypatch):
    """At every diversity, the pair episodes of a run of E episodes are the first pair episodes
    of a run of 4E, with the same retrieved sets and outcomes: what a run draws for episode t
    does not depend on how many episodes follow (issue 18)."""
    world = SMALL[W.co_retrieval_experiment]
    short = recorded_pair_episodes(monkeypatch, hitchhiker, W.co_retrieval_experiment, world, 4)
    long = recorded_pair_episodes(
        monkeypatch, hitchhiker, W.co_retrieval_experiment, dataclasses.replace(world, n_episodes=2000), 4
    )
    assert len(short) == len(long) == 2 * len(world.diversities)
    for (rows, wins), (long_rows, long_wins) in zip(short, long, strict=True):
        assert 0 < len(rows) < len(long_rows)
        assert np.array_equal(long_rows[: len(rows)], rows)
        assert np.array_equal(long_wins[: len(wins)], wins)


def test_pair_episodes_are_drawn_episode_by_episode(monkeypatch):
    """The pair coin is drawn per episode: the short run's pair episodes are the long run's
    below E, the counters after E episodes of the long run are the short run's, blocks change
    nothing, and a pair broken at one diversity is broken at every larger one."""
    world = SMALL[W.co_retrieval_experiment]
    child = W.seed_streams(4, 2)[1]
    longer = dataclasses.replace(world, n_episodes=2000)
    episodes, rows, draws = W.pair_episodes(world, 0.5, child)
    all_episodes, all_rows, all_draws = W.pair_episodes(longer, 0.5, child)
    first = all_episodes < world.n_episodes
    assert np.array_equal(all_episodes[first], episodes) and first[: episodes.size].all()
    assert np.array_equal(all_rows[first], rows) and np.array_equal(all_draws[first], draws)
    utilities = np.random.default_rng(child).uniform(0.0, 1.0, world.n_memories)
    utilities[W.ANCHOR], utilities[W.HITCHHIKER] = world.anchor_utility, world.hitchhiker_utility
    successes, failures = np.zeros(world.n_memories), np.zeros(world.n_memories)
    add_episodes(
        successes, failures, all_rows[first], all_draws[first] < W.success_probability(utilities, rows)
    )
    result = W.co_retrieval_experiment(world, n_seeds=2, seed=4)
    assert memory_worth(successes, failures)[W.ANCHOR] == result.anchor_worth[1, 1]
    assert memory_worth(successes, failures)[W.HITCHHIKER] == result.hitchhiker_worth[1, 1]
    monkeypatch.setattr(W.model, "BLOCK_EPISODES", 7)
    blocked = W.pair_episodes(longer, 0.5, child)
    assert all(
        np.array_equal(a, b) for a, b in zip(blocked, (all_episodes, all_rows, all_draws), strict=True)
    )
    intact = {
        d: (W.pair_episodes(world, d, child)[1][:, :2] == [W.ANCHOR, W.HITCHHIKER]).all(axis=1)
        for d in (0.0, 0.5, 1.0)
    }
    assert intact[0.0].all() and not intact[1.0].any() and not (intact[0.5] & ~intact[0.0]).any()
    with pytest.raises(ValueError, match=r"diversity must be a real number in \[0, 1\], got 1.5"):
        W.pair_episodes(world, 1.5, child)


@pytest.mark.parametrize("diversity", [0.0, 0.3, 0.5, 1.0])
def test_one_draw_of_the_pair_streams_is_the_plain_reading_at_every_diversity(diversity):
    """``pair_draws(world, seed).at(d)``, drawn once for all diversities, gives what drawing each
    stream afresh and placing the pair at ``d`` gives, bit for bit."""
    world = dataclasses.replace(SMALL[W.co_retrieval_experiment], n_episodes=3000)
    child = W.seed_streams(3, 2)[1]
    k = world.retrieved_per_episode
    episodes = np.flatnonzero(
        W.substream(child, W.PAIR_STREAM).random(world.n_episodes) < world.effective_pair_rate
    )
    n_pair = episodes.size
    broken = W.substream(child, W.BREAK_STREAM).random(n_pair) < diversity
    keep_anchor = W.substream(child, W.KEEP_STREAM).random(n_pair) < 0.5
    rows = W.uniform_retrieval(W.substream(child, W.RETRIEVAL_STREAM), n_pair, world.n_memories - 2, k) + 2
    rows[~broken, 0], rows[~broken, 1] = W.ANCHOR, W.HITCHHIKER
    rows[broken, 0] = np.where(keep_anchor[broken], W.ANCHOR, W.HITCHHIKER)
    plain = (episodes, rows, W.substream(child, W.OUTCOME_STREAM).random(n_pair))
    draws = hitchhiker.pair_draws(world, child)
    draws.at(0.7)  # another diversity first changes nothing
    for got, want in zip(draws.at(diversity), plain, strict=True):
        assert np.array_equal(got, want)
    for got, want in zip(W.pair_episodes(world, diversity, child), plain, strict=True):
        assert np.array_equal(got, want)


def test_fewer_seeds_are_the_leading_seeds_of_more():
    """Seed i is child i of the base seed whatever the count: ``leading_seeds`` of a longer run
    is the shorter run, bit for bit, and so are its thresholds."""
    world = SMALL[W.co_retrieval_experiment]
    more = W.co_retrieval_experiment(world, n_seeds=5, seed=3)
    fewer = W.co_retrieval_experiment(world, n_seeds=3, seed=3)
    lead = hitchhiker.leading_seeds(more, 3)
    for name in ("anchor_worth", "hitchhiker_worth", "exact_gap", "gap", "ranked_first_share"):
        assert np.array_equal(getattr(lead, name), getattr(fewer, name)), name
    assert lead.threshold_at(1.0) == fewer.threshold_at(1.0)
    assert lead.share_threshold(0.5) == fewer.share_threshold(0.5)


def _small_run(n_seeds=6):
    world = W.CoRetrievalWorld(
        n_memories=20, retrieved_per_episode=3, n_episodes=500, diversities=(0.0, 0.5, 1.0)
    )
    return W.co_retrieval_experiment(world, n_seeds=n_seeds, seed=0)


def test_co_retrieval_values_read_the_run_directly():
    result = _small_run()
    values = W.co_retrieval_values(result, 1.645, 1.96)
    gap = result.anchor_worth - result.hitchhiker_worth
    threshold = result.threshold_at(1.645)
    at = list(result.diversities).index(threshold if threshold is not None else 1.0)
    assert values["diversity_threshold"] == W.threshold_or_nan(threshold) or math.isnan(
        values["diversity_threshold"]
    )
    assert values["gap_zero_max"] == np.abs(gap[:, 0]).max() == 0.0  # the pair never breaks at d = 0
    assert values["gap_at_threshold"] == pytest.approx(gap[:, at].mean(), abs=1e-15)
    assert values["margin_at_threshold"] == pytest.approx(gap[:, at].mean() - 1.645 * gap[:, at].std(ddof=1))
    assert values["gap_full"] == pytest.approx(values["anchor_full"] - values["hitchhiker_full"])
    assert values["anchor_first_mean"] == values["hitchhiker_first_mean"]
    rows = W.co_retrieval_rows(result, 1.645, 1.96)
    assert [r["diversity"] for r in rows] == list(result.diversities)
    assert all(
        r["separated_z1.96"] <= r["separated_z1.645"] for r in rows
    )  # the stricter never separates more
    assert [r["gap_mean"] for r in rows][at] == values["gap_at_threshold"]


def test_sensitivity_rows_by_kind_and_the_values_read_from_them():
    result = _small_run(4)
    by_kind = W.threshold_sensitivity_by_kind(result, 0, 4, 1.645, 1.96, [1, 2], 4, 3, 0.15)
    assert list(by_kind) == list(W.SENSITIVITY_KINDS)
    assert [len(by_kind[kind]) for kind in W.SENSITIVITY_KINDS] == [1, 2, 3, 1, 1]
    rows = W.sensitivity_rows(by_kind)
    assert rows == W.threshold_sensitivity(result, 0, 4, 1.645, 1.96, [1, 2], 4, 3, 0.15)
    # few seeds = seeds, k = other_depth and the default pair rate 3/20 = other_pair_rate: the
    # kinds still tell the rows apart, although their fields cannot
    values = W.sensitivity_values(by_kind, 1.645)
    key = "threshold_z1.645"
    assert values["n_other_seeds"] == 2 and values["n_base_seeds"] == 3 and values["n_few"] == 3
    assert values["threshold_depth"] is by_kind["depth"][0][key]
    assert (
        values["pair_rate_depth"] == by_kind["depth"][0]["pair_rate"] == by_kind["pair_rate"][0]["pair_rate"]
    )
    assert values["threshold_pair_rate"] is by_kind["pair_rate"][0][key]
    others = [row[key] for row in by_kind["other_seeds"]]
    assert values["other_seed_low"] == min(others) or math.isnan(values["other_seed_low"])
    assert values["threshold_min"] == np.nanmin([by_kind["headline"][0][key], *others])
