"""The theory check: Memory Worth converges to the exact ``p+`` at rate ``1/sqrt(n)``.

In a stationary world with uniform retrieval every assumption of the convergence theorem holds,
``p+`` is exact (:func:`~forgetting.studies.worlds.model.p_plus_uniform`), and each memory's outcomes are
i.i.d. Bernoulli(``p+``). The check is therefore the law of large numbers for a Bernoulli mean
seen through the estimator's counters: the expected error after ``t`` episodes is computed
exactly (:func:`expected_abs_error`), not fitted, and the measured error is compared with it
at a tolerance derived from its own standard error (:func:`prediction_check`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validate import raise_problems, require_int
from ...worth import DEFAULT_PRIOR, WORTH_CLASSES, memory_worth, worth_class
from ...worth.discounted import discount_problem, discounted_counters
from ..progress import progress
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

__all__ = [
    "TheoryWorld",
    "TheoryResult",
    "theory_check",
    "expected_abs_error",
    "PredictionCheck",
    "prediction_check",
    "DiscountedTheoryResult",
    "discounted_theory_check",
    "class_plane",
    "ConvergenceSummary",
    "convergence_summary",
]

#: Retrieval counts less likely than this are left out of an exact expectation.
NEGLIGIBLE = 1e-30
#: Significant digits kept of an exact expectation (libm's exp/log may differ in the last bit).
EXPECTATION_DIGITS = 10


@dataclass(frozen=True)
class TheoryWorld:
    """A stationary world where ``p+(m)`` is known exactly, to check ``MW -> p+`` at rate ``1/sqrt(n)``.

    Memories have utilities ``Uniform(0, 1)``; each episode retrieves ``k`` uniformly;
    ``Pr[success] = mean utility of the retrieved set``; ``p+`` from :func:`p_plus_uniform`
    (checked against :func:`p_plus_by_enumeration`). All assumptions of the convergence theorem
    hold: stationarity, every memory retrieved infinitely often, and a success rate given
    ``m``'s retrieval that no history changes. Retrieval is uniform and independent of the
    past, so each memory's outcomes are i.i.d. Bernoulli(``p+``): its error after ``t`` episodes
    has the exact expectation :func:`expected_abs_error`, and the normal approximation
    ``sqrt(2/pi) * sqrt(p+ (1 - p+) / (t k / n))`` is close to it. The history-dependent case is
    :mod:`forgetting.studies.worlds.adaptive`.

    Attributes
    ----------
    n_memories : int, default 20
    retrieved_per_episode : int, default 4
        ``k``.
    checkpoints : tuple of int
        Episode counts at which ``|MW - p+|`` is recorded (log-spaced by default); the run ends
        at the last one. The errors at a checkpoint do not depend on the other checkpoints
        (each episode reads its own streams, :func:`~forgetting.studies.worlds.model.episodes_to_checkpoints`).
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
    """``mean_abs_error[s, j]``: mean over memories of ``|MW - p+|`` at ``checkpoints[j]`` in seed ``s``;
    ``mean_error[s, j]`` the same without the absolute value."""

    world: TheoryWorld
    checkpoints: np.ndarray
    utilities: np.ndarray  # (seeds, memories)
    p_plus: np.ndarray  # (seeds, memories), exact
    worth: np.ndarray  # (seeds, memories), at the last checkpoint
    mean_abs_error: np.ndarray  # (seeds, checkpoints)
    max_abs_error: np.ndarray  # (seeds, checkpoints)
    predicted_error: np.ndarray  # (checkpoints,), the normal approximation, averaged over seeds
    expected_error: np.ndarray  # (seeds, checkpoints), the exact expectation of mean_abs_error
    mean_error: np.ndarray  # (seeds, checkpoints), mean over memories of MW - p+ (signed: the bias)
    expected_mean_error: np.ndarray  # (seeds, checkpoints), its exact expectation (prior's share only)

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
    mean_err, max_err, signed = [], [], []
    for _ in episodes_to_checkpoints(seed, utilities, k, world.checkpoints, successes, failures):
        difference = memory_worth(successes, failures) - p_plus
        error = np.abs(difference)
        mean_err.append(error.mean())
        max_err.append(error.max())
        signed.append(difference.mean())
    worth = memory_worth(successes, failures)
    return utilities, p_plus, worth, np.array(mean_err), np.array(max_err), np.array(signed)


