"""Experiment 4: co-retrieval, a useless hitchhiker that always travels with a useful anchor."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import raise_problems, real_problem
from ...worth import add_episodes, memory_worth
from .model import (
    BLOCK_EPISODES,
    BREAK_STREAM,
    KEEP_STREAM,
    OUTCOME_STREAM,
    PAIR_STREAM,
    RETRIEVAL_STREAM,
    SEPARATION_Z,
    FloatArray,
    IntArray,
    check_n_seeds,
    check_world,
    seed_streams,
    separated,
    substream,
    success_probability,
    uniform_retrieval,
)

__all__ = [
    "ANCHOR",
    "HITCHHIKER",
    "CO_RETRIEVAL_N_SEEDS",
    "CoRetrievalWorld",
    "CoRetrievalResult",
    "co_retrieval_p_plus",
    "pair_episodes",
    "PairDraws",
    "pair_draws",
    "pair_utilities",
    "co_retrieval_experiment",
    "leading_seeds",
    "threshold_or_nan",
    "SENSITIVITY_KINDS",
    "threshold_sensitivity",
    "threshold_sensitivity_by_kind",
    "sensitivity_rows",
    "co_retrieval_values",
    "co_retrieval_rows",
    "sensitivity_values",
]

CO_RETRIEVAL_N_SEEDS = 100
"""Seeds for Experiment 4, whose criterion needs the across-seed sd (see :class:`CoRetrievalWorld`)."""


ANCHOR, HITCHHIKER = 0, 1
"""Indices of the useful anchor and the useless hitchhiker."""


def check_pair_world(world: Any, rules: dict[str, tuple[str, float, float]]) -> None:
    """Check the settings every anchor/hitchhiker world shares, with ``rules`` for its own.

    ``n_memories`` in [4, 1e7], ``n_episodes`` in [1, 1e8], ``k`` in [2, n - 2] (room for the
    pair and for others) and ``pair_rate`` in [0, 1] unless ``None``.
    """
    n = world.n_memories
    shared = {
        "n_memories": ("int", 4, 10**7),
        "n_episodes": ("int", 1, 10**8),
        "retrieved_per_episode": ("int", 2, n - 2 if isinstance(n, int) else 2),
    }
    check_world(world, {**shared, **rules})
    if world.pair_rate is not None:
        check_world(world, {"pair_rate": ("real", 0.0, 1.0)})


def effective_pair_rate(world: Any) -> float:
    """``world.pair_rate``, or ``k / n`` when it is ``None``."""
    if world.pair_rate is None:
        return float(world.retrieved_per_episode / world.n_memories)
    return float(world.pair_rate)


@dataclass(frozen=True)
class CoRetrievalWorld:
    """Experiment 4: a useless hitchhiker travels with a useful anchor.

    Memory 0 is the anchor (utility ``anchor_utility = 1``), memory 1 the hitchhiker (utility
    ``hitchhiker_utility = 0``); the other 98 have utilities ``Uniform(0, 1)``. Each episode
    retrieves the pair with probability ``pair_rate`` (default ``k / n``, the rate at which
    uniform retrieval would pick any one memory), otherwise ``k`` of the others. In a pair
    episode the pair is *broken* with probability ``diversity``: a fair coin keeps either the
    anchor or the hitchhiker alone. The free slots go to uniformly drawn others. Outcomes as in
    :class:`ControlledWorld`. At ``diversity = 0`` the two have identical counters. Each kind
    of draw has its own stream, read per episode in order (:func:`pair_episodes`).

    Separation criterion (:func:`separated`): at a given diversity, over seeds, the gap
    ``MW(anchor) - MW(hitchhiker)`` satisfies ``mean - 1.645 sd > 0``: a single run ranks
    the anchor first with probability at least 95 %. ``diversity_threshold`` is the smallest
    tested diversity from which on every larger tested diversity separates as well (so one
    lucky diversity does not count).

    The criterion needs the across-seed sd, which is why the default uses more seeds
    (:data:`CO_RETRIEVAL_N_SEEDS`) than the other experiments: with few seeds the sd itself is
    poorly estimated and the threshold wanders with the base seed. The threshold depends on
    the evidence about the pair (``k``, ``pair_rate``, episodes) and on ``z``; it is a
    statement about evidence volume, not a constant of Memory Worth
    (:func:`threshold_sensitivity`). The criterion was first written with ``z = 1.96`` and moved
    to the one-sided 95 % level after seeing the results; the chapter reports both.

    Attributes
    ----------
    n_memories : int, default 100
    retrieved_per_episode : int, default 10
    n_episodes : int, default 10_000
    pair_rate : float or None, default None (= k / n)
    anchor_utility, hitchhiker_utility : float, default 1.0, 0.0
    diversities : tuple of float, default 0.0, 0.1, ..., 1.0
    """

    n_memories: int = 100
    retrieved_per_episode: int = 10
    n_episodes: int = 10_000
    pair_rate: float | None = None
    anchor_utility: float = 1.0
    hitchhiker_utility: float = 0.0
    diversities: tuple[float, ...] = tuple(i / 10 for i in range(11))

    def __post_init__(self) -> None:
        check_pair_world(
            self, {"anchor_utility": ("real", 0.0, 1.0), "hitchhiker_utility": ("real", 0.0, 1.0)}
        )
        values = tuple(float(d) for d in self.diversities)
        if not values or any(not 0.0 <= d <= 1.0 for d in values) or list(values) != sorted(set(values)):
            raise ValueError(
                f"CoRetrievalWorld: diversities must be strictly increasing values in [0, 1], "
                f"got {self.diversities!r}"
            )
        object.__setattr__(self, "diversities", values)

    @property
    def effective_pair_rate(self) -> float:
        """``pair_rate``, or ``k / n`` when it is ``None``."""
        return effective_pair_rate(self)


@dataclass(frozen=True)
class CoRetrievalResult:
    """Experiment 4 over seeds and diversities: ``gap[s, j]`` = MW(anchor) - MW(hitchhiker)."""

    world: CoRetrievalWorld
    diversities: np.ndarray  # (diversities,)
    anchor_worth: np.ndarray  # (seeds, diversities)
    hitchhiker_worth: np.ndarray
    exact_gap: np.ndarray  # (seeds, diversities): p+(anchor) - p+(hitchhiker), exact

    @property
    def gap(self) -> np.ndarray:
        """``MW(anchor) - MW(hitchhiker)``, shape (seeds, diversities)."""
        value: FloatArray = self.anchor_worth - self.hitchhiker_worth
        return value

    @property
    def separated(self) -> np.ndarray:
        """Criterion of :func:`separated` at each diversity."""
        return self.separated_at(SEPARATION_Z)

    @property
    def diversity_threshold(self) -> float | None:
        """Smallest tested diversity from which on all tested diversities separate; None if none."""
        return self.threshold_at(SEPARATION_Z)

    def separated_at(self, z: float) -> np.ndarray:
        """:func:`separated` with multiplier ``z`` at each diversity (e.g. 1.96 for the stricter test)."""
        return np.array([separated(self.gap[:, j], z) for j in range(self.diversities.size)])

    def threshold_at(self, z: float) -> float | None:
        """:attr:`diversity_threshold` under the criterion ``mean - z sd > 0``; None if never met."""
        return self._first_from_which_on(self.separated_at(z))

    @property
    def ranked_first_share(self) -> np.ndarray:
        """Per diversity, the share of seeds in which the anchor's worth is strictly above the
        hitchhiker's (the distribution-free counterpart of the normal-approximation criterion)."""
        value: FloatArray = (self.gap > 0).mean(axis=0)
        return value

    def share_threshold(self, level: float = 0.95) -> float | None:
        """Smallest tested diversity from which on the anchor ranks first in at least ``level``
        of the seeds at every larger tested diversity; None if never."""
        return self._first_from_which_on(self.ranked_first_share >= level)

    def _first_from_which_on(self, flags: np.ndarray) -> float | None:
        for j in range(flags.size):
            if flags[j:].all():
                return float(self.diversities[j])
        return None


