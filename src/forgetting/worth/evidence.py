"""Deprecation on evidence of harm: a fact goes only when an interval on its effect is below 0.

Memory Worth deprecates a fact whose *association* with success is low, and in the governance
world the true fact shares the stale one's failures whenever both are retrieved (a task handed
the contradiction succeeds with ``p_conflict``), so it is deprecated with it in about a third of
the sessions. The ``effect`` policy asks another question of the same tasks: does the task go
better *with* the fact than *without* it?

A **contrast task** for the pair is a deployment task after the shift at which both facts are
available (present and not deprecated). The world then retrieves both, or one of them chosen by
its own uniform draw, independently of the outcome draw; for a fact ``m``:

* the *in* arm: contrast tasks that retrieved ``m``, ``n1`` of them, ``k1`` successes;
* the *out* arm: contrast tasks that did not, ``n0`` and ``k0``.

Its effect is ``delta(m) = P(success | m retrieved) - P(success | m not retrieved)`` over
contrast tasks. Because which facts come back is drawn independently of the outcome, the arms
differ only in whether ``m`` was there, and ``k1/n1 - k0/n0`` is an unbiased (conditional on
both arms non-empty) estimate of ``delta(m)``: a causal contrast by the world's own
randomisation. (The world's success probabilities give ``delta(A) < 0 < delta(B)`` whenever
``0 < co_retrieval < 1``; at ``co_retrieval = 1`` there is no *out* arm and no evidence, and a
confound such as Experiment 2's, where retrieval depends on the task, would bias it.)

The interval is Agresti and Caffo's (2000) for a difference of two proportions: one success and
one failure added to each arm, ``p~ = (k + 1) / (n + 2)``, and the Wald interval on them. The
fact is deprecated when the upper end is below zero::

    p~1 - p~0 + z * sqrt(p~1 (1 - p~1) / (n1 + 2) + p~0 (1 - p~0) / (n0 + 2)) < 0

decided exactly in rational arithmetic (``d < 0`` and ``d**2 > z**2 * var``, ``z`` taken as the
binary float it is), so no rounding can move a deprecation. The bound is checked after every
contrast task, so it is not a fixed-sample test: the chance that it ever crosses for a helpful
fact is larger than a single look's ``1 - Phi(z)``, and the chapter sweeps ``z`` to measure it.

**A sequential test** (:class:`HarmTest`, the ``sequential`` policy) has the guarantee the
interval lacks: over a whole session, the chance that it ever deprecates a fact whose effect
is ``>= 0`` is at most ``alpha``. It uses what the world's randomisation makes known: at a
contrast task that the noise did not crowd out, fact ``m`` is retrieved (``x = 1``) with
probability ``q = co_retrieval + (1 - co_retrieval) / 2``, whatever happened before. With
``s = 2 * success - 1``, the score ``W = s * (x / q - (1 - x) / (1 - q))`` has conditional mean
``E[W | past] = 2 * (P(success | x = 1) - P(success | x = 0)) = 2 * delta(m)``. For a bet
``lam = share * min(q, 1 - q)`` (``share`` in :data:`SEQUENTIAL_SHARES`, so ``lam * |W| <=
share < 1``) the product ``M = prod(1 - lam * W)`` is positive, and a supermartingale while
``delta(m) >= 0`` (each factor's conditional mean is ``1 - 2 * lam * delta(m) <= 1``); so is
the mean of the products over the shares. By Ville's inequality it ever reaches ``1 / alpha``
with probability at most ``alpha``, and the fact is deprecated when it does. Each factor is
one of four numbers (``x`` and the outcome), so ``M`` is a function of the arms' counts; the
running products are kept in floats (multiplications only, correctly rounded on every
machine) and a product within a relative ``1e-9`` of the boundary is decided again exactly in
rational arithmetic from the counts. At ``co_retrieval = 1`` there is no *out* arm, the bet is
0 and nothing is ever deprecated.

The governance chapter's ``effect`` and ``sequential`` policies
(:mod:`forgetting.studies.governance.policies`) and :class:`forgetting.GovernedMemory` (its rules
``effect`` and ``sequential``) deprecate on these; this module imports nothing from either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from .._validate import raise_problems, real_problem

__all__ = [
    "DEFAULT_EFFECT_Z",
    "DEFAULT_ALPHA",
    "SEQUENTIAL_SHARES",
    "EffectArms",
    "HarmTest",
    "harmful",
    "effect_z_problem",
    "alpha_problem",
    "retrieval_chance",
]

DEFAULT_EFFECT_Z = 2.576
"""The interval's ``z`` by default: a two-sided 99 % interval's (one-sided 0.5 % per look)."""


def effect_z_problem(effect_z: object) -> str | None:
    """Why ``effect_z`` is not a usable ``z`` (``None``: it is a real number in ``[0, 10]``)."""
    return real_problem("effect_z", effect_z, 0.0, 10.0)


@dataclass
class EffectArms:
    """One fact's contrast tasks: ``n1`` with it (``k1`` successes), ``n0`` without (``k0``)."""

    n1: int = 0
    k1: int = 0
    n0: int = 0
    k0: int = 0

    def add(self, retrieved: bool, success: bool) -> None:
        """Count one contrast task in the arm ``retrieved`` says."""
        if retrieved:
            self.n1 += 1
            self.k1 += success
        else:
            self.n0 += 1
            self.k0 += success

    def upper_bound_below_zero(self, effect_z: float) -> bool:
        """:func:`harmful` without checking ``effect_z`` (for a caller that checked it once)."""
        return _harmful(self.n1, self.k1, self.n0, self.k0, float(effect_z))

    @property
    def estimate(self) -> float:
        """``k1/n1 - k0/n0`` (NaN while an arm is empty)."""
        if self.n1 == 0 or self.n0 == 0:
            return float("nan")
        return self.k1 / self.n1 - self.k0 / self.n0


