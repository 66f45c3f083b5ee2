"""The decay-engine article's study: its sessions, their replay, and every comparison it makes.

* :mod:`~forgetting.studies.decay.sessions` -- seeded synthetic sessions (the article's generator).
* :mod:`~forgetting.studies.decay.simulation` -- replay a session through an engine into a trace.
* :mod:`~forgetting.studies.decay.batch` -- the same replay for many sessions at once, as arrays.
* :mod:`~forgetting.studies.decay.policies` -- an engine and its parameters, with its table name.
* :mod:`~forgetting.studies.decay.metrics` -- FRR, survival, footprint over a trace.
* :mod:`~forgetting.studies.decay.losses` -- where and when foundational facts are lost.
* :mod:`~forgetting.studies.decay.timeline` -- one fact's recalls around its eviction, its lowest retention.
* :mod:`~forgetting.studies.decay.study` -- every comparison of the decay chapters as one function.
* :mod:`~forgetting.studies.decay.frontier` -- terminal FRR against footprint over each policy's range.
* :mod:`~forgetting.studies.decay.capacity`, :mod:`~forgetting.studies.decay.capacity_batch`,
  :mod:`~forgetting.studies.decay.sweep_study` -- the engines with a fixed budget of items.
* :mod:`~forgetting.studies.decay.postmortems` -- grace periods, schedule bounds, spacing.
* :mod:`~forgetting.studies.decay.wallclock`, :mod:`~forgetting.studies.decay.wallclock_batch`
  -- the article's first draft: decay on the wall clock.

The engines and formulas it measures are the library's, :mod:`forgetting.decay`.
"""

from .sessions import Session, SessionConfig, generate_session
from .simulation import Trace, simulate

__all__ = ["Session", "SessionConfig", "Trace", "generate_session", "simulate"]
