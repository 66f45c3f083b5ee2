"""Summaries over seeds: the one home for "mean +- sd across seeds".

Two summation rules live here, each kept because published numbers depend on its last bit:

* :func:`summarize` (the decay chapters) uses :mod:`statistics`: the mean is correctly
  rounded (``statistics.fmean``) and the sd is ``statistics.stdev``;
* :func:`mean_sd` and :func:`rho_across_seeds` (the Memory Worth chapters) use numpy's
  pairwise summation, ``np.mean`` and ``np.std(ddof=1)``.

They agree to rounding error (measured on the decay study: 38 of 224 per-seed summaries differ
in the last bit), so switching one chapter from one rule to the other would change its
published digits, not its results. Both report the *sample* standard deviation (``n - 1``),
and ``0.0`` for a single value.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "SeedSummary",
    "summarize",
    "ci95_half_width",
    "mean_sd",
    "rho_across_seeds",
    "DISTINGUISHABLE_Z",
]

Z_95 = statistics.NormalDist().inv_cdf(0.975)
"""The standard normal's 97.5 % quantile: a two-sided 95 % interval spans ``mean +- Z_95 * sd / sqrt(n)``."""


@dataclass(frozen=True)
class SeedSummary:
    """Mean, sample sd (``n - 1``; 0.0 for one value), min, max and count of per-seed values."""

    mean: float
    sd: float
    min: float
    max: float
    n: int


def summarize(values: Sequence[float]) -> SeedSummary:
    """:class:`SeedSummary` of ``values``: ``fmean``, ``stdev``, ``min``, ``max``, ``len``.

    Raises ``ValueError`` for an empty sequence.

    >>> summarize([1.0, 2.0, 3.0])
    SeedSummary(mean=2.0, sd=1.0, min=1.0, max=3.0, n=3)
    """
    if not values:
        raise ValueError("values must not be empty, got an empty sequence")
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return SeedSummary(statistics.fmean(values), sd, min(values), max(values), len(values))


def ci95_half_width(summary: SeedSummary) -> float:
    """Half-width of the normal-approximation 95 % interval of the mean: ``Z_95 * sd / sqrt(n)``.

    Seeds are independent sessions, so the mean over ``n`` of them is close to normal for the
    seed counts this is used with. When every seed gives the same value the sd, and so the
    width, is 0: the interval then says nothing about seeds not run.

    >>> round(ci95_half_width(summarize([0.0, 1.0] * 50)), 4)
    0.0985
    """
    return Z_95 * summary.sd / math.sqrt(summary.n)


def mean_sd(values: npt.ArrayLike) -> tuple[float, float]:
    """``(np.mean(values), np.std(values, ddof=1))`` as floats; the sd is 0.0 for a single value.

    >>> mean_sd([1.0, 2.0, 3.0])
    (2.0, 1.0)
    """
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        raise ValueError("values must not be empty, got an empty array")
    return float(array.mean()), float(array.std(ddof=1)) if array.size > 1 else 0.0


def rho_across_seeds(rho: npt.ArrayLike) -> tuple[float, float]:
    """Mean and sample sd of one rank correlation per seed (:func:`mean_sd`)."""
    return mean_sd(rho)


#: Standard errors from zero beyond which a paired mean difference is told apart from zero (two-sided 95 %).
DISTINGUISHABLE_Z = Z_95
