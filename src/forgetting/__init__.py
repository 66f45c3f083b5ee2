"""forgetting: when should an agent's memory forget?

Two layers. The library, the two mechanisms and what an agent builder reuses:

* :mod:`forgetting.decay` -- an Ebbinghaus decay engine (retention ``R = exp(-t / S)``,
  every recall multiplies ``S`` by ``1 + ln(1 + n)``) and the recency window it is measured
  against.
* :mod:`forgetting.worth` -- Memory Worth, ``MW = h+ / (h+ + h-)``, an outcome-based
  two-counter estimator of which memories help, its variants and effect estimators.
* :mod:`forgetting.governed` -- :class:`GovernedMemory`, both signals on one set of memories.
* :mod:`forgetting.conversations` -- one event type, one replay driver, the forgetting rules of
  the field (capacity rules, MemoryBank's, YourMemory's), and LoCoMo's data, checked and loaded.
* :mod:`forgetting.curves` -- other forgetting curves and the power-law engine.
* :mod:`forgetting.text` -- the all-MiniLM-L6-v2 sentence encoder in numpy, and its cache.

And the book, which the library never imports: :mod:`forgetting.studies` (the experiments of
every chapter) and :mod:`forgetting.pipeline` (chapters, runs, the site).

The names below are the core of the library; everything else is reached through its package
(``forgetting.conversations`` after ``import forgetting`` imports that package on first use).

>>> from forgetting import EbbinghausEngine, MemoryWorth
>>> engine = EbbinghausEngine()
>>> engine.register("fact", "the deploy target is Kubernetes", turn=1)
>>> engine.recall("fact", turn=5)
True
>>> estimator = MemoryWorth().update(["fact"], success=True)
>>> estimator.worth("fact")
1.0
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (which takes a while)
if TYPE_CHECKING:  # the same names, for type checkers; at run time they load on first use
    from typing import Any

    from .decay import EbbinghausEngine, Engine, RecencyWindow, reinforced_stability, retention
    from .governed import DeprecationRule, GovernedMemory, MemoryStatus
    from .worth import DiscountedMemoryWorth, MemoryWorth, memory_worth, update_batch, worth_class

#: Each core name and the subpackage it comes from. ``import forgetting`` imports none of them
#: (and no numpy): the command line starts, and answers Ctrl-C, before any heavy import.
_NAMES = {
    "EbbinghausEngine": "decay",
    "Engine": "decay",
    "RecencyWindow": "decay",
    "reinforced_stability": "decay",
    "retention": "decay",
    "DiscountedMemoryWorth": "worth",
    "MemoryWorth": "worth",
    "memory_worth": "worth",
    "update_batch": "worth",
    "worth_class": "worth",
    "GovernedMemory": "governed",
    "MemoryStatus": "governed",
    "DeprecationRule": "governed",
}
#: Every subpackage, an attribute of ``forgetting`` on first use (imported then, not before).
_SUBPACKAGES = ("decay", "curves", "worth", "text", "conversations", "studies", "pipeline")


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_NAMES) | set(_SUBPACKAGES))


__version__ = "0.1.0"

__all__ = [
    "DeprecationRule",
    "DiscountedMemoryWorth",
    "EbbinghausEngine",
    "Engine",
    "GovernedMemory",
    "MemoryStatus",
    "MemoryWorth",
    "RecencyWindow",
    "memory_worth",
    "reinforced_stability",
    "retention",
    "update_batch",
    "worth_class",
]