def theory_check(world: TheoryWorld = TheoryWorld(), n_seeds: int = 100, seed: int = 0) -> TheoryResult:
    """Run the theory world for ``n_seeds`` seeds; see :class:`TheoryWorld`.

    ``expected_error`` is the exact expectation of ``mean_abs_error`` seed by seed, and
    ``expected_mean_error`` that of the signed ``mean_error``; compare them with
    :func:`prediction_check` (the signed error is the sharper test of a systematic bias).
    ``predicted_error`` is the normal approximation.
    """
    check_n_seeds(n_seeds)
    runs = [_theory_run(world, child) for child in progress(seed_streams(seed, n_seeds), f"{n_seeds} seeds")]
    utilities, p_plus, worth, mean_err, max_err, signed = (np.stack(parts) for parts in zip(*runs))
    checkpoints = np.array(world.checkpoints)
    per_memory = p_plus * (1 - p_plus)
    retrievals = checkpoints * world.retrieved_per_episode / world.n_memories
    predicted = np.sqrt(2 / np.pi) * np.sqrt(per_memory[:, None, :] / retrievals[None, :, None]).mean(
        axis=(0, 2)
    )
    rate = world.retrieved_per_episode / world.n_memories
    # one call per checkpoint for every seed's memories; each seed's mean is of its own row
    errors = [expected_abs_error(p_plus, rate, int(c)) for c in checkpoints]
    expected = np.array([[error[s].mean() for error in errors] for s in range(n_seeds)])
    # E[MW - p+] = Pr[R = 0] (prior - p+): given R = r >= 1, S / r is unbiased
    never = np.array([math.exp(int(c) * math.log1p(-rate)) if rate < 1 else 0.0 for c in checkpoints])
    expected_signed = never[None, :] * (DEFAULT_PRIOR - p_plus).mean(axis=1)[:, None]
    return TheoryResult(
        world,
        checkpoints,
        utilities,
        p_plus,
        worth,
        mean_err,
        max_err,
        predicted,
        expected,
        signed,
        expected_signed,
    )


def _binomial_pmf(k: np.ndarray, n: Any, p: Any) -> np.ndarray:
    """``scipy.stats.binom.pmf(k, n, p)`` for ``k >= 1``, elementwise over the broadcast arguments,
    except below ``p = 2**-90``, where scipy overflows at the smallest normal float: there
    ``Pr[S = 1] = n p (1 - p)**(n - 1)`` is ``n p`` to within ``2**-60`` for every ``n <= 10**9``,
    and ``Pr[S >= 2] <= (n p)**2 < 2**-120`` lies below :data:`NEGLIGIBLE`, so it is taken as 0."""
    tiny = np.asarray(p) < 2.0**-90
    if tiny.any():
        first = np.asarray(np.where(np.asarray(k) == 1, np.asarray(n) * p, 0.0), dtype=np.float64)
        return first if tiny.all() else np.where(tiny, first, _binomial_pmf(k, n, np.where(tiny, 0.5, p)))
    from scipy.stats import binom  # imported here: scipy.stats takes a second to import

    return np.asarray(binom.pmf(k, n, p), dtype=np.float64)  # a ufunc: each element on its own


