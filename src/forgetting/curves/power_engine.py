"""The decay engine with the FSRS power-law curve in place of the exponential.

:class:`PowerLawEngine` is :class:`~forgetting.decay.engines.EbbinghausEngine` with one formula
changed: retention after ``t`` turns without a touch is
:func:`~forgetting.curves.families.power_retention` ``(1 + F t / S)^(-d)`` instead of
``exp(-t / S)``. Everything else is shared: the same :class:`~forgetting.decay.engines.Engine`
interface and bucketed schedule (``ScheduledEngine``), the same recall reinforcement
``S <- S (1 + ln(1 + n))``, and eviction at the first whole turn where ``R < theta``
(:func:`~forgetting.curves.families.power_eviction_delay`, exact).

:func:`scan_power_evictions` is the direct reading of the rule, for the tests.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Self

from .._validate import raise_problems, real_problem
from ..decay.curves import DEFAULT_EVICTION_THRESHOLD, decay_problems, reinforced_stability
from ..decay.engines import MemoryItem, ScheduledEngine
from .families import matched_power_stability, power_eviction_delay, power_retention

__all__ = ["PowerLawEngine", "scan_power_evictions"]


class PowerLawEngine(ScheduledEngine):
    """Evict an item the first turn its power-law retention ``(1 + F t / S)^(-d)`` drops below ``theta``.

    Parameters
    ----------
    baseline_stability : float
        ``S0 > 0``, in turns: the time at which a fresh item's retention is 0.9. To give a plain
        item the exponential engine's grace period use :meth:`matched`. Every argument is
        keyword-only.
    decay : float
        ``d > 0``, the decay exponent.
    eviction_threshold : float, default 0.20
        ``theta`` in (0, 1).

    Examples
    --------
    >>> engine = PowerLawEngine.matched(decay=0.5)  # same grace as the exponential at S0 = 8
    >>> engine.register("fact", "the user is vegetarian", turn=1)
    >>> engine.step(13), engine.step(14)
    ([], ['fact'])
    >>> PowerLawEngine(baseline_stability=8.0, decay=0.5).to_dict()["settings"]
    {'baseline_stability': 8.0, 'decay': 0.5, 'eviction_threshold': 0.2}
    """

    FORMAT = "forgetting.PowerLawEngine"
    """The ``"format"`` of :meth:`to_dict`."""

    def __init__(
        self,
        *,
        baseline_stability: float,
        decay: float,
        eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
    ) -> None:
        raise_problems(
            [
                *decay_problems(eviction_threshold, baseline_stability),
                real_problem("decay", decay, 0.0, low_open=True),
            ]
        )
        super().__init__()
        self.baseline_stability = float(baseline_stability)
        self.decay = float(decay)
        self.eviction_threshold = float(eviction_threshold)
        self._untouched = power_eviction_delay(self.baseline_stability, self.eviction_threshold, self.decay)

    @classmethod
    def matched(
        cls,
        *,
        decay: float,
        eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
        exponential_stability: float = 8.0,
        match_threshold: float | None = None,
    ) -> PowerLawEngine:
        """An engine whose ``S0`` makes a plain item's crossing of ``match_threshold`` the exponential's.

        ``match_threshold`` defaults to ``eviction_threshold``; matching at a fixed threshold and
        evicting at another is how the frontier compares the curves over ``theta``.
        """
        match = eviction_threshold if match_threshold is None else match_threshold
        return cls(
            baseline_stability=matched_power_stability(exponential_stability, match, decay),
            decay=decay,
            eviction_threshold=eviction_threshold,
        )

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-safe data, as :meth:`~forgetting.decay.engines.EbbinghausEngine.to_dict`
        writes it (format ``"forgetting.PowerLawEngine"``, settings the three keyword arguments)."""
        settings = {
            "baseline_stability": self.baseline_stability,
            "decay": self.decay,
            "eviction_threshold": self.eviction_threshold,
        }
        return self._state_dict(self.FORMAT, settings)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The engine :meth:`to_dict` wrote: same state, same future (``ValueError`` otherwise)."""
        return cls._from_state(data, cls.FORMAT)

    def retention(self, mem_id: Hashable, turn: int) -> float:
        """Retention of a present item at ``turn`` (:func:`~forgetting.curves.families.power_retention`),
        an int no earlier than its last touch (:meth:`~forgetting.decay.engines.ScheduledEngine.turns_since_touch`)."""
        return power_retention(self.turns_since_touch(mem_id, turn), self.item(mem_id).stability, self.decay)

    def _initial_stability(self) -> float:
        return self.baseline_stability

    def untouched_delay(self) -> int | None:
        return self._untouched  # read at every registration: computed once, in __init__

    def _touched(self, item: MemoryItem) -> int | None:
        item.stability = reinforced_stability(item.stability, item.touch_count)
        return power_eviction_delay(item.stability, self.eviction_threshold, self.decay)

    def _recalled_delay(self, stability: float) -> int | None:
        return power_eviction_delay(stability, self.eviction_threshold, self.decay)


def scan_power_evictions(engine: PowerLawEngine, turn: int) -> list[Any]:
    """Direct reading of the rule: the present ids whose retention at ``turn`` is below ``theta``."""
    due = []
    for mem_id in engine.present_ids():
        item = engine.item(mem_id)
        if (
            power_retention(turn - item.last_touched, item.stability, engine.decay)
            < engine.eviction_threshold
        ):
            due.append(mem_id)
    return due
