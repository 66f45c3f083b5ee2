"""Decay: usage-based retention, and the recency window it is measured against.

* :mod:`~forgetting.decay.curves` -- the formulas: retention ``R = exp(-t / S)``,
  reinforcement ``S <- S * (1 + ln(1 + n))``, eviction delays.
* :mod:`~forgetting.decay.engines` -- :class:`EbbinghausEngine`, :class:`RecencyWindow` and
  the :class:`Engine` protocol they satisfy.
* :mod:`~forgetting.decay.sessions` -- seeded synthetic sessions (the article's generator).
* :mod:`~forgetting.decay.simulation` -- replay a session through an engine into a trace.
* :mod:`~forgetting.decay.metrics` -- FRR, survival, footprint over a trace.
* :mod:`~forgetting.decay.timeline` -- one fact's recalls around its eviction, its lowest retention.
* :mod:`~forgetting.decay.study` -- every comparison of the decay chapters as one function.
* :mod:`~forgetting.decay.frontier` -- terminal FRR against footprint over each policy's range.
* :mod:`~forgetting.decay.wallclock` -- the article's first draft: decay on the wall clock.

Other curve shapes (the power law, human savings data, fits) are a package of their own beside
this one, :mod:`forgetting.curves`, which builds on the engines here.
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
from .sessions import Session, SessionConfig, generate_session
from .simulation import Trace, simulate

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
    "SessionConfig",
    "Session",
    "generate_session",
    "Trace",
    "simulate",
]
