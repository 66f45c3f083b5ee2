"""Causal credit inside Experiment 3's feedback loop: randomized omission while the worth decides.

Experiment 3 (:class:`~forgetting.studies.worlds.controlled.PolicyWorld`) retrieves by a softmax over
the current Memory Worth, so what is learnt decides what is tried next. Here the same loop runs
with one change: with probability ``epsilon`` an episode withholds one of the memories the
softmax chose (:func:`~forgetting.studies.worlds.credit.omission_slots`, the same two streams as in
Experiments 2 and 4). The withheld memory leaves its slot empty, so the success probability is
the sum of the *present* utilities over ``k`` and including ``m`` raises it by ``u_m / k``; the
loop's Memory Worth learns only from the memories an episode actually used.

Every setting (softmax temperature, omission rate) runs on the same draws, one row per setting
side by side: the seed's utilities, its Gumbel keys and its outcome coins are Experiment 3's, so
at ``epsilon = 0`` the run *is* Experiment 3's run of that seed at that temperature, worth for
worth. At ``epsilon > 0`` the loop itself changes (another worth retrieves other memories), so
runs are compared as wholes, not episode by episode. At the end each estimator ranks the
memories and is compared with their utility.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validate import raise_problems, real_problem
from ...worth import DEFAULT_PRIOR, memory_worth
from ...worth.causal import omission_effects, regression_credit
from ...worth.formulas import ratio_or_prior
from ..executor import Executor, map_seeds
from .controlled import PolicyWorld
from .credit import omission_slots, present_ids, present_mask, present_mean, ranked_rho
from .model import (
    BLOCK_EPISODES,
    OUTCOME_STREAM,
    RETRIEVAL_STREAM,
    FloatArray,
    check_n_seeds,
    seed_streams,
    smallest_in_order,
    spearman_rho,
    substream,
)

__all__ = [
    "FeedbackCredit",
    "feedback_credit",
    "feedback_rows",
    "FEEDBACK_ESTIMATORS",
    "feedback_values",
    "feedback_claims",
]

FEEDBACK_ESTIMATORS = {
    "worth": "Memory Worth",
    "omission": "omission effect",
    "regression": "regression credit",
}
"""The estimators compared in the loop, by the suffix of :class:`FeedbackCredit`'s ``rho_`` fields."""


@dataclass(frozen=True)
class FeedbackCredit:
    """Experiment 3 with omission, over seeds ``s``, temperatures ``i`` and omission rates ``j``.

    ``rho_*[s, i, j]``: Spearman rho with utility of the loop's own Memory Worth, of the omission
    effect and of regression credit (:func:`~forgetting.studies.worlds.credit.ranked_rho`);
    ``unscored``: memories whose omission effect is NaN; ``success``: the mean success
    probability of the run's episodes; ``coverage``: the share of memories retrieved at least once.
    """

    world: PolicyWorld
    temperatures: FloatArray
    epsilons: FloatArray
    rho_worth: FloatArray  # (seeds, temperatures, epsilons)
    rho_omission: FloatArray
    rho_regression: FloatArray
    unscored: FloatArray
    success: FloatArray
    coverage: FloatArray


def _setting_summary(
    utilities: FloatArray,
    successes: FloatArray,
    failures: FloatArray,
    retrieved: np.ndarray,
    present: np.ndarray,
    slots: np.ndarray,
    outcomes: np.ndarray,
    probability: FloatArray,
) -> tuple[float, ...]:
    """One setting's row of a seed: the three rhos, the turns omission could not judge, the mean
    success probability and the share of memories ever retrieved."""
    n = utilities.size
    omission = omission_effects(retrieved, slots, outcomes, n)
    regression = regression_credit(present_ids(retrieved, present, n), outcomes, n + 1)
    return (
        spearman_rho(memory_worth(successes, failures), utilities),
        ranked_rho(omission.effect, utilities),
        ranked_rho(regression.beta[:n], utilities),
        float(np.isnan(omission.effect).sum()),
        float(probability.mean()),
        float((successes + failures > 0).mean()),
    )


