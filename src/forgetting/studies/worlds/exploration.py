"""Experiment 3 with exploration that ignores the worth: an epsilon-uniform mix of the softmax loop.

Episode ``t`` of :class:`~forgetting.studies.worlds.controlled.PolicyWorld` retrieves by
``softmax(MW_t / temperature)``. Here it first tosses a coin of its own: with probability
``epsilon`` it *explores*, retrieving ``k`` memories uniformly at random whatever their worth,
and otherwise it follows the softmax as before. The coin is the ``t``-th uniform of the run's
:data:`EXPLORE_STREAM`, one per episode whatever ``epsilon``, so the coins, like the Gumbel keys
and the outcome uniforms, never depend on what a run records or on the other settings.

An exploring episode uses the same Gumbel keys as a softmax one, with the worth term dropped:
the ``k`` largest of ``n`` i.i.d. keys are a uniform ``k``-subset (the keys are exchangeable).
So ``epsilon = 0`` is Experiment 3 draw for draw (a test checks it), ``epsilon = 1`` is uniform
retrieval, and no exploring episode reads the worth. Nothing here calls ``exp`` or ``log`` on a
result path beyond what Experiment 3 already does (the Gumbel keys, the entropy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..._validate import raise_problems, real_problem
from ...worth import memory_worth
from ..stats import Z_95
from .controlled import PolicyResult, PolicyWorld, softmax_runs
from .model import (
    BLOCK_EPISODES,
    DEFAULT_N_SEEDS,
    KEEP_STREAM,
    check_n_seeds,
    replace_world,
    retrieval_entropy,
    softmax_retrieval,
    spearman_rho,
)

__all__ = [
    "EXPLORE_STREAM",
    "DEFAULT_EPSILONS",
    "ExplorationResult",
    "mixed_retrieval",
    "exploration_experiment",
    "exploration_grid",
    "exploration_rows",
    "plain_loops_beaten",
    "ExplorationSummary",
    "exploration_summary",
]

EXPLORE_STREAM = KEEP_STREAM + 1
"""Index of a run's exploration stream (:func:`~forgetting.studies.worlds.model.substream`): one uniform
per episode; the episode explores (retrieves uniformly) when it is below ``epsilon``."""

DEFAULT_WORLD = PolicyWorld()
"""Experiment 3's world at its defaults."""

DEFAULT_EPSILONS: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2, 0.5)
"""Shares of exploring episodes of the Experiment 3 chapter's sweep (0 is the plain softmax loop)."""


def mixed_retrieval(
    worth: np.ndarray, gumbel: np.ndarray, temperature: float | np.ndarray, k: int, explore: np.ndarray
) -> np.ndarray:
    """:func:`~forgetting.studies.worlds.model.softmax_retrieval` where ``explore`` is False, uniform where True.

    ``worth`` and ``gumbel`` have shape (..., n_memories), ``explore`` shape (...,) and
    ``temperature`` is a scalar or one per row, shape (..., 1). An
    exploring row ranks by ``0 / temperature + G = G`` alone, the top ``k`` of i.i.d. Gumbel keys:
    a uniformly random ``k``-subset in which the worth plays no part. Returns shape (..., k).
    """
    flags = np.asarray(explore, dtype=np.bool_)
    if flags.shape != np.shape(worth)[:-1]:
        raise ValueError(
            f"explore must have shape {np.shape(worth)[:-1]} (one flag per row), got {flags.shape}"
        )
    return softmax_retrieval(np.where(flags[..., None], 0.0, worth), gumbel, temperature, k)


@dataclass(frozen=True)
class ExplorationResult(PolicyResult):
    """Experiment 3 with a share ``epsilon`` of uniform episodes; ``explored[s]`` is the share of
    seed ``s``'s episodes that explored."""

    epsilon: float
    explored: np.ndarray  # (seeds,)

    @property
    def rho_ci95(self) -> tuple[float, float]:
        """Normal-approximation 95 % interval of the mean rho over seeds: ``mean +- Z_95 sd / sqrt(seeds)``."""
        half = Z_95 * self.rho_sd / math.sqrt(len(self.rho))
        return self.rho_mean - half, self.rho_mean + half


def _check_epsilon(epsilon: float) -> None:
    raise_problems([real_problem("epsilon", epsilon, 0.0, 1.0)])