def co_retrieval_p_plus(
    world: CoRetrievalWorld, utilities: np.ndarray, diversity: float
) -> tuple[float, float]:
    """Exact ``(p+(anchor), p+(hitchhiker))`` at ``diversity``.

    The pair's companions are uniform draws from the other memories, of mean utility ``o``.
    Intact episodes (share ``1 - d`` of pair episodes) have expected mean utility
    ``(u_a + u_h + (k - 2) o) / k``; an episode where ``x`` is kept alone (share ``d / 2``
    each) ``(u_x + (k - 1) o) / k``. ``p+(x)`` is the average over the episodes containing ``x``.
    """
    k = world.retrieved_per_episode
    others = np.delete(utilities, [ANCHOR, HITCHHIKER]).mean()
    u_a, u_h = utilities[ANCHOR], utilities[HITCHHIKER]
    together = (u_a + u_h + (k - 2) * others) / k
    result = []
    for alone in ((u_a + (k - 1) * others) / k, (u_h + (k - 1) * others) / k):
        result.append(float(((1 - diversity) * together + diversity / 2 * alone) / (1 - diversity / 2)))
    return result[0], result[1]


def pair_episodes(world: Any, diversity: float, seed: Any) -> tuple[IntArray, IntArray, FloatArray]:
    """The pair episodes of one run: their indices, the memories they retrieve, their outcome draws.

    ``world`` is an anchor/hitchhiker world (:class:`CoRetrievalWorld` or
    :class:`~forgetting.studies.worlds.anchor_decides.AnchorDecidesWorld`), ``seed`` an int or a
    ``SeedSequence``. Each kind of draw comes from its own stream of ``seed``
    (:func:`~forgetting.studies.worlds.model.substream`), read in episode order:

    * :data:`~forgetting.studies.worlds.model.PAIR_STREAM`, one uniform per episode ``t = 0 .. E - 1``:
      a pair episode when it is below the effective pair rate (so their number is
      ``Binomial(E, pair_rate)``). Only pair episodes touch the two counters that are measured,
      so the others are drawn no further: the same distribution for the pair as simulating every
      episode, about ``1 / pair_rate`` times faster.
    * per pair episode ``i`` (the ``i``-th pair episode of the run):
      :data:`~forgetting.studies.worlds.model.BREAK_STREAM`, one uniform (the pair is broken when it is
      below ``diversity``); :data:`~forgetting.studies.worlds.model.KEEP_STREAM`, one uniform (a broken
      pair keeps the anchor alone when it is below 1/2, the hitchhiker otherwise);
      :data:`~forgetting.studies.worlds.model.RETRIEVAL_STREAM`, ``n - 2`` keys of
      :func:`~forgetting.studies.worlds.model.uniform_retrieval` for ``k`` others in random order,
      whose leading columns the pair (or the kept member) overwrites; and
      :data:`~forgetting.studies.worlds.model.OUTCOME_STREAM`, one uniform, returned for the caller's
      outcome model (success when it is below the success probability).

    Invariants: the first ``E`` episodes of a longer run are the run of ``E`` episodes (its pair
    episodes are the leading ones of the longer run, with the same rows and draws), and the same
    ``seed`` gives the same draws at every diversity (common random numbers: a coin below a
    smaller diversity is below a larger one too).

    Returns
    -------
    episodes : ndarray of int, shape (pairs,)
        Indices of the pair episodes, increasing.
    retrieved : ndarray of int, shape (pairs, k)
    outcome_draws : ndarray of float, shape (pairs,)

    Raises
    ------
    ValueError
        Unless ``diversity`` is a real number in [0, 1].
    """
    raise_problems([real_problem("diversity", diversity, 0.0, 1.0)])  # before any draw
    return pair_draws(world, seed).at(diversity)


