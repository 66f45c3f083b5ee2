"""The theory check: Memory Worth converges to the exact ``p+`` at rate ``1/sqrt(n)``.

In a stationary world with uniform retrieval every assumption of the convergence theorem holds,
``p+`` is exact (:func:`~forgetting.worlds.model.p_plus_uniform`), and each memory's outcomes are
i.i.d. Bernoulli(``p+``): the error of Memory Worth after ``t`` episodes is predicted, not fitted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import raise_problems
from ..progress import progress
from ..worth import memory_worth
from ..worth.discounted import discount_problem, discounted_counters
from .model import (
    FloatArray,
    check_checkpoints,
    check_n_seeds,
    check_world,
    episodes_to_checkpoints,
    loglog_slope,
    p_plus_uniform,
    seed_streams,
)

__all__ = ["TheoryWorld", "TheoryResult", "theory_check", "DiscountedTheoryResult", "discounted_theory_check"]


@dataclass(frozen=True)
class TheoryWorld:
    """A stationary world where ``p+(m)`` is known exactly, to check ``MW -> p+`` at rate ``1/sqrt(n)``.

    Memories have utilities ``Uniform(0, 1)``; each episode retrieves ``k`` uniformly;
    ``Pr[success] = mean utility of the retrieved set``; ``p+`` from :func:`p_plus_uniform`
    (checked against :func:`p_plus_by_enumeration`). All assumptions of the convergence theorem
    hold: stationarity, every memory retrieved infinitely often, retrieval independent of
    outcomes. Each memory's outcomes are i.i.d. Bernoulli(``p+``), so the mean absolute error
    after ``t`` episodes is close to ``sqrt(2/pi) * sqrt(p+ (1 - p+) / (t k / n))``.

    Attributes
    ----------
    n_memories : int, default 20
    retrieved_per_episode : int, default 4
        ``k``.
    checkpoints : tuple of int
        Episode counts at which ``|MW - p+|`` is recorded (log-spaced by default); the run ends
        at the last one.
    """

    n_memories: int = 20
    retrieved_per_episode: int = 4
    checkpoints: tuple[int, ...] = (100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000)

    def __post_init__(self) -> None:
        check_world(
            self,
            {
                "n_memories": ("int", 2, 10**7),
                "retrieved_per_episode": (
                    "int",
                    1,
                    self.n_memories - 1 if isinstance(self.n_memories, int) else 1,
                ),
            },
        )
        object.__setattr__(self, "checkpoints", check_checkpoints(self.checkpoints, 10**8))
        if self.checkpoints[0] == 0:
            raise ValueError("TheoryWorld: checkpoints must be >= 1 (the error at 0 episodes is the prior's)")

    @property
    def n_episodes(self) -> int:
        """Episodes in a run: the last checkpoint."""
        return self.checkpoints[-1]


@dataclass(frozen=True)
class TheoryResult:
    """``mean_abs_error[s, j]``: mean over memories of ``|MW - p+|`` at ``checkpoints[j]`` in seed ``s``."""

    world: TheoryWorld
    checkpoints: np.ndarray
    utilities: np.ndarray  # (seeds, memories)
    p_plus: np.ndarray  # (seeds, memories), exact
    worth: np.ndarray  # (seeds, memories), at the last checkpoint
    mean_abs_error: np.ndarray  # (seeds, checkpoints)
    max_abs_error: np.ndarray  # (seeds, checkpoints)
    predicted_error: np.ndarray  # (checkpoints,), the normal approximation, averaged over seeds

    @property
    def slope(self) -> float:
        """Log-log slope of the seed-averaged mean absolute error against episodes (expect -0.5)."""
        return loglog_slope(self.checkpoints, self.mean_abs_error.mean(axis=0))


def _theory_run(world: TheoryWorld, seed: Any) -> tuple[FloatArray, ...]:
    rng = np.random.default_rng(seed)
    n, k = world.n_memories, world.retrieved_per_episode
    utilities = rng.uniform(0.0, 1.0, n)
    p_plus = p_plus_uniform(utilities, k)
    successes, failures = np.zeros(n), np.zeros(n)
    mean_err, max_err = [], []
    for _ in episodes_to_checkpoints(rng, utilities, k, world.checkpoints, successes, failures):
        error = np.abs(memory_worth(successes, failures) - p_plus)
        mean_err.append(error.mean())
        max_err.append(error.max())
    return utilities, p_plus, memory_worth(successes, failures), np.array(mean_err), np.array(max_err)


def theory_check(world: TheoryWorld = TheoryWorld(), n_seeds: int = 10, seed: int = 0) -> TheoryResult:
    """Run the theory world for ``n_seeds`` seeds; see :class:`TheoryWorld`.

    Invariant checked by the tests: the slope of the mean error against episodes tends to
    ``-1/2`` and the error follows the normal approximation ``predicted_error``.
    """
    check_n_seeds(n_seeds)
    runs = [_theory_run(world, child) for child in progress(seed_streams(seed, n_seeds), f"{n_seeds} seeds")]
    utilities, p_plus, worth, mean_err, max_err = (np.stack(parts) for parts in zip(*runs))
    checkpoints = np.array(world.checkpoints)
    per_memory = p_plus * (1 - p_plus)
    retrievals = checkpoints * world.retrieved_per_episode / world.n_memories
    predicted = np.sqrt(2 / np.pi) * np.sqrt(per_memory[:, None, :] / retrievals[None, :, None]).mean(
        axis=(0, 2)
    )
    return TheoryResult(world, checkpoints, utilities, p_plus, worth, mean_err, max_err, predicted)


@dataclass(frozen=True)
class DiscountedTheoryResult:
    """The theory world seen by the plain and the discounted estimator on the *same* episodes.

    ``mean_abs_error[s, j]`` is the plain estimator's mean ``|MW - p+|`` (identical to
    :func:`theory_check`'s), ``discounted_error[s, j]`` the same for counters discounted by
    ``discount`` per episode, at ``checkpoints[j]``. ``predicted_floor`` is the normal
    approximation of the discounted error once the start has been forgotten: each memory is
    retrieved with probability ``r = k / n`` per episode, so its discounted counters hold an
    effective ``r (1 + gamma) / (1 - gamma)`` outcomes, whatever the episode count.
    """

    world: TheoryWorld
    discount: float
    checkpoints: np.ndarray
    p_plus: np.ndarray  # (seeds, memories), exact
    mean_abs_error: np.ndarray  # (seeds, checkpoints), plain estimator
    discounted_error: np.ndarray  # (seeds, checkpoints), discounted estimator
    predicted_floor: float

    @property
    def effective_outcomes(self) -> float:
        """Outcomes a discounted memory effectively remembers: ``r (1 + gamma) / (1 - gamma)``."""
        rate = self.world.retrieved_per_episode / self.world.n_memories
        return math.inf if self.discount == 1 else rate * (1 + self.discount) / (1 - self.discount)


def _discounted_theory_run(world: TheoryWorld, discount: float, seed: Any) -> tuple[FloatArray, ...]:
    # Same draws, in the same order, as _theory_run: the plain errors equal theory_check's.
    rng = np.random.default_rng(seed)
    n, k = world.n_memories, world.retrieved_per_episode
    utilities = rng.uniform(0.0, 1.0, n)
    p_plus = p_plus_uniform(utilities, k)
    successes, failures = np.zeros(n), np.zeros(n)
    rows, wins, plain, discounted = [], [], [], []
    for _, retrieved, outcomes in episodes_to_checkpoints(
        rng, utilities, k, world.checkpoints, successes, failures
    ):
        rows.append(retrieved)
        wins.append(outcomes)
        plain.append(np.abs(memory_worth(successes, failures) - p_plus).mean())
        pos, neg = discounted_counters(np.concatenate(rows), np.concatenate(wins), discount, n)
        discounted.append(np.abs(memory_worth(pos, neg) - p_plus).mean())
    return p_plus, np.array(plain), np.array(discounted)


def discounted_theory_check(
    world: TheoryWorld = TheoryWorld(), discount: float = 0.99, n_seeds: int = 10, seed: int = 0
) -> DiscountedTheoryResult:
    """The theory world under the discounted estimator (:class:`forgetting.worth.DiscountedMemoryWorth`).

    Same seeds and episodes as :func:`theory_check`; the discounted counters come from
    :func:`forgetting.worth.discounted_counters`. With ``discount < 1`` the error stops
    shrinking at about ``predicted_floor``: the price of tracking a changing world is losing
    the almost-sure convergence in a stationary one. ``discount = 1`` is the plain estimator.
    """
    check_n_seeds(n_seeds)
    raise_problems([discount_problem(discount)])
    runs = [
        _discounted_theory_run(world, discount, child)
        for child in progress(seed_streams(seed, n_seeds), f"{n_seeds} seeds")
    ]
    p_plus, plain, discounted = (np.stack(parts) for parts in zip(*runs))
    rate = world.retrieved_per_episode / world.n_memories
    effective = math.inf if discount == 1 else rate * (1 + discount) / (1 - discount)
    floor = float(np.sqrt(2 / np.pi) * np.sqrt(p_plus * (1 - p_plus) / effective).mean())
    return DiscountedTheoryResult(
        world, float(discount), np.array(world.checkpoints), p_plus, plain, discounted, floor
    )
