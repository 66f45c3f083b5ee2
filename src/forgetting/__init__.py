"""forgetting: when should an agent's memory forget?

Two mechanisms and the experiments about them:

* :mod:`forgetting.decay` -- an Ebbinghaus decay engine (retention ``R = exp(-t / S)``,
  every recall multiplies ``S`` by ``1 + ln(1 + n)``) and the recency window it is measured
  against.
* :mod:`forgetting.worth` -- Memory Worth, ``MW = h+ / (h+ + h-)``, an outcome-based
  two-counter estimator of which memories help.
* :mod:`forgetting.worlds`, :mod:`forgetting.text`, :mod:`forgetting.governance` -- the
  simulated worlds of Experiments 1-4, Experiment 5 on real text, and the two signals together.
* :mod:`forgetting.pipeline` -- the book's plumbing (chapters, runs, the site), apart from the science.

The names below are the core of the library; everything else is reached through its package.

>>> from forgetting import EbbinghausEngine, MemoryWorth
>>> engine = EbbinghausEngine()
>>> engine.register("fact", "the deploy target is Kubernetes", turn=1)
>>> engine.recall("fact", turn=5)
True
>>> estimator = MemoryWorth().update(["fact"], success=True)
>>> estimator.worth("fact")
1.0
"""

from .decay import (
    EbbinghausEngine,
    Engine,
    RecencyWindow,
    SessionConfig,
    generate_session,
    reinforced_stability,
    retention,
    simulate,
)
from .worth import DiscountedMemoryWorth, MemoryWorth, memory_worth, update_batch, worth_class

__version__ = "0.1.0"

__all__ = [
    "DiscountedMemoryWorth",
    "EbbinghausEngine",
    "Engine",
    "MemoryWorth",
    "RecencyWindow",
    "SessionConfig",
    "generate_session",
    "memory_worth",
    "reinforced_stability",
    "retention",
    "simulate",
    "update_batch",
    "worth_class",
]