def exploration_experiment(
    world: PolicyWorld = DEFAULT_WORLD, epsilon: float = 0.0, n_seeds: int = DEFAULT_N_SEEDS, seed: int = 0
) -> ExplorationResult:
    """Experiment 3 in which each episode explores with probability ``epsilon``.

    Seed ``s`` has the utilities, Gumbel keys and outcome uniforms of
    :func:`~forgetting.studies.worlds.controlled.policy_experiment`'s seed ``s`` and draws one more
    uniform per episode from its :data:`EXPLORE_STREAM`; episode ``t`` explores when that
    uniform is below ``epsilon`` (:func:`mixed_retrieval`). ``epsilon`` is a real number in
    ``[0, 1]``; at 0 the result equals ``policy_experiment(world, n_seeds, seed)``.
    """
    _check_epsilon(epsilon)
    check_n_seeds(n_seeds)
    return _exploration_runs([(world, float(epsilon))], n_seeds, seed)[0]


def _exploration_runs(
    settings: Sequence[tuple[PolicyWorld, float]], n_seeds: int, seed: int
) -> list[ExplorationResult]:
    """:func:`exploration_experiment` at each ``(world, epsilon)`` of ``settings`` (checked by the
    caller; the worlds differ only in temperature), played side by side: row ``j * n_seeds + s``
    of every array is setting ``j``'s seed ``s``, with that seed's draws and the setting's own
    temperature (one division per key, as with a scalar temperature) and coin threshold; each
    row's operations are those of a single run, so the results are
    :func:`exploration_experiment`'s, bit for bit."""
    world = settings[0][0]
    temperatures = [w.temperature for w, _ in settings]
    epsilons = [e for _, e in settings]
    utilities, successes, failures, explored = softmax_runs(
        world, temperatures, n_seeds, seed, (EXPLORE_STREAM, epsilons), BLOCK_EPISODES
    )
    row_utilities = np.tile(utilities, (len(settings), 1))  # (rows, n)
    worth = memory_worth(successes, failures)
    retrievals = successes + failures
    rho = np.array([spearman_rho(w, u) for w, u in zip(worth, row_utilities)])
    coverage = (retrievals > 0).mean(axis=1)
    entropy = retrieval_entropy(retrievals)
    results = []
    for j, (setting_world, epsilon) in enumerate(settings):
        part = slice(j * n_seeds, (j + 1) * n_seeds)
        results.append(
            ExplorationResult(
                setting_world,
                rho[part],
                coverage[part],
                entropy[part],
                utilities,
                worth[part],
                retrievals[part],
                float(epsilon),
                explored[part] / world.n_episodes,
            )
        )
    return results


def exploration_grid(
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    temperatures: Sequence[float] = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02),
    world: PolicyWorld = DEFAULT_WORLD,
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = 0,
) -> dict[tuple[float, float], ExplorationResult]:
    """:func:`exploration_experiment` at every ``(temperature, epsilon)``, keyed in that order,
    temperatures outer, both in the order given (everything else from ``world``), played side by
    side (:func:`_exploration_runs`)."""
    raise_problems([real_problem(f"epsilons[{i}]", e, 0.0, 1.0) for i, e in enumerate(epsilons)])
    check_n_seeds(n_seeds)
    worlds = {float(t): replace_world(world, temperature=float(t)) for t in temperatures}  # checked
    settings = [(w, float(e)) for w in worlds.values() for e in epsilons]
    keys = [(t, float(e)) for t in worlds for e in epsilons]
    return dict(zip(keys, _exploration_runs(settings, n_seeds, seed))) if settings else {}


def exploration_rows(grid: dict[tuple[float, float], ExplorationResult]) -> list[dict[str, float]]:
    """One table row per grid point: rho's mean, sd and 95 % interval over seeds, coverage
    (mean and worst seed), normalised retrieval entropy, episode success rate and the share of
    episodes that explored (means over seeds)."""
    rows = []
    for (temperature, epsilon), r in grid.items():
        low, high = r.rho_ci95
        rows.append(
            {
                "temperature": temperature,
                "epsilon": epsilon,
                "rho_mean": r.rho_mean,
                "rho_sd": r.rho_sd,
                "rho_ci95_low": low,
                "rho_ci95_high": high,
                "coverage_mean": float(r.coverage.mean()),
                "coverage_min": float(r.coverage.min()),
                "entropy": float(r.entropy.mean()),
                "success_rate": float(r.success_rate.mean()),
                "explored_share": float(r.explored.mean()),
            }
        )
    return rows