@dataclass(frozen=True)
class PairDraws:
    """A run's pair-episode draws before any diversity is applied (:func:`pair_draws`).

    Invariant: ``at(d)`` is :func:`pair_episodes` at ``d`` for the same world and seed, bit for
    bit; the draws do not depend on ``d``, so one ``PairDraws`` serves every diversity of a seed.
    """

    episodes: IntArray  # (pairs,): indices of the pair episodes, increasing
    break_draws: FloatArray  # (pairs,): the pair is broken when below the diversity
    keep_anchor: npt.NDArray[np.bool_]  # (pairs,): a broken pair keeps the anchor (else the hitchhiker)
    others: IntArray  # (pairs, k): k other memories in random order, before the pair overwrites them
    outcome_draws: FloatArray  # (pairs,)

    def at(self, diversity: float) -> tuple[IntArray, IntArray, FloatArray]:
        """``(episodes, retrieved, outcome_draws)`` at ``diversity``: the pair (or the kept member)
        overwrites the leading columns of ``others`` (a fresh array; the other two are shared)."""
        raise_problems([real_problem("diversity", diversity, 0.0, 1.0)])
        broken = self.break_draws < diversity
        retrieved = self.others.copy()
        retrieved[~broken, 0], retrieved[~broken, 1] = ANCHOR, HITCHHIKER
        retrieved[broken, 0] = np.where(self.keep_anchor[broken], ANCHOR, HITCHHIKER)
        return self.episodes, retrieved, self.outcome_draws