#: Seeds a chunk of :func:`feedback_credit` plays side by side (the loop's per-episode calls are
#: shared by their rows; its arrays grow with it). The result does not depend on it.
CHUNK_SEEDS = 5


def _feedback_seeds(
    world: PolicyWorld, temperatures: tuple[float, ...], epsilons: tuple[float, ...], seeds: Sequence[Any]
) -> list[list[list[tuple[float, ...]]]]:
    """Each seed of ``seeds`` at every setting: ``[seed][i][j]`` is the loop at ``(temperatures[i],
    epsilons[j])``. Every (seed, setting) is one row of the arrays, played side by side; a row
    reads only its own seed's draws, and its keys ``MW / temperature + G`` are the scalar
    temperature's, bit for bit (one division per element either way)."""
    n, k, e = world.n_memories, world.retrieved_per_episode, world.n_episodes
    grid = [(t, epsilon) for t in temperatures for epsilon in epsilons]
    width, total = len(grid), len(seeds) * len(grid)
    owner = np.repeat(np.arange(len(seeds)), width)  # the seed of each row, seed-major
    utilities = np.stack([np.random.default_rng(seed).uniform(0.0, 1.0, n) for seed in seeds])
    streams = [(substream(seed, RETRIEVAL_STREAM), substream(seed, OUTCOME_STREAM)) for seed in seeds]
    slots = np.stack(
        [omission_slots(seed, e, k, epsilon) for seed in seeds for _, epsilon in grid]
    )  # (rows, e)
    scale = np.array([t for _ in seeds for t, _ in grid])[:, None]
    rows = np.arange(total)[:, None]
    # row r reads its seed's utilities at flat[offsets[r] + id]
    flat, offsets = utilities.ravel(), (owner * n)[:, None]
    # counts[0] = successes, counts[1] = failures; an episode adds 1 to one of them per used slot
    counts = np.zeros((2, total, n))
    successes, failures = counts
    # scaled[r] = MW[r] / temperature[r], kept up to date at the memories an episode updates
    scaled = np.full((total, n), DEFAULT_PRIOR) / scale
    by_seed = scaled.reshape(len(seeds), width, n)  # a view: each seed's rows
    retrieved = np.empty((total, e, k), dtype=np.intp)
    present = present_mask(slots.ravel(), k).reshape(total, e, k)
    outcomes = np.empty((total, e), dtype=bool)
    probability = np.empty((total, e))
    for start in range(0, e, BLOCK_EPISODES):
        size = min(BLOCK_EPISODES, e - start)
        gumbel = np.stack([keys.gumbel(size=(size, n)) for keys, _ in streams], axis=1)  # (size, seeds, n)
        draws = np.stack([coins.random(size) for _, coins in streams], axis=1)[:, owner]  # (size, rows)
        for step in range(size):
            t = start + step
            # model.softmax_retrieval(MW, gumbel, scale, k), its keys' negation computed once
            negated = -(by_seed + gumbel[step, :, None]).reshape(total, n)
            chosen = smallest_in_order(negated, k)
            used = present[:, t]
            # Experiment 3's outcome model, 0.5 + (mean utility - 0.5), with an empty slot adding 0
            p = 0.5 + (present_mean(flat, chosen + offsets, used) - 0.5)
            ok = draws[step] < p
            counts[(~ok).astype(np.intp)[:, None], rows, chosen] += used
            # memory_worth without its checks: the counters are whole counts from zero, far below 2**53
            won = successes[rows, chosen]
            scaled[rows, chosen] = ratio_or_prior(won, won + failures[rows, chosen], DEFAULT_PRIOR) / scale
            retrieved[:, t], outcomes[:, t], probability[:, t] = chosen, ok, p
    results = [
        _setting_summary(utilities[owner[r]], successes[r], failures[r], retrieved[r], present[r], slots[r],
                         outcomes[r], probability[r])
        for r in range(total)
    ]  # fmt: skip
    return [
        [
            results[first + i * len(epsilons) : first + (i + 1) * len(epsilons)]
            for i in range(len(temperatures))
        ]
        for first in range(0, total, width)
    ]