def plain_loops_beaten(
    rows: Sequence[dict[str, float]], *, same_temperature: bool = False
) -> list[dict[str, float]]:
    """The plain softmax loops (``epsilon == 0`` rows) that some mix (``epsilon > 0`` row) beats on both counts.

    ``rows`` are :func:`exploration_rows`. A mix beats a plain loop when its rho interval lies
    wholly above the plain loop's (``mix rho_ci95_low > plain rho_ci95_high``) and its mean
    ``success_rate`` is strictly larger. Returns, in the order of ``rows``, one row per beaten
    plain loop: its ``temperature``, ``rho_mean`` and ``success_rate``, and the
    ``mix_temperature``, ``mix_epsilon``, ``mix_rho_mean`` and ``mix_success_rate`` of the mix
    with the largest ``rho_mean`` among those that beat it (the first on a tie). Without an
    ``epsilon == 0`` row there is nothing to beat and the list is empty. With
    ``same_temperature`` only mixes at the plain loop's own temperature count.
    """
    beaten = []
    mixes = [row for row in rows if row["epsilon"] > 0]
    for plain in (row for row in rows if row["epsilon"] == 0):
        better = [
            m
            for m in mixes
            if m["rho_ci95_low"] > plain["rho_ci95_high"]
            and m["success_rate"] > plain["success_rate"]
            and (not same_temperature or m["temperature"] == plain["temperature"])
        ]
        if better:
            best = max(better, key=lambda m: m["rho_mean"])
            beaten.append(
                {
                    "temperature": plain["temperature"],
                    "rho_mean": plain["rho_mean"],
                    "success_rate": plain["success_rate"],
                    "mix_temperature": best["temperature"],
                    "mix_epsilon": best["epsilon"],
                    "mix_rho_mean": best["rho_mean"],
                    "mix_success_rate": best["success_rate"],
                }
            )
    return beaten


def _temperatures(rows: Sequence[dict[str, float]]) -> str:
    return ", ".join(f"{r['temperature']:g}" for r in rows) or "none"


@dataclass(frozen=True)
class ExplorationSummary:
    """What the Experiment 3 chapter says about its exploration grid: ``values`` (glue keys) and
    :meth:`failed_claims`, the sentences that are not numbers and no longer hold."""

    rows: list[dict[str, float]]
    plain: list[dict[str, float]]
    values: dict[str, float | str]
    claims: dict[str, bool]

    def failed_claims(self) -> list[str]:
        """The claims that do not hold, by name (empty when all do)."""
        return [name for name, holds in self.claims.items() if not holds]