def pair_draws(world: Any, seed: Any) -> PairDraws:
    """Every stream :func:`pair_episodes` reads for ``world`` and ``seed``, drawn once (read-only arrays)."""
    n, k, e = world.n_memories, world.retrieved_per_episode, world.n_episodes
    coins, rate = substream(seed, PAIR_STREAM), effective_pair_rate(world)
    blocks = [
        start + np.flatnonzero(coins.random(min(BLOCK_EPISODES, e - start)) < rate)
        for start in range(0, e, BLOCK_EPISODES)
    ]
    episodes = np.concatenate(blocks).astype(np.intp)
    n_pair = episodes.size
    draws = PairDraws(
        episodes,
        substream(seed, BREAK_STREAM).random(n_pair),
        substream(seed, KEEP_STREAM).random(n_pair) < 0.5,
        uniform_retrieval(substream(seed, RETRIEVAL_STREAM), n_pair, n - 2, k) + 2,
        substream(seed, OUTCOME_STREAM).random(n_pair),
    )
    for field in dataclasses.fields(draws):
        getattr(draws, field.name).setflags(write=False)
    return draws


def pair_utilities(world: Any, seed: Any) -> FloatArray:
    """A seed's utilities: ``default_rng(seed)``'s uniforms, then the anchor's and the hitchhiker's."""
    utilities: FloatArray = np.random.default_rng(seed).uniform(0.0, 1.0, world.n_memories)
    utilities[ANCHOR], utilities[HITCHHIKER] = world.anchor_utility, world.hitchhiker_utility
    return utilities


def _co_retrieval_seed(world: CoRetrievalWorld, seed: Any) -> list[tuple[float, float, float]]:
    """One seed at every diversity, from one draw of its streams: row ``j`` is the run at
    ``world.diversities[j]`` (utilities from ``default_rng(seed)``, episodes from :func:`pair_episodes`)."""
    n = world.n_memories
    utilities, draws = pair_utilities(world, seed), pair_draws(world, seed)
    rows = []
    for diversity in world.diversities:
        _, retrieved, outcome_draws = draws.at(diversity)
        outcomes = outcome_draws < success_probability(utilities, retrieved)
        successes, failures = np.zeros(n), np.zeros(n)
        add_episodes(successes, failures, retrieved, outcomes)
        worth = memory_worth(successes, failures)
        exact_anchor, exact_hitchhiker = co_retrieval_p_plus(world, utilities, diversity)
        rows.append((float(worth[ANCHOR]), float(worth[HITCHHIKER]), exact_anchor - exact_hitchhiker))
    return rows


def co_retrieval_experiment(
    world: CoRetrievalWorld = CoRetrievalWorld(), n_seeds: int = CO_RETRIEVAL_N_SEEDS, seed: int = 0
) -> CoRetrievalResult:
    """Experiment 4 at every diversity of ``world``; each (seed, diversity) run reads its seed's streams.

    Seed ``s`` is child ``s`` of ``SeedSequence(seed)``; its utilities come from
    ``default_rng(child)`` and its episodes from the child's streams (:func:`pair_episodes`),
    the same at every diversity (common random numbers), so the curves over diversity are
    smooth within a seed and a run of ``E`` episodes is the start of a longer one.
    """
    check_n_seeds(n_seeds, minimum=2)
    children = seed_streams(seed, n_seeds)
    runs = np.array([_co_retrieval_seed(world, child) for child in children])
    return CoRetrievalResult(world, np.array(world.diversities), runs[:, :, 0], runs[:, :, 1], runs[:, :, 2])


def leading_seeds(result: CoRetrievalResult, count: int) -> CoRetrievalResult:
    """``result`` restricted to its first ``count`` seeds: what :func:`co_retrieval_experiment`
    returns for the same world and base seed with ``n_seeds = count``, bit for bit (seed ``i``
    is child ``i`` of ``SeedSequence(seed)`` whatever the number of seeds)."""
    check_n_seeds(count, minimum=2)
    worths = (result.anchor_worth[:count], result.hitchhiker_worth[:count], result.exact_gap[:count])
    return CoRetrievalResult(result.world, result.diversities, *worths)


def threshold_or_nan(threshold: float | None) -> float:
    """A diversity threshold as a number for tables and prose: NaN when no tested diversity separates."""
    return math.nan if threshold is None else threshold