def feedback_credit(
    world: PolicyWorld,
    epsilons: tuple[float, ...],
    n_seeds: int,
    seed: int = 0,
    executor: Executor | None = None,
    temperatures: tuple[float, ...] | None = None,
) -> FeedbackCredit:
    """Experiment 3's loop at every (temperature, omission rate); ``temperatures`` defaults to
    the world's own. Seed ``s`` is child ``s`` of ``SeedSequence(seed)``, as in
    :func:`~forgetting.studies.worlds.controlled.policy_experiment`, so at ``epsilon = 0`` Memory Worth's
    rho is Experiment 3's at that temperature, seed for seed. ``executor`` (default: this
    process) runs chunks of seeds; the result does not depend on it."""
    check_n_seeds(n_seeds, minimum=2)
    temperatures = (world.temperature,) if temperatures is None else tuple(temperatures)
    problems = [real_problem(f"epsilons[{i}]", e, 0.0, 1.0) for i, e in enumerate(epsilons)]
    problems += [real_problem(f"temperatures[{i}]", t, 1e-6, 1e6) for i, t in enumerate(temperatures)]
    raise_problems(problems)
    for name, values in (("epsilons", epsilons), ("temperatures", temperatures)):
        if not values:
            raise ValueError(f"{name} must name at least one value, got ()")
    settings = (tuple(float(t) for t in temperatures), tuple(float(e) for e in epsilons))
    chunk = functools.partial(_feedback_seeds, world, *settings)
    streams = seed_streams(seed, n_seeds)
    runs = np.array(map_seeds(chunk, streams, executor, chunk_size=CHUNK_SEEDS, label=f"{n_seeds} seeds"))
    return FeedbackCredit(world, np.array(settings[0]), np.array(settings[1]), *np.moveaxis(runs, -1, 0))


def feedback_rows(result: FeedbackCredit) -> list[dict[str, Any]]:
    """One row per (temperature, omission rate): each estimator's rho with utility (mean and sd
    over seeds), the memories the omission effect left unscored, the loop's coverage, and the
    success lost against the same seeds' loop at the same temperature and the first rate (mean
    over seeds of the per-seed difference)."""
    rows = []
    for i, temperature in enumerate(result.temperatures):
        for j, epsilon in enumerate(result.epsilons):
            row: dict[str, Any] = {"temperature": float(temperature), "epsilon": float(epsilon)}
            for name in FEEDBACK_ESTIMATORS:
                values = getattr(result, f"rho_{name}")[:, i, j]
                row[f"rho_{name}_mean"] = float(values.mean())
                row[f"rho_{name}_sd"] = float(values.std(ddof=1))
            row["unscored_mean"] = float(result.unscored[:, i, j].mean())
            row["coverage_mean"] = float(result.coverage[:, i, j].mean())
            row["success_lost"] = float((result.success[:, i, 0] - result.success[:, i, j]).mean())
            rows.append(row)
    return rows


def _by_setting(result: FeedbackCredit, temperature: float) -> dict[tuple[float, float], dict[str, Any]]:
    """The rows of :func:`feedback_rows` by ``(temperature, epsilon)``; ``ValueError`` unless the
    run has ``epsilon = 0`` first and ``temperature`` among its temperatures."""
    if float(result.epsilons[0]) != 0.0 or float(temperature) not in {float(t) for t in result.temperatures}:
        raise ValueError(
            f"the run must start at epsilon = 0 and hold temperature {temperature!r}; it has epsilons "
            f"{result.epsilons.tolist()} and temperatures {result.temperatures.tolist()}"
        )
    return {(r["temperature"], r["epsilon"]): r for r in feedback_rows(result)}


