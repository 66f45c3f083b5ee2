"""Experiment 3's feedback loop with randomized omission: at epsilon = 0 it is Experiment 3's own
run, each rate's run reads only its own draws, and bad rates are refused by name."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from forgetting.studies.executor import InProcess
from forgetting.studies.worlds import PolicyWorld, feedback_credit, policy_experiment
from forgetting.studies.worlds.credit import omission_slots, present_mask, present_mean
from forgetting.studies.worlds.model import (
    OUTCOME_STREAM,
    RETRIEVAL_STREAM,
    seed_streams,
    softmax_retrieval,
    substream,
)
from forgetting.worth import DEFAULT_PRIOR
from forgetting.worth.formulas import ratio_or_prior

WORLD = PolicyWorld(n_memories=30, retrieved_per_episode=4, n_episodes=1500)


@pytest.mark.parametrize("temperatures", [None, (0.2, 0.05)])
def test_without_omission_the_loop_is_experiment_3_seed_for_seed(temperatures):
    ours = feedback_credit.feedback_credit(WORLD, (0.0, 0.4), n_seeds=3, seed=5, temperatures=temperatures)
    for i, temperature in enumerate(ours.temperatures):
        theirs = policy_experiment(replace(WORLD, temperature=float(temperature)), n_seeds=3, seed=5)
        assert np.array_equal(ours.rho_worth[:, i, 0], theirs.rho)
        assert np.array_equal(ours.coverage[:, i, 0], theirs.coverage)
        # mean success probability = expected share of successes: close to what the counters realised
        assert np.abs(ours.success[:, i, 0] - theirs.success_rate).max() < 0.03
    assert (ours.unscored[:, :, 0] == WORLD.n_memories).all()  # no omission: no withheld arm anywhere
    assert np.isnan(ours.rho_omission[:, :, 0]).all()  # so no ranking either
    assert not np.array_equal(ours.rho_worth[:, 0, 1], ours.rho_worth[:, 0, 0])  # omission changes the loop


def test_a_rate_s_run_does_not_depend_on_the_other_rates_or_on_the_chunks():
    together = feedback_credit.feedback_credit(
        WORLD, (0.0, 0.2, 0.5), n_seeds=4, seed=1, temperatures=(0.5, 0.1)
    )
    alone = feedback_credit.feedback_credit(
        WORLD, (0.5,), n_seeds=4, seed=1, executor=InProcess(), temperatures=(0.1,)
    )
    for name in ("rho_worth", "rho_omission", "rho_regression", "unscored", "success", "coverage"):
        assert np.array_equal(getattr(together, name)[:, 1, 2], getattr(alone, name)[:, 0, 0]), name


def test_the_rows_average_over_seeds_and_price_omission_against_the_first_rate():
    result = feedback_credit.feedback_credit(WORLD, (0.0, 0.9), n_seeds=3, seed=2)
    rows = feedback_credit.feedback_rows(result)
    assert [(row["temperature"], row["epsilon"]) for row in rows] == [(0.2, 0.0), (0.2, 0.9)]
    assert rows[0]["success_lost"] == 0.0
    lost = float((result.success[:, 0, 0] - result.success[:, 0, 1]).mean())
    assert rows[1]["success_lost"] == pytest.approx(lost)
    assert rows[1]["rho_omission_mean"] == pytest.approx(float(result.rho_omission[:, 0, 1].mean()))
    assert rows[1]["rho_regression_sd"] == pytest.approx(float(result.rho_regression[:, 0, 1].std(ddof=1)))
    # withholding one of k memories in 90 % of episodes removes about 0.9 * E[u] / k of success
    assert 0.5 * 0.9 * 0.5 / WORLD.retrieved_per_episode < rows[1]["success_lost"]


@pytest.mark.parametrize("epsilons", [(0.0, -0.1), (0.0, 1.5), (0.0, float("nan"))])
def test_a_bad_rate_is_refused_with_its_position(epsilons):
    with pytest.raises(ValueError, match=r"epsilons\[1\]"):
        feedback_credit.feedback_credit(WORLD, epsilons, n_seeds=2)


def test_a_bad_temperature_is_refused_with_its_position():
    with pytest.raises(ValueError, match=r"temperatures\[0\]"):
        feedback_credit.feedback_credit(WORLD, (0.0,), n_seeds=2, temperatures=(0.0,))


@pytest.mark.parametrize(("name", "arguments"), [("epsilons", ((),)), ("temperatures", ((0.0,), ()))])
def test_an_empty_setting_is_refused_by_name(name, arguments):
    epsilons, *rest = arguments
    with pytest.raises(ValueError, match=f"{name} must name at least one value"):
        feedback_credit.feedback_credit(WORLD, epsilons, n_seeds=2, temperatures=rest[0] if rest else None)


def plain_seed(world, temperatures, epsilons, seed):
    """The loop read plainly: every episode the worth from the whole counters, then
    :func:`softmax_retrieval` (what ``_feedback_seeds`` keeps up to date incrementally)."""
    n, k, e = world.n_memories, world.retrieved_per_episode, world.n_episodes
    grid = [(t, epsilon) for t in temperatures for epsilon in epsilons]
    utilities = np.random.default_rng(seed).uniform(0.0, 1.0, n)
    keys, coins = substream(seed, RETRIEVAL_STREAM), substream(seed, OUTCOME_STREAM)
    slots = np.stack([omission_slots(seed, e, k, epsilon) for _, epsilon in grid])
    scale = np.array([t for t, _ in grid])[:, None]
    rows = np.arange(len(grid))[:, None]
    successes, failures = np.zeros((len(grid), n)), np.zeros((len(grid), n))
    retrieved = np.empty((len(grid), e, k), dtype=np.intp)
    present = present_mask(slots.ravel(), k).reshape(len(grid), e, k)
    outcomes, probability = np.empty((len(grid), e), dtype=bool), np.empty((len(grid), e))
    gumbel, draws = keys.gumbel(size=(e, n)), coins.random(e)
    for t in range(e):
        worth = ratio_or_prior(successes, successes + failures, DEFAULT_PRIOR)
        chosen = softmax_retrieval(worth, gumbel[t], scale, k)
        used = present[:, t]
        p = 0.5 + (present_mean(utilities, chosen, used) - 0.5)
        ok = draws[t] < p
        successes[rows, chosen] += used & ok[:, None]
        failures[rows, chosen] += used & ~ok[:, None]
        retrieved[:, t], outcomes[:, t], probability[:, t] = chosen, ok, p
    results = [  # each setting summarized as _feedback_seeds does: the loop is what is tested
        feedback_credit._setting_summary(
            utilities,
            successes[r],
            failures[r],
            retrieved[r],
            present[r],
            slots[r],
            outcomes[r],
            probability[r],
        )
        for r in range(len(grid))
    ]
    return [results[i * len(epsilons) : (i + 1) * len(epsilons)] for i in range(len(temperatures))]


@pytest.mark.parametrize("seed", [0, 3])
def test_the_incremental_loop_is_the_plain_reading_bit_for_bit(monkeypatch, seed):
    """Worth kept up to date at the updated memories, one scatter per episode, the selection
    inlined and several seeds played side by side give exactly the plain loop's results, seed
    by seed, also across blocks of episodes."""
    monkeypatch.setattr(feedback_credit, "BLOCK_EPISODES", 700)
    children = seed_streams(seed, 3)
    temperatures, epsilons = (1.0, 0.1, 0.02), (0.0, 0.3)
    fast = feedback_credit._feedback_seeds(WORLD, temperatures, epsilons, children)
    plain = [plain_seed(WORLD, temperatures, epsilons, child) for child in children]
    assert np.array_equal(np.array(fast), np.array(plain), equal_nan=True)


def test_the_result_does_not_depend_on_how_many_seeds_play_side_by_side(monkeypatch):
    first = feedback_credit.feedback_credit(WORLD, (0.0, 0.5), n_seeds=3, seed=2, temperatures=(0.5, 0.05))
    monkeypatch.setattr(feedback_credit, "CHUNK_SEEDS", 2)
    second = feedback_credit.feedback_credit(WORLD, (0.0, 0.5), n_seeds=3, seed=2, temperatures=(0.5, 0.05))
    for name in ("rho_worth", "rho_omission", "rho_regression", "unscored", "success", "coverage"):
        assert np.array_equal(getattr(first, name), getattr(second, name), equal_nan=True), name


def test_feedback_values_read_the_rows_at_the_headline_the_coldest_and_the_warmest_temperature():
    result = feedback_credit.feedback_credit(
        WORLD, (0.0, 0.2, 0.4), n_seeds=3, seed=5, temperatures=(1.0, 0.2, 0.05)
    )
    rows = {(r["temperature"], r["epsilon"]): r for r in feedback_credit.feedback_rows(result)}
    v = feedback_credit.feedback_values(result, 0.2)
    assert (v["feedback_coldest"], v["feedback_warmest"], v["feedback_epsilon_last"]) == (0.05, 1.0, 0.4)
    assert v["feedback_rho_worth"] == rows[0.2, 0.0]["rho_worth_mean"]
    assert v["feedback_omission_low"] == min(rows[0.2, e]["rho_omission_mean"] for e in (0.2, 0.4))
    assert v["feedback_lost_last"] == rows[0.2, 0.4]["success_lost"]
    assert v["feedback_cold_coverage"] == rows[0.05, 0.0]["coverage_mean"]
    assert v["feedback_warm_worth"] == rows[1.0, 0.0]["rho_worth_mean"]
    gaps = [abs(r["rho_regression_mean"] - r["rho_worth_mean"]) for r in rows.values()]
    assert v["feedback_gap_max"] == max(gaps)
    assert v["chance_sd"] == 1 / np.sqrt(WORLD.n_memories - 1) and v["feedback_seeds"] == 3
    assert v["feedback_cold_min"] <= v["feedback_cold_max"]
    claims = feedback_credit.feedback_claims(result, 0.2)
    assert claims and all(isinstance(holds, bool) for holds in claims.values())
    with pytest.raises(ValueError, match="temperature 0.3"):
        feedback_credit.feedback_values(result, 0.3)
    with pytest.raises(ValueError, match="epsilon = 0"):
        feedback_credit.feedback_values(replace(result, epsilons=np.array([0.1, 0.2, 0.4])), 0.2)
