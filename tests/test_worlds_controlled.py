"""Experiments 1 and 3: the controlled world and the policy feedback loop."""

import dataclasses

import numpy as np
import pytest

from forgetting.studies import published
from forgetting.studies import worlds as W
from forgetting.studies.worlds import controlled
from forgetting.worth import MemoryWorth, UnitCounters, WorthArrays, memory_worth


def assert_results_identical(first, second):
    for f in dataclasses.fields(first):
        a, b = getattr(first, f.name), getattr(second, f.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), f.name
        else:
            assert a == b, f.name


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


def test_controlled_counters_match_the_scalar_estimator_fed_the_same_stream():
    world = W.ControlledWorld(n_memories=15, retrieved_per_episode=4, n_episodes=300, checkpoints=(300,))
    child = W.seed_streams(0, 1)[0]
    utilities = np.random.default_rng(child).uniform(0.0, 1.0, world.n_memories)
    rows = W.uniform_retrieval(W.substream(child, W.RETRIEVAL_STREAM), 300, 15, 4)
    outcomes = W.substream(child, W.OUTCOME_STREAM).random(300) < W.success_probability(utilities, rows)
    scalar = MemoryWorth()
    for row, y in zip(rows, outcomes):
        scalar.update(row, y)
    result = W.controlled_experiment(world, n_seeds=1, seed=0)
    assert np.array_equal(result.utilities[0], utilities)
    assert [scalar.worth(m) for m in range(15)] == result.worth[0].tolist()
    assert np.array_equal(WorthArrays(15).update_batch(rows, outcomes).worth(), result.worth[0])


