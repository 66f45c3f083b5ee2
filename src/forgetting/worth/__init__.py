"""Memory Worth: an outcome-based, two-counter estimate of how useful a memory is.

For every memory ``m`` two weighted counters: ``h+(m)`` (retrieved, episode succeeded) and
``h-(m)`` (retrieved, episode failed). ``MW(m) = h+ / (h+ + h-)``, the prior (0.5) before any
evidence; evidence volume ``V(m) = h+ + h-``. Rate and volume sort a memory into one of four
classes: *uncertain*, *high-value*, *mixed*, *low-value*.

With uniform weights, ``MW(m)`` converges almost surely to ``p+(m)`` under stationarity,
infinite exploration and a constant conditional success rate,
``Pr[y_t = +1 | F_{t-1}, m in M_t] = p+(m)`` for every history ``F_{t-1}`` (retrieval may
depend on the history; what it must not do is change the success rate of the episodes that
retrieve ``m``). With other weights the limit is a weight-averaged success rate. ``p+`` is an
association, not a causal effect: a useless memory that always travels with a useful one earns
the same worth (:mod:`forgetting.studies.worlds.hitchhiker`).

* :mod:`~forgetting.worth.formulas` -- ``memory_worth``, ``evidence_volume``, ``decayed``, weights.
* :mod:`~forgetting.worth.taxonomy` -- the four classes and their thresholds (stored once).
* :mod:`~forgetting.worth.estimator` -- :class:`MemoryWorth`, over any hashable ids.
* :mod:`~forgetting.worth.contextual` -- :class:`ContextualMemoryWorth`, counters per context.
* :mod:`~forgetting.worth.discounted` -- :class:`DiscountedMemoryWorth` and its batch forms.
* :mod:`~forgetting.worth.evidence` -- evidence of harm, not association: :class:`EffectArms`
  and :func:`harmful` (an interval on a memory's effect on success below 0), :class:`HarmTest`
  (a sequential test of it, level ``alpha`` over a whole stream).
* :mod:`~forgetting.worth.batch` -- :func:`update_batch`, :class:`WorthArrays`, :func:`add_episodes`,
  :class:`UnitCounters`.
"""

from .batch import UnitCounters, WorthArrays, add_episodes, update_batch
from .contextual import ContextualMemoryWorth
from .discounted import DEFAULT_DISCOUNT, DiscountedMemoryWorth, discounted_counter_paths, discounted_counters
from .estimator import MemoryWorth, WorthEstimator
from .evidence import DEFAULT_ALPHA, DEFAULT_EFFECT_Z, EffectArms, HarmTest, harmful, retrieval_chance
from .formulas import (
    DEFAULT_PRIOR,
    decayed,
    evidence_volume,
    memory_worth,
    oracle_weights,
    score_weights,
    uniform_weights,
)
from .taxonomy import (
    DEFAULT_HIGH_THRESHOLD,
    DEFAULT_LOW_THRESHOLD,
    DEFAULT_MIN_EVIDENCE,
    HIGH_VALUE,
    LOW_VALUE,
    MIXED,
    UNCERTAIN,
    WORTH_CLASSES,
    WorthClass,
    class_counts,
    worth_class,
)

__all__ = [
    "DEFAULT_PRIOR",
    "DEFAULT_MIN_EVIDENCE",
    "DEFAULT_HIGH_THRESHOLD",
    "DEFAULT_LOW_THRESHOLD",
    "DEFAULT_DISCOUNT",
    "HIGH_VALUE",
    "UNCERTAIN",
    "MIXED",
    "LOW_VALUE",
    "WORTH_CLASSES",
    "WorthClass",
    "memory_worth",
    "evidence_volume",
    "worth_class",
    "class_counts",
    "decayed",
    "uniform_weights",
    "score_weights",
    "oracle_weights",
    "WorthEstimator",
    "MemoryWorth",
    "ContextualMemoryWorth",
    "DiscountedMemoryWorth",
    "discounted_counters",
    "discounted_counter_paths",
    "DEFAULT_EFFECT_Z",
    "DEFAULT_ALPHA",
    "EffectArms",
    "harmful",
    "HarmTest",
    "retrieval_chance",
    "update_batch",
    "add_episodes",
    "UnitCounters",
    "WorthArrays",
]
