"""Simulated worlds: exact p+, convergence, determinism, the experiments' published directions."""

import dataclasses
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.stats import spearmanr

from forgetting import worlds as W
from forgetting.worth import MemoryWorth, WorthArrays


def assert_results_identical(first, second):
    for f in dataclasses.fields(first):
        a, b = getattr(first, f.name), getattr(second, f.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), f.name
        else:
            assert a == b, f.name


# --- formulas ----------------------------------------------------------------------------------

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
    with pytest.raises(ValueError):
        W.spearman_rho([1, 2], [1, 2, 3])


@pytest.mark.parametrize("n, k", [(2, 1), (5, 1), (5, 2), (6, 3), (7, 6)])
def test_closed_form_p_plus_equals_enumeration(n, k):
    utilities = np.random.default_rng(n * 10 + k).uniform(0, 1, n)
    for base, effect in ((0.5, 1.0), (0.2, 0.3)):
        exact = W.p_plus_by_enumeration(utilities, k, base, effect)
        assert np.allclose(W.p_plus_uniform(utilities, k, base, effect), exact, rtol=0, atol=1e-14)


def test_confound_p_plus_equals_enumeration():
    world = W.ConfoundWorld(n_generalists=4, n_specialists=2, retrieved_per_episode=2, hard_fraction=0.3)
    utilities = np.array([0.1, 0.4, 0.5, 0.9, 0.7, 0.95])
    overall, by_type = W.confound_p_plus(world, utilities)
    total, weight = np.zeros(6), np.zeros(6)
    for c, pool in enumerate([range(4), range(6)]):
        subsets = list(itertools.combinations(pool, 2))
        for subset in subsets:  # each subset has probability Pr[c] / len(subsets)
            p = world.base_rates()[c] + world.memory_effect * (utilities[list(subset)].mean() - 0.5)
            for m in subset:
                total[m] += [0.7, 0.3][c] / len(subsets) * p
                weight[m] += [0.7, 0.3][c] / len(subsets)
    assert np.allclose(overall, total / weight, rtol=0, atol=1e-14)
    assert np.isnan(by_type[W.EASY, 4:]).all() and not np.isnan(by_type[W.HARD]).any()


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


def test_uniform_retrieval_rows_are_distinct_uniform_and_block_independent():
    rows = W.uniform_retrieval(np.random.default_rng(1), 3 * W._BLOCK_EPISODES + 17, 12, 4)
    assert rows.shape == (3 * W._BLOCK_EPISODES + 17, 4)
    assert rows.min() >= 0 and rows.max() < 12
    assert (np.sort(rows, axis=1)[:, 1:] != np.sort(rows, axis=1)[:, :-1]).all()
    # every memory, and the first column alone, is drawn uniformly (generous 6-sigma bands)
    for counts, per_row in ((np.bincount(rows.ravel(), minlength=12), 4), (np.bincount(rows[:, 0], minlength=12), 1)):
        expected = rows.shape[0] * per_row / 12
        assert np.all(np.abs(counts - expected) < 6 * math.sqrt(expected))
    # the block size is invisible: one shorter call reproduces the first rows
    assert np.array_equal(W.uniform_retrieval(np.random.default_rng(1), 10, 12, 4), rows[:10])
    assert np.array_equal(np.sort(W.uniform_retrieval(np.random.default_rng(2), 5, 4, 4), axis=1),
                          np.tile(np.arange(4), (5, 1)))


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
    assert W.retrieval_entropy(np.array([5, 5, 5, 5])) == pytest.approx(1.0)
    assert W.retrieval_entropy(np.array([7, 0, 0, 0])) == pytest.approx(0.0)
    assert W.separated([0.1, 0.11, 0.12]) and not W.separated([0.0, 0.1, -0.05])
    assert W.seed_streams(3, 2)[1].spawn_key == W.seed_streams(3, 5)[1].spawn_key


# --- the theorem, numerically ---------------------------------------------------------------------

