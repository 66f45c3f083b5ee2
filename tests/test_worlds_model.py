"""The shared model: rho, exact p+, retrieval, seeds; every experiment is a pure function of its seed."""

import dataclasses
import math
import warnings

import numpy as np
import pytest
from scipy.stats import spearmanr

from forgetting.studies import worlds as W


def assert_results_identical(first, second):
    for f in dataclasses.fields(first):
        a, b = getattr(first, f.name), getattr(second, f.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), f.name
        else:
            assert a == b, f.name


def test_spearman_matches_scipy_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(0, 5, 30).astype(float)
        y = x + rng.integers(0, 3, 30)
        assert W.spearman_rho(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)


def test_spearman_of_a_constant_is_zero_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert W.spearman_rho(np.full(5, 0.5), [1, 2, 3, 4, 5]) == 0.0
        assert W.spearman_rho([1, 2, 3], [7, 7, 7]) == 0.0
    assert W.spearman_rho([1, 2, 3], [3, 2, 1]) == -1.0
    with pytest.raises(ValueError, match="x and y must be 1-d of equal length"):
        W.spearman_rho([1, 2], [1, 2, 3])


@pytest.mark.parametrize("n, k", [(2, 1), (5, 1), (5, 2), (6, 3), (7, 6)])
def test_closed_form_p_plus_equals_enumeration(n, k):
    utilities = np.random.default_rng(n * 10 + k).uniform(0, 1, n)
    for base, effect in ((0.5, 1.0), (0.2, 0.3)):
        exact = W.p_plus_by_enumeration(utilities, k, base, effect)
        assert np.allclose(W.p_plus_uniform(utilities, k, base, effect), exact, rtol=0, atol=1e-14)


def test_uniform_retrieval_rows_are_distinct_uniform_and_block_independent():
    rows = W.uniform_retrieval(np.random.default_rng(1), 3 * W.BLOCK_EPISODES + 17, 12, 4)
    assert rows.shape == (3 * W.BLOCK_EPISODES + 17, 4)
    assert rows.min() >= 0 and rows.max() < 12
    assert (np.sort(rows, axis=1)[:, 1:] != np.sort(rows, axis=1)[:, :-1]).all()
    # every memory, and the first column alone, is drawn uniformly (generous 6-sigma bands)
    for counts, per_row in (
        (np.bincount(rows.ravel(), minlength=12), 4),
        (np.bincount(rows[:, 0], minlength=12), 1),
    ):
        expected = rows.shape[0] * per_row / 12
        assert np.all(np.abs(counts - expected) < 6 * math.sqrt(expected))
    # the block size is invisible: one shorter call reproduces the first rows
    assert np.array_equal(W.uniform_retrieval(np.random.default_rng(1), 10, 12, 4), rows[:10])
    assert np.array_equal(
        np.sort(W.uniform_retrieval(np.random.default_rng(2), 5, 4, 4), axis=1), np.tile(np.arange(4), (5, 1))
    )


def test_softmax_retrieval_follows_the_softmax():
    rng = np.random.default_rng(4)
    worth = np.array([0.9, 0.5, 0.1])
    first = W.softmax_retrieval(worth, rng.gumbel(size=(40_000, 3)), 0.5, 1)[:, 0]
    share = np.bincount(first, minlength=3) / first.size
    expected = np.exp(worth / 0.5) / np.exp(worth / 0.5).sum()
    assert np.allclose(share, expected, atol=0.01)
    both = W.softmax_retrieval(worth, rng.gumbel(size=(100, 3)), 0.5, 2)
    assert (both[:, 0] != both[:, 1]).all()