def feedback_values(result: FeedbackCredit, temperature: float) -> dict[str, Any]:
    """The numbers beyond-credit states about the feedback loop, by glue key: at the headline
    ``temperature`` without omission each estimator's mean rho, the omission effect's range over
    the rates above zero and the success lost at the largest rate; the largest gap between the
    regression's and Memory Worth's mean rho over every setting; at the coldest temperature the
    coverage, Memory Worth's and the regression's rho without omission, the memories the omission
    effect leaves unscored at the largest rate and the range of every estimator's mean rho where it
    scored anything; Memory Worth's rho at the warmest temperature; and ``chance_sd``, the sd of
    Spearman's rho between unrelated rankings of the memories, ``1 / sqrt(n - 1)``."""
    at = _by_setting(result, temperature)
    temperatures = [float(t) for t in result.temperatures]
    coldest, warmest, rate_last = min(temperatures), max(temperatures), float(result.epsilons[-1])
    headline = [r for (t, e), r in at.items() if t == temperature and e > 0]
    n_memories = result.world.n_memories
    cold = [at[coldest, float(e)] for e in result.epsilons]
    cold_rhos = [
        r[f"rho_{n}_mean"] for r in cold for n in FEEDBACK_ESTIMATORS if r["unscored_mean"] < n_memories
    ]
    return {
        "feedback_seeds": int(result.rho_worth.shape[0]),
        "feedback_temperature": float(temperature),
        "feedback_coldest": coldest,
        "feedback_epsilon_last": rate_last,
        "feedback_rho_worth": at[temperature, 0.0]["rho_worth_mean"],
        "feedback_rho_regression": at[temperature, 0.0]["rho_regression_mean"],
        "feedback_gap_max": max(abs(r["rho_regression_mean"] - r["rho_worth_mean"]) for r in at.values()),
        "feedback_omission_low": min(r["rho_omission_mean"] for r in headline),
        "feedback_omission_high": max(r["rho_omission_mean"] for r in headline),
        "feedback_lost_last": at[temperature, rate_last]["success_lost"],
        "feedback_cold_worth": at[coldest, 0.0]["rho_worth_mean"],
        "feedback_cold_regression": at[coldest, 0.0]["rho_regression_mean"],
        "feedback_cold_unscored": at[coldest, rate_last]["unscored_mean"],
        "feedback_memories": n_memories,
        "chance_sd": float(1 / np.sqrt(n_memories - 1)),
        "feedback_cold_min": min(cold_rhos),
        "feedback_cold_max": max(cold_rhos),
        "feedback_cold_coverage": at[coldest, 0.0]["coverage_mean"],
        "feedback_warmest": warmest,
        "feedback_warm_worth": at[warmest, 0.0]["rho_worth_mean"],
    }


def feedback_claims(result: FeedbackCredit, temperature: float) -> dict[str, bool]:
    """beyond-credit's sentences on the feedback loop that are not numbers, each with whether it
    holds for ``result`` (the chapter asserts every one at its published parameters)."""
    at = _by_setting(result, temperature)
    v = feedback_values(result, temperature)
    coldest, warmest, rate_last = v["feedback_coldest"], v["feedback_warmest"], v["feedback_epsilon_last"]
    omitted = [r for (t, e), r in at.items() if e > 0]
    chance = v["chance_sd"]
    return {
        "the regression's and Memory Worth's mean rho differ by less than the spread over seeds of either, "
        "at every setting": all(
            abs(r["rho_regression_mean"] - r["rho_worth_mean"])
            < min(r["rho_worth_sd"], r["rho_regression_sd"])
            for r in at.values()
        ),
        "the omission effect ranks below both at every temperature but the coldest": all(
            r["rho_omission_mean"] < min(r["rho_worth_mean"], r["rho_regression_mean"])
            for r in omitted
            if r["temperature"] > coldest
        ),
        "at the coldest temperature every mean rho is within twice chance's spread of zero": bool(
            0 < v["feedback_cold_max"] < 2 * chance and v["feedback_cold_min"] > -2 * chance
        ),
        "the coldest loop stops trying some memories": at[coldest, 0.0]["coverage_mean"] < 1.0,
        "Memory Worth's rho falls from the warmest temperature to the coldest": at[warmest, 0.0][
            "rho_worth_mean"
        ]
        > at[coldest, 0.0]["rho_worth_mean"],
        "the omission effect leaves more memories unscored at the coldest temperature": at[
            coldest, rate_last
        ]["unscored_mean"]
        > at[temperature, rate_last]["unscored_mean"],
        "omission costs success at the headline temperature": all(
            r["success_lost"] > 0 for (t, e), r in at.items() if t == temperature and e > 0
        ),
    }
