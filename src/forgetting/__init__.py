"""forgetting: when should an agent's memory forget?

Two mechanisms, each in its own module:

* :mod:`forgetting.decay` -- an Ebbinghaus decay engine (retention ``exp(-t/S)``,
  every recall strengthens ``S``) and the recency window it is measured against.
* :mod:`forgetting.worth` -- Memory Worth, an outcome-based two-counter estimator.
"""

__version__ = "0.1.0"