def test_small_helpers():
    assert W.loglog_slope([1, 4, 16], [1.0, 0.5, 0.25]) == pytest.approx(-0.5)
    rng = np.random.default_rng(3)
    x, y = rng.uniform(1, 100, 9), rng.uniform(0.01, 1, 9)
    assert W.loglog_slope(x, y) == pytest.approx(np.polyfit(np.log(x), np.log(y), 1)[0], rel=1e-12)
    assert W.retrieval_entropy(np.array([5, 5, 5, 5])) == pytest.approx(1.0)
    assert W.retrieval_entropy(np.array([7, 0, 0, 0])) == pytest.approx(0.0)
    assert W.separated([0.1, 0.11, 0.12]) and not W.separated([0.0, 0.1, -0.05])
    assert W.seed_streams(3, 2)[1].spawn_key == W.seed_streams(3, 5)[1].spawn_key


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


@pytest.mark.parametrize("experiment", list(SMALL), ids=lambda f: f.__name__)
def test_same_seed_same_floats_other_seed_other_floats(experiment):
    world = SMALL[experiment]
    first = experiment(world, n_seeds=3, seed=9)
    assert_results_identical(first, experiment(world, n_seeds=3, seed=9))
    other = experiment(world, n_seeds=3, seed=10)
    assert any(
        isinstance(getattr(first, f.name), np.ndarray)
        and not np.array_equal(getattr(first, f.name), getattr(other, f.name), equal_nan=True)
        for f in dataclasses.fields(first)
    )


