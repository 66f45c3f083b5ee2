"""The forgetting curve and the eviction rules, each a pure function of turns and stability.

Time is an integer turn counter passed in by the caller, never the wall clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import cast

import numpy as np

from .._validate import int_problem, is_real, raise_problems, real_problem, shown

__all__ = [
    "DEFAULT_EVICTION_THRESHOLD",
    "DEFAULT_BASELINE_STABILITY",
    "DEFAULT_WINDOW_SIZE",
    "NEVER_TURN",
    "retention",
    "unchecked_retention",
    "reinforced_stability",
    "naive_eviction_turn",
    "decay_eviction_delay",
    "first_turn_below",
    "decay_problems",
    "stability_problem",
    "time_problem",
    "threshold_problem",
    "window_eviction_delay",
    "stability_after_recalls",
]

DEFAULT_EVICTION_THRESHOLD = 0.20
"""``theta``: an item is evicted the first time its retention falls below this."""
DEFAULT_BASELINE_STABILITY = 8.0
"""``S0``: the stability of a freshly registered item, in turns."""
DEFAULT_WINDOW_SIZE = 15
"""``W``: the recency window evicts an item untouched for more than this many turns."""
NEVER_TURN = 2**62
"""Beyond any session: an item whose eviction delay exceeds this is never scheduled."""


def stability_problem(stability: object, name: str = "stability") -> str | None:
    """``None`` if ``stability`` is a real number ``> 0`` (``inf`` included), else why not.

    ``S = inf`` is a stability that never decays: reinforcement reaches it after very many
    recalls (the product overflows float64), and it reads as retention 1, never evicted.
    NaN, zero, negative numbers, bools and non-numbers are refused.
    """
    infinite = isinstance(stability, (float, np.floating)) and stability == math.inf
    if infinite or (is_real(stability) and cast(float, stability) > 0):
        return None
    return f"{name} must be a real number > 0 (inf: never decays), got {shown(stability)}"


def time_problem(turns_since_touch: object, name: str = "turns_since_touch") -> str | None:
    """``None`` if ``turns_since_touch`` is a finite real number (negative allowed: ``R = 1``)."""
    return real_problem(name, turns_since_touch)


def retention(turns_since_touch: float, stability: float) -> float:
    """Exponential retention ``R = exp(-t / S)`` (the decay article's formula, not Ebbinghaus's own:
    that is :func:`forgetting.curves.families.ebbinghaus_log_savings`).

    Parameters
    ----------
    turns_since_touch : int or float
        ``t``, time since the item was last registered or recalled, in the unit of ``S``
        (turns; seconds only in the wall-clock variant of :mod:`~forgetting.studies.decay.wallclock`);
        any finite real number, ``R = 1.0`` for ``t <= 0``.
    stability : float
        ``S > 0``: the time for retention to fall to ``1/e`` (``inf``: ``R = 1`` always).

    Raises ``ValueError`` for a NaN or infinite ``t`` or an ``S`` that is not ``> 0``.

    >>> retention(0, 8.0), round(retention(15, 8.0), 3)
    (1.0, 0.153)
    """
    if not is_real(turns_since_touch) or not (type(stability) is float and stability > 0):
        raise_problems([time_problem(turns_since_touch), stability_problem(stability)])
    return unchecked_retention(turns_since_touch, stability)


def unchecked_retention(turns_since_touch: float, stability: float) -> float:
    """:func:`retention` without its checks, for a caller that has checked ``t`` (finite) and ``S``
    (a float ``> 0``) already: the same operations, for a loop over many items."""
    if turns_since_touch <= 0:
        return 1.0
    return math.exp(-turns_since_touch / stability)


def reinforced_stability(stability: float, touch_count: int) -> float:
    """Stability after a recall: ``S * (1 + ln(1 + n))``.

    ``n`` is the touch count *after* the recall (registration sets ``n = 1``, so the first
    recall multiplies by ``1 + ln 3``). ``S > 0`` (``inf`` stays ``inf``) and ``n`` an int
    ``>= 0`` (numpy ints too); ``ValueError`` otherwise, so the result is always ``>= S > 0``.
    """
    if not (type(stability) is float and stability > 0 and type(touch_count) is int and touch_count >= 0):
        raise_problems(
            [
                stability_problem(stability),
                int_problem("touch_count", touch_count, minimum=0, allow_numpy=True),
            ]
        )
    return stability * (1.0 + math.log(1.0 + touch_count))


def stability_after_recalls(recalls: int, baseline_stability: float = DEFAULT_BASELINE_STABILITY) -> float:
    """``S0 * prod_{n=2}^{recalls+1} (1 + ln(1 + n))``: stability after ``recalls`` recalls.

    ``recalls`` is an int ``>= 0`` and ``S0 > 0`` (``ValueError`` otherwise).

    >>> round(stability_after_recalls(4))
    292
    """
    raise_problems(
        [
            int_problem("recalls", recalls, minimum=0, allow_numpy=True),
            stability_problem(baseline_stability, "baseline_stability"),
        ]
    )
    stability = baseline_stability
    for touch_count in range(2, recalls + 2):
        stability = reinforced_stability(stability, touch_count)
    return stability


def naive_eviction_turn(baseline_stability: float, eviction_threshold: float) -> float:
    """Continuous turn at which an untouched item crosses the threshold: ``S0 * ln(1 / theta)``.

    ``S0 > 0`` (``inf``: never) and ``0 < theta < 1``; ``ValueError`` otherwise.
    """
    raise_problems(
        [
            stability_problem(baseline_stability, "baseline_stability"),
            threshold_problem(eviction_threshold),
        ]
    )
    return baseline_stability * math.log(1.0 / eviction_threshold)


def threshold_problem(eviction_threshold: object) -> str | None:
    """``None`` if ``eviction_threshold`` is a real number in ``(0, 1)``, else why not."""
    return real_problem("eviction_threshold", eviction_threshold, 0.0, 1.0, low_open=True, high_open=True)


def decay_eviction_delay(stability: float, eviction_threshold: float) -> int | None:
    """Smallest integer ``t >= 1`` with ``retention(t, S) < theta``; ``None`` past :data:`NEVER_TURN`.

    Starts from the closed form ``floor(S * ln(1/theta))`` and settles the boundary with the
    very expression :func:`retention` evaluates (a bracketing search, since for huge ``S`` the
    closed form can be off by more than one turn), so the schedule agrees bit for bit with a
    direct scan. ``S > 0`` (``inf``: ``None``, never evicted) and ``0 < theta < 1``;
    ``ValueError`` otherwise (a NaN stability is never read as "never evicted").
    """
    if not (type(stability) is float and stability > 0 and type(eviction_threshold) is float):
        raise_problems([stability_problem(stability), threshold_problem(eviction_threshold)])
    elif not 0 < eviction_threshold < 1:
        raise_problems([threshold_problem(eviction_threshold)])
    return _decay_eviction_delay(stability, eviction_threshold)


@lru_cache(maxsize=65536)  # pure; every new item shares S0, so most calls are hits
def _decay_eviction_delay(stability: float, eviction_threshold: float) -> int | None:
    """:func:`decay_eviction_delay` of checked arguments (cached)."""

    def below(t: int) -> bool:
        return retention(t, stability) < eviction_threshold

    return first_turn_below(below, stability * math.log(1.0 / eviction_threshold))


def first_turn_below(below: Callable[[int], bool], estimate: float) -> int | None:
    """Smallest integer ``t >= 1`` with ``below(t)``, for a ``below`` that is monotone in ``t``;
    ``None`` when ``estimate`` (a closed-form crossing time) is not below :data:`NEVER_TURN`.

    Brackets the boundary around ``floor(estimate)`` by doubling steps, then bisects, so the
    answer is decided by ``below`` itself (the very expression a direct scan evaluates) and the
    estimate may be off by any number of turns.
    """
    if not estimate < NEVER_TURN:  # also catches S = inf after very many recalls
        return None
    guess = max(1, math.floor(estimate))
    if below(guess):
        low, high, step = guess - 1, guess, 1  # invariant: not below(low) or low == 0
        while low >= 1 and below(low):
            high, low, step = low, max(0, low - step), step * 2
    else:
        low, high, step = guess, guess + 1, 1  # invariant: below(high)
        while not below(high):
            low, high, step = high, high + step, step * 2
    while high - low > 1:  # not below(low) (or low == 0), below(high)
        middle = (low + high) // 2
        if below(middle):
            high = middle
        else:
            low = middle
    return high


def window_eviction_delay(window_size: int) -> int:
    """Turns after the last touch at which the window evicts: ``turn - last_touched > W``, so ``W + 1``."""
    return window_size + 1


def decay_problems(eviction_threshold: float, baseline_stability: float) -> list[str | None]:
    """The checks of a decay engine's settings: ``0 < theta < 1`` and ``S0 > 0`` (``None`` = fine)."""
    return [
        threshold_problem(eviction_threshold),
        real_problem("baseline_stability", baseline_stability, 0.0, low_open=True),
    ]
