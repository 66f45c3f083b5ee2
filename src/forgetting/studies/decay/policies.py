"""Eviction policies: an engine and its parameters, with the name they carry in tables.

:class:`DecayPolicy` (the Ebbinghaus engine, threshold ``theta`` and baseline stability ``S0``)
and :class:`WindowPolicy` (the recency window ``W``) each build a fresh engine and give the
eviction delay after ``k`` recalls that the batch simulator replays
(:mod:`~forgetting.studies.decay.batch`). :data:`Policy` is their union.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from ...decay.curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    decay_eviction_delay,
    window_eviction_delay,
)
from ...decay.engines import EbbinghausEngine, Engine, RecencyWindow
from . import batch

__all__ = ["Policy", "DecayPolicy", "WindowPolicy", "DECAY", "WINDOW"]


@dataclass(frozen=True)
class DecayPolicy:
    """The Ebbinghaus decay engine with its two parameters.

    Attributes
    ----------
    eviction_threshold : float, default 0.20
        ``theta``: an item is evicted the first turn its retention falls below it.
    baseline_stability : float, default 8.0
        ``S0``, the stability of a new item (turns).
    """

    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD
    baseline_stability: float = DEFAULT_BASELINE_STABILITY
    kind: ClassVar[str] = "decay"

    def engine(self) -> Engine:
        """A fresh :class:`~forgetting.decay.engines.EbbinghausEngine`."""
        return EbbinghausEngine(
            eviction_threshold=self.eviction_threshold, baseline_stability=self.baseline_stability
        )

    @property
    def label(self) -> str:
        """Name for tables and legends, e.g. ``Ebbinghaus decay (θ = 0.20)``; S0 shown when not 8."""
        stability = (
            ""
            if self.baseline_stability == DEFAULT_BASELINE_STABILITY
            else f", S₀ = {self.baseline_stability:g}"
        )
        return f"Ebbinghaus decay (θ = {self.eviction_threshold:.2f}{stability})"

    @property
    def grace_turns(self) -> int:
        """Turns after its last touch at which an unreinforced item is evicted."""
        delay = decay_eviction_delay(self.baseline_stability, self.eviction_threshold)
        assert delay is not None  # S0 is finite, so the delay is too
        return delay

    def eviction_delays(self, max_recalls: int) -> tuple[int | None, ...]:
        """Eviction delay after ``0 .. max_recalls`` recalls (:func:`~forgetting.studies.decay.batch.decay_delays`)."""
        return batch.decay_delays(self.eviction_threshold, self.baseline_stability, max_recalls)


@dataclass(frozen=True)
class WindowPolicy:
    """The recency window: evict when ``turn - last_touched > window_size``.

    Attributes
    ----------
    window_size : int, default 15
        ``W``, in turns.
    """

    window_size: int = DEFAULT_WINDOW_SIZE
    kind: ClassVar[str] = "window"

    def engine(self) -> Engine:
        """A fresh :class:`~forgetting.decay.engines.RecencyWindow`."""
        return RecencyWindow(window_size=self.window_size)

    @property
    def label(self) -> str:
        """Name for tables and legends, e.g. ``Recency window (W = 15)``."""
        return f"Recency window (W = {self.window_size})"

    @property
    def grace_turns(self) -> int:
        """Turns after its last touch at which an unreinforced item is evicted."""
        return window_eviction_delay(self.window_size)

    def eviction_delays(self, max_recalls: int) -> tuple[int | None, ...]:
        """Eviction delay after ``0 .. max_recalls`` recalls (:func:`~forgetting.studies.decay.batch.window_delays`)."""
        return batch.window_delays(self.window_size, max_recalls)


Policy = DecayPolicy | WindowPolicy
"""An eviction policy: the engine it builds and the name it carries in tables."""


class ScheduledPolicy(Protocol):
    """What the batch simulator needs of a policy (:func:`~forgetting.studies.decay.study.run_policies`):
    its name, and its eviction delay after ``0 .. max_recalls`` recalls (``None``: never)."""

    @property
    def label(self) -> str: ...

    def eviction_delays(self, max_recalls: int) -> tuple[int | None, ...]: ...


DECAY = DecayPolicy()
"""The decay engine at its defaults (theta 0.20, S0 8)."""
WINDOW = WindowPolicy()
"""The recency window at its default (W 15)."""