def _binomial_mad(r: np.ndarray, p: Any) -> np.ndarray:
    """De Moivre's ``E|S - r p|`` for ``S ~ Binomial(r, p)``, ``r >= 1``, ``0 < p < 1``:
    ``2 (j + 1) C(r, j + 1) p^(j + 1) (1 - p)^(r - j)`` with ``j = floor(r p)``, that is
    ``2 (j + 1) (1 - p) Pr[S = j + 1]``, the probability from :func:`_binomial_pmf` (see
    :func:`expected_abs_error` for why not ``exp`` of a sum of log-gammas). Elementwise over the
    broadcast ``r`` and ``p`` (a column of ``p`` against a row of ``r`` gives one row per ``p``)."""
    j = np.floor(r * p)
    return np.asarray(2 * (j + 1) * (1 - p) * _binomial_pmf(j + 1, r, p))


#: Elements of the (memories, retrieval counts) table :func:`expected_abs_error` builds at once.
TABLE_ELEMENTS = 1 << 18


def expected_abs_error(
    p_plus: np.ndarray, retrieval_rate: float, episodes: int, prior: float = DEFAULT_PRIOR
) -> np.ndarray:
    """Exact ``E|MW_t(m) - p+(m)|`` after ``t = episodes`` i.i.d. episodes, per memory.

    Memory ``m`` is retrieved in ``R ~ Binomial(t, q)`` episodes (``q = retrieval_rate``) and
    succeeds in ``S ~ Binomial(R, p+)`` of them, so ``MW = S / R`` (the ``prior`` when
    ``R = 0``) and ``E|MW - p+| = sum_r Pr[R = r] E|S - r p+| / r`` with de Moivre's closed form
    for the binomial mean absolute deviation. Terms with ``Pr[R = r] <= NEGLIGIBLE`` are left
    out (each adds at most its probability). Rounded to ``EXPECTATION_DIGITS`` significant digits.
    The terms of many memories are tabulated at once, one row per memory, and each row summed
    alone (``np.sum`` of a 1-d array): a memory's value does not depend on the others passed.
    """
    require_int("episodes", episodes, 0, 10**9)
    if not 0 < retrieval_rate <= 1:
        raise ValueError(f"retrieval_rate={retrieval_rate!r}; allowed: 0 < retrieval_rate <= 1")
    values = np.asarray(p_plus, dtype=float)
    if values.size and not ((values >= 0) & (values <= 1)).all():
        raise ValueError(f"p_plus={p_plus!r}; allowed: values in [0, 1]")
    r = np.arange(1, episodes + 1)
    # Pr[R = 0] = (1 - q)^t, which is 1 at t = 0 whatever q
    log_q0 = (
        0.0 if episodes == 0 else -math.inf if retrieval_rate == 1 else episodes * math.log1p(-retrieval_rate)
    )
    # Pr[R = r], not exp(gammaln(t + 1) - ...): a few ulp of error in log terms of size ~10 t move
    # that exp by ~t * 1e-14 relative, enough to flip a tenth digit on another CPU
    pmf = _binomial_pmf(r, episodes, retrieval_rate)
    keep = pmf > NEGLIGIBLE
    r, pmf = r[keep], pmf[keep]
    flat = values.ravel()
    spread = np.zeros(flat.size)
    inner = np.flatnonzero((flat > 0.0) & (flat < 1.0)) if r.size else np.empty(0, dtype=np.intp)
    step = max(1, TABLE_ELEMENTS // max(r.size, 1))
    for start in range(0, inner.size, step):
        rows = inner[start : start + step]
        terms = pmf * _binomial_mad(r, flat[rows, None]) / r
        spread[rows] = [float(np.sum(row)) for row in terms]
    out = math.exp(log_q0) * np.abs(prior - flat) + spread
    return np.asarray([float(f"{value:.{EXPECTATION_DIGITS}g}") for value in out]).reshape(values.shape)


@dataclass(frozen=True)
class PredictionCheck:
    """Measured against expected error per checkpoint, seeds as the unit of replication.

    ``gap[j]`` is the mean over seeds of (measured - expected), ``se[j]`` its standard error
    (sample sd over seeds / sqrt(seeds)), ``z = gap / se`` and ``tolerance`` the two-sided
    Student-t quantile at a family-wise false-alarm rate ``alpha`` over all checkpoints
    (Bonferroni). ``passed`` when every ``|z| <= tolerance``.
    """

    gap: np.ndarray
    se: np.ndarray
    z: np.ndarray
    tolerance: float
    alpha: float

    @property
    def passed(self) -> bool:
        """True when no checkpoint's measured error is further from its expectation than allowed."""
        return bool((np.abs(self.z) <= self.tolerance).all())


def prediction_check(measured: np.ndarray, expected: np.ndarray, alpha: float = 0.001) -> PredictionCheck:
    """Paired comparison of ``measured[s, j]`` with ``expected[s, j]`` (seeds ``s``, checkpoints ``j``)."""
    measured, expected = np.asarray(measured, dtype=float), np.asarray(expected, dtype=float)
    if measured.shape != expected.shape or measured.ndim != 2 or measured.shape[0] < 2:
        raise ValueError(
            f"measured and expected have shapes {measured.shape} and {expected.shape}; "
            "allowed: equal (seeds, checkpoints) shapes with at least 2 seeds"
        )
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r}; allowed: 0 < alpha < 1")
    seeds, checkpoints = measured.shape
    differences = measured - expected
    gap = differences.mean(axis=0)
    se = differences.std(axis=0, ddof=1) / math.sqrt(seeds)
    z = np.divide(gap, se, out=np.zeros_like(gap), where=se > 0)
    from scipy.stats import t as student_t

    tolerance = float(student_t.ppf(1 - alpha / (2 * checkpoints), seeds - 1))
    return PredictionCheck(gap, se, z, tolerance, alpha)


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
    # Same utilities and episode streams as _theory_run: the plain errors equal theory_check's.
    rng = np.random.default_rng(seed)
    n, k = world.n_memories, world.retrieved_per_episode
    utilities = rng.uniform(0.0, 1.0, n)
    p_plus = p_plus_uniform(utilities, k)
    successes, failures = np.zeros(n), np.zeros(n)
    rows, wins, plain, discounted = [], [], [], []
    for _, retrieved, outcomes in episodes_to_checkpoints(
        seed, utilities, k, world.checkpoints, successes, failures
    ):
        rows.append(retrieved)
        wins.append(outcomes)
        plain.append(np.abs(memory_worth(successes, failures) - p_plus).mean())
        pos, neg = discounted_counters(np.concatenate(rows), np.concatenate(wins), discount, n)
        discounted.append(np.abs(memory_worth(pos, neg) - p_plus).mean())
    return p_plus, np.array(plain), np.array(discounted)


