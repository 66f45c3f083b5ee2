"""Two means, each over its own independent seeds: their difference and its standard error.

A source that reports ``mean +- sd`` over ``n`` seeds knows its mean to a standard error of
``sd / sqrt(n)`` (:func:`standard_error`). Two such means differ by ``d = a - b`` with
standard error ``sqrt(se_a^2 + se_b^2)`` (independent samples); they are *consistent* at the
two-sided 95 % level when ``|d| <= Z_95 * se`` (:func:`difference_of_means`).
:func:`consistent_indices` applies that criterion to a sweep of means against one reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .._validate import int_problem, raise_problems, real_problem
from .stats import Z_95

__all__ = ["MeanDifference", "standard_error", "difference_of_means", "consistent_indices"]


@dataclass(frozen=True)
class MeanDifference:
    """``difference = a - b``, its standard error, ``z = difference / se`` and the 95 % verdict."""

    difference: float
    se: float
    z: float
    consistent: bool


def standard_error(sd: float, n: int) -> float:
    """Standard error of a mean over ``n`` independent seeds with sample sd ``sd``: ``sd / sqrt(n)``.

    Raises ``ValueError`` unless ``sd >= 0`` is finite and ``n >= 1``.
    """
    raise_problems([real_problem("sd", sd, 0.0), int_problem("n", n, 1)])
    return sd / math.sqrt(n)


def difference_of_means(
    mean_a: float, se_a: float, mean_b: float, se_b: float, z_limit: float = Z_95
) -> MeanDifference:
    """Two-sample comparison of independent means: ``d = a - b``, ``se = sqrt(se_a^2 + se_b^2)``.

    ``consistent`` is ``|d| <= z_limit * se`` (default two-sided 95 %). Raises ``ValueError``
    for non-finite means, negative standard errors, both standard errors zero, or
    ``z_limit <= 0``.
    """
    raise_problems(
        [
            real_problem("mean_a", mean_a),
            real_problem("se_a", se_a, 0.0),
            real_problem("mean_b", mean_b),
            real_problem("se_b", se_b, 0.0),
            real_problem("z_limit", z_limit, 0.0, low_open=True),
        ]
    )
    se = math.sqrt(se_a * se_a + se_b * se_b)
    if se == 0.0:
        raise ValueError("se_a and se_b must not both be 0.0: the difference would have no standard error")
    difference = mean_a - mean_b
    return MeanDifference(difference, se, difference / se, abs(difference) <= z_limit * se)


def consistent_indices(
    means: Sequence[float], ses: Sequence[float], reference: float, reference_se: float, z_limit: float = Z_95
) -> list[int]:
    """Indices ``i`` whose ``means[i]`` is consistent with ``reference`` (:func:`difference_of_means`).

    Raises ``ValueError`` if ``means`` and ``ses`` differ in length (or as
    :func:`difference_of_means` does).
    """
    if len(means) != len(ses):
        raise ValueError(f"means and ses must have the same length, got {len(means)} and {len(ses)}")
    return [
        i
        for i, (mean, se) in enumerate(zip(means, ses))
        if difference_of_means(mean, se, reference, reference_se, z_limit).consistent
    ]
