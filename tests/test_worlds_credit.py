"""Experiments 2 and 4 with randomized omission: at epsilon = 0 they are the experiments' own
runs, the omission draws keep their invariants, and the estimators see what was retrieved."""

from __future__ import annotations

import numpy as np
import pytest

from forgetting.studies.worlds import (
    ConfoundWorld,
    CoRetrievalWorld,
    co_retrieval_experiment,
    confound_experiment,
    credit,
    threshold_or_nan,
)


def test_without_omission_the_pair_world_is_experiment_4_seed_for_seed():
    world = CoRetrievalWorld(n_episodes=2000, diversities=(0.0, 0.5))
    ours = credit.pair_credit(world, world.diversities, (0.0, 0.2), n_seeds=4, seed=3)
    theirs = co_retrieval_experiment(world, n_seeds=4, seed=3)
    assert np.array_equal(ours.worth_gap[:, :, 0], theirs.gap)
    assert np.array_equal(ours.success_lost[:, 0, 0], np.zeros(4))
    assert np.isnan(ours.regression_gap[:, 0, 0]).all()  # the pair is never broken: not identified
    assert not np.isnan(ours.regression_gap[:, 1, 0]).any()


def test_without_omission_the_confound_world_is_experiment_2_seed_for_seed():
    world = ConfoundWorld(n_episodes=2000)
    ours = credit.confound_credit(world, (0.0, 0.3), n_seeds=3, seed=1)
    assert np.array_equal(ours.rho_worth[:, 0], confound_experiment(world, n_seeds=3, seed=1).rho_global)
    assert (ours.unscored[:, 0] == world.n_memories).all()  # no omission: no withheld arm anywhere
    assert (ours.success_lost[:, 1] > 0).all()


def test_omission_draws_grow_with_epsilon_and_do_not_depend_on_the_run_length():
    seed = np.random.SeedSequence(7)
    low, high = credit.omission_slots(seed, 500, 4, 0.1), credit.omission_slots(seed, 500, 4, 0.4)
    assert ((low < 0) | (low == high)).all() and (high >= 0).sum() > (low >= 0).sum()
    assert np.array_equal(credit.omission_slots(seed, 200, 4, 0.4), high[:200])
    assert high.max() <= 3 and (credit.omission_slots(seed, 500, 4, 0.0) == -1).all()


def test_a_withheld_slot_is_shown_as_the_empty_id():
    retrieved = np.array([[3, 1, 2], [0, 4, 2]], dtype=np.intp)
    slots = np.array([1, -1], dtype=np.intp)
    present = credit.present_mask(slots, 3)
    assert credit.present_ids(retrieved, present, 5).tolist() == [[3, 5, 2], [0, 4, 2]]


