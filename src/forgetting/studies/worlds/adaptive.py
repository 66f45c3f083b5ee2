"""The theorem's real case: retrieval that depends on the history, with its condition still holding.

The convergence theorem does not need retrieval to be independent of the past. It needs

    Pr[y_t = +1 | F_{t-1}, m in M_t] = p+(m)        (the same for every history F_{t-1}),

plus infinite exploration (a rate that is the same after every history is all the stationarity the
argument uses: under this reading of the theorem's conditions, stationarity adds nothing).
:class:`AdaptiveWorld` is built so that exactly this holds while retrieval is as history-dependent
as in Experiment 3: each episode retrieves one memory, drawn by a softmax over the *current*
Memory Worth, and succeeds with probability ``u_m``. So ``p+(m) = u_m`` exactly, but how often,
and after which outcomes, a memory is tried depends on every earlier outcome. A memory's outcomes
are then no longer a fixed-size i.i.d. sample: the theorem's martingale argument is what
guarantees ``MW -> u_m``. That the standardised error ``z = (MW - u) sqrt(R) / sqrt(u (1 - u))``
(``R`` retrievals) tends to a standard normal (its mean to 0, its mean absolute value to
``sqrt(2/pi)``) as every ``R`` grows is not implied by that almost-sure convergence: it is a
martingale central limit theorem's prediction, which :func:`adaptive_summary` checks numerically.
At finite ``R`` an adaptively sampled mean is biased downward: a memory that had bad luck is tried
less often, so its bad luck is corrected more slowly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...worth import DEFAULT_PRIOR
from ..progress import progress
from .model import (
    OUTCOME_STREAM,
    RETRIEVAL_STREAM,
    check_checkpoints,
    check_n_seeds,
    check_world,
    seed_streams,
    substream,
)
from .theory import PredictionCheck, prediction_check

__all__ = [
    "AdaptiveWorld",
    "AdaptiveResult",
    "adaptive_check",
    "NORMAL_MEAN_ABS",
    "AdaptiveSummary",
    "adaptive_summary",
]


@dataclass(frozen=True)
class AdaptiveWorld:
    """One memory per episode, by ``softmax(MW / temperature)``; success with probability ``u_m``.

    Utilities are ``Uniform(0, 1)``. The softmax puts a probability of at least
    ``exp(-1 / temperature) / n_memories`` on every memory in every episode, so every memory is
    retrieved infinitely often (the exploration assumption).

    Attributes
    ----------
    n_memories : int, default 10
    temperature : float, default 0.25
        Softmax temperature over Memory Worth in [0, 1].
    checkpoints : tuple of int
        Episode counts at which the errors are recorded; the run ends at the last one.
    """

    n_memories: int = 10
    temperature: float = 0.25
    checkpoints: tuple[int, ...] = (100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000)

    def __post_init__(self) -> None:
        check_world(self, {"n_memories": ("int", 2, 10**4), "temperature": ("real", 1e-3, 1e3)})
        object.__setattr__(self, "checkpoints", check_checkpoints(self.checkpoints, 10**7))
        if self.checkpoints[0] == 0:
            raise ValueError(
                "AdaptiveWorld: checkpoints must be >= 1 (the error at 0 episodes is the prior's)"
            )


@dataclass(frozen=True)
class AdaptiveResult:
    """Per seed ``s``, checkpoint ``j`` and memory ``m``: retrievals and the standardised error.

    ``z[s, j, m] = (MW - u) sqrt(R) / sqrt(u (1 - u))`` where ``R >= 1``, NaN where a memory has
    not been retrieved yet.
    """

    world: AdaptiveWorld
    utilities: np.ndarray  # (seeds, memories)
    retrievals: np.ndarray  # (seeds, checkpoints, memories)
    error: np.ndarray  # (seeds, checkpoints, memories), MW - u (MW is the prior at R = 0)
    z: np.ndarray  # (seeds, checkpoints, memories)

    @property
    def mean_z(self) -> np.ndarray:
        """Per seed and checkpoint, the mean standardised error over retrieved memories (bias)."""
        return np.asarray(np.nanmean(self.z, axis=2))

    @property
    def mean_abs_z(self) -> np.ndarray:
        """Per seed and checkpoint, the mean ``|z|`` over retrieved memories (``sqrt(2/pi)`` in the limit)."""
        return np.asarray(np.nanmean(np.abs(self.z), axis=2))

    @property
    def mean_abs_error(self) -> np.ndarray:
        """Per seed and checkpoint, the mean ``|MW - u|`` over all memories."""
        return np.asarray(np.abs(self.error).mean(axis=2))


#: ``E|Z| = sqrt(2 / pi)`` for a standard normal ``Z``: the limit of the mean ``|z|``.
NORMAL_MEAN_ABS = math.sqrt(2 / math.pi)


#: Episodes whose random draws are made at once (per seed: Gumbel keys, then outcome coins). No
#: result depends on it: keys and coins come from separate streams, ``n`` keys and one coin per episode.
BLOCK = 4096


def _adaptive_runs(world: AdaptiveWorld, seeds: list[np.random.SeedSequence]) -> tuple[np.ndarray, ...]:
    """All seeds side by side; seed ``s`` reads only its own streams, so results do not depend
    on which other seeds run with it. Utilities come from ``default_rng(seed)``; episode ``t``
    reads the ``t``-th row of ``n`` Gumbel keys of the seed's retrieval stream and the ``t``-th
    uniform coin of its outcome stream (:func:`~forgetting.studies.worlds.model.substream`). Each stream
    is read a fixed amount per episode, so the run up to an episode depends neither on the
    checkpoints nor on :data:`BLOCK`."""
    n, rows = world.n_memories, np.arange(len(seeds))
    utilities = np.stack([np.random.default_rng(child).uniform(0.0, 1.0, n) for child in seeds])
    keys = [substream(child, RETRIEVAL_STREAM) for child in seeds]
    tosses = [substream(child, OUTCOME_STREAM) for child in seeds]
    successes = np.zeros((len(seeds), n), dtype=np.int64)
    retrievals = np.zeros((len(seeds), n), dtype=np.int64)
    worth = np.full((len(seeds), n), DEFAULT_PRIOR)
    counts, errors = [], []
    marks, last, scale = set(world.checkpoints), world.checkpoints[-1], 1.0 / world.temperature
    for start in progress(range(0, last, BLOCK), f"{len(seeds)} seeds, blocks of {BLOCK} episodes"):
        size = min(BLOCK, last - start)
        gumbel = np.stack([rng.gumbel(size=(size, n)) for rng in keys], axis=1)  # (size, seeds, n)
        coins = np.stack([rng.random(size) for rng in tosses], axis=1)  # (size, seeds)
        for step in range(size):
            chosen = np.argmax(worth * scale + gumbel[step], axis=1)
            retrievals[rows, chosen] += 1
            successes[rows, chosen] += coins[step] < utilities[rows, chosen]
            worth[rows, chosen] = successes[rows, chosen] / retrievals[rows, chosen]
            if start + step + 1 in marks:
                counts.append(retrievals.copy())
                errors.append(worth - utilities)
    return utilities, np.stack(counts, axis=1), np.stack(errors, axis=1)


def adaptive_check(
    world: AdaptiveWorld = AdaptiveWorld(), n_seeds: int = 10, seed: int = 0
) -> AdaptiveResult:
    """Run :class:`AdaptiveWorld` for ``n_seeds`` seeds (children of ``SeedSequence(seed)``)."""
    check_n_seeds(n_seeds)
    utilities, retrievals, error = _adaptive_runs(world, seed_streams(seed, n_seeds))
    spread = np.sqrt(utilities * (1 - utilities))[:, None, :]
    root = np.sqrt(retrievals)
    z = np.full(error.shape, np.nan)
    np.divide(error * root, spread, out=z, where=retrievals > 0)
    return AdaptiveResult(world, utilities, retrievals, error, z)


@dataclass(frozen=True)
class AdaptiveSummary:
    """The second check of the theory chapter, read off an :class:`AdaptiveResult`.

    ``bias`` compares the mean standardised error with 0 and ``spread`` the mean ``|z|`` with
    :data:`NORMAL_MEAN_ABS`, checkpoint by checkpoint, seeds as the unit
    (:func:`~forgetting.studies.worlds.theory.prediction_check`); ``values`` are the numbers the
    prose quotes (glue keys) and ``rows`` the table, one row per checkpoint.
    """

    result: AdaptiveResult
    bias: PredictionCheck
    spread: PredictionCheck
    values: dict[str, Any]
    rows: list[dict[str, Any]]

    def failed_claims(self) -> list[str]:
        """The prose's claims about this run that do not hold (empty when all do): mean ``|z|``
        stays within the tolerance of ``sqrt(2/pi)`` at every checkpoint, the mean ``z`` at the
        first checkpoint is below zero by more than the tolerance, and at the last it is within it."""
        failed = []
        if not self.spread.passed:
            failed.append(f"mean |z| leaves sqrt(2/pi): z = {self.spread.z.round(2).tolist()}")
        if not self.bias.z[0] < -self.bias.tolerance:
            failed.append("the early bias is not clearly below zero")
        if not abs(self.bias.z[-1]) <= self.bias.tolerance:
            failed.append("the bias has not faded by the last checkpoint")
        return failed


def adaptive_summary(result: AdaptiveResult) -> AdaptiveSummary:
    """Summarise an :func:`adaptive_check` run for the theory chapter (:class:`AdaptiveSummary`)."""
    bias = prediction_check(result.mean_z, np.zeros_like(result.mean_z))
    spread = prediction_check(result.mean_abs_z, np.full_like(result.mean_abs_z, NORMAL_MEAN_ABS))
    error = result.mean_abs_error.mean(axis=0)
    values: dict[str, Any] = {
        "adaptive_memories": result.world.n_memories,
        "adaptive_temperature": result.world.temperature,
        "normal_mean_abs": NORMAL_MEAN_ABS,
        "adaptive_abs_z_max": np.abs(spread.z).max(),
        "adaptive_error_first": error[0],
        "adaptive_error_last": error[-1],
        "adaptive_bias_first": bias.gap[0],
        "adaptive_bias_z_first": bias.z[0],
        "adaptive_bias_last": bias.gap[-1],
        "adaptive_bias_z_last": bias.z[-1],
        "adaptive_min_retrievals": result.retrievals[:, -1].min(),
    }
    rows = [
        {
            "episodes": int(c),
            "mean_z": g,
            "mean_z_se": e,
            "mean_abs_z": a,
            "mean_abs_error": m,
            "min_retrievals": int(r),
        }
        for c, g, e, a, m, r in zip(
            result.world.checkpoints,
            bias.gap,
            bias.se,
            result.mean_abs_z.mean(axis=0),
            error,
            result.retrievals.min(axis=(0, 2)),
        )
    ]
    return AdaptiveSummary(result, bias, spread, values, rows)