def harmful(arms: EffectArms, effect_z: float = DEFAULT_EFFECT_Z) -> bool:
    """The Agresti-Caffo upper bound of ``arms``' effect is below 0 (see the module docstring).

    Raises ``ValueError`` for a bad ``effect_z`` (a real number in ``[0, 10]``).
    """
    raise_problems([effect_z_problem(effect_z)])
    return arms.upper_bound_below_zero(effect_z)


_INTERVAL_MARGIN = 1e-9
"""A float ``d**2`` and ``z**2 * var`` this far apart (relatively) decide as the exact ones would."""


@lru_cache(maxsize=1 << 16)
def _harmful(n1: int, k1: int, n0: int, k0: int, z: float) -> bool:
    """The module docstring's rule: in floats where they cannot be wrong (a difference of at least
    ``1 / ((n1 + 2) (n0 + 2))``, far above rounding, and the two sides of the square comparison
    more than a relative :data:`_INTERVAL_MARGIN` apart), else exactly in rational arithmetic."""
    q1, q0 = (k1 + 1) / (n1 + 2), (k0 + 1) / (n0 + 2)
    gap = q1 - q0
    square, bound = gap * gap, z * z * (q1 * (1 - q1) / (n1 + 2) + q0 * (1 - q0) / (n0 + 2))
    if abs(gap) > 1e-12 and abs(square - bound) > _INTERVAL_MARGIN * max(square, bound):
        return gap < 0 and square > bound
    p1, p0 = Fraction(k1 + 1, n1 + 2), Fraction(k0 + 1, n0 + 2)
    d = p1 - p0
    var = p1 * (1 - p1) / (n1 + 2) + p0 * (1 - p0) / (n0 + 2)
    return d < 0 and d * d > Fraction(z) ** 2 * var


DEFAULT_ALPHA = 0.01
"""The sequential test's level by default: a session deprecates a fact that does not harm with
probability at most 1 % (for each fact)."""
SEQUENTIAL_SHARES = (Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))
"""The bets of the sequential test, as shares of the largest safe bet ``min(q, 1 - q)``; the
test averages their products (a mixture, fixed before any run)."""
_SEQUENTIAL_MARGIN = 1e-9
"""A float mixture this far (relatively) from ``1 / alpha`` decides as the exact one would."""