@pytest.mark.parametrize("epsilon", [-0.1, 1.5, float("nan")])
def test_bad_epsilon_is_refused_with_its_name(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        credit.omission_slots(0, 10, 3, epsilon)
    with pytest.raises(ValueError, match=r"epsilons\[1\]"):
        credit.confound_credit(ConfoundWorld(n_episodes=10), (0.0, epsilon), n_seeds=2)


def test_the_threshold_of_memory_worth_is_experiment_4s_own():
    world = CoRetrievalWorld(n_episodes=10_000, diversities=(0.0, 0.25, 0.5, 0.75, 1.0))
    ours = credit.pair_credit(world, world.diversities, (0.0,), n_seeds=12, seed=2)
    theirs = co_retrieval_experiment(world, n_seeds=12, seed=2)
    threshold = credit.first_separated(np.array(world.diversities), ours.worth_gap[:, :, 0])
    assert threshold == threshold_or_nan(theirs.threshold_at(1.645)) and 0.0 < threshold < 1.0
    margin = credit.separation_margin(theirs.gap, 1.645)
    assert margin == pytest.approx(theirs.gap.mean(axis=0) - 1.645 * theirs.gap.std(axis=0, ddof=1))


def test_a_nan_gap_in_any_seed_does_not_separate():
    gaps = np.array([[0.5, 0.5, 0.5], [0.6, np.nan, 0.6], [0.55, 0.5, 0.55]])
    assert np.isnan(credit.separation_margin(gaps)[1])
    assert credit.first_separated(np.array([0.1, 0.2, 0.3]), gaps) == 0.3
    assert np.isnan(credit.first_separated(np.array([0.1, 0.2, 0.3]), gaps[:, :2]))


def test_estimates_equal_but_for_their_last_bits_tie_in_the_ranking():
    utilities = np.array([0.1, 0.2, 0.3, 0.4])
    exact = np.array([1 / 6, 1 / 6, 0.5, np.nan])
    noisy = np.array([1 / 3 - 1 / 6, 2 / 3 - 1 / 2, 0.5, np.nan])  # the same effect, other last bits
    assert noisy[0] != noisy[1]
    assert credit.ranked_rho(noisy, utilities) == credit.ranked_rho(exact, utilities)
    assert credit.ranked_rho(exact, utilities) != credit.ranked_rho(
        np.array([1 / 6, 0.2, 0.5, np.nan]), utilities
    )
    assert np.isnan(credit.ranked_rho(np.full(4, np.nan), utilities))  # nothing scored: no ranking


def test_pair_values_read_the_gaps_at_memory_worths_threshold_and_never_fall_back():
    world = CoRetrievalWorld(n_episodes=2000, diversities=(0.0, 0.5, 1.0))
    by_d = credit.pair_credit(world, world.diversities, (0.0,), n_seeds=4, seed=2)
    by_e = credit.pair_credit(world, (0.0,), (0.0, 0.5), n_seeds=4, seed=2)
    gaps = credit.pair_gaps(by_d, by_e)
    assert np.array_equal(gaps["worth_d"], by_d.worth_gap[:, :, 0], equal_nan=True)
    assert np.array_equal(gaps["omission_e"], by_e.omission_gap[:, 0, :], equal_nan=True)
    values = credit.pair_values(world, by_d, by_e, z=1.645)
    threshold = values["threshold_worth_d"]
    assert np.array_equal(
        [threshold], [credit.first_separated(by_d.diversities, gaps["worth_d"], 1.645)], equal_nan=True
    )
    column = credit.threshold_column(by_d.diversities, threshold)
    if column is None:
        assert np.isnan(values["worth_gap_at"]) and np.isnan(values["regression_sd_at"])
    else:
        assert values["worth_gap_at"] == gaps["worth_d"][:, column].mean()
        assert values["regression_sd_at"] == gaps["regression_d"][:, column].std(ddof=1)
    assert values["split_last"] == 2 * 0.5 / world.retrieved_per_episode
    assert (
        values["effect_gap"]
        == (world.anchor_utility - world.hitchhiker_utility) / world.retrieved_per_episode
    )
    assert values["n_seeds"] == 4 and values["epsilon_last"] == 0.5 and values["d_last"] == 1.0


def test_no_threshold_means_no_column_not_the_last_one():
    values = np.array([0.0, 0.5, 1.0])
    assert credit.threshold_column(values, float("nan")) is None
    assert credit.threshold_column(values, 0.5) == 1
    with pytest.raises(
        ValueError, match=r"threshold must be one of the tested values \[0.0, 0.5, 1.0\] once, got 0.25"
    ):
        credit.threshold_column(values, 0.25)  # a threshold is always a tested value


def test_the_gaps_at_the_threshold_are_read_at_its_column():
    """Synthetic gaps: Memory Worth separates from d = 0.5 on, so the "_at" values are column 1's."""
    world = CoRetrievalWorld(n_episodes=100, diversities=(0.0, 0.5, 1.0))
    seeds = 5
    worth = np.zeros((seeds, 3, 1))
    worth[:, 1, 0], worth[:, 2, 0] = [0.10, 0.11, 0.12, 0.10, 0.11], [0.2, 0.21, 0.2, 0.22, 0.2]
    regression = worth + 0.05
    regression[:, 0, 0] = np.nan
    by_d = credit.PairCredit(
        world,
        np.array([0.0, 0.5, 1.0]),
        np.array([0.0]),
        worth,
        worth * np.nan,
        regression,
        np.zeros((seeds, 3, 1)),
    )
    noisy = np.full((seeds, 1, 2), np.nan)
    noisy[:, 0, 1] = [0.3, -0.1, 0.2, 0.0, 0.1]  # centred on 0.1, too noisy to separate
    by_e = credit.PairCredit(
        world,
        np.array([0.0]),
        np.array([0.0, 0.9]),
        np.zeros((seeds, 1, 2)),
        noisy,
        noisy.copy(),
        np.tile([0.0, 0.04], (seeds, 1, 1)),
    )
    values = credit.pair_values(world, by_d, by_e, z=1.645)
    assert values["threshold_worth_d"] == 0.5 and values["threshold_regression_d"] == 0.5
    assert values["worth_gap_at"] == worth[:, 1, 0].mean()
    assert values["regression_gap_at"] == regression[:, 1, 0].mean()
    assert values["worth_sd_at"] == worth[:, 1, 0].std(ddof=1)
    assert values["lost_omission_last"] == 0.04 and values["lost_breaking_max"] == 0.0
    assert np.isnan(values["threshold_omission_e"]) and values["omission_gap_last"] == noisy[:, 0, 1].mean()