def test_worth_converges_to_exact_p_plus_at_rate_one_over_sqrt_n():
    result = W.theory_check(n_seeds=10, seed=2)
    error = result.mean_abs_error.mean(axis=0)
    assert -0.6 < result.slope < -0.4
    # the error tracks the normal approximation sqrt(2/pi) sd at every checkpoint: 200 errors
    # per checkpoint put the mean within about 5 % (1 sd), so 30 % is a generous bound
    assert np.all(np.abs(error / result.predicted_error - 1) < 0.3)
    assert result.max_abs_error[:, -1].max() < 0.03   # 10 000 retrievals per memory: sd <= 0.005
    assert np.array_equal(result.p_plus, np.stack([W.p_plus_uniform(u, 4) for u in result.utilities]))


def test_confound_worth_converges_to_its_exact_p_plus():
    world = W.ConfoundWorld(n_generalists=8, n_specialists=4, retrieved_per_episode=3,
                            n_episodes=200_000, memory_effect=0.4)
    result = W.confound_experiment(world, n_seeds=1, seed=5)
    # >= 25 000 retrievals per memory and type: sd <= 0.0032, so 0.016 is a 5-sigma bound
    assert np.abs(result.worth - result.p_plus).max() < 0.016
    seen = ~np.isnan(result.p_plus_by_type)
    assert np.abs(result.worth_by_type[seen] - result.p_plus_by_type[seen]).max() < 0.016
    assert np.all(result.worth_by_type[:, W.EASY, 8:] == 0.5)   # specialists never seen on easy tasks


# --- determinism ----------------------------------------------------------------------------------

SMALL = {
    W.theory_check: W.TheoryWorld(n_memories=8, retrieved_per_episode=2, checkpoints=(10, 100, 1000)),
    W.controlled_experiment: W.ControlledWorld(n_memories=20, retrieved_per_episode=3, n_episodes=500,
                                               checkpoints=(0, 100, 500)),
    W.confound_experiment: W.ConfoundWorld(n_generalists=10, n_specialists=10, retrieved_per_episode=3,
                                           n_episodes=500),
    W.policy_experiment: W.PolicyWorld(n_memories=20, retrieved_per_episode=3, n_episodes=300),
    W.co_retrieval_experiment: W.CoRetrievalWorld(n_memories=20, retrieved_per_episode=3, n_episodes=500,
                                                  diversities=(0.0, 0.5, 1.0)),
}


@pytest.mark.parametrize("experiment", list(SMALL), ids=lambda f: f.__name__)
def test_same_seed_same_floats_other_seed_other_floats(experiment):
    world = SMALL[experiment]
    first = experiment(world, n_seeds=3, seed=9)
    assert_results_identical(first, experiment(world, n_seeds=3, seed=9))
    other = experiment(world, n_seeds=3, seed=10)
    assert any(isinstance(getattr(first, f.name), np.ndarray) and
               not np.array_equal(getattr(first, f.name), getattr(other, f.name), equal_nan=True)
               for f in dataclasses.fields(first))


@pytest.mark.parametrize("experiment", list(SMALL), ids=lambda f: f.__name__)
def test_a_seed_does_not_depend_on_how_many_seeds_run(experiment):
    world = SMALL[experiment]
    three, two = experiment(world, n_seeds=3, seed=1), experiment(world, n_seeds=2, seed=1)
    for f in dataclasses.fields(two):
        value = getattr(two, f.name)
        if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == 2:
            assert np.array_equal(value, getattr(three, f.name)[:2], equal_nan=True), f.name


def test_controlled_counters_match_the_scalar_estimator_fed_the_same_stream():
    world = W.ControlledWorld(n_memories=15, retrieved_per_episode=4, n_episodes=300, checkpoints=(300,))
    rng = np.random.default_rng(W.seed_streams(0, 1)[0])
    utilities = rng.uniform(0.0, 1.0, world.n_memories)
    rows = W.uniform_retrieval(rng, 300, 15, 4)
    outcomes = rng.random(300) < W.success_probability(utilities, rows)
    scalar = MemoryWorth()
    for row, y in zip(rows, outcomes):
        scalar.update(row, y)
    result = W.controlled_experiment(world, n_seeds=1, seed=0)
    assert np.array_equal(result.utilities[0], utilities)
    assert [scalar.worth(m) for m in range(15)] == result.worth[0].tolist()
    assert np.array_equal(WorthArrays(15).update_batch(rows, outcomes).worth(), result.worth[0])