def discounted_theory_check(
    world: TheoryWorld = TheoryWorld(), discount: float = 0.99, n_seeds: int = 100, seed: int = 0
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


#: The evidence volumes and rates of :func:`class_plane`'s default grid (log- and linear-spaced).
PLANE_VOLUMES = (0.5, 500.0, 200)
PLANE_RATES = (0.0, 1.0, 201)


def class_plane(
    volumes: tuple[float, float, int] = PLANE_VOLUMES, rates: tuple[float, float, int] = PLANE_RATES
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The taxonomy over the plane of evidence volume and rate, with the library's default thresholds.

    ``volumes`` is ``(first, last, count)`` of a geometric grid, ``rates`` the same of a linear
    one. Returns the meshgrids ``(volume, rate)`` and ``codes``, each point's class as its index
    in :data:`forgetting.worth.WORTH_CLASSES` (the order :func:`forgetting.worth.worth_class`
    checks them in).
    """
    grid_v, grid_r = np.meshgrid(np.geomspace(*volumes), np.linspace(*rates))
    labels = worth_class(grid_r, grid_v)
    codes = np.select([labels == name for name in WORTH_CLASSES], range(len(WORTH_CLASSES)))
    return grid_v, grid_r, codes


@dataclass(frozen=True)
class ConvergenceSummary:
    """The first check of the theory chapter: the plain and the discounted estimator on the same
    episodes, each checkpoint's mean absolute error against its exact expectation (``exact``) and
    the mean signed error against its own (``signed``), the values the prose quotes (``values``,
    glue keys) and the rows of its table (``rows``)."""

    plain: TheoryResult
    discounted: DiscountedTheoryResult
    exact: PredictionCheck
    signed: PredictionCheck
    values: dict[str, Any]
    rows: list[dict[str, Any]]

    @property
    def error(self) -> np.ndarray:
        """Mean over seeds of the plain estimator's mean absolute error, per checkpoint."""
        return np.asarray(self.plain.mean_abs_error.mean(axis=0))

    @property
    def expected(self) -> np.ndarray:
        """Mean over seeds of its exact expectation, per checkpoint."""
        return np.asarray(self.plain.expected_error.mean(axis=0))


def convergence_summary(
    world: TheoryWorld, discount: float = 0.99, n_seeds: int = 100, seed: int = 0
) -> ConvergenceSummary:
    """Run :func:`theory_check` and :func:`discounted_theory_check` on the same seeds and compare.

    Raises ``RuntimeError`` if the two runs do not share their episodes (their plain errors
    differ). ``values`` holds the world's settings, the first and last errors, the largest gaps
    and ``|z|`` of both comparisons with their tolerance, the bias the signed comparison can
    detect at the last checkpoint, the log-log slope, the range of the exact ``p+`` and the
    discounted estimator's effective outcomes, floor and last error.
    """
    check = discounted_theory_check(world, discount=discount, n_seeds=n_seeds, seed=seed)
    plain = theory_check(world, n_seeds=n_seeds, seed=seed)
    if not np.array_equal(check.mean_abs_error, plain.mean_abs_error):
        raise RuntimeError("the plain and the discounted run must share their episodes")
    error, expected = plain.mean_abs_error.mean(axis=0), plain.expected_error.mean(axis=0)
    exact = prediction_check(plain.mean_abs_error, plain.expected_error)
    signed = prediction_check(plain.mean_error, plain.expected_mean_error)
    checkpoints, n, k = world.checkpoints, world.n_memories, world.retrieved_per_episode
    values: dict[str, Any] = {
        "n_memories": n,
        "k": k,
        "n_seeds": n_seeds,
        "n_checkpoints": len(checkpoints),
        "first_checkpoint": checkpoints[0],
        "last_checkpoint": checkpoints[-1],
        "error_first": error[0],
        "error_last": error[-1],
        "expected_last": expected[-1],
        "retrievals_last": checkpoints[-1] * k / n,
        "slope": plain.slope,
        "normal_gap": np.abs(plain.predicted_error / expected - 1).max(),
        "expected_gap": np.abs(error / expected - 1).max(),
        "z_max": np.abs(exact.z).max(),
        "z_max_signed": np.abs(signed.z).max(),
        "z_tolerance": exact.tolerance,
        "alpha": exact.alpha,
        "detectable_bias_last": signed.tolerance * signed.se[-1],
        "max_error_last": plain.max_abs_error[:, -1].max(),
        "p_plus_low": plain.p_plus.min(),
        "p_plus_high": plain.p_plus.max(),
        "discount": discount,
        "effective_outcomes": check.effective_outcomes,
        "discounted_floor": check.predicted_floor,
        "discounted_error_last": check.discounted_error.mean(axis=0)[-1],
    }
    rows = [
        {
            "episodes": int(c),
            "retrievals_per_memory": c * k / n,
            "mean_error": b,
            "z_signed": zb,
            "mean_abs_error": e,
            "expected": x,
            "z": z,
            "normal_approximation": p,
            "max_abs_error": m,
            "discounted_error": d,
        }
        for c, b, zb, e, x, z, p, m, d in zip(
            checkpoints,
            plain.mean_error.mean(axis=0),
            signed.z,
            error,
            expected,
            exact.z,
            plain.predicted_error,
            plain.max_abs_error.max(axis=0),
            check.discounted_error.mean(axis=0),
        )
    ]
    return ConvergenceSummary(plain, check, exact, signed, values, rows)
