"""Forgetting-curve families beside :func:`~forgetting.decay.curves.retention`, each a pure function.

* :func:`power_retention` -- the power law of the FSRS scheduler, ``R = (1 + F t / S)^(-d)`` with
  ``F = 0.9^(-1/d) - 1``, so that ``R(S) = 0.9`` whatever the decay exponent ``d``.
* :func:`wickelgren_retention` -- Wickelgren's ``lambda (1 + beta t)^(-psi)``.
* :func:`two_exponential_retention` -- a sum of two exponentials (a fast and a slow store).
* :func:`ebbinghaus_log_savings` -- Ebbinghaus's own 1885 formula ``b = 100 k / ((log10 t)^c + k)``.

The exponential itself stays in :mod:`~forgetting.decay.curves` (one formula, one place). For a
threshold ``theta`` the power law crosses it at the continuous time
``S (theta^(-1/d) - 1) / F`` (:func:`power_crossing_time`), linear in ``S`` like the exponential's
``S ln(1/theta)``; :func:`matched_power_stability` equates the two, and
:func:`power_eviction_delay` gives the first whole turn below ``theta``.
"""

from __future__ import annotations

import math
from functools import lru_cache

from .._validate import is_real, raise_problems, real_problem
from ..decay.curves import (
    first_turn_below,
    naive_eviction_turn,
    stability_problem,
    threshold_problem,
    time_problem,
)

__all__ = [
    "FSRS_TARGET_RETENTION",
    "power_factor",
    "power_retention",
    "power_crossing_time",
    "power_eviction_delay",
    "matched_power_stability",
    "equivalent_exponential_threshold",
    "wickelgren_retention",
    "two_exponential_retention",
    "ebbinghaus_log_savings",
]

FSRS_TARGET_RETENTION = 0.9
"""FSRS defines stability as the interval at which recall probability is 0.9."""


def power_factor(decay: float) -> float:
    """``F = 0.9^(-1/d) - 1``: the factor that makes ``(1 + F)^(-d) = 0.9`` (``R(S) = 0.9``).

    >>> round(power_factor(0.5), 12)  # FSRS-4.5: 19/81
    0.234567901235
    """
    raise_problems([real_problem("decay", decay, 0.0, low_open=True)])
    return float(FSRS_TARGET_RETENTION ** (-1.0 / decay) - 1.0)


def power_retention(turns_since_touch: float, stability: float, decay: float) -> float:
    """FSRS power-law retrievability ``R = (1 + F t / S)^(-d)``, ``F = 0.9^(-1/d) - 1``.

    Written as the ``fsrs`` package writes it, ``(1 + F t / S) ** C`` with ``C = -d``, so that the
    two agree to the last bit. ``R(0) = 1``, ``R(S) = 0.9``, strictly decreasing in ``t``; a
    smaller ``d`` gives a heavier tail.

    Parameters
    ----------
    turns_since_touch : float
        ``t >= 0`` (``R = 1.0`` for ``t <= 0``), in the unit of ``S``.
    stability : float
        ``S > 0``: the time at which ``R = 0.9``.
    decay : float
        ``d > 0``, the decay exponent (FSRS-6 learns it; FSRS-4.5 fixes ``0.5``, FSRS v4 ``1``).

    Raises ``ValueError`` for a NaN or infinite ``t``, an ``S`` that is not ``> 0`` (``inf``
    gives ``R = 1``) or a ``d`` that is not a finite number ``> 0``.

    >>> power_retention(0, 8.0, 0.5), round(power_retention(8.0, 8.0, 0.5), 12)
    (1.0, 0.9)
    """
    if not (
        is_real(turns_since_touch)
        and type(stability) is float
        and stability > 0
        and type(decay) is float
        and 0 < decay < math.inf
    ):
        raise_problems([time_problem(turns_since_touch), stability_problem(stability), _decay_problem(decay)])
    if turns_since_touch <= 0:
        return 1.0
    exponent = -decay
    factor = FSRS_TARGET_RETENTION ** (1.0 / exponent) - 1.0
    return float((1.0 + factor * turns_since_touch / stability) ** exponent)


def _decay_problem(decay: object) -> str | None:
    return real_problem("decay", decay, 0.0, low_open=True)


def power_crossing_time(stability: float, eviction_threshold: float, decay: float) -> float:
    """Continuous time at which the power law reaches ``theta``: ``S (theta^(-1/d) - 1) / F``.

    ``S > 0`` (``inf``: never), ``0 < theta < 1`` and ``d > 0``; ``ValueError`` otherwise.
    """
    raise_problems(
        [stability_problem(stability), threshold_problem(eviction_threshold), _decay_problem(decay)]
    )
    return float(stability * (eviction_threshold ** (-1.0 / decay) - 1.0) / power_factor(decay))


