"""Experiment 4 when the anchor alone decides the outcome: both members of the pair score high.

The regime the paper describes for its co-retrieval experiment: a useful anchor and a useless
hitchhiker that are always retrieved together both end high-value and cannot be told apart by
their worth class. This module gives the outcome model, the exact ``p+`` of the pair against
the pair-breaking share, and the share at which the hitchhiker stops being high-value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validate import raise_problems, real_problem
from ...worth import DEFAULT_HIGH_THRESHOLD, add_episodes, memory_worth
from .hitchhiker import (
    ANCHOR,
    CO_RETRIEVAL_N_SEEDS,
    HITCHHIKER,
    check_pair_world,
    effective_pair_rate,
    pair_draws,
    threshold_or_nan,
)
from .model import FloatArray, check_n_seeds, seed_streams, separated

__all__ = [
    "AnchorDecidesWorld",
    "AnchorDecidesResult",
    "anchor_decides_p_plus",
    "anchor_decides_regime_end",
    "anchor_decides_experiment",
    "regime_values",
    "regime_rows",
]


@dataclass(frozen=True)
class AnchorDecidesWorld:
    """Experiment 4 with an outcome that the anchor alone decides.

    Retrieval as in :class:`CoRetrievalWorld` (each episode a pair episode with probability
    ``pair_rate``, default ``k / n``; in a pair episode the pair is broken with probability
    ``d`` and a fair coin keeps the anchor or the hitchhiker alone), with the same streams
    read in the same order (:func:`~forgetting.studies.worlds.hitchhiker.pair_episodes`), but the
    outcome of an episode is

    ``Pr[success] = p_hi`` if the anchor is in the retrieved set, else ``p_lo``,

    with ``p_hi = anchor_success`` and ``p_lo = other_success``: the anchor is needed, nothing
    else matters. While the pair always travels together both memories see only anchor
    episodes, so both converge to ``p_hi`` (:func:`anchor_decides_p_plus`) and are high-value
    when ``p_hi >= high_threshold``. The diversities tested are ``i / diversity_steps`` for
    ``i = 0 .. diversity_steps``.

    Attributes
    ----------
    n_memories : int, default 100
    retrieved_per_episode : int, default 10
    n_episodes : int, default 10_000
    pair_rate : float or None, default None (= k / n)
    anchor_success : float, default 0.9
        ``p_hi``, success probability of an episode that retrieves the anchor.
    other_success : float, default 0.2
        ``p_lo``, success probability of an episode without the anchor; ``< anchor_success``.
    high_threshold : float, default :data:`~forgetting.worth.DEFAULT_HIGH_THRESHOLD`
        Worth at or above which a memory counts as high-value.
    diversity_steps : int, default 50
    """

    n_memories: int = 100
    retrieved_per_episode: int = 10
    n_episodes: int = 10_000
    pair_rate: float | None = None
    anchor_success: float = 0.9
    other_success: float = 0.2
    high_threshold: float = DEFAULT_HIGH_THRESHOLD
    diversity_steps: int = 50

    def __post_init__(self) -> None:
        check_pair_world(
            self,
            {
                "anchor_success": ("real", 0.0, 1.0),
                "other_success": ("real", 0.0, 1.0),
                "high_threshold": ("real", 0.0, 1.0),
                "diversity_steps": ("int", 1, 10_000),
            },
        )
        if not self.other_success < self.anchor_success:
            raise ValueError(
                "AnchorDecidesWorld: other_success must be < anchor_success (the anchor is the "
                f"useful memory), got other_success={self.other_success!r} and "
                f"anchor_success={self.anchor_success!r}"
            )

    @property
    def diversities(self) -> tuple[float, ...]:
        """``i / diversity_steps`` for ``i = 0 .. diversity_steps``."""
        return tuple(i / self.diversity_steps for i in range(self.diversity_steps + 1))

    @property
    def effective_pair_rate(self) -> float:
        """``pair_rate``, or ``k / n`` when it is ``None``."""
        return effective_pair_rate(self)


def anchor_decides_p_plus(
    anchor_success: float, other_success: float, diversity: float
) -> tuple[float, float]:
    """Exact ``(p+(anchor), p+(hitchhiker))`` when the anchor alone decides the outcome.

    Every episode with the anchor succeeds with ``p_hi``, so ``p+(anchor) = p_hi`` at every
    diversity ``d``. The hitchhiker is in the intact pair episodes (share ``1 - d``, success
    ``p_hi``) and in those where it is kept alone (share ``d / 2``, success ``p_lo``)::

        p+(hitchhiker) = ((1 - d) p_hi + (d / 2) p_lo) / (1 - d / 2)

    which falls from ``p_hi`` at ``d = 0`` to ``p_lo`` at ``d = 1``.

    Raises
    ------
    ValueError
        Unless the two probabilities and ``diversity`` are real numbers in [0, 1].
    """
    raise_problems(
        [
            real_problem("anchor_success", anchor_success, 0.0, 1.0),
            real_problem("other_success", other_success, 0.0, 1.0),
            real_problem("diversity", diversity, 0.0, 1.0),
        ]
    )
    d = float(diversity)
    hitchhiker = ((1 - d) * anchor_success + d / 2 * other_success) / (1 - d / 2)
    return float(anchor_success), float(hitchhiker)


def anchor_decides_regime_end(
    anchor_success: float, other_success: float, high_threshold: float
) -> float | None:
    """Diversity at which the hitchhiker's exact ``p+`` falls to ``high_threshold`` (``t``).

    Solving ``p+(hitchhiker) = t`` in :func:`anchor_decides_p_plus`::

        d* = 2 (p_hi - t) / (2 p_hi - t - p_lo)

    Below ``d*`` both memories converge to high-value; above it the hitchhiker does not. ``0.0``
    when ``p_hi < t`` (the pair is never high-value), ``None`` when ``p_lo >= t`` (the
    hitchhiker stays high-value even with the pair always broken).

    Raises
    ------
    ValueError
        Unless all three are real numbers in [0, 1] and ``other_success < anchor_success``.
    """
    raise_problems(
        [
            real_problem("anchor_success", anchor_success, 0.0, 1.0),
            real_problem("other_success", other_success, 0.0, 1.0),
            real_problem("high_threshold", high_threshold, 0.0, 1.0),
        ]
    )
    if not other_success < anchor_success:
        raise ValueError(
            f"other_success must be < anchor_success, got other_success={other_success!r} "
            f"and anchor_success={anchor_success!r}"
        )
    if anchor_success < high_threshold:
        return 0.0
    if other_success >= high_threshold:
        return None
    t = float(high_threshold)
    return 2 * (anchor_success - t) / (2 * anchor_success - t - other_success)


@dataclass(frozen=True)
class AnchorDecidesResult:
    """:func:`anchor_decides_experiment` over seeds and diversities (worth arrays: seeds x diversities)."""

    world: AnchorDecidesWorld
    diversities: np.ndarray  # (diversities,)
    anchor_worth: np.ndarray  # (seeds, diversities)
    hitchhiker_worth: np.ndarray
    exact_anchor: np.ndarray  # (diversities,): p+(anchor), exact
    exact_hitchhiker: np.ndarray

    @property
    def gap(self) -> np.ndarray:
        """``MW(anchor) - MW(hitchhiker)``, shape (seeds, diversities)."""
        value: FloatArray = self.anchor_worth - self.hitchhiker_worth
        return value

    @property
    def both_high_share(self) -> np.ndarray:
        """Per diversity, the share of seeds in which both memories' worth is ``>= high_threshold``."""
        t = self.world.high_threshold
        value: FloatArray = ((self.anchor_worth >= t) & (self.hitchhiker_worth >= t)).mean(axis=0)
        return value

    @property
    def exact_regime_end(self) -> float | None:
        """:func:`anchor_decides_regime_end` for this world."""
        w = self.world
        return anchor_decides_regime_end(w.anchor_success, w.other_success, w.high_threshold)

    @property
    def regime_end_by_seed(self) -> np.ndarray:
        """Per seed, the smallest tested diversity from which on the hitchhiker's worth is below
        ``high_threshold`` at every larger tested diversity (NaN if it never is)."""
        below = self.hitchhiker_worth < self.world.high_threshold
        ends = np.full(below.shape[0], np.nan)
        for s in range(below.shape[0]):
            for j in range(below.shape[1]):
                if below[s, j:].all():
                    ends[s] = self.diversities[j]
                    break
        return ends

    def threshold_at(self, z: float) -> float | None:
        """Smallest tested diversity from which on every tested diversity is :func:`separated`."""
        flags = [separated(self.gap[:, j], z) for j in range(self.diversities.size)]
        for j in range(len(flags)):
            if all(flags[j:]):
                return float(self.diversities[j])
        return None


