"""Experiment 2: exact p+ of the confound, convergence, the published directions."""

import dataclasses
import itertools

import numpy as np
import pytest

from forgetting.studies import published
from forgetting.studies import worlds as W
from forgetting.worth import memory_worth


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


def test_confound_worth_converges_to_its_exact_p_plus():
    world = W.ConfoundWorld(
        n_generalists=8, n_specialists=4, retrieved_per_episode=3, n_episodes=200_000, memory_effect=0.4
    )
    result = W.confound_experiment(world, n_seeds=1, seed=5)
    # >= 25 000 retrievals per memory and type: sd <= 0.0032, so 0.016 is a 5-sigma bound
    assert np.abs(result.worth - result.p_plus).max() < 0.016
    seen = ~np.isnan(result.p_plus_by_type)
    assert np.abs(result.worth_by_type[seen] - result.p_plus_by_type[seen]).max() < 0.016
    assert np.all(result.worth_by_type[:, W.EASY, 8:] == 0.5)  # specialists never seen on easy tasks


def test_experiment2_confound_reverses_the_global_sign_and_conditioning_recovers_some():
    result = W.confound_experiment()
    assert abs(result.rho_global.mean() - published.value("mw-exp2.rho_global")) < 0.1
    assert abs(result.rho_conditioned.mean() - published.value("mw-exp2.rho_conditioned")) < 0.1
    assert result.rho_conditioned.mean() > 0 > result.rho_global.mean()
    assert np.allclose(result.p_plus_rho_conditioned, 1.0)
    assert result.specialist_low_value_share.mean() > 0.9


def test_confound_episode_sweep_is_the_experiment_at_each_episode_count():
    world = SMALL[W.confound_experiment]
    sweep = W.confound_episode_sweep((100, 400), world, n_seeds=2, seed=4)
    assert list(sweep) == [100, 400]
    for episodes, result in sweep.items():
        assert result.world.n_episodes == episodes
        assert_results_identical(
            result, W.confound_experiment(dataclasses.replace(world, n_episodes=episodes), n_seeds=2, seed=4)
        )


def _direct_confound_run(world, seed):
    """One seed, one episode at a time: a task uniform, n retrieval keys (the k smallest of the
    generalists' on an easy task, of all on a hard one), an outcome uniform, each from its stream."""
    n, k = world.n_memories, world.retrieved_per_episode
    rng = np.random.default_rng(seed)
    utilities = np.concatenate(
        [
            rng.uniform(*world.generalist_utility, world.n_generalists),
            rng.uniform(*world.specialist_utility, world.n_specialists),
        ]
    )
    tasks, keys, coins = (W.substream(seed, i) for i in (W.TASK_STREAM, W.RETRIEVAL_STREAM, W.OUTCOME_STREAM))
    successes, failures = np.zeros(n), np.zeros(n)
    for _ in range(world.n_episodes):
        hard = tasks.random() < world.hard_fraction
        key = keys.random(n)
        chosen = np.argsort(key[: n if hard else world.n_generalists])[:k]
        p = world.base_rates()[int(hard)] + world.memory_effect * (utilities[chosen].mean() - 0.5)
        (successes if coins.random() < p else failures)[chosen] += 1
    return utilities, memory_worth(successes, failures), successes + failures


def test_confound_episodes_do_not_depend_on_the_run_length_or_the_block_size(monkeypatch):
    world = SMALL[W.confound_experiment]
    children = W.seed_streams(8, 2)
    for episodes in (150, 400):
        result = W.confound_experiment(dataclasses.replace(world, n_episodes=episodes), n_seeds=2, seed=8)
        for s, child in enumerate(children):
            utilities, worth, evidence = _direct_confound_run(
                dataclasses.replace(world, n_episodes=episodes), child
            )
            assert np.array_equal(result.utilities[s], utilities)
            assert np.array_equal(result.worth[s], worth) and np.array_equal(result.evidence[s], evidence)
    whole = W.confound_experiment(world, n_seeds=2, seed=8)
    monkeypatch.setattr(W.model, "BLOCK_EPISODES", 7)
    assert_results_identical(W.confound_experiment(world, n_seeds=2, seed=8), whole)


def test_the_sweeps_are_one_experiment_per_setting(monkeypatch):
    """The sweeps draw once per seed and draw setting (the longest run, the effects sharing it)."""
    world = SMALL[W.confound_experiment]
    counts = (120, 500, 37, 500)
    episodes = W.confound_episode_sweep(counts, world, n_seeds=2, seed=3)
    grid = W.confound_sweep((0.1, 0.3), (4, 10), world, n_seeds=2, seed=3)
    assert list(episodes) == [120, 500, 37] and list(grid) == [(0.1, 4), (0.1, 10), (0.3, 4), (0.3, 10)]
    monkeypatch.setattr(W.model, "BLOCK_EPISODES", 32)
    for e, result in episodes.items():
        assert_results_identical(
            result, W.confound_experiment(dataclasses.replace(world, n_episodes=e), 2, 3)
        )
    for (effect, count), result in grid.items():
        alone = dataclasses.replace(
            world, memory_effect=effect, n_specialists=count, n_generalists=20 - count
        )
        assert_results_identical(result, W.confound_experiment(alone, 2, 3))
    assert W.confound_episode_sweep((), world, n_seeds=2) == {} == W.confound_sweep((), (4,), world)


def test_the_episode_sweep_summary_and_calibration_values_read_the_results():
    from forgetting.studies.worlds import confound

    world = SMALL[W.confound_experiment]
    sweep = W.confound_episode_sweep([100, 400], world, n_seeds=3, seed=0)
    summary = confound.episode_sweep_summary(sweep)
    assert list(summary.episodes) == [100, 400]
    assert summary.global_mean[1] == sweep[400].rho_global.mean()
    assert summary.conditioned_sd[0] == sweep[100].rho_conditioned.std(ddof=1)
    assert [r["episodes"] for r in summary.rows] == [100, 400]
    assert summary.values == {
        "sweep_last_episodes": 400,
        "sweep_global_last": summary.global_mean[-1],
        "sweep_conditioned_last": summary.conditioned_mean[-1],
        "sweep_first_episodes": 100,
        "sweep_global_first": summary.global_mean[0],
    }
    grid = W.confound_sweep([0.1, 0.4], [5, 10], world, n_seeds=3, seed=0)
    rows = confound.calibration_rows(grid, world)
    assert [(r["memory_effect"], r["specialists"], r["generalists"]) for r in rows] == [
        (0.1, 5, 15),
        (0.1, 10, 10),
        (0.4, 5, 15),
        (0.4, 10, 10),
    ]
    v = confound.calibration_values(rows, world)
    assert v["n_grid"] == 4 and v["n_memories"] == 20
    assert v["grid_global_low"] == min(r["rho_global"] for r in rows)
    assert v["n_cond_positive"] == sum(r["rho_conditioned"] > 0 for r in rows)
    assert v["grid_low_value_min"] == min(r["specialists_low_value"] for r in rows)
    with pytest.raises(ValueError, match="empty"):
        confound.episode_sweep_summary({})
    with pytest.raises(ValueError, match="empty"):
        confound.calibration_values([], world)
