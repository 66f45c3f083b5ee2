"""Experiment 2: the task-difficulty confound (specialists retrieved only on hard tasks)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...worth import LOW_VALUE, add_episodes, memory_worth, worth_class
from ..executor import Executor, each_seed, map_seeds
from .model import (
    DEFAULT_N_SEEDS,
    OUTCOME_STREAM,
    RETRIEVAL_STREAM,
    TASK_STREAM,
    FloatArray,
    check_n_seeds,
    check_world,
    expected_retrieved_utility,
    replace_world,
    seed_streams,
    spearman_rho,
    substream,
    success_probability,
    uniform_retrieval,
)

__all__ = [
    "EASY",
    "HARD",
    "TASK_TYPES",
    "ConfoundWorld",
    "ConfoundResult",
    "confound_p_plus",
    "confound_experiment",
    "confound_sweep",
    "confound_episode_sweep",
    "EpisodeSweepSummary",
    "episode_sweep_summary",
    "calibration_rows",
    "calibration_values",
]


EASY, HARD = 0, 1
"""Task-type indices (rows of the per-type arrays)."""
TASK_TYPES = ("easy", "hard")
"""Task-type names, in index order."""


@dataclass(frozen=True)
class ConfoundWorld:
    """Experiment 2: specialists are retrieved only on hard tasks, where success is rare.

    Memories ``0 .. n_generalists-1`` are generalists, the rest specialists. Each episode is
    hard with probability ``hard_fraction``. An easy task retrieves ``k`` memories uniformly
    from the generalists; a hard task retrieves ``k`` uniformly from all memories, so only hard
    tasks ever see a specialist. Outcome::

        Pr[success] = base_c + memory_effect * (mean utility of the retrieved set - 1/2)

    with ``base_easy = 0.8`` and ``base_hard = 0.2``. Specialists hold what hard tasks need:
    utility ``Uniform(0.5, 1)``; generalists ``Uniform(0, 1)``.

    *Conditioned* rho (the paper's "conditioned on task type"): Memory Worth per
    ``(task type, memory)`` (:class:`forgetting.worth.ContextualMemoryWorth`), Spearman rho
    with utility computed within each type over the memories retrieved in it, then averaged
    over the two types.

    How the open settings were chosen (reported, not hidden): the paper gives neither the mix
    of memories nor how strongly memories move the outcome. The defaults (generalists
    Uniform(0, 1) as in Experiment 1, 50 specialists, effect 0.1: the retrieved set moves
    success by at most ``+- effect / 2`` against a 60-point difficulty gap) were picked from a
    grid over the specialist count and the effect (:func:`confound_sweep`; the Experiment 2
    chapter tabulates it), with the generalists' utility range varied by hand, as the simplest
    setting near the paper. It is a calibration, stated as such.

    What the model says about the paper's pair of numbers: within a type, worth spans only
    ``effect / k``, so a small conditioned rho after many episodes needs a weak effect, and with
    a weak effect estimation noise erases the within-group ordering and leaves the between-group
    reversal. In the limit (:attr:`ConfoundResult.p_plus_rho_global`) every specialist can rank
    below every generalist, since ``p+`` of a specialist sits near the hard base rate; the
    conditioned limit (:attr:`ConfoundResult.p_plus_rho_conditioned`) is +1 in the default
    world: conditioning on the type removes the bias, and what remains is estimation noise that
    more episodes shrink (:func:`confound_episode_sweep`).

    Attributes
    ----------
    n_generalists : int, default 50
    n_specialists : int, default 50
    retrieved_per_episode : int, default 10
    n_episodes : int, default 10_000
    hard_fraction : float, default 0.5
    easy_base_rate, hard_base_rate : float, default 0.8, 0.2
    memory_effect : float, default 0.1
        Must keep ``base +- effect / 2`` inside [0, 1].
    generalist_utility, specialist_utility : (low, high), default (0, 1) and (0.5, 1)
    """

    n_generalists: int = 50
    n_specialists: int = 50
    retrieved_per_episode: int = 10
    n_episodes: int = 10_000
    hard_fraction: float = 0.5
    easy_base_rate: float = 0.8
    hard_base_rate: float = 0.2
    memory_effect: float = 0.1
    generalist_utility: tuple[float, float] = (0.0, 1.0)
    specialist_utility: tuple[float, float] = (0.5, 1.0)

    def __post_init__(self) -> None:
        check_world(
            self,
            {
                "n_generalists": ("int", 2, 10**7),
                "n_specialists": ("int", 1, 10**7),
                "n_episodes": ("int", 1, 10**8),
                "hard_fraction": ("real", 0.0, 1.0),
                "easy_base_rate": ("real", 0.0, 1.0),
                "hard_base_rate": ("real", 0.0, 1.0),
                "memory_effect": ("real", 0.0, 1.0),
                "retrieved_per_episode": (
                    "int",
                    1,
                    self.n_generalists - 1 if isinstance(self.n_generalists, int) else 1,
                ),
            },
        )
        problems = []
        for name in ("easy_base_rate", "hard_base_rate"):
            base = getattr(self, name)
            if not (base - self.memory_effect / 2 >= 0.0 and base + self.memory_effect / 2 <= 1.0):
                problems.append(
                    f"{name} +- memory_effect / 2 must stay in [0, 1], got {name}={base!r} "
                    f"and memory_effect={self.memory_effect!r}"
                )
        for name in ("generalist_utility", "specialist_utility"):
            low, high = getattr(self, name)
            if not 0.0 <= low <= high <= 1.0:
                problems.append(f"{name} must be (low, high) with 0 <= low <= high <= 1, got {(low, high)!r}")
        if problems:
            raise ValueError("ConfoundWorld: " + "; ".join(problems))

    @property
    def n_memories(self) -> int:
        """Generalists plus specialists."""
        return self.n_generalists + self.n_specialists

    def base_rates(self) -> np.ndarray:
        """``[easy_base_rate, hard_base_rate]``, indexed by task type."""
        return np.array([self.easy_base_rate, self.hard_base_rate])


@dataclass(frozen=True)
class ConfoundResult:
    """Experiment 2 over seeds.

    ``rho_global[s]``: rho(MW, utility) over all memories; ``rho_by_type[s, c]``: rho within
    task type ``c`` (0 easy, 1 hard) from the per-type worth; ``rho_conditioned[s]``: the mean
    of the two.
    """

    world: ConfoundWorld
    rho_global: np.ndarray  # (seeds,)
    rho_by_type: np.ndarray  # (seeds, 2)
    utilities: np.ndarray  # (seeds, memories)
    worth: np.ndarray  # (seeds, memories)
    evidence: np.ndarray  # (seeds, memories)
    worth_by_type: np.ndarray  # (seeds, 2, memories); the prior where a type never retrieved m
    p_plus: np.ndarray  # (seeds, memories), exact
    p_plus_by_type: np.ndarray  # (seeds, 2, memories), exact; NaN where m is not in the type's pool

    @property
    def rho_conditioned(self) -> np.ndarray:
        """Per seed, the mean over the two task types of the within-type rho."""
        value: FloatArray = self.rho_by_type.mean(axis=1)
        return value

    @property
    def specialist_low_value_share(self) -> np.ndarray:
        """Per seed, the share of specialists whose global worth classifies them ``low-value``
        (default thresholds): useful memories a worth-based policy would suppress."""
        specialists = slice(self.world.n_generalists, self.world.n_memories)
        labels = worth_class(self.worth[:, specialists], self.evidence[:, specialists])
        value: FloatArray = (labels == LOW_VALUE).mean(axis=1)
        return value

    @property
    def p_plus_rho_global(self) -> np.ndarray:
        """rho(p+, utility) per seed: where the global rho goes with unlimited episodes."""
        return np.array([spearman_rho(p, u) for p, u in zip(self.p_plus, self.utilities)])

    @property
    def p_plus_rho_conditioned(self) -> np.ndarray:
        """The conditioned rho computed from the exact per-type ``p+`` (its infinite-data limit)."""
        values = []
        for by_type, u in zip(self.p_plus_by_type, self.utilities):
            values.append(np.mean([spearman_rho(p[~np.isnan(p)], u[~np.isnan(p)]) for p in by_type]))
        return np.array(values)


def confound_p_plus(world: ConfoundWorld, utilities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``p+(m)`` overall and ``p+(m | type)`` (NaN where ``m`` cannot be retrieved).

    Within type ``c``: ``base_c + effect * (E[mean utility | m in M, c] - 1/2)`` with the pool
    of ``c`` (:func:`expected_retrieved_utility`). Overall: those values averaged with weights
    ``Pr[c] * Pr[m in M | c] = Pr[c] * k / |pool_c|``.
    """
    k = world.retrieved_per_episode
    pools = [np.arange(world.n_generalists), np.arange(world.n_memories)]
    type_share = np.array([1.0 - world.hard_fraction, world.hard_fraction])
    by_type = np.full((2, world.n_memories), np.nan)
    weight = np.zeros((2, world.n_memories))
    for c, pool in enumerate(pools):
        pool_u = utilities[pool]
        by_type[c, pool] = world.base_rates()[c] + world.memory_effect * (
            expected_retrieved_utility(pool_u, pool_u.sum(), pool.size, k) - 0.5
        )
        weight[c, pool] = type_share[c] * k / pool.size
    overall = np.nansum(by_type * weight, axis=0) / weight.sum(axis=0)
    return overall, by_type


def confound_draws(world: ConfoundWorld, seed: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One seed's ``(utilities, task, retrieved)``: utilities from ``default_rng(seed)``; per
    episode, a task-type uniform and ``n`` retrieval keys (only the generalists' count on an easy
    task), each kind from its own stream (:func:`~forgetting.studies.worlds.model.substream`), so episode
    ``t`` does not depend on ``n_episodes`` (a shorter run is the start of a longer one)."""
    rng = np.random.default_rng(seed)
    n, k, e = world.n_memories, world.retrieved_per_episode, world.n_episodes
    utilities = np.concatenate(
        [
            rng.uniform(*world.generalist_utility, world.n_generalists),
            rng.uniform(*world.specialist_utility, world.n_specialists),
        ]
    )
    task = (substream(seed, TASK_STREAM).random(e) < world.hard_fraction).astype(np.intp)
    pools = np.where(task == HARD, n, world.n_generalists)  # easy tasks see the generalists only
    retrieved = uniform_retrieval(substream(seed, RETRIEVAL_STREAM), e, n, k, pool_limits=pools)
    return utilities, task, retrieved


def _draw_settings(world: ConfoundWorld) -> tuple[Any, ...]:
    """The settings :func:`confound_draws` reads, but for ``n_episodes``."""
    return (
        world.n_generalists,
        world.n_specialists,
        world.retrieved_per_episode,
        world.hard_fraction,
        world.generalist_utility,
        world.specialist_utility,
    )


def _confound_runs(worlds: Sequence[ConfoundWorld], seed: Any) -> list[tuple[np.ndarray, ...]]:
    """One seed of each world in ``worlds``, in order: :func:`confound_draws`, then one outcome
    uniform per episode from its own stream.

    Worlds with the same draw settings (:func:`_draw_settings`) share the draws of the longest
    of them: a seed's episode ``t`` does not depend on ``n_episodes``, so each world reads the
    first ``n_episodes`` rows (the same per-episode operations, rows read in the same order)."""
    longest: dict[tuple[Any, ...], ConfoundWorld] = {}
    for world in worlds:
        key = _draw_settings(world)
        if key not in longest or world.n_episodes > longest[key].n_episodes:
            longest[key] = world
    draws = {key: confound_draws(world, seed) for key, world in longest.items()}
    uniforms = substream(seed, OUTCOME_STREAM).random(max(w.n_episodes for w in worlds))
    return [_confound_tally(world, *draws[_draw_settings(world)], uniforms) for world in worlds]


def _confound_tally(
    world: ConfoundWorld, utilities: np.ndarray, task: np.ndarray, retrieved: np.ndarray, uniforms: np.ndarray
) -> tuple[np.ndarray, ...]:
    """One seed's result from its first ``world.n_episodes`` draws (longer arrays are cut)."""
    n, e = world.n_memories, world.n_episodes
    task, retrieved = task[:e], retrieved[:e]
    outcomes = uniforms[:e] < success_probability(
        utilities, retrieved, world.base_rates()[task], world.memory_effect
    )
    successes, failures = np.zeros(n), np.zeros(n)
    add_episodes(successes, failures, retrieved, outcomes)
    # per-type counters: memory m of type c lives at c * n + m
    typed_successes, typed_failures = np.zeros(2 * n), np.zeros(2 * n)
    add_episodes(typed_successes, typed_failures, retrieved + (task * n)[:, None], outcomes)
    worth = memory_worth(successes, failures)
    evidence = successes + failures
    worth_by_type = memory_worth(typed_successes, typed_failures).reshape(2, n)
    seen = (typed_successes + typed_failures).reshape(2, n) > 0
    rho_by_type = np.array(
        [spearman_rho(worth_by_type[c, seen[c]], utilities[seen[c]]) for c in (EASY, HARD)]
    )
    p_plus, p_plus_by_type = confound_p_plus(world, utilities)
    return (
        np.array(spearman_rho(worth, utilities)),
        rho_by_type,
        utilities,
        worth,
        evidence,
        worth_by_type,
        p_plus,
        p_plus_by_type,
    )


def confound_experiment(
    world: ConfoundWorld = ConfoundWorld(),
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = 0,
    executor: Executor | None = None,
) -> ConfoundResult:
    """Experiment 2: :class:`ConfoundWorld` for ``n_seeds`` seeds, each on its own child stream of ``seed``.

    ``executor`` (default: this process) runs chunks of seeds; the result does not depend on it.
    """
    check_n_seeds(n_seeds)
    return _confound_results([world], n_seeds, seed, executor)[0]


def _confound_results(
    worlds: Sequence[ConfoundWorld], n_seeds: int, seed: int, executor: Executor | None = None
) -> list[ConfoundResult]:
    """:func:`confound_experiment` of each world, seed by seed (:func:`_confound_runs`)."""
    chunk = each_seed(functools.partial(_confound_runs, worlds))
    runs = map_seeds(chunk, seed_streams(seed, n_seeds), executor, label=f"{n_seeds} seeds")
    return [
        ConfoundResult(world, *(np.stack(parts) for parts in zip(*(run[i] for run in runs))))
        for i, world in enumerate(worlds)
    ]


def confound_sweep(
    memory_effects: Sequence[float] = (0.1, 0.2, 0.4),
    specialist_counts: Sequence[int] = (20, 30, 50),
    world: ConfoundWorld = ConfoundWorld(),
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = 0,
) -> dict[tuple[float, int], ConfoundResult]:
    """Experiment 2 over memory effects and specialist counts (total memories kept fixed).

    The memory effect only changes the outcome model, so the effects at one specialist count
    share their draws (:func:`_confound_runs`)."""
    total = world.n_memories
    grid = {
        (float(effect), int(count)): replace_world(
            world, memory_effect=float(effect), n_specialists=int(count), n_generalists=total - int(count)
        )
        for effect in memory_effects
        for count in specialist_counts
    }
    if not grid:
        return {}
    check_n_seeds(n_seeds)
    return dict(zip(grid, _confound_results(list(grid.values()), n_seeds, seed)))


def confound_episode_sweep(
    episode_counts: Sequence[int] = (1_000, 3_000, 10_000, 30_000, 100_000, 300_000),
    world: ConfoundWorld = ConfoundWorld(),
    n_seeds: int = DEFAULT_N_SEEDS,
    seed: int = 0,
) -> dict[int, ConfoundResult]:
    """Experiment 2 at several episode counts (everything else from ``world``).

    Shows whether the global rho is a finite-sample value: it moves towards its limit
    (:attr:`ConfoundResult.p_plus_rho_global`) as episodes grow, and the conditioned rho
    towards its own (:attr:`ConfoundResult.p_plus_rho_conditioned`). A seed's episodes do not
    depend on the run's length, so each seed's runs at the different counts are one run read
    at each count: it is drawn once, at the largest count (:func:`_confound_runs`).
    """
    worlds = {int(e): replace_world(world, n_episodes=int(e)) for e in episode_counts}
    if not worlds:
        return {}
    check_n_seeds(n_seeds)
    return dict(zip(worlds, _confound_results(list(worlds.values()), n_seeds, seed)))


@dataclass(frozen=True)
class EpisodeSweepSummary:
    """A :func:`confound_episode_sweep` read for the Experiment 2 chapter: per episode count, the
    global and conditioned rho's mean and sd over seeds, the table's ``rows`` and the ``values``
    the prose quotes (first and last episode counts, global rho at both, conditioned rho at the last)."""

    episodes: np.ndarray
    global_mean: np.ndarray
    global_sd: np.ndarray
    conditioned_mean: np.ndarray
    conditioned_sd: np.ndarray
    rows: list[dict[str, Any]]
    values: dict[str, Any]


def episode_sweep_summary(sweep: dict[int, ConfoundResult]) -> EpisodeSweepSummary:
    """Summarise an episode sweep (:class:`EpisodeSweepSummary`); ``ValueError`` when it is empty."""
    if not sweep:
        raise ValueError("the episode sweep is empty; allowed: at least one episode count")
    episodes = np.array(list(sweep))
    global_mean = np.array([r.rho_global.mean() for r in sweep.values()])
    global_sd = np.array([r.rho_global.std(ddof=1) for r in sweep.values()])
    cond_mean = np.array([r.rho_conditioned.mean() for r in sweep.values()])
    cond_sd = np.array([r.rho_conditioned.std(ddof=1) for r in sweep.values()])
    rows = [
        {
            "episodes": int(e),
            "rho_global": g,
            "rho_global_sd": gs,
            "rho_conditioned": c,
            "rho_conditioned_sd": cs,
        }
        for e, g, gs, c, cs in zip(episodes, global_mean, global_sd, cond_mean, cond_sd)
    ]
    values = {
        "sweep_last_episodes": int(episodes[-1]),
        "sweep_global_last": global_mean[-1],
        "sweep_conditioned_last": cond_mean[-1],
        "sweep_first_episodes": int(episodes[0]),
        "sweep_global_first": global_mean[0],
    }
    return EpisodeSweepSummary(episodes, global_mean, global_sd, cond_mean, cond_sd, rows, values)


def calibration_rows(
    grid: dict[tuple[float, int], ConfoundResult], world: ConfoundWorld
) -> list[dict[str, Any]]:
    """One row per setting of a :func:`confound_sweep` (memory effect, number of specialists, the
    rest of the ``world``'s memories generalists): global and conditioned rho, the global rho's
    limit and the share of specialists classified low-value, means over seeds."""
    return [
        {
            "memory_effect": effect,
            "specialists": count,
            "generalists": world.n_memories - count,
            "rho_global": r.rho_global.mean(),
            "rho_conditioned": r.rho_conditioned.mean(),
            "limit_global": r.p_plus_rho_global.mean(),
            "specialists_low_value": r.specialist_low_value_share.mean(),
        }
        for (effect, count), r in grid.items()
    ]


def calibration_values(rows: Sequence[dict[str, Any]], world: ConfoundWorld) -> dict[str, Any]:
    """What the chapter quotes from :func:`calibration_rows`: the range of the global and the
    conditioned rho, how many settings have a negative global rho, a positive global limit and a
    positive conditioned rho, and the smallest share of specialists classified low-value."""
    if not rows:
        raise ValueError("the calibration grid is empty; allowed: at least one setting")
    return {
        "grid_global_low": min(r["rho_global"] for r in rows),
        "grid_global_high": max(r["rho_global"] for r in rows),
        "grid_cond_low": min(r["rho_conditioned"] for r in rows),
        "grid_cond_high": max(r["rho_conditioned"] for r in rows),
        "n_memories": world.n_memories,
        "n_grid": len(rows),
        "n_global_negative": sum(r["rho_global"] < 0 for r in rows),
        "n_limit_positive": sum(r["limit_global"] > 0 for r in rows),
        "n_cond_positive": sum(r["rho_conditioned"] > 0 for r in rows),
        "grid_low_value_min": min(r["specialists_low_value"] for r in rows),
    }