def _anchor_decides_seed(world: AnchorDecidesWorld, seed: Any) -> list[tuple[float, float]]:
    """One seed at every diversity, from one draw of its streams: row ``j`` is the run at
    ``world.diversities[j]`` (the pair episodes of
    :func:`~forgetting.studies.worlds.hitchhiker.pair_episodes`, outcome ``p_hi`` or ``p_lo``)."""
    draws = pair_draws(world, seed)
    rows = []
    for diversity in world.diversities:
        _, retrieved, outcome_draws = draws.at(diversity)
        has_anchor = (retrieved == ANCHOR).any(axis=1)
        outcomes = outcome_draws < np.where(has_anchor, world.anchor_success, world.other_success)
        successes, failures = np.zeros(world.n_memories), np.zeros(world.n_memories)
        add_episodes(successes, failures, retrieved, outcomes)
        worth = memory_worth(successes, failures)
        rows.append((float(worth[ANCHOR]), float(worth[HITCHHIKER])))
    return rows


def anchor_decides_experiment(
    world: AnchorDecidesWorld = AnchorDecidesWorld(), n_seeds: int = CO_RETRIEVAL_N_SEEDS, seed: int = 0
) -> AnchorDecidesResult:
    """The anchor-decides regime at every diversity of ``world``; common random numbers per seed.

    Seed ``s`` reads the streams of child ``s`` of ``seed``
    (:func:`~forgetting.studies.worlds.hitchhiker.pair_episodes`) at every diversity, drawn once
    (:func:`~forgetting.studies.worlds.hitchhiker.pair_draws`), so a seed's curve over diversity is smooth
    and its regime end (:attr:`AnchorDecidesResult.regime_end_by_seed`) is well defined; a run of
    ``E`` episodes is the start of a longer one.
    """
    check_n_seeds(n_seeds, minimum=2)
    children = seed_streams(seed, n_seeds)
    diversities = world.diversities
    runs = np.array([_anchor_decides_seed(world, child) for child in children])
    exact = np.array(
        [anchor_decides_p_plus(world.anchor_success, world.other_success, d) for d in diversities]
    )
    return AnchorDecidesResult(
        world, np.array(diversities), runs[:, :, 0], runs[:, :, 1], exact[:, 0], exact[:, 1]
    )


