"""The article's eviction policies: the library's rules on turns, with what the study adds.

:class:`DecayPolicy` is the library's :class:`~forgetting.conversations.policies.Ebbinghaus` rule
(the Ebbinghaus engine, threshold ``theta`` and baseline stability ``S0``) and
:class:`WindowPolicy` its :class:`~forgetting.conversations.policies.Window` (the recency window
``W``): the same classes, so one of them replays a conversation through the library's driver
(:func:`~forgetting.conversations.policies.replay`) as the rule it extends does. What a subclass
adds is what the article's study reads: its clock is always turns, its parameters may be given
positionally (the book's cells write ``DecayPolicy(0.2)``), its :attr:`kind` (an
:class:`EngineKind`) keys tables and summaries, its ``label`` is the name it carries in the
article's tables, :meth:`engine` builds the fresh engine the article's replay
(:func:`~forgetting.studies.decay.simulation.simulate`) steps, and ``eviction_delays`` is the
schedule the batch form of that replay (:mod:`~forgetting.studies.decay.batch`) reads.
:data:`Policy` is their union.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar, Protocol

from ..._validate import raise_problems
from ...conversations.policies import DecayClock, Ebbinghaus, Window
from ...decay.curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    decay_eviction_delay,
    window_eviction_delay,
)
from ...decay.engines import EbbinghausEngine, Engine, RecencyWindow
from . import batch

__all__ = ["EngineKind", "Policy", "DecayPolicy", "WindowPolicy", "ScheduledPolicy", "DECAY", "WINDOW"]


class EngineKind(enum.StrEnum):
    """Which engine a policy of the decay chapters runs: the name its rows and summaries carry."""

    DECAY = "decay"
    """The Ebbinghaus decay engine (:class:`~forgetting.decay.engines.EbbinghausEngine`)."""
    WINDOW = "window"
    """The recency window (:class:`~forgetting.decay.engines.RecencyWindow`)."""
    POWER = "power"
    """The power-law engine of the curves chapter (:class:`~forgetting.curves.power_engine.PowerLawEngine`)."""


@dataclass(frozen=True)
class DecayPolicy(Ebbinghaus):
    """The library's :class:`~forgetting.conversations.policies.Ebbinghaus` rule on turns, as the
    article's study reads it (module docstring).

    Attributes
    ----------
    eviction_threshold : float, default 0.20
        ``theta`` in (0, 1): an item is evicted the first turn its retention falls below it.
    baseline_stability : float, default 8.0
        ``S0 > 0``, the stability of a new item (turns).
    clock : DecayClock, always ``"turns"``
        The article counts turns: any other clock is a ``ValueError``.
    """

    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD
    baseline_stability: float = DEFAULT_BASELINE_STABILITY
    kind: ClassVar[EngineKind] = EngineKind.DECAY

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.clock is not DecayClock.TURNS:
            raise_problems(
                [f"clock must be 'turns' (the article's sessions count turns), got {str(self.clock)!r}"]
            )

    def engine(self) -> Engine:
        """A fresh :class:`~forgetting.decay.engines.EbbinghausEngine`."""
        return EbbinghausEngine(
            eviction_threshold=self.eviction_threshold, baseline_stability=self.baseline_stability
        )

    @property
    def label(self) -> str:
        """Name for the article's tables and legends, e.g. ``Ebbinghaus decay (θ = 0.20)``; S0
        shown when not 8 (the clock is always turns)."""
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
class WindowPolicy(Window):
    """The library's :class:`~forgetting.conversations.policies.Window` rule, as the article's study
    reads it (module docstring): evict when ``turn - last_touched > window_size``; its label is
    the library's, e.g. ``Recency window (W = 15)``.

    Attributes
    ----------
    window_size : int, default 15
        ``W >= 1``, in turns.
    """

    window_size: int = DEFAULT_WINDOW_SIZE
    kind: ClassVar[EngineKind] = EngineKind.WINDOW

    def engine(self) -> Engine:
        """A fresh :class:`~forgetting.decay.engines.RecencyWindow`."""
        return RecencyWindow(window_size=self.window_size)

    @property
    def grace_turns(self) -> int:
        """Turns after its last touch at which an unreinforced item is evicted."""
        return window_eviction_delay(self.window_size)

    def eviction_delays(self, max_recalls: int) -> tuple[int | None, ...]:
        """Eviction delay after ``0 .. max_recalls`` recalls (:func:`~forgetting.studies.decay.batch.window_delays`)."""
        return batch.window_delays(self.window_size, max_recalls)


Policy = DecayPolicy | WindowPolicy
"""An eviction policy of the article: the engine it builds and the name it carries in tables."""


class ScheduledPolicy(Protocol):
    """What the batch form of the replay needs of a policy (:func:`~forgetting.studies.decay.study.run_policies`):
    its name, and its eviction delay after ``0 .. max_recalls`` recalls (``None``: never)."""

    @property
    def label(self) -> str: ...

    def eviction_delays(self, max_recalls: int) -> tuple[int | None, ...]: ...


DECAY = DecayPolicy()
"""The decay engine at its defaults (theta 0.20, S0 8)."""
WINDOW = WindowPolicy()
"""The recency window at its default (W 15)."""
