"""Memory Worth conditioned on a context: separate counters per ``(context, mem_id)``.

Conditioning on a context (a task type, a query cluster) compares a memory only with
episodes of the same kind, which removes a confound when retrieval depends on how hard the
task is (Experiment 2, :mod:`forgetting.studies.worlds.confound`). Within one context every formula
is the plain estimator's: ``MW(m | c) = h+(c, m) / (h+(c, m) + h-(c, m))``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Self

from .._validate import json_id, raise_problems
from .estimator import (
    WorthEstimator,
    add_weights,
    episode_sum_problem,
    memory_key,
    restore_counters,
    validate_episode,
)
from .formulas import evidence_volume, memory_worth
from .taxonomy import WorthClass, worth_class

__all__ = ["ContextualMemoryWorth"]


class ContextualMemoryWorth(WorthEstimator):
    """Memory Worth with separate counters per ``(context, mem_id)``.

    Every reading method takes the context next to the memory id; :meth:`pooled_worth`
    reads the counters summed over contexts (the unconditioned estimate).

    Parameters
    ----------
    prior, min_evidence, high_threshold, low_threshold :
        As in :class:`~forgetting.worth.estimator.MemoryWorth` (keyword-only).

    Attributes
    ----------
    successes_, failures_ : dict
        ``h+`` and ``h-`` keyed by ``(context, mem_id)``, in order of first retrieval.
    n_episodes_ : int
        Episodes accepted by :meth:`update`.

    Examples
    --------
    >>> cmw = ContextualMemoryWorth()
    >>> _ = cmw.update(["a"], False, context="hard").update(["a"], True, context="easy")
    >>> cmw.worth("a", "hard"), cmw.worth("a", "easy"), cmw.pooled_worth("a")
    (0.0, 1.0, 0.5)
    >>> cmw.to_dict()["counters"]
    [['hard', 'a', 0.0, 1.0], ['easy', 'a', 1.0, 0.0]]
    """

    FORMAT = "forgetting.ContextualMemoryWorth"
    """The ``"format"`` of :meth:`to_dict`."""

    def reset(self) -> Self:
        """Forget all evidence (hyperparameters stay)."""
        self.successes_: dict[tuple[Any, Any], float] = {}
        self.failures_: dict[tuple[Any, Any], float] = {}
        self.n_episodes_ = 0
        return self

    def update(
        self,
        retrieved: Sequence[Hashable],
        success: bool,
        weights: Sequence[float] | None = None,
        *,
        context: Hashable,
    ) -> Self:
        """Record one episode of ``context`` (keyword-only, required).

        As :meth:`~forgetting.worth.estimator.MemoryWorth.update`, with the counters of
        ``(context, id)``; the whole episode is checked before any counter changes (every
        ``h+ + h-`` must stay finite). A context, like a memory id, is hashable, not a ``bool``
        (``True`` would be the context ``1``) and equal to itself (not NaN).
        """
        key = memory_key(context, "context", "context")
        ids, outcome, values = validate_episode(retrieved, success, weights)
        keys = [(key, m) for m in ids]
        raise_problems([episode_sum_problem(self.successes_, self.failures_, keys, outcome, values)])
        add_weights(self.successes_, self.failures_, keys, outcome, values)
        self.n_episodes_ += 1
        return self

    def counters(self, mem_id: Hashable, context: Hashable) -> tuple[float, float]:
        """``(h+, h-)`` of ``mem_id`` within ``context``; ``(0.0, 0.0)`` without evidence there."""
        key = (memory_key(context, "context", "context"), memory_key(mem_id))
        return self.successes_.get(key, 0.0), self.failures_.get(key, 0.0)

    def worth(self, mem_id: Hashable, context: Hashable) -> float:
        """Memory Worth of ``mem_id`` within ``context``; the prior without evidence there."""
        return float(memory_worth(*self.counters(mem_id, context), prior=self.prior))

    def evidence(self, mem_id: Hashable, context: Hashable) -> float:
        """Evidence volume ``h+ + h-`` of ``mem_id`` within ``context``."""
        return float(evidence_volume(*self.counters(mem_id, context)))

    def classify(self, mem_id: Hashable, context: Hashable) -> WorthClass:
        """Taxonomy class of ``mem_id`` within ``context``, a :class:`~forgetting.worth.taxonomy.WorthClass`."""
        return WorthClass(
            worth_class(
                self.worth(mem_id, context),
                self.evidence(mem_id, context),
                self.min_evidence,
                self.high_threshold,
                self.low_threshold,
            )
        )

    def pooled_counters(self, mem_id: Hashable) -> tuple[float, float]:
        """Counters summed over contexts (in order of first appearance), i.e. the unconditioned ones."""
        key = memory_key(mem_id)
        pos = neg = 0.0
        for pair, value in self.successes_.items():
            if pair[1] == key:
                pos += value
                neg += self.failures_[pair]
        return pos, neg

    def pooled_worth(self, mem_id: Hashable) -> float:
        """Worth from the counters summed over all contexts (ignores the conditioning)."""
        return float(memory_worth(*self.pooled_counters(mem_id), prior=self.prior))

    def contexts(self) -> list[Any]:
        """Contexts seen so far, in order of first appearance."""
        return list(dict.fromkeys(c for c, _ in self.successes_))

    def memory_ids(self) -> list[Any]:
        """Ids retrieved at least once in any context, in order of first retrieval."""
        return list(dict.fromkeys(m for _, m in self.successes_))

    # --- JSON -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-safe data: :meth:`from_dict` of it continues bit for bit.

        As :meth:`MemoryWorth.to_dict <forgetting.worth.estimator.MemoryWorth.to_dict>`, with
        ``"counters": [[context, id, h+, h-], ...]`` (order of first retrieval), format
        ``"forgetting.ContextualMemoryWorth"``; ``ValueError`` naming the first context or id
        that is neither a ``str`` nor an ``int``.
        """
        failures = self.failures_
        rows = [
            [json_id(context, "context"), json_id(mem_id), value, failures[(context, mem_id)]]
            for (context, mem_id), value in self.successes_.items()
        ]
        return self._state_dict({"counters": rows})

    def _restore(self, data: dict[str, Any]) -> None:
        restore_counters(data, "counters", self.successes_, self.failures_, key_width=2)
