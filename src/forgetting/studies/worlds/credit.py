"""Causal credit in the worlds of Experiments 2 and 4: randomized omission and regression.

Both worlds are run as the paper's experiments are (same streams, same episodes), with one
change: with probability ``epsilon`` an episode withholds one of the memories it would have
retrieved, chosen uniformly (:func:`omission_slots`). A withheld memory leaves its slot empty:
the outcome model is the world's, with the mean utility of the retrieved set read as the sum of
the *present* utilities over ``k`` (an empty slot adds nothing), so including memory ``m``
raises the success probability by exactly ``effect * u_m / k``, its causal effect. At
``epsilon = 0`` every run is the experiment's own run, draw for draw.

The estimators are in :mod:`forgetting.worth.causal`; this module feeds them and compares them
with Memory Worth under the same criterion (:func:`~forgetting.studies.worlds.model.separated`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validate import raise_problems, real_problem
from ...worth import add_episodes, memory_worth
from ...worth.causal import omission_effects, regression_credit
from ..executor import Executor, each_seed, map_seeds
from .confound import ConfoundWorld, confound_draws
from .hitchhiker import ANCHOR, HITCHHIKER, CoRetrievalWorld, pair_draws, pair_utilities
from .model import (
    OUTCOME_STREAM,
    SEPARATION_Z,
    FloatArray,
    IntArray,
    check_n_seeds,
    seed_streams,
    spearman_rho,
    substream,
)

__all__ = [
    "OMISSION_STREAM",
    "OMISSION_SLOT_STREAM",
    "omission_slots",
    "present_mask",
    "present_ids",
    "present_mean",
    "worth_of_present",
    "PairCredit",
    "pair_credit",
    "ConfoundCredit",
    "confound_credit",
    "ranked_rho",
    "RANK_DECIMALS",
    "separation_margin",
    "first_separated",
    "pair_gaps",
    "threshold_column",
    "pair_values",
]

OMISSION_STREAM = 6
"""Index of a run's omission stream: one uniform per episode, an omission when below ``epsilon``
(streams 0-5 are :mod:`~forgetting.studies.worlds.model`'s)."""
OMISSION_SLOT_STREAM = 7
"""Index of a run's omission-slot stream: one uniform per episode, the withheld column
``floor(u * k)``; drawn for every episode, so which slot is withheld does not depend on ``epsilon``."""


def omission_slots(seed: Any, n_episodes: int, k: int, epsilon: float) -> IntArray:
    """The withheld column of each episode (``-1``: none), from the run's own two streams.

    Invariants: the same ``seed`` withholds in a superset of episodes at a larger ``epsilon``
    (common random numbers), always the same column, and the first ``E`` episodes of a longer
    run are the run of ``E`` episodes.
    """
    raise_problems([real_problem("epsilon", epsilon, 0.0, 1.0)])
    omit = substream(seed, OMISSION_STREAM).random(n_episodes) < epsilon
    column = np.minimum((substream(seed, OMISSION_SLOT_STREAM).random(n_episodes) * k).astype(np.intp), k - 1)
    slots: IntArray = np.where(omit, column, -1)
    return slots


def present_mask(slots: IntArray, k: int) -> np.ndarray:
    """``present[t, j]``: whether episode ``t`` kept its ``j``-th retrieved memory."""
    present = np.ones((slots.size, k), dtype=bool)
    rows = np.flatnonzero(slots >= 0)
    present[rows, slots[rows]] = False
    return present


def present_ids(retrieved: IntArray, present: np.ndarray, n_memories: int) -> IntArray:
    """What the episodes actually retrieved, a withheld slot shown as the extra id ``n_memories``
    (an *empty slot*, whose regression credit is the baseline the memories are measured against)."""
    ids: IntArray = np.where(present, retrieved, n_memories)
    return ids


def present_mean(utilities: FloatArray, retrieved: IntArray, present: np.ndarray) -> FloatArray:
    """Per episode, the sum of the present memories' utilities over ``k``: a withheld slot adds nothing."""
    value: FloatArray = (utilities[retrieved] * present).sum(axis=1) / retrieved.shape[1]
    return value


def worth_of_present(retrieved: IntArray, present: np.ndarray, outcomes: np.ndarray, n: int) -> FloatArray:
    """Memory Worth of what the episodes actually retrieved (a withheld memory gets no update)."""
    successes, failures = np.zeros(n), np.zeros(n)
    for column in range(retrieved.shape[1]):
        kept = present[:, column]
        add_episodes(successes, failures, retrieved[kept, column : column + 1], outcomes[kept])
    worth: FloatArray = memory_worth(successes, failures)
    return worth


@dataclass(frozen=True)
class PairCredit:
    """Experiment 4 with omission, over seeds: per estimator, ``gap[s, i, j]`` = anchor minus
    hitchhiker at diversity ``diversities[i]`` and omission rate ``epsilons[j]`` (NaN where the
    estimator cannot tell them apart at all), and the success lost to the perturbation."""

    world: CoRetrievalWorld
    diversities: FloatArray
    epsilons: FloatArray
    worth_gap: FloatArray  # (seeds, diversities, epsilons)
    omission_gap: FloatArray
    regression_gap: FloatArray
    success_lost: FloatArray  # (seeds, diversities, epsilons): mean drop of the success probability


def _pair_run(
    world: CoRetrievalWorld,
    episodes: tuple[IntArray, FloatArray],
    unperturbed: FloatArray,
    epsilon: float,
    seed: Any,
) -> tuple[float, ...]:
    """One setting of one seed: ``episodes`` are :func:`~forgetting.studies.worlds.hitchhiker.pair_episodes`
    at the setting's diversity (retrieved ids, outcome draws), ``unperturbed`` the intact pair
    episodes' success probability."""
    n, k = world.n_memories, world.retrieved_per_episode
    utilities = pair_utilities(world, seed)
    retrieved, draws = episodes
    slots = omission_slots(seed, retrieved.shape[0], k, epsilon)
    present = present_mask(slots, k)
    probability = present_mean(utilities, retrieved, present)
    outcomes = draws < probability
    worth = worth_of_present(retrieved, present, outcomes, n)
    omission = omission_effects(retrieved, slots, outcomes, n)
    regression = regression_credit(present_ids(retrieved, present, n), outcomes, n + 1)
    return (
        float(worth[ANCHOR] - worth[HITCHHIKER]),
        float(omission.effect[ANCHOR] - omission.effect[HITCHHIKER]),
        regression.difference(ANCHOR, HITCHHIKER),
        float((unperturbed - probability).mean()) if probability.size else 0.0,
    )


def _pair_seed(
    world: CoRetrievalWorld, diversities: tuple[float, ...], epsilons: tuple[float, ...], seed: Any
) -> list[list[tuple[float, ...]]]:
    """One seed at every (diversity, epsilon), from one draw of its pair streams
    (:func:`~forgetting.studies.worlds.hitchhiker.pair_draws`)."""
    episodes = pair_draws(world, seed)
    _, intact, _ = episodes.at(0.0)
    unperturbed = pair_utilities(world, seed)[intact].mean(axis=1)
    rows = []
    for d in diversities:
        _, retrieved, draws = episodes.at(d)
        rows.append([_pair_run(world, (retrieved, draws), unperturbed, e, seed) for e in epsilons])
    return rows


def pair_credit(
    world: CoRetrievalWorld,
    diversities: tuple[float, ...],
    epsilons: tuple[float, ...],
    n_seeds: int,
    seed: int = 0,
    executor: Executor | None = None,
) -> PairCredit:
    """Experiment 4's world at every ``(diversity, epsilon)``; seed ``s`` is child ``s`` of
    ``SeedSequence(seed)``, with the same draws at every setting (common random numbers). At
    ``epsilon = 0`` Memory Worth's gap is Experiment 4's own. ``success_lost`` compares with the
    intact pair episodes at ``d = 0, epsilon = 0`` (breaking a pair replaces one member by another
    memory, which can gain or lose). ``executor`` (default: this process) runs chunks of seeds;
    the result does not depend on it."""
    check_n_seeds(n_seeds, minimum=2)
    raise_problems([real_problem(f"epsilons[{i}]", e, 0.0, 1.0) for i, e in enumerate(epsilons)])
    raise_problems([real_problem(f"diversities[{i}]", d, 0.0, 1.0) for i, d in enumerate(diversities)])
    chunk = each_seed(functools.partial(_pair_seed, world, tuple(diversities), tuple(epsilons)))
    runs = np.array(map_seeds(chunk, seed_streams(seed, n_seeds), executor, label=f"{n_seeds} seeds"))
    return PairCredit(
        world, np.array(diversities, float), np.array(epsilons, float), *np.moveaxis(runs, -1, 0)
    )


@dataclass(frozen=True)
class ConfoundCredit:
    """Experiment 2 with omission, over seeds and omission rates: Spearman rho with utility of
    Memory Worth, of the omission effect and of regression credit (without and with the task type),
    over all memories (:func:`ranked_rho`: NaN where an estimator scored no memory).
    ``unscored[s, j]`` counts the memories whose omission effect is NaN, ``withheld[s, j]`` the
    episodes that withheld a memory, averaged over memories."""

    world: ConfoundWorld
    epsilons: FloatArray
    rho_worth: FloatArray  # (seeds, epsilons)
    rho_omission: FloatArray
    rho_regression: FloatArray
    rho_regression_typed: FloatArray
    unscored: FloatArray
    success_lost: FloatArray
    withheld: FloatArray  # (seeds, epsilons): episodes that withheld a memory, mean over memories


RANK_DECIMALS = 9
"""Decimals at which :func:`ranked_rho` compares estimates. Two memories whose estimates are equal
in exact arithmetic (a symmetric design gives equal least-squares effects; ``1/3 - 1/6`` and
``2/3 - 1/2`` are the same effect) can differ in the last bits, and by how much depends on the
BLAS kernel; compared at 1e-9, far below any effect these worlds can estimate, they tie."""


def ranked_rho(estimate: FloatArray, utilities: FloatArray) -> float:
    """Spearman rho of an estimate with utility, compared at :data:`RANK_DECIMALS`, a NaN
    estimate ranked last (a memory the estimator could not score); NaN when it scored no memory
    at all (no ranking to compare)."""
    if np.isnan(estimate).all():
        return float("nan")
    return spearman_rho(np.where(np.isnan(estimate), -np.inf, np.round(estimate, RANK_DECIMALS)), utilities)


def _confound_credit_run(
    world: ConfoundWorld, draws: tuple[FloatArray, IntArray, IntArray], epsilon: float, seed: Any
) -> tuple[float, ...]:
    """One seed of :func:`~forgetting.studies.worlds.confound.confound_experiment`'s run, with omission;
    ``draws`` are the seed's :func:`~forgetting.studies.worlds.confound.confound_draws`."""
    n, k, e = world.n_memories, world.retrieved_per_episode, world.n_episodes
    utilities, task, retrieved = draws
    slots = omission_slots(seed, e, k, epsilon)
    present = present_mask(slots, k)
    base = world.base_rates()[task]
    probability = base + world.memory_effect * (present_mean(utilities, retrieved, present) - 0.5)
    outcomes = substream(seed, OUTCOME_STREAM).random(e) < probability
    worth = worth_of_present(retrieved, present, outcomes, n)
    omission = omission_effects(retrieved, slots, outcomes, n)
    shown = present_ids(retrieved, present, n)
    plain = regression_credit(shown, outcomes, n + 1)
    typed = regression_credit(shown, outcomes, n + 1, groups=task, n_groups=2)
    full = base + world.memory_effect * (utilities[retrieved].mean(axis=1) - 0.5)
    return (
        spearman_rho(worth, utilities),
        ranked_rho(omission.effect, utilities),
        ranked_rho(plain.beta[:n], utilities),
        ranked_rho(typed.beta[:n], utilities),
        float(np.isnan(omission.effect).sum()),
        float((full - probability).mean()),
        float(omission.withheld.mean()),
    )


def _confound_seed(world: ConfoundWorld, epsilons: tuple[float, ...], seed: Any) -> list[tuple[float, ...]]:
    """One seed at every omission rate, from one draw of its streams (they do not depend on the rate)."""
    draws = confound_draws(world, seed)
    return [_confound_credit_run(world, draws, e, seed) for e in epsilons]


def confound_credit(
    world: ConfoundWorld,
    epsilons: tuple[float, ...],
    n_seeds: int,
    seed: int = 0,
    executor: Executor | None = None,
) -> ConfoundCredit:
    """Experiment 2's world at every omission rate; at ``epsilon = 0`` Memory Worth's rho is
    Experiment 2's global rho, seed for seed (same streams). ``executor`` as in :func:`pair_credit`."""
    check_n_seeds(n_seeds, minimum=2)
    raise_problems([real_problem(f"epsilons[{i}]", e, 0.0, 1.0) for i, e in enumerate(epsilons)])
    chunk = each_seed(functools.partial(_confound_seed, world, tuple(epsilons)))
    runs = np.array(map_seeds(chunk, seed_streams(seed, n_seeds), executor, label=f"{n_seeds} seeds"))
    return ConfoundCredit(world, np.array(epsilons, float), *np.moveaxis(runs, -1, 0))


def separation_margin(gaps: FloatArray, z: float = SEPARATION_Z) -> FloatArray:
    """Per setting (last axis), ``mean - z * sd`` of the gaps over seeds (first axis), the
    quantity Experiment 4's criterion asks to be positive; NaN where any seed's gap is NaN
    (an estimator that cannot tell the two apart in some run does not separate them)."""
    margin: FloatArray = gaps.mean(axis=0) - z * gaps.std(axis=0, ddof=1)
    return margin


def first_separated(values: FloatArray, gaps: FloatArray, z: float = SEPARATION_Z) -> float:
    """Experiment 4's threshold for any estimator: the smallest tested value from which on every
    larger tested value has a positive :func:`separation_margin`; NaN if none."""
    flags = np.nan_to_num(separation_margin(gaps, z), nan=-1.0) > 0
    for j in range(flags.size):
        if flags[j:].all():
            return float(values[j])
    return float("nan")


def pair_gaps(by_diversity: PairCredit, by_epsilon: PairCredit) -> dict[str, FloatArray]:
    """The gaps (seeds, settings) the chapter compares: ``<estimator>_d`` pair-breaking at
    ``epsilon = 0`` over ``d``, ``<estimator>_e`` omission at ``d = 0`` over ``epsilon``."""
    return {
        "worth_d": by_diversity.worth_gap[:, :, 0],
        "regression_d": by_diversity.regression_gap[:, :, 0],
        "worth_e": by_epsilon.worth_gap[:, 0, :],
        "omission_e": by_epsilon.omission_gap[:, 0, :],
        "regression_e": by_epsilon.regression_gap[:, 0, :],
    }


def threshold_column(values: FloatArray, threshold: float) -> int | None:
    """The column of ``values`` at an estimator's threshold (:func:`first_separated`), or
    ``None`` when it has none (NaN: it separates at no tested value). There is no fallback to
    another column: a gap "at the threshold" of an estimator that never separates is undefined."""
    if np.isnan(threshold):
        return None
    hits = np.flatnonzero(np.asarray(values) == threshold)
    if len(hits) != 1:
        raise ValueError(
            f"threshold must be one of the tested values {list(map(float, values))} once, got {threshold}"
        )
    return int(hits[0])


def pair_values(
    world: CoRetrievalWorld, by_diversity: PairCredit, by_epsilon: PairCredit, z: float = SEPARATION_Z
) -> dict[str, float]:
    """The numbers beyond-credit states about the hitchhiker and its anchor, by glue key.

    ``threshold_<gap>`` and ``best_margin_<gap>`` for every gap of :func:`pair_gaps`; the
    settings (``z``, seeds, ``k``, the pair rate, the largest ``d`` and ``epsilon``, the share of
    pair episodes split at the largest ``epsilon``, ``2 epsilon / k``, and the true gap
    ``effect_gap`` = (anchor utility - hitchhiker utility) / k); the mean and sd over seeds of
    Memory Worth's and the regression's gaps at Memory Worth's threshold (``*_at``: NaN when
    Memory Worth separates at no tested ``d``, :func:`threshold_column`); the regression's and
    the omission effect's gaps at the largest setting; and the success lost to omission at the
    largest ``epsilon`` and to pair-breaking at its worst ``d`` (mean over seeds).
    """
    gaps = pair_gaps(by_diversity, by_epsilon)
    d_values, e_values = by_diversity.diversities, by_epsilon.epsilons
    values: dict[str, float] = {}
    for name, gap in gaps.items():
        tested = d_values if name.endswith("_d") else e_values
        values[f"threshold_{name}"] = first_separated(tested, gap, z)
        values[f"best_margin_{name}"] = float(np.nanmax(separation_margin(gap, z)))
    k = world.retrieved_per_episode
    epsilon_last = float(e_values[-1])
    values.update(
        z=z,
        n_seeds=by_diversity.worth_gap.shape[0],
        n_episodes=world.n_episodes,
        k=k,
        n_memories=world.n_memories,
        pair_rate=world.effective_pair_rate,
        epsilon_last=epsilon_last,
        d_last=float(d_values[-1]),
        split_last=2 * epsilon_last / k,
        effect_gap=(world.anchor_utility - world.hitchhiker_utility) / k,
    )
    at = threshold_column(d_values, values["threshold_worth_d"])
    for name in ("worth", "regression"):
        gap = gaps[f"{name}_d"]
        values[f"{name}_gap_at"] = float("nan") if at is None else float(gap[:, at].mean())
        values[f"{name}_sd_at"] = float("nan") if at is None else float(gap[:, at].std(ddof=1))
    values["regression_gap_last"] = float(gaps["regression_d"][:, -1].mean())
    values["omission_gap_last"] = float(gaps["omission_e"][:, -1].mean())
    values["omission_sd_last"] = float(gaps["omission_e"][:, -1].std(ddof=1))
    values["lost_omission_last"] = float(by_epsilon.success_lost[:, 0, -1].mean())
    values["lost_breaking_max"] = float(np.abs(by_diversity.success_lost[:, :, 0].mean(axis=0)).max())
    return values


PAIR_ESTIMATORS = {"worth": "Memory Worth", "regression": "regression credit", "omission": "omission effect"}
"""The estimators compared on Experiment 4, by the field of :class:`PairCredit` that holds their gap."""


def pair_rows(
    by_diversity: PairCredit, by_epsilon: PairCredit, z: float = SEPARATION_Z
) -> list[dict[str, Any]]:
    """One row per (perturbation, value, estimator): the gap's mean and sd over seeds, the
    criterion's margin, whether it separates, and the success lost per pair episode.
    ``share`` is ``d`` or ``epsilon``; ``pair_split_share`` the share of pair episodes whose pair
    it splits (``d``, or ``2 epsilon / k``: one of the two is the withheld memory).

    ``by_diversity`` runs pair-breaking at ``epsilon = 0`` (Memory Worth and regression; the
    omission effect has no withheld arm there), ``by_epsilon`` omission at ``d = 0``.
    """
    rows: list[dict[str, Any]] = []
    runs = (
        ("pair-breaking", by_diversity, by_diversity.diversities, ("worth", "regression"), 0),
        ("omission", by_epsilon, by_epsilon.epsilons, ("worth", "omission", "regression"), 1),
    )
    for perturbation, run, values, estimators, axis in runs:
        for estimator in estimators:
            gaps = np.take(getattr(run, f"{estimator}_gap"), 0, axis=2 - axis)
            margins = separation_margin(gaps, z)
            lost = np.take(run.success_lost, 0, axis=2 - axis).mean(axis=0)
            for j, value in enumerate(values):
                rows.append(
                    {
                        "perturbation": perturbation,
                        "share": float(value),
                        "pair_split_share": float(
                            value if axis == 0 else 2 * value / run.world.retrieved_per_episode
                        ),
                        "estimator": PAIR_ESTIMATORS[estimator],
                        "gap_mean": float(gaps[:, j].mean()),
                        "gap_sd": float(gaps[:, j].std(ddof=1)),
                        "margin": float(margins[j]),
                        "separated": bool(margins[j] > 0),
                        "success_lost": float(lost[j]),
                    }
                )
    return rows


def confound_rows(result: ConfoundCredit) -> list[dict[str, Any]]:
    """One row per omission rate: mean and sd over seeds of each estimator's rho with utility,
    the memories left unscored by the omission effect, and the success lost per episode."""
    rows = []
    for j, epsilon in enumerate(result.epsilons):
        row: dict[str, Any] = {"epsilon": float(epsilon)}
        for name in ("worth", "omission", "regression", "regression_typed"):
            values = getattr(result, f"rho_{name}")[:, j]
            row[f"rho_{name}_mean"], row[f"rho_{name}_sd"] = float(values.mean()), float(values.std(ddof=1))
        row["unscored_mean"] = float(result.unscored[:, j].mean())
        row["success_lost"] = float(result.success_lost[:, j].mean())
        rows.append(row)
    return rows