@pytest.mark.parametrize("checkpoints", [(500,), (0, 100, 500), (0, 1, 2, 3, 250, 499), (100, 300)])
def test_experiment1_does_not_depend_on_what_is_recorded(checkpoints):
    """The same seed with other checkpoints, another run length or other blocks: the same run."""
    world = W.ControlledWorld(
        n_memories=20, retrieved_per_episode=3, n_episodes=500, checkpoints=tuple(range(0, 501, 50))
    )
    every = W.controlled_experiment(world, n_seeds=3, seed=6)
    other = W.controlled_experiment(dataclasses.replace(world, checkpoints=checkpoints), n_seeds=3, seed=6)
    for field in ("rho", "worth", "evidence", "taxonomy", "utilities"):
        assert np.array_equal(getattr(other, field), getattr(every, field)), field
    for j, checkpoint in enumerate(checkpoints):
        if checkpoint % 50 == 0:  # a common point: bit for bit
            assert np.array_equal(
                other.rho_at_checkpoints[:, j], every.rho_at_checkpoints[:, checkpoint // 50]
            )
    # a shorter run is the start of the longer one
    shorter = W.controlled_experiment(
        dataclasses.replace(world, n_episodes=300, checkpoints=(0, 100, 300)), n_seeds=3, seed=6
    )
    assert np.array_equal(shorter.rho_at_checkpoints, every.rho_at_checkpoints[:, [0, 2, 6]])
    assert np.array_equal(shorter.rho, every.rho_at_checkpoints[:, 6])


def test_experiment1_does_not_depend_on_the_block_size(monkeypatch):
    world = SMALL[W.controlled_experiment]
    whole = W.controlled_experiment(world, n_seeds=2, seed=1)
    monkeypatch.setattr(W.model, "BLOCK_EPISODES", 7)
    assert_results_identical(W.controlled_experiment(world, n_seeds=2, seed=1), whole)


def test_experiment3_does_not_depend_on_the_block_size(monkeypatch):
    world = SMALL[W.policy_experiment]
    whole = W.policy_experiment(world, n_seeds=2, seed=2)
    monkeypatch.setattr(controlled, "BLOCK_EPISODES", 7)
    assert_results_identical(W.policy_experiment(world, n_seeds=2, seed=2), whole)
    # and a seed's utilities are Experiment 1's of the same seed (the pairing of gap_decomposition)
    uniform = W.controlled_experiment(SMALL[W.controlled_experiment], n_seeds=2, seed=2)
    assert np.array_equal(whole.utilities, uniform.utilities)


@pytest.fixture(scope="module")
def exp1():
    return W.controlled_experiment()


def test_experiment1_lands_near_the_published_rho(exp1):
    band = published.load_published()["mw-exp1.rho"]
    # consistent with the published band within its Monte Carlo error
    assert W.consistent_with_band(exp1.rho_mean, exp1.rho_se, band.low, band.high)
    assert 0.01 < exp1.rho_sd < 0.04
    assert exp1.baseline_rho == 0.0
    assert np.all(exp1.rho_at_checkpoints[:, 0] == 0.0)  # before any episode: the constant prior
    assert np.all(np.diff(exp1.rho_at_checkpoints.mean(axis=0)) > 0)  # improves with every checkpoint
    assert np.allclose(exp1.p_plus_rho, 1.0)  # the limit ranks perfectly
    assert exp1.taxonomy.sum(axis=1).tolist() == [100] * 20
    assert exp1.taxonomy_counts()["mixed"] == 100.0  # k = 10 squeezes p+ into [0.45, 0.55]


def test_experiment3_policy_feedback_keeps_rho_and_coverage():
    result = W.policy_experiment()
    assert result.rho_mean >= 0.85
    assert np.all(result.coverage == 1.0) and result.entropy.min() > 0.99


def test_policy_success_rate_and_retrieval_ratio():
    world = SMALL[W.policy_experiment]
    result = W.policy_experiment(world, n_seeds=2, seed=3)
    # recount the successes from scratch: same streams, same draws as policy_experiment, one
    # episode at a time (n Gumbel keys from the retrieval stream, one coin from the outcome stream)
    n, k = world.n_memories, world.retrieved_per_episode
    children = W.seed_streams(3, 2)
    utilities = np.stack([np.random.default_rng(child).uniform(0.0, 1.0, n) for child in children])
    keys = [W.substream(child, W.RETRIEVAL_STREAM) for child in children]
    coins = [W.substream(child, W.OUTCOME_STREAM) for child in children]
    gumbel = np.array([[rng.gumbel(size=n) for rng in keys] for _ in range(world.n_episodes)])
    draws = np.array([[rng.random() for rng in coins] for _ in range(world.n_episodes)])
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
    assert ratio[0] == pytest.approx(
        result.retrievals[0, order[-2:]].mean() / result.retrievals[0, order[:2]].mean()
    )
    with pytest.raises(ValueError, match="share"):
        result.retrieval_ratio(0.0)


def test_standard_error_is_sd_over_root_seeds(exp1):
    assert exp1.rho_se == pytest.approx(exp1.rho_sd / np.sqrt(len(exp1.rho)))


def test_static_scores_rank_nothing_on_average_but_vary_by_seed():
    utilities = np.random.default_rng(3).uniform(size=(40, 100))
    rho = W.static_score_rho(utilities, seed=0)
    assert rho.shape == (40,)
    assert abs(rho.mean()) < 3 * rho.std(ddof=1) / np.sqrt(40)
    assert rho.std(ddof=1) > 0.05
    assert np.array_equal(rho, W.static_score_rho(utilities, seed=0))
    with pytest.raises(ValueError, match="utilities must be"):
        W.static_score_rho(np.ones(5))


@pytest.mark.parametrize(
    ("mean", "se", "expected"),
    [(0.39, 0.0, True), (0.36, 0.001, False), (0.36, 0.01, True), (0.43, 0.005, False), (0.42, 0.01, True)],
)
def test_consistent_with_band_widens_the_band_by_z_standard_errors(mean, se, expected):
    assert W.consistent_with_band(mean, se, 0.37, 0.41) is expected


def test_gap_decomposition_adds_up_and_pairs_by_seed():
    policy = np.array([0.85, 0.86, 0.87, 0.88])
    uniform = policy + 0.01
    parts = W.gap_decomposition(policy, uniform, 0.9)
    assert parts["loop"] + parts["setting"] == pytest.approx(parts["gap"])
    assert parts["loop"] == pytest.approx(-0.01)
    assert parts["loop_se"] == pytest.approx(0.0, abs=1e-12)  # a constant paired difference
    assert parts["loop_share"] == pytest.approx(parts["loop"] / parts["gap"])
    with pytest.raises(ValueError, match="paired by seed"):
        W.gap_decomposition(policy, uniform[:3], 0.9)


def test_the_depth_sweep_covers_every_k_from_1_to_20():
    assert tuple(range(1, 21)) == W.DEFAULT_DEPTHS


def test_the_depth_sweep_is_one_experiment_per_depth():
    """The sweep runs a seed's depths on one set of draws: each depth as it would run alone,
    the deepest allowed and depths given out of order or twice included."""
    world = SMALL[W.controlled_experiment]
    sweep = W.retrieval_depth_sweep((5, 1, 19, 3, 5), world, n_seeds=3, seed=4)
    assert list(sweep) == [5, 1, 19, 3]
    for k, result in sweep.items():
        alone = W.controlled_experiment(
            dataclasses.replace(world, retrieved_per_episode=k), n_seeds=3, seed=4
        )
        assert_results_identical(result, alone)
    assert W.retrieval_depth_sweep((), world, n_seeds=3) == {}
    with pytest.raises(ValueError, match="retrieved_per_episode"):
        W.retrieval_depth_sweep((3, 20), world, n_seeds=3)
    with pytest.raises(ValueError, match="n_seeds"):
        W.retrieval_depth_sweep((3,), world, n_seeds=0)


@pytest.mark.parametrize("seed", [-1, True, 0.0])
def test_static_score_rho_refuses_a_seed_that_is_not_a_non_negative_int(seed):
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        W.static_score_rho(np.ones((2, 3)), seed=seed)


def test_the_loop_cost_is_called_measured_only_beyond_two_sided_95_percent():
    from forgetting.studies.stats import DISTINGUISHABLE_Z
    from forgetting.studies.worlds import loop_cost_words

    assert loop_cost_words(-0.0107, 0.0107 / 2.03) == "a cost these seeds measure"
    assert loop_cost_words(-0.0033, 0.0033 / 1.07) == "a cost these seeds cannot tell apart from zero"
    assert loop_cost_words(DISTINGUISHABLE_Z, 1.0) == "a cost these seeds measure"
    with pytest.raises(ValueError, match="loop_se"):
        loop_cost_words(0.1, 0.0)


def _plain_policy_experiment(world, n_seeds, seed):
    """Experiment 3 read plainly: every worth recomputed from the counters each episode,
    :func:`softmax_retrieval` on the whole array (the loop before :func:`controlled.softmax_runs`)."""
    n, k = world.n_memories, world.retrieved_per_episode
    children = W.seed_streams(seed, n_seeds)
    utilities = np.stack([np.random.default_rng(child).uniform(0.0, 1.0, n) for child in children])
    keys = [W.substream(child, W.RETRIEVAL_STREAM) for child in children]
    coins = [W.substream(child, W.OUTCOME_STREAM) for child in children]
    counters = UnitCounters(n_seeds * n)
    offset = (np.arange(n_seeds) * n)[:, None]
    for start in range(0, world.n_episodes, 64):
        size = min(64, world.n_episodes - start)
        gumbel = np.stack([rng.gumbel(size=(size, n)) for rng in keys], axis=1)
        draws = np.stack([rng.random(size) for rng in coins], axis=1)
        for t in range(size):
            retrieved = W.softmax_retrieval(
                counters.worth().reshape(n_seeds, n), gumbel[t], world.temperature, k
            )
            flat = retrieved + offset
            counters.add(flat, draws[t] < W.success_probability(utilities.ravel(), flat))
    worth = memory_worth(counters.successes, counters.failures).reshape(n_seeds, n)
    return utilities, worth, (counters.successes + counters.failures).reshape(n_seeds, n)


@pytest.mark.parametrize("temperature", [1.0, 0.2, 0.01])
def test_experiment3_is_the_plain_loop_bit_for_bit(temperature):
    world = dataclasses.replace(SMALL[W.policy_experiment], temperature=temperature)
    result = W.policy_experiment(world, n_seeds=3, seed=6)
    utilities, worth, retrievals = _plain_policy_experiment(world, 3, 6)
    assert np.array_equal(result.utilities, utilities)
    assert np.array_equal(result.worth, worth) and np.array_equal(result.retrievals, retrievals)


def test_the_temperature_sweep_is_one_experiment_per_temperature(monkeypatch):
    world = SMALL[W.policy_experiment]
    sweep = W.temperature_sweep((0.5, 0.05, 0.2), world, n_seeds=2, seed=5)
    assert list(sweep) == [0.5, 0.05, 0.2]
    monkeypatch.setattr(controlled, "BLOCK_EPISODES", 7)
    for t, result in sweep.items():
        alone = W.policy_experiment(dataclasses.replace(world, temperature=t), n_seeds=2, seed=5)
        assert_results_identical(result, alone)
    assert W.temperature_sweep((), world, n_seeds=2) == {}


def test_temperature_rows_and_values_read_the_sweep():
    sweep = W.temperature_sweep((1.0, 0.2), SMALL[W.policy_experiment], n_seeds=3, seed=2)
    rows = controlled.temperature_rows(sweep)
    assert [r["temperature"] for r in rows] == [1.0, 0.2]
    assert rows[1]["rho_mean"] == sweep[0.2].rho_mean
    assert rows[1]["success_rate"] == sweep[0.2].success_rate.mean()
    utilities = np.array([[0.2, 0.4], [0.6, 0.8]])
    v = controlled.temperature_values(list(reversed(rows)), utilities)  # the coldest whatever the order
    assert (v["t_coldest"], v["rho_coldest"]) == (0.2, rows[1]["rho_mean"])
    assert v["success_uniform"] == 0.5
    full = [r for r in rows if r["coverage_min"] == 1.0]
    if full:
        assert v["t_full_coverage"] == min(r["temperature"] for r in full)
    none = controlled.temperature_values([dict(r, coverage_min=0.5) for r in rows], utilities)
    assert np.isnan(none["t_full_coverage"]) and np.isnan(none["rho_full_coverage"])


def test_experiment1_summary_compares_with_the_paper_as_the_chapter_says():
    from forgetting.studies.mean_difference import difference_of_means, standard_error

    world = SMALL[W.controlled_experiment]
    result = W.controlled_experiment(world, n_seeds=4, seed=0)
    sweep = W.retrieval_depth_sweep([1, 2, 3], world, n_seeds=4, seed=0)
    rho, static = (
        published.load_published()["mw-exp1.rho"],
        published.load_published()["mw-exp1.rho_never_updated"],
    )
    summary = controlled.experiment1_summary(result, sweep, rho, static, seed=0)
    v = summary.values
    se = standard_error(rho.spread, 4)
    assert v["paper_rho_se"] == se
    assert v["rho_diff"] == difference_of_means(result.rho_mean, result.rho_se, rho.value, se).difference
    assert v["rho_static"] == 0.0 and summary.static_rho == [0.0] * 4
    assert (v["k_smallest"], v["k_largest"], v["n_depths"]) == (1, 3, 3)
    assert [r["k"] for r in summary.depth_rows] == [1, 2, 3]
    assert [r["agrees_with_paper_mean"] for r in summary.depth_rows] == [
        k in summary.matched for k in (1, 2, 3)
    ]
    assert v["k_in_match"] == ("inside" if 3 in summary.matched else "outside")
    assert np.isnan(v["rho_k5"])  # 5 was not swept
    assert len(summary.comparison) == 6 and summary.comparison[0]["this book"] == result.rho_mean
    assert controlled._depth_range([]) == "none" and controlled._depth_range([4]) == "4"
    assert controlled._depth_range([2, 3, 4]) == "2 to 4"