# --- settings are validated -----------------------------------------------------------------------

@pytest.mark.parametrize("make, message", [
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
])
def test_bad_settings_are_rejected(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# --- the experiments at paper scale ---------------------------------------------------------------

@pytest.fixture(scope="module")
def exp1():
    return W.controlled_experiment()


def test_experiment1_lands_near_the_published_rho(exp1):
    assert abs(exp1.rho_mean - 0.89) < 0.03          # published 0.89 +- 0.02
    assert 0.01 < exp1.rho_sd < 0.04
    assert exp1.baseline_rho == 0.0
    assert np.all(exp1.rho_at_checkpoints[:, 0] == 0.0)  # before any episode: the constant prior
    assert np.all(np.diff(exp1.rho_at_checkpoints.mean(axis=0)) > 0)  # improves with every checkpoint
    assert np.allclose(exp1.p_plus_rho, 1.0)          # the limit ranks perfectly
    assert exp1.taxonomy.sum(axis=1).tolist() == [100] * 20
    assert exp1.taxonomy_counts()["mixed"] == 100.0   # k = 10 squeezes p+ into [0.45, 0.55]


def test_experiment2_confound_reverses_the_global_sign_and_conditioning_recovers_some():
    result = W.confound_experiment()
    assert abs(result.rho_global.mean() - (-0.33)) < 0.1
    assert abs(result.rho_conditioned.mean() - 0.14) < 0.1
    assert result.rho_conditioned.mean() > 0 > result.rho_global.mean()
    assert np.allclose(result.p_plus_rho_conditioned, 1.0)
    assert result.specialist_low_value_share.mean() > 0.9


def test_experiment3_policy_feedback_keeps_rho_and_coverage():
    result = W.policy_experiment()
    assert result.rho_mean >= 0.85
    assert np.all(result.coverage == 1.0) and result.entropy.min() > 0.99


def test_experiment4_hitchhiker_needs_diversity_to_separate():
    result = W.co_retrieval_experiment()
    assert np.all(result.gap[:, 0] == 0.0)                 # never apart: identical counters
    assert np.all(np.diff(result.exact_gap, axis=1) > 0)    # exact gap grows with diversity
    assert np.abs(result.gap.mean(axis=0) - result.exact_gap.mean(axis=0)).max() < 0.01
    assert 0.2 <= result.diversity_threshold <= 0.4         # published: about 30 %
    assert not result.separated[0] and result.separated[-1]


# --- additions for the book chapters (mw-theory, mw-exp2, mw-exp4) ------------------------------------

def test_discounted_theory_check_shares_the_plain_run_and_matches_the_scalar_estimator():
    from forgetting.worth import DiscountedMemoryWorth

    world = W.TheoryWorld(n_memories=6, retrieved_per_episode=2, checkpoints=(5, 40, 300))
    result = W.discounted_theory_check(world, discount=0.9, n_seeds=2, seed=3)
    # the plain errors are theory_check's, bit for bit (same seeds, same draws)
    assert np.array_equal(result.mean_abs_error, W.theory_check(world, n_seeds=2, seed=3).mean_abs_error)
    # discount 1 is the plain estimator
    plain = W.discounted_theory_check(world, discount=1.0, n_seeds=2, seed=3)
    assert np.array_equal(plain.discounted_error, plain.mean_abs_error)
    assert plain.predicted_floor == 0.0 and plain.effective_outcomes == math.inf
    # the discounted errors are those of DiscountedMemoryWorth fed the same episodes
    rng = np.random.default_rng(W.seed_streams(3, 2)[0])
    utilities = rng.uniform(0.0, 1.0, 6)
    p_plus = W.p_plus_uniform(utilities, 2)
    scalar, done, errors = DiscountedMemoryWorth(discount=0.9), 0, []
    for checkpoint in world.checkpoints:
        rows = W.uniform_retrieval(rng, checkpoint - done, 6, 2)
        outcomes = rng.random(checkpoint - done) < W.success_probability(utilities, rows)
        for row, y in zip(rows, outcomes):
            scalar.update(row, y)
        done = checkpoint
        errors.append(np.abs(np.array([scalar.worth(m) for m in range(6)]) - p_plus).mean())
    assert result.discounted_error[0] == pytest.approx(errors, rel=1e-10)


def test_discounted_error_stalls_at_its_predicted_floor():
    result = W.discounted_theory_check(discount=0.99, n_seeds=10, seed=1)
    late = result.discounted_error.mean(axis=0)[-3:]
    assert np.all(np.abs(late / result.predicted_floor - 1) < 0.3)
    assert result.mean_abs_error.mean(axis=0)[-1] < late.min() / 5   # the plain one keeps shrinking
    assert result.effective_outcomes == pytest.approx(0.2 * 199)
    with pytest.raises(ValueError, match="discount"):
        W.discounted_theory_check(discount=0.0)


def test_confound_episode_sweep_is_the_experiment_at_each_episode_count():
    world = SMALL[W.confound_experiment]
    sweep = W.confound_episode_sweep((100, 400), world, n_seeds=2, seed=4)
    assert list(sweep) == [100, 400]
    for episodes, result in sweep.items():
        assert result.world.n_episodes == episodes
        assert_results_identical(result, W.confound_experiment(
            dataclasses.replace(world, n_episodes=episodes), n_seeds=2, seed=4))


def test_co_retrieval_threshold_at_other_z():
    result = W.co_retrieval_experiment(SMALL[W.co_retrieval_experiment], n_seeds=5, seed=2)
    assert result.threshold_at(W.SEPARATION_Z) == result.diversity_threshold
    assert np.array_equal(result.separated_at(W.SEPARATION_Z), result.separated)
    assert result.threshold_at(1e6) is None and not result.separated_at(1e6).any()
    # a stricter z can only move the threshold up (or lose it)
    strict, lax = result.threshold_at(1.96), result.threshold_at(1.645)
    assert strict is None or (lax is not None and strict >= lax)


def test_policy_success_rate_and_retrieval_ratio():
    world = SMALL[W.policy_experiment]
    result = W.policy_experiment(world, n_seeds=2, seed=3)
    # recount the successes from scratch: same streams, same draws as policy_experiment
    n, k = world.n_memories, world.retrieved_per_episode
    rngs = [np.random.default_rng(child) for child in W.seed_streams(3, 2)]
    utilities = np.stack([rng.uniform(0.0, 1.0, n) for rng in rngs])
    gumbel = np.stack([rng.gumbel(size=(world.n_episodes, n)) for rng in rngs], axis=1)
    draws = np.stack([rng.random(world.n_episodes) for rng in rngs], axis=1)
    arrays = [WorthArrays(n) for _ in range(2)]
    wins = np.zeros(2)
    for t in range(world.n_episodes):
        for s in range(2):
            row = W.softmax_retrieval(arrays[s].worth(), gumbel[t, s], world.temperature, k)
            won = bool(draws[t, s] < W.success_probability(utilities[s], row[None, :])[0])
            arrays[s].update_batch(row[None, :], np.array([won]))
            wins[s] += won
    assert np.array_equal(result.success_rate, wins / world.n_episodes)
    ratio = result.retrieval_ratio(0.1)
    order = np.argsort(result.utilities[0])
    assert ratio[0] == pytest.approx(result.retrievals[0, order[-2:]].mean() / result.retrievals[0, order[:2]].mean())
    with pytest.raises(ValueError, match="share"):
        result.retrieval_ratio(0.0)


def test_co_retrieval_share_threshold():
    result = W.co_retrieval_experiment(SMALL[W.co_retrieval_experiment], n_seeds=6, seed=2)
    share = result.ranked_first_share
    assert share[0] == 0.0   # never apart: identical worth, never strictly first
    assert np.array_equal(share, (result.anchor_worth > result.hitchhiker_worth).mean(axis=0))
    assert result.share_threshold(0.0) == 0.0 and result.share_threshold(1.01) is None
    expected = next((float(d) for j, d in enumerate(result.diversities) if (share[j:] >= 0.5).all()), None)
    assert result.share_threshold(0.5) == expected