def matched_power_stability(baseline_stability: float, eviction_threshold: float, decay: float) -> float:
    """Power-law ``S`` whose crossing of ``theta`` is the exponential's: ``S0 ln(1/theta) F / (theta^(-1/d) - 1)``.

    Both crossing times are linear in ``S`` and the engines reinforce ``S`` by the same factor,
    so an item matched at registration stays matched after every recall.
    """
    raise_problems(
        [
            real_problem("baseline_stability", baseline_stability, 0.0, low_open=True),
            real_problem("eviction_threshold", eviction_threshold, 0.0, 1.0, low_open=True, high_open=True),
            real_problem("decay", decay, 0.0, low_open=True),
        ]
    )
    crossing = naive_eviction_turn(baseline_stability, eviction_threshold)
    return crossing / power_crossing_time(1.0, eviction_threshold, decay)


def equivalent_exponential_threshold(
    power_stability: float, eviction_threshold: float, decay: float, exponential_stability: float
) -> float:
    """``theta'`` at which the exponential with ``S0`` crosses when the power law (``S``, ``theta``, ``d``) does.

    ``theta' = exp(-power_crossing_time(S, theta, d) / S0)``. Both crossings scale with ``S`` and
    reinforcement multiplies ``S`` alike, so the exponential engine at ``theta'`` makes every
    eviction decision the power-law engine makes at ``theta``: for a threshold engine the shape
    only relabels ``theta``. ``S0 > 0``; ``ValueError`` for any argument out of its domain.
    """
    raise_problems([stability_problem(exponential_stability, "exponential_stability")])
    return math.exp(-power_crossing_time(power_stability, eviction_threshold, decay) / exponential_stability)


def power_eviction_delay(stability: float, eviction_threshold: float, decay: float) -> int | None:
    """Smallest integer ``t >= 1`` with ``power_retention(t, S, d) < theta``; ``None`` past
    :data:`~forgetting.decay.curves.NEVER_TURN`.

    Starts from ``floor`` of :func:`power_crossing_time` and settles the boundary with the very
    expression :func:`power_retention` evaluates (a bracketing search), so it agrees bit for bit
    with a direct scan, as :func:`~forgetting.decay.curves.decay_eviction_delay` does.
    ``ValueError`` for arguments :func:`power_crossing_time` refuses (a NaN ``S`` is never
    read as "never evicted").
    """
    raise_problems(
        [stability_problem(stability), threshold_problem(eviction_threshold), _decay_problem(decay)]
    )
    return _power_eviction_delay(stability, eviction_threshold, decay)


@lru_cache(maxsize=65536)  # pure; every new item shares S0, so most calls are hits
def _power_eviction_delay(stability: float, eviction_threshold: float, decay: float) -> int | None:
    """:func:`power_eviction_delay` of checked arguments (cached)."""

    def below(t: int) -> bool:
        return power_retention(t, stability, decay) < eviction_threshold

    return first_turn_below(below, power_crossing_time(stability, eviction_threshold, decay))


def wickelgren_retention(t: float, scale: float, rate: float, exponent: float) -> float:
    """Wickelgren's power law ``lambda (1 + beta t)^(-psi)`` (scale ``lambda``, rate ``beta``, ``psi``).

    With ``lambda = 1`` it is :func:`power_retention` with ``beta = F / S`` and ``psi = d``: the
    FSRS form is this family with its time unit pinned by ``R(S) = 0.9``.
    """
    return float(scale * (1.0 + rate * max(t, 0.0)) ** (-exponent))


def two_exponential_retention(
    t: float, fast: float, fast_time: float, slow: float, slow_time: float
) -> float:
    """Two stores decaying independently: ``a1 exp(-t / tau1) + a2 exp(-t / tau2)``."""
    t = max(t, 0.0)
    return float(fast * math.exp(-t / fast_time) + slow * math.exp(-t / slow_time))


def ebbinghaus_log_savings(minutes: float, k: float, c: float) -> float:
    """Ebbinghaus (1885): savings ``b = 100 k / ((log10 t)^c + k)`` in percent, ``t`` in minutes.

    Ebbinghaus counts ``t`` from one minute before the end of learning, so ``t >= 1`` and
    ``b(1) = 100``; he fitted ``k = 1.84``, ``c = 1.25``.

    >>> round(ebbinghaus_log_savings(20, 1.84, 1.25), 1)
    57.0
    """
    return float(100.0 * k / (math.log10(max(minutes, 1.0)) ** c + k))