#: The kinds of :func:`threshold_sensitivity_by_kind`'s rows, in the table's order.
SENSITIVITY_KINDS = ("headline", "other_seeds", "few_seeds", "depth", "pair_rate")


def threshold_sensitivity_by_kind(
    result: CoRetrievalResult,
    seed: int,
    n_seeds: int,
    z: float,
    strict_z: float,
    other_seeds: list[int],
    few_seeds: int,
    other_depth: int,
    other_pair_rate: float,
) -> dict[str, list[dict[str, Any]]]:
    """The diversity threshold under other base seeds, fewer seeds, another ``k`` and pair rate,
    its rows by kind (:data:`SENSITIVITY_KINDS`).

    ``result`` is the headline run (``result.world`` at base ``seed`` with ``n_seeds``). Kinds:
    ``"headline"`` (one row), ``"other_seeds"`` (each of ``other_seeds`` with ``n_seeds``),
    ``"few_seeds"`` (the base seed and each other seed with ``few_seeds``), ``"depth"`` (``k =
    other_depth``) and ``"pair_rate"`` (``pair_rate = other_pair_rate``). Each row gives the
    setting, its seeds, ``k``, the effective pair rate and the thresholds under ``z``,
    ``strict_z`` and the 95 % share criterion (:func:`threshold_or_nan` where none).
    """
    world = result.world
    settings = [("headline", "headline", seed, n_seeds, world)]
    settings += [("other_seeds", "other base seed", s, n_seeds, world) for s in other_seeds]
    settings += [("few_seeds", "fewer seeds", s, few_seeds, world) for s in [seed, *other_seeds]]
    settings += [
        (
            "depth",
            f"k = {other_depth}",
            seed,
            n_seeds,
            dataclasses.replace(world, retrieved_per_episode=other_depth),
        ),
        (
            "pair_rate",
            f"pair rate {other_pair_rate:g}",
            seed,
            n_seeds,
            dataclasses.replace(world, pair_rate=other_pair_rate),
        ),
    ]
    # seed i of a run is child i of its base seed whatever the count, so a run with fewer seeds
    # is the leading seeds of a run with more on the same world and base seed
    done: dict[tuple[CoRetrievalWorld, int], CoRetrievalResult] = {(world, seed): result}
    rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in SENSITIVITY_KINDS}
    for kind, label, base, count, variant in settings:
        known = done.get((variant, base))
        if kind == "headline":
            run = result
        elif known is not None and count <= known.anchor_worth.shape[0]:
            run = leading_seeds(known, count)
        else:
            run = done[variant, base] = co_retrieval_experiment(variant, n_seeds=count, seed=base)
        rows[kind].append(
            {
                "setting": label,
                "base_seed": base,
                "seeds": count,
                "k": variant.retrieved_per_episode,
                "pair_rate": variant.effective_pair_rate,
                f"threshold_z{z:g}": threshold_or_nan(run.threshold_at(z)),
                f"threshold_z{strict_z:g}": threshold_or_nan(run.threshold_at(strict_z)),
                "threshold_95pct_share": threshold_or_nan(run.share_threshold(0.95)),
            }
        )
    return rows


