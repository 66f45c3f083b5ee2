"""Decay: usage-based retention, and the recency window it is measured against.

* :mod:`~forgetting.decay.curves` -- the formulas: retention ``R = exp(-t / S)``,
  reinforcement ``S <- S * (1 + ln(1 + n))``, eviction delays.
* :mod:`~forgetting.decay.engines` -- :class:`EbbinghausEngine`, :class:`RecencyWindow` and
  the :class:`Engine` protocol they satisfy.

Other curve shapes (the power law) are a package of their own beside this one,
:mod:`forgetting.curves`, which builds on the engines here. The article's synthetic sessions, the
replay of a session into a trace and every comparison of the decay chapters are the book's study,
:mod:`forgetting.studies.decay`.
"""

from .curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    decay_eviction_delay,
    naive_eviction_turn,
    reinforced_stability,
    retention,
    stability_after_recalls,
    window_eviction_delay,
)
from .engines import EbbinghausEngine, Engine, MemoryItem, RecencyWindow

__all__ = [
    "DEFAULT_BASELINE_STABILITY",
    "DEFAULT_EVICTION_THRESHOLD",
    "DEFAULT_WINDOW_SIZE",
    "retention",
    "reinforced_stability",
    "stability_after_recalls",
    "naive_eviction_turn",
    "decay_eviction_delay",
    "window_eviction_delay",
    "Engine",
    "MemoryItem",
    "EbbinghausEngine",
    "RecencyWindow",
]
