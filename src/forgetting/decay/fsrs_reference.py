"""The ``fsrs`` package (PyPI, the ``test`` extra) as the reference for the FSRS power law.

``fsrs.Scheduler.get_card_retrievability`` computes ``(1 + F t / S) ** C`` with ``C = -w[20]``
(the decay parameter, bounded to [0.1, 0.8] by the package), ``F = 0.9 ** (1 / C) - 1`` and
``t`` the whole days elapsed since the card's last review. :func:`fsrs_max_abs_difference`
compares :func:`~forgetting.decay.families.power_retention` with it on a grid. ``fsrs`` is
imported only when these functions run; no clock is read (cards get fixed ids and dates).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from .families import power_retention

__all__ = ["fsrs_default_decay", "FSRS_DECAY_BOUNDS", "fsrs_retrievability", "fsrs_max_abs_difference"]

FSRS_DECAY_BOUNDS = (0.1, 0.8)
"""The range ``fsrs`` allows for its decay parameter ``w[20]``."""
_REVIEWED = datetime(2000, 1, 1, tzinfo=UTC)  # any fixed date: only differences matter


def fsrs_default_decay() -> float:
    """The decay exponent ``w[20]`` among the ``fsrs`` package's default parameters (FSRS-6)."""
    from fsrs.scheduler import DEFAULT_PARAMETERS

    return float(DEFAULT_PARAMETERS[20])


def fsrs_retrievability(elapsed_days: int, stability: float, decay: float) -> float:
    """Retrievability of a card of stability ``S`` reviewed ``elapsed_days`` ago, computed by ``fsrs``.

    ``decay`` is ``w[20]`` (the other parameters keep the package's defaults).
    """
    from fsrs import Card, Scheduler, State
    from fsrs.scheduler import DEFAULT_PARAMETERS

    scheduler = Scheduler(parameters=(*DEFAULT_PARAMETERS[:20], decay), enable_fuzzing=False)
    card = Card(card_id=1, state=State.Review, stability=stability, difficulty=5.0, due=_REVIEWED,
                last_review=_REVIEWED)  # fmt: skip
    return float(scheduler.get_card_retrievability(card, _REVIEWED + timedelta(days=elapsed_days)))


def fsrs_max_abs_difference(
    elapsed_days: Iterable[int], stabilities: Iterable[float], decays: Iterable[float]
) -> float:
    """``max |power_retention(t, S, d) - fsrs_retrievability(t, S, d)|`` over the grid (an exact max)."""
    grid = [(t, s, d) for t in elapsed_days for s in stabilities for d in decays]
    if not grid:
        raise ValueError("elapsed_days, stabilities and decays must each be non-empty, got an empty grid")
    return max(math.fabs(power_retention(t, s, d) - fsrs_retrievability(t, s, d)) for t, s, d in grid)