def regime_values(regime: AnchorDecidesResult, z: float) -> dict[str, float]:
    """The numbers the chapter states about an anchor-decides run.

    The grid (its step and size), the closed-form end of the both-high regime and the per-seed
    ends (mean, sd, range, and the number of seeds in which the regime ends on the grid); at
    ``d = 0`` the seeds with both memories high-value, both worths and their largest absolute
    gap; the hitchhiker's worth with the pair always broken; the largest distance between a mean
    worth and its exact ``p+``; and the diversity from which on the ``z`` criterion separates
    the pair (NaN where a value does not exist).
    """
    world = regime.world
    n_seeds = regime.anchor_worth.shape[0]
    ends = regime.regime_end_by_seed
    found = ends[~np.isnan(ends)]
    return {
        "regime_step": 1 / world.diversity_steps,
        "n_regime_diversities": len(regime.diversities),
        "regime_end_exact": threshold_or_nan(regime.exact_regime_end),
        "regime_end_mean": found.mean() if found.size else math.nan,
        "regime_end_sd": found.std(ddof=1) if found.size > 1 else math.nan,
        "regime_end_min": found.min() if found.size else math.nan,
        "regime_end_max": found.max() if found.size else math.nan,
        "regime_end_seeds": int(found.size),
        "regime_both_high_zero": int(round(regime.both_high_share[0] * n_seeds)),
        "regime_anchor_zero_mean": regime.anchor_worth[:, 0].mean(),
        "regime_anchor_zero_sd": regime.anchor_worth[:, 0].std(ddof=1),
        "regime_hitchhiker_zero_mean": regime.hitchhiker_worth[:, 0].mean(),
        "regime_gap_zero_max": np.abs(regime.gap[:, 0]).max(),
        "regime_hitchhiker_full_mean": regime.hitchhiker_worth[:, -1].mean(),
        "regime_hitchhiker_full_sd": regime.hitchhiker_worth[:, -1].std(ddof=1),
        "regime_max_error": max(
            np.abs(regime.anchor_worth.mean(axis=0) - regime.exact_anchor).max(),
            np.abs(regime.hitchhiker_worth.mean(axis=0) - regime.exact_hitchhiker).max(),
        ),
        "regime_separation": threshold_or_nan(regime.threshold_at(z)),
    }


def regime_rows(regime: AnchorDecidesResult) -> list[dict[str, Any]]:
    """One row per tested diversity: each memory's worth (mean and sd over seeds), their exact
    ``p+``, the share of seeds in which both are high-value, and the number of seeds."""
    n_seeds = regime.anchor_worth.shape[0]
    columns = zip(
        regime.diversities,
        regime.anchor_worth.T,
        regime.hitchhiker_worth.T,
        regime.exact_anchor,
        regime.exact_hitchhiker,
        regime.both_high_share,
    )
    return [
        {
            "diversity": d,
            "anchor_mw_mean": a.mean(),
            "anchor_mw_sd": a.std(ddof=1),
            "hitchhiker_mw_mean": h.mean(),
            "hitchhiker_mw_sd": h.std(ddof=1),
            "exact_anchor": ea,
            "exact_hitchhiker": eh,
            "both_high_share": b,
            "seeds": n_seeds,
        }
        for d, a, h, ea, eh, b in columns
    ]