def exploration_summary(
    grid: dict[tuple[float, float], ExplorationResult],
    plain: Sequence[dict[str, float]],
    *,
    uniform_rho: float,
    success_at_chosen: float,
) -> ExplorationSummary:
    """Read the chapter's numbers and claims off an :func:`exploration_grid` and the plain
    loops' rows (:func:`~forgetting.studies.worlds.controlled.temperature_rows`).

    The mixes are the ``epsilon > 0`` settings (at least one needed, ``ValueError`` otherwise);
    "coldest" is the lowest temperature of ``plain``, "full coverage" the lowest temperature at
    which every plain loop of every seed retrieved every memory. ``values`` holds, at the coldest
    temperature, the smallest and largest mix's rho (mean and 95 % interval), entropy and success
    rate, the best mix's epsilon and interval end, the plain loops beaten by some mix of the grid
    (:func:`plain_loops_beaten`), those beaten by a mix at their own temperature, and, for the
    first plain loop only a mix at another temperature beats, its success rate against the range
    of its own temperature's mixes. ``claims`` are the prose's other sentences: every mix at the
    coldest temperature raises rho, covers every memory and stays below ``uniform_rho``; there
    the smallest mix succeeds more often than the plain loop and the largest less; the entropy
    rises with epsilon at every temperature; every mix at that first temperature succeeds less
    often than its plain loop, and only colder mixes beat that loop; and epsilon 0 is the plain
    loop, draw for draw.
    """
    rows = exploration_rows(grid)
    at = {(r["temperature"], r["epsilon"]): r for r in rows}
    epsilons = sorted({r["epsilon"] for r in rows})
    temperatures = list(dict.fromkeys(r["temperature"] for r in rows))
    mixing = [e for e in epsilons if e > 0]
    if not mixing:
        raise ValueError(f"epsilons={epsilons}; allowed: at least one share above 0")
    coldest = min(plain, key=lambda r: r["temperature"])
    cold = coldest["temperature"]
    full = [r for r in plain if r["coverage_min"] == 1.0]
    lowest_full = min(full, key=lambda r: r["temperature"]) if full else None
    values: dict[str, float | str] = {
        "epsilons_text": ", ".join(
            f"{e:g}" for e in (r["epsilon"] for r in rows if r["temperature"] == cold)
        ),
        "eps_small": mixing[0],
        "eps_large": mixing[-1],
    }
    for name, e in (("small", mixing[0]), ("large", mixing[-1])):
        for key in ("rho_mean", "rho_ci95_low", "rho_ci95_high", "entropy", "success_rate"):
            values[f"mix_coldest_{name}_{key}"] = at[(cold, e)][key]
    values["mix_coverage_min_coldest"] = min(at[(cold, e)]["coverage_min"] for e in mixing)
    if lowest_full:
        values["mix_full_large_rho_mean"] = at[(lowest_full["temperature"], mixing[-1])]["rho_mean"]
    best_cold = max((at[(cold, e)] for e in mixing), key=lambda r: r["rho_mean"])
    values["mix_coldest_best_epsilon"] = best_cold["epsilon"]
    values["mix_coldest_best_rho_ci95_high"] = best_cold["rho_ci95_high"]
    beaten = plain_loops_beaten(rows)
    same = plain_loops_beaten(rows, same_temperature=True)
    elsewhere = [b for b in beaten if b["temperature"] not in {s["temperature"] for s in same}]
    values["n_plain"] = len(plain)
    values["n_plain_beaten"] = len(beaten)
    values["plain_beaten_temperatures"] = _temperatures(beaten)
    values["n_plain_beaten_same"] = len(same)
    values["plain_beaten_same_temperatures"] = _temperatures(same)
    values["plain_beaten_elsewhere_temperatures"] = _temperatures(elsewhere)
    values["success_at_chosen"] = success_at_chosen
    own_mixes_lose = only_colder = True
    values.update(  # a grid where no plain loop is beaten only elsewhere quotes nothing (nan, "none")
        {
            key: math.nan
            for key in (
                "elsewhere_temperature",
                "elsewhere_plain_success",
                "elsewhere_own_mix_success_low",
                "elsewhere_own_mix_success_high",
                "elsewhere_mix_temperature",
                "elsewhere_mix_epsilon",
                "elsewhere_mix_success",
            )
        }
    )
    if elsewhere:
        first = elsewhere[0]
        own = [at[(first["temperature"], e)]["success_rate"] for e in mixing]
        values["elsewhere_temperature"] = first["temperature"]
        values["elsewhere_plain_success"] = first["success_rate"]
        values["elsewhere_own_mix_success_low"] = min(own)
        values["elsewhere_own_mix_success_high"] = max(own)
        values["elsewhere_mix_temperature"] = first["mix_temperature"]
        values["elsewhere_mix_epsilon"] = first["mix_epsilon"]
        values["elsewhere_mix_success"] = first["mix_success_rate"]
        plain_first = at[(first["temperature"], 0.0)]
        winners = [
            r
            for r in rows
            if r["epsilon"] > 0
            and r["rho_ci95_low"] > plain_first["rho_ci95_high"]
            and r["success_rate"] > plain_first["success_rate"]
        ]
        own_mixes_lose = max(own) < first["success_rate"]
        only_colder = all(r["temperature"] < first["temperature"] for r in winners)
    claims = {
        "every mix raises rho at the coldest temperature": all(
            at[(cold, e)]["rho_mean"] > coldest["rho_mean"] for e in mixing
        ),
        "no mix reaches uniform retrieval's rho at the coldest temperature": best_cold["rho_ci95_high"]
        < uniform_rho,
        "the smallest mix succeeds more, the largest less than the coldest plain loop": at[(cold, mixing[0])][
            "success_rate"
        ]
        > coldest["success_rate"]
        > at[(cold, mixing[-1])]["success_rate"],
        "every mix at the coldest temperature retrieves every memory": values["mix_coverage_min_coldest"]
        == 1.0,
        "the plain loops are the epsilon 0 rows": 0.0 in epsilons
        and all(at[(r["temperature"], 0.0)]["rho_mean"] == r["rho_mean"] for r in plain),
        "the entropy rises with epsilon at every temperature": all(
            at[(t, a)]["entropy"] < at[(t, b)]["entropy"]
            for t in temperatures
            for a, b in zip(epsilons, epsilons[1:])
        ),
        "every mix at a temperature only a colder mix wins succeeds less than its plain loop": own_mixes_lose,
        "only colder mixes beat that plain loop": only_colder,
    }
    return ExplorationSummary(rows, list(plain), values, claims)