def sensitivity_rows(by_kind: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The rows of :func:`threshold_sensitivity_by_kind` as one table, kind after kind."""
    return [row for kind in SENSITIVITY_KINDS for row in by_kind[kind]]


def threshold_sensitivity(
    result: CoRetrievalResult,
    seed: int,
    n_seeds: int,
    z: float,
    strict_z: float,
    other_seeds: list[int],
    few_seeds: int,
    other_depth: int,
    other_pair_rate: float,
) -> list[dict[str, Any]]:
    """:func:`threshold_sensitivity_by_kind` as one table: the headline, each of ``other_seeds``
    with ``n_seeds``, the base seed and each other seed with ``few_seeds``, ``k = other_depth``,
    ``pair_rate = other_pair_rate``."""
    by_kind = threshold_sensitivity_by_kind(
        result, seed, n_seeds, z, strict_z, other_seeds, few_seeds, other_depth, other_pair_rate
    )
    return sensitivity_rows(by_kind)


def co_retrieval_values(result: CoRetrievalResult, z: float, strict_z: float) -> dict[str, float]:
    """The numbers the chapter states about one co-retrieval run.

    The thresholds under ``z``, ``strict_z`` and the 95 % share criterion; at the tested diversity
    nearest the ``z`` threshold (the last one when there is none), the mean gap, its sd over seeds,
    its exact value, the share of seeds ranking the anchor first and the criterion's margin
    ``mean - z sd``; the largest absolute gap at ``d = 0`` (NaN if ``0`` is not tested); both
    worths and their gap with the pair always broken (last diversity) and never broken (first);
    and the largest distance between the mean gap and the exact gap over the diversities.
    """
    diversities = np.asarray(result.diversities)
    threshold = result.threshold_at(z)
    gap_mean, gap_sd = result.gap.mean(axis=0), result.gap.std(axis=0, ddof=1)
    exact = result.exact_gap.mean(axis=0)
    at = int(np.argmin(np.abs(diversities - (threshold if threshold is not None else 1.0))))
    return {
        "diversity_threshold": threshold_or_nan(threshold),
        "threshold_strict": threshold_or_nan(result.threshold_at(strict_z)),
        "threshold_share": threshold_or_nan(result.share_threshold(0.95)),
        "gap_zero_max": np.abs(result.gap[:, 0]).max() if diversities[0] == 0 else math.nan,
        "gap_at_threshold": gap_mean[at],
        "sd_at_threshold": gap_sd[at],
        "exact_at_threshold": exact[at],
        "first_share_at_threshold": result.ranked_first_share[at],
        "margin_at_threshold": gap_mean[at] - z * gap_sd[at],
        "gap_full": gap_mean[-1],
        "anchor_full": result.anchor_worth[:, -1].mean(),
        "hitchhiker_full": result.hitchhiker_worth[:, -1].mean(),
        "anchor_first_mean": result.anchor_worth[:, 0].mean(),
        "anchor_first_sd": result.anchor_worth[:, 0].std(ddof=1),
        "hitchhiker_first_mean": result.hitchhiker_worth[:, 0].mean(),
        "max_gap_error": np.abs(gap_mean - exact).max(),
    }


def co_retrieval_rows(result: CoRetrievalResult, z: float, strict_z: float) -> list[dict[str, Any]]:
    """One row per tested diversity: the gap's mean and sd over seeds, the exact gap, the bounds
    ``mean - z sd`` and ``mean - strict_z sd``, the share of seeds ranking the anchor first, and
    whether each criterion separates the pair there."""
    gap_mean, gap_sd = result.gap.mean(axis=0), result.gap.std(axis=0, ddof=1)
    exact = result.exact_gap.mean(axis=0)
    columns = zip(
        result.diversities,
        gap_mean,
        gap_sd,
        exact,
        result.ranked_first_share,
        result.separated_at(z),
        result.separated_at(strict_z),
    )
    return [
        {
            "diversity": d,
            "gap_mean": m,
            "gap_sd": s,
            "exact_gap": e,
            f"mean - {z:g} sd": m - z * s,
            f"mean - {strict_z:g} sd": m - strict_z * s,
            "anchor_first_share": f,
            f"separated_z{z:g}": bool(a),
            f"separated_z{strict_z:g}": bool(b),
        }
        for d, m, s, e, f, a, b in columns
    ]


def sensitivity_values(by_kind: dict[str, list[dict[str, Any]]], z: float) -> dict[str, float]:
    """The numbers the chapter states about :func:`threshold_sensitivity_by_kind`'s rows, read by
    kind: the range of the ``z`` threshold over the other base seeds and over all base seeds (with
    its sd and count), its range over the few-seed runs, and the thresholds (and the depth row's
    pair rate) of the two other worlds."""
    key = f"threshold_z{z:g}"
    (headline,), (depth_row,), (pair_row,) = by_kind["headline"], by_kind["depth"], by_kind["pair_rate"]
    other = [row[key] for row in by_kind["other_seeds"]]
    few = [row[key] for row in by_kind["few_seeds"]]
    all_base = [headline[key], *other]
    return {
        "other_seed_low": min(other) if other else math.nan,
        "other_seed_high": max(other) if other else math.nan,
        "threshold_min": float(np.nanmin(all_base)),
        "threshold_max": float(np.nanmax(all_base)),
        "threshold_sd": float(np.nanstd(all_base, ddof=1)) if len(all_base) > 1 else math.nan,
        "n_base_seeds": len(all_base),
        "n_other_seeds": len(other),
        "few_low": min(few),
        "few_high": max(few),
        "n_few": len(few),
        "threshold_depth": depth_row[key],
        "pair_rate_depth": depth_row["pair_rate"],
        "threshold_pair_rate": pair_row[key],
    }