def alpha_problem(alpha: object) -> str | None:
    """Why ``alpha`` is not a usable level (``None``: it is a real number in ``(0, 1)``)."""
    return real_problem("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)


def retrieval_chance(co_retrieval: float) -> Fraction:
    """``q = co_retrieval + (1 - co_retrieval) / 2``, exactly: the chance that a contrast task
    retrieves a given fact (both with ``co_retrieval``, else one of the two at random).

    Raises ``ValueError`` unless ``co_retrieval`` is a real number in ``[0, 1]``.
    """
    raise_problems([real_problem("co_retrieval", co_retrieval, 0.0, 1.0)])
    return (1 + Fraction(co_retrieval)) / 2


def _factors(q: Fraction) -> list[dict[tuple[bool, bool], Fraction]]:
    """Per share, the factor ``1 - lam * W`` for each ``(retrieved, success)``."""
    if q == 1:
        return [{key: Fraction(1) for key in _KEYS} for _ in SEQUENTIAL_SHARES]
    table = []
    for share in SEQUENTIAL_SHARES:
        bet = share * min(q, 1 - q)
        table.append(
            {
                (True, True): 1 - bet / q,
                (True, False): 1 + bet / q,
                (False, True): 1 + bet / (1 - q),
                (False, False): 1 - bet / (1 - q),
            }
        )
    return table


_KEYS = ((True, True), (True, False), (False, True), (False, False))


@lru_cache(maxsize=64)
def _float_factors(q: Fraction) -> tuple[dict[tuple[bool, bool], float], ...]:
    return tuple({key: float(value) for key, value in shares.items()} for shares in _factors(q))


def _exact_evidence(arms: EffectArms, q: Fraction) -> Fraction:
    """The mean over the shares of the products, exactly, from the arms' counts."""
    counts = {
        (True, True): arms.k1,
        (True, False): arms.n1 - arms.k1,
        (False, True): arms.k0,
        (False, False): arms.n0 - arms.k0,
    }
    total = Fraction(0)
    for shares in _factors(q):
        product = Fraction(1)
        for key, count in counts.items():
            product *= shares[key] ** count
        total += product
    return total / len(SEQUENTIAL_SHARES)


@dataclass
class HarmTest:
    """The sequential test of one fact (module docstring): its contrast tasks' arms and the
    running products, one per share of :data:`SEQUENTIAL_SHARES`.

    ``co_retrieval`` and ``alpha`` are checked at construction (``ValueError`` naming them).
    """

    co_retrieval: float
    alpha: float = DEFAULT_ALPHA
    arms: EffectArms = field(default_factory=EffectArms)
    products: list[float] = field(default_factory=lambda: [1.0] * len(SEQUENTIAL_SHARES))

    def __post_init__(self) -> None:
        raise_problems([real_problem("co_retrieval", self.co_retrieval, 0.0, 1.0), alpha_problem(self.alpha)])
        self._q = retrieval_chance(self.co_retrieval)
        self._factors = _float_factors(self._q)

    def add(self, retrieved: bool, success: bool) -> None:
        """Count one contrast task and multiply each product by its factor."""
        self.arms.add(retrieved, success)
        key = (bool(retrieved), bool(success))
        self.products = [p * f[key] for p, f in zip(self.products, self._factors)]

    @property
    def evidence(self) -> float:
        """The mixture ``mean(products)`` (an e-value: large is evidence of harm)."""
        return sum(self.products) / len(self.products)

    def exact_evidence(self) -> Fraction:
        """:attr:`evidence` computed exactly from the arms' counts."""
        return _exact_evidence(self.arms, self._q)

    def harmful(self) -> bool:
        """The mixture has reached ``1 / alpha``: ``alpha * sum(products) >= len(products)``."""
        scaled, bound = self.alpha * sum(self.products), float(len(self.products))
        if abs(scaled - bound) > _SEQUENTIAL_MARGIN * bound:
            return scaled > bound
        return Fraction(self.alpha) * self.exact_evidence() >= 1
