"""The ``fsrs`` package (PyPI, the ``test`` extra) as the reference for the FSRS power law.

``fsrs.Scheduler.get_card_retrievability`` computes ``(1 + F t / S) ** C`` with ``C = -w[20]``
(the decay parameter, bounded to [0.1, 0.8] by the package), ``F = 0.9 ** (1 / C) - 1`` and
``t`` the whole days elapsed since the card's last review. :func:`fsrs_max_abs_difference`
compares :func:`~forgetting.curves.families.power_retention` with it on a grid. ``fsrs`` is
imported only when these functions run; no clock is read (cards get fixed ids and dates).

The package refuses a decay outside :data:`FSRS_DECAY_BOUNDS`, so it cannot speak for FSRS v4's
``d = 1``. For that exponent the reference is the curve as the FSRS benchmark writes it for
FSRS v4, ``(1 + t / (9 S))^-1`` (open-spaced-repetition/srs-benchmark, ``models/fsrs_v4.py``,
commit 00c9de5): :func:`fsrs_v4_retrievability`. :func:`fsrs_decay_checks` compares every
exponent it is given with the reference that exists for it and names the ones none covers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from ...curves.families import power_retention

__all__ = [
    "fsrs_default_decay",
    "FSRS_DECAY_BOUNDS",
    "FSRS_V4_DECAY",
    "CHECK_DAYS",
    "CHECK_STABILITIES",
    "fsrs_retrievability",
    "fsrs_v4_retrievability",
    "fsrs_max_abs_difference",
    "fsrs_decay_checks",
    "DIFF_DECIMALS",
    "decay_check_summary",
]

FSRS_DECAY_BOUNDS = (0.1, 0.8)
"""The range ``fsrs`` allows for its decay parameter ``w[20]``."""
FSRS_V4_DECAY = 1.0
"""FSRS v4's fixed decay exponent (its curve ``(1 + t / (9 S))^-1``; ``F = 0.9^-1 - 1 = 1/9``)."""
CHECK_DAYS = tuple(range(0, 3651, 73))
"""Elapsed whole days of the comparison grid: 0 to ten years, every 73 days."""
CHECK_STABILITIES = (0.01, 0.5, 1.0, 8.0, 100.0, 36500.0)
"""Stabilities (days) of the comparison grid, from far below a day to a century."""
DIFF_DECIMALS = 15
"""Differences are reported rounded to this many decimals: one unit in the last place of a value
near 1 (2.2e-16) is rounding in ``pow``, whose last bit a CPU's libm variant may choose."""
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


def fsrs_v4_retrievability(elapsed_days: float, stability: float) -> float:
    """FSRS v4's curve as the benchmark writes it: ``(1 + t / (9 S)) ** -1`` (``t >= 0``, ``S > 0``)."""
    if not (elapsed_days >= 0 and stability > 0):
        raise ValueError(
            f"elapsed_days must be >= 0 and stability > 0, got {elapsed_days!r} and {stability!r}"
        )
    return float((1.0 + elapsed_days / (9.0 * stability)) ** -1)


def fsrs_decay_checks(
    decays: Iterable[float],
    elapsed_days: Iterable[int] = CHECK_DAYS,
    stabilities: Iterable[float] = CHECK_STABILITIES,
) -> list[dict[str, Any]]:
    """One row per distinct decay (ascending): which reference covers it and the largest difference.

    ``reference`` is ``"fsrs package"`` for ``d`` in :data:`FSRS_DECAY_BOUNDS` (difference from
    :func:`fsrs_retrievability`), ``"srs-benchmark FSRS v4"`` for ``d = 1`` (from
    :func:`fsrs_v4_retrievability`), else ``None`` with ``max_abs_diff`` ``None``: no reference
    exists and only the library's formula speaks. ``grid_points`` counts the (t, S) pairs compared;
    differences are rounded to :data:`DIFF_DECIMALS` decimals.
    """
    days, stability_grid = list(elapsed_days), list(stabilities)
    if not days or not stability_grid:
        raise ValueError("elapsed_days and stabilities must each be non-empty, got an empty grid")
    low, high = FSRS_DECAY_BOUNDS
    rows: list[dict[str, Any]] = []
    for decay in sorted(set(decays)):
        reference: str | None
        difference: float | None
        if low <= decay <= high:
            reference, difference = "fsrs package", fsrs_max_abs_difference(days, stability_grid, [decay])
        elif decay == FSRS_V4_DECAY:
            reference = "srs-benchmark FSRS v4"
            difference = max(
                math.fabs(power_retention(t, s, decay) - fsrs_v4_retrievability(t, s))
                for t in days
                for s in stability_grid
            )
        else:
            reference, difference = None, None
        rows.append({"decay": decay, "reference": reference, "grid_points": len(days) * len(stability_grid),
                     "max_abs_diff": None if difference is None else round(difference, DIFF_DECIMALS)})  # fmt: skip
    return rows


def decay_check_summary(rows: list[dict[str, Any]], engine_decays: Iterable[float]) -> dict[str, Any]:
    """What a chapter says of :func:`fsrs_decay_checks` ``rows``, for the exponents its engine runs at.

    ``package_triples`` (the (t, S, d) triples compared with the package), ``package_max_abs_diff``
    and ``v4_max_abs_diff`` (the largest difference per reference; ``None`` if none was compared),
    ``package_decays`` and ``v4_decays`` (the exponents each covered, as text), and
    ``engine_unchecked`` (the engine's exponents no reference covers). ``ValueError`` if an engine
    exponent has no row.
    """
    by_decay = {row["decay"]: row for row in rows}
    engine = sorted(set(engine_decays))
    missing = [d for d in engine if d not in by_decay]
    if missing:
        raise ValueError(f"engine_decays {missing!r} have no row in rows (decays {sorted(by_decay)!r})")

    def covered(reference: str) -> list[dict[str, Any]]:
        return [row for row in rows if row["reference"] == reference]

    def largest(reference: str) -> float | None:
        values = [float(row["max_abs_diff"]) for row in covered(reference)]
        return max(values) if values else None

    package = covered("fsrs package")
    return {
        "package_triples": sum(int(row["grid_points"]) for row in package),
        "package_max_abs_diff": largest("fsrs package"),
        "v4_max_abs_diff": largest("srs-benchmark FSRS v4"),
        "package_decays": ", ".join(f"{row['decay']:g}" for row in package),
        "v4_decays": ", ".join(f"{row['decay']:g}" for row in covered("srs-benchmark FSRS v4")),
        "engine_unchecked": sum(by_decay[d]["reference"] is None for d in engine),
    }