@pytest.mark.parametrize("experiment", list(SMALL), ids=lambda f: f.__name__)
def test_a_seed_does_not_depend_on_how_many_seeds_run(experiment):
    world = SMALL[experiment]
    three, two = experiment(world, n_seeds=3, seed=1), experiment(world, n_seeds=2, seed=1)
    for f in dataclasses.fields(two):
        value = getattr(two, f.name)
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == 2:
            assert np.array_equal(value, getattr(three, f.name)[:2], equal_nan=True), f.name


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: W.ControlledWorld(retrieved_per_episode=100), "retrieved_per_episode"),
        (lambda: W.ControlledWorld(n_memories=1.5), "n_memories"),
        (lambda: W.ControlledWorld(checkpoints=(0, 500, 200)), "checkpoints"),
        (lambda: W.ControlledWorld(checkpoints=(0, 20_000)), "checkpoints"),
        (lambda: W.TheoryWorld(checkpoints=(0, 10)), "checkpoints must be >= 1"),
        (lambda: W.ConfoundWorld(memory_effect=0.5), "easy_base_rate"),
        (lambda: W.ConfoundWorld(hard_fraction=1.2), "hard_fraction"),
        (lambda: W.ConfoundWorld(specialist_utility=(0.9, 0.5)), "specialist_utility"),
        (lambda: W.PolicyWorld(temperature=0.0), "temperature"),
        (lambda: W.PolicyWorld(temperature=math.inf), "temperature"),
        (lambda: W.CoRetrievalWorld(diversities=(0.5, 0.2)), "diversities"),
        (lambda: W.CoRetrievalWorld(pair_rate=1.5), "pair_rate"),
        (lambda: W.CoRetrievalWorld(retrieved_per_episode=1), "retrieved_per_episode"),
        (lambda: W.controlled_experiment(n_seeds=0), "n_seeds"),
        (lambda: W.co_retrieval_experiment(n_seeds=1), "n_seeds"),
    ],
)
def test_bad_settings_are_rejected(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_episodes_to_checkpoints_adds_each_block_once_and_skips_empty_ones():
    utilities = np.random.default_rng(2).uniform(0, 1, 10)
    successes, failures = np.zeros(10), np.zeros(10)
    blocks = list(W.model.episodes_to_checkpoints(3, utilities, 3, (0, 5, 5, 12), successes, failures))
    assert [(c, r.shape[0], o.shape[0]) for c, r, o in blocks] == [
        (0, 0, 0),
        (5, 5, 5),
        (5, 0, 0),
        (12, 7, 7),
    ]
    assert successes.sum() + failures.sum() == 12 * 3
    # the retrievals are the seed's retrieval stream, the outcomes its outcome stream
    whole = W.uniform_retrieval(W.substream(3, W.RETRIEVAL_STREAM), 12, 10, 3)
    coins = W.substream(3, W.OUTCOME_STREAM).random(12)
    assert np.array_equal(whole, np.concatenate([r for _, r, _ in blocks]))
    assert np.array_equal(
        coins < W.success_probability(utilities, whole), np.concatenate([o for *_, o in blocks])
    )


@pytest.mark.parametrize("checkpoints", [(12,), (1, 2, 3, 12), (0, 11, 12), (7, 12), tuple(range(13))])
def test_episodes_to_checkpoints_draws_the_same_episodes_whatever_is_recorded(checkpoints):
    utilities = np.random.default_rng(2).uniform(0, 1, 10)
    seed = W.seed_streams(5, 2)[1]
    reference, marks = (np.zeros(10), np.zeros(10)), {}
    for c, _, _ in W.model.episodes_to_checkpoints(seed, utilities, 3, (0, 7, 12), *reference):
        marks[c] = (reference[0].copy(), reference[1].copy())
    counters = np.zeros(10), np.zeros(10)
    for c, _, _ in W.model.episodes_to_checkpoints(seed, utilities, 3, checkpoints, *counters):
        if c in marks:  # the common points: bit for bit
            assert np.array_equal(counters[0], marks[c][0]) and np.array_equal(counters[1], marks[c][1]), c
    assert np.array_equal(counters[0], reference[0]) and np.array_equal(counters[1], reference[1])


def test_uniform_retrieval_pool_limits_keep_each_episode_in_its_pool():
    limits = np.array([4, 12, 4, 5, 12] * 40)
    rows = W.uniform_retrieval(np.random.default_rng(6), limits.size, 12, 4, pool_limits=limits)
    assert (rows < limits[:, None]).all()
    assert (np.sort(rows, axis=1)[:, 1:] != np.sort(rows, axis=1)[:, :-1]).all()
    assert set(rows[limits == 12].ravel()) == set(range(12))
    # every episode reads pool_size keys whatever its limit: without limits the unrestricted
    # episodes are the same rows
    free = W.uniform_retrieval(np.random.default_rng(6), limits.size, 12, 4)
    assert np.array_equal(rows[limits == 12], free[limits == 12])
    for bad in (np.array([3, 12]), np.array([4, 13]), np.array([4])):
        with pytest.raises(ValueError, match="pool_limits"):
            W.uniform_retrieval(np.random.default_rng(6), 2, 12, 4, pool_limits=bad)


def test_uniform_retrieval_does_not_depend_on_the_block_size(monkeypatch):
    limits = np.array([5, 9, 9, 6, 7] * 9)
    whole = W.uniform_retrieval(np.random.default_rng(8), limits.size, 9, 5, pool_limits=limits)
    monkeypatch.setattr(W.model, "BLOCK_EPISODES", 4)
    assert np.array_equal(
        W.uniform_retrieval(np.random.default_rng(8), limits.size, 9, 5, pool_limits=limits), whole
    )
    # and drawing in two calls is drawing once
    rng = np.random.default_rng(8)
    parts = [W.uniform_retrieval(rng, 11, 9, 5, limits[:11]), W.uniform_retrieval(rng, 34, 9, 5, limits[11:])]
    assert np.array_equal(np.concatenate(parts), whole)


@pytest.mark.parametrize(
    "pool_size, k, limits",
    [
        (20, 4, None),
        (12, 12, None),  # every memory, in key order
        (100, 10, "halves"),  # Experiment 2: the generalists or everyone
        (9, 3, "any"),  # every limit from k to the pool, k itself included
    ],
)
def test_uniform_retrieval_is_the_plain_reading(monkeypatch, pool_size, k, limits):
    """Each pool's rows ranked over its own columns, by the k-th smallest key, are the k smallest
    keys of the whole row once the keys outside the pool are inf, in stable key order."""
    n_episodes = 700
    rng = np.random.default_rng(pool_size + k)
    if limits == "halves":
        limits = np.where(rng.random(n_episodes) < 0.5, pool_size, pool_size // 2)
    elif limits == "any":
        limits = rng.integers(k, pool_size + 1, n_episodes)
    keys = np.random.default_rng(11).random((n_episodes, pool_size))
    if limits is not None:
        keys[np.arange(pool_size) >= limits[:, None]] = np.inf
    plain = np.argsort(keys, axis=1, kind="stable")[:, :k]
    for block in (W.BLOCK_EPISODES, 64):  # one block, then several with every pool in most
        monkeypatch.setattr(W.model, "BLOCK_EPISODES", block)
        rows = W.uniform_retrieval(np.random.default_rng(11), n_episodes, pool_size, k, pool_limits=limits)
        assert rows.dtype == np.intp and np.array_equal(rows, plain), block


def testsmallest_in_order_with_equal_keys_still_takes_the_k_smallest():
    # a key equal to the k-th smallest: the mask holds k + 1, so the block goes through argpartition
    keys = np.array([[0.5, 0.1, 0.3, 0.3, 0.9], [0.2, 0.8, 0.6, 0.4, 0.7]])
    for k in (1, 2, 3, 4):
        got = W.model.smallest_in_order(keys, k)
        assert got.shape == (2, k)
        assert (np.sort(got, axis=1)[:, 1:] != np.sort(got, axis=1)[:, :-1]).all()  # distinct
        assert np.array_equal(np.take_along_axis(keys, got, axis=1), np.sort(keys, axis=1)[:, :k]), k


def test_substreams_are_fixed_children_of_the_seed():
    seed = W.seed_streams(4, 3)[2]
    first = W.substream(seed, W.RETRIEVAL_STREAM).random(5)
    seed.spawn(3)  # spawning from the seed elsewhere does not move its substreams
    assert np.array_equal(W.substream(seed, W.RETRIEVAL_STREAM).random(5), first)
    fresh = np.random.SeedSequence(4).spawn(3)[2].spawn(1)[0]  # what spawn gives as child 0
    assert np.array_equal(np.random.default_rng(fresh).random(5), first)
    assert np.array_equal(W.substream(9, 1).random(3), W.substream(np.random.SeedSequence(9), 1).random(3))
    draws = [W.substream(seed, i).random(4) for i in (W.RETRIEVAL_STREAM, W.OUTCOME_STREAM, W.TASK_STREAM)]
    draws.append(np.random.default_rng(seed).random(4))
    assert len({tuple(d) for d in draws}) == 4


def test_preference_bound_is_the_softmax_ratio_at_the_mean_spread():
    from forgetting.studies.worlds import preference_bound

    worth = np.array([[0.2, 0.5, 0.7], [0.4, 0.4, 0.6]])
    spread = ((0.7 - 0.2) + (0.6 - 0.4)) / 2
    assert preference_bound(worth, 0.25) == pytest.approx(math.exp(spread / 0.25), rel=1e-15)
    assert preference_bound(np.full((2, 3), 0.5), 0.1) == 1.0  # no spread: no preference


@pytest.mark.parametrize(
    ("worth", "temperature", "match"),
    [
        (np.zeros((0, 3)), 0.2, "non-empty"),
        (np.zeros(3), 0.2, "non-empty"),
        (np.array([[0.1, np.nan]]), 0.2, "finite"),
        (np.zeros((1, 2)), 0.0, "temperature"),
    ],
)
def test_preference_bound_refuses_what_it_cannot_measure(worth, temperature, match):
    from forgetting.studies.worlds import preference_bound

    with pytest.raises(ValueError, match=match):
        preference_bound(worth, temperature)


@pytest.mark.parametrize("seed", [-1, True, np.bool_(True), 1.0, [1, 2], "0", None])
def test_seed_streams_refuse_anything_but_a_non_negative_int(seed):
    with pytest.raises(ValueError, match=r"seed must be an int >= 0, got"):
        W.seed_streams(seed, 2)
    with pytest.raises(ValueError, match=r"seed must be an int >= 0, got"):
        W.theory_check(W.TheoryWorld(n_memories=8, retrieved_per_episode=2, checkpoints=(10,)), 2, seed)
    assert [c.entropy for c in W.seed_streams(np.int64(3), 2)] == [c.entropy for c in W.seed_streams(3, 2)]
