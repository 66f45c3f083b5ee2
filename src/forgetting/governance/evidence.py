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
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from .._validate import raise_problems, real_problem

__all__ = ["DEFAULT_EFFECT_Z", "EffectArms", "harmful", "effect_z_problem"]

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


@lru_cache(maxsize=1 << 16)
def _harmful(n1: int, k1: int, n0: int, k0: int, z: float) -> bool:
    p1, p0 = Fraction(k1 + 1, n1 + 2), Fraction(k0 + 1, n0 + 2)
    d = p1 - p0
    var = p1 * (1 - p1) / (n1 + 2) + p0 * (1 - p0) / (n0 + 2)
    return d < 0 and d * d > Fraction(z) ** 2 * var
