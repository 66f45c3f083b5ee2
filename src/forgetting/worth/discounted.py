"""Discounted Memory Worth: counters that decay by ``gamma`` every episode.

Direct definition, per episode: first every counter of every memory decays, ``h <- gamma * h``,
then the retrieved memories add their weights as usual. After ``T`` episodes a memory's
counter is therefore the closed form::

    h(T) = sum_{t=1..T} gamma**(T - t) * w_t(m)    (w_t(m): its weight in episode t if retrieved
                                                      with the matching outcome, else 0)

Three computations of that one definition live here, for three uses, and agree to rounding
error (tested):

* :class:`DiscountedMemoryWorth` -- online, O(retrieved) per episode (a global scale);
* :func:`discounted_counters` -- the closed form over a block of episodes, final values only;
* :func:`discounted_counter_paths` -- the recursion over per-episode evidence, every episode's
  values (a first-order recursive filter).

The price of discounting: with ``gamma < 1`` the strict almost-sure convergence to ``p+(m)``
is lost; the estimate keeps a variance floor of order ``(1 - gamma)`` instead of shrinking
like ``1 / n``. ``gamma = 1`` is the plain estimator.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from .._validate import int_problem, json_id, raise_problems, real_problem, shown
from .batch import block_problems
from .estimator import MemoryWorth, memory_key, restore_counters
from .formulas import DEFAULT_PRIOR, decayed
from .taxonomy import DEFAULT_HIGH_THRESHOLD, DEFAULT_LOW_THRESHOLD, DEFAULT_MIN_EVIDENCE, taxonomy_problems

__all__ = [
    "DEFAULT_DISCOUNT",
    "DiscountedMemoryWorth",
    "discount_problem",
    "discounted_counters",
    "discounted_counter_paths",
]

DEFAULT_DISCOUNT = 0.99
"""Per-episode decay ``gamma`` (effective memory ~ ``1 / (1 - gamma)`` episodes)."""

# The discounted estimator stores counters divided by a global scale; when the scale gets this
# small every stored counter is multiplied back, so that ``weight / scale`` never overflows.
_RESCALE_BELOW = 1e-120


def discount_problem(discount: object) -> str | None:
    """``None`` if ``discount`` is a real number in (0, 1], else the sentence saying why not."""
    return real_problem("discount", discount, 0.0, 1.0, low_open=True)


class DiscountedMemoryWorth(MemoryWorth):
    """Memory Worth whose counters decay by ``discount`` every episode.

    Old outcomes fade with weight ``gamma**age``, so the estimate follows a task distribution
    that shifts (a stale memory loses its worth within about ``1 / (1 - gamma)`` episodes).
    Evidence decays too, so an unused memory drifts back to ``uncertain``; its rate keeps its
    last value (both counters shrink together).

    Implementation: counters are stored divided by a global scale ``s`` (``h = stored * s``);
    an episode multiplies ``s`` by ``gamma`` and adds ``weight / s``, so an update costs
    O(retrieved) instead of O(all memories). When ``s`` falls below 1e-120 all stored values
    are multiplied by ``s`` once and ``s`` is reset to 1. Values agree with the direct
    definition to rounding error (relative 1e-12 over long streams, tested).

    Parameters
    ----------
    discount : float, default 0.99
        ``gamma`` in (0, 1]. Every parameter is keyword-only.
    prior, min_evidence, high_threshold, low_threshold :
        As in :class:`~forgetting.worth.estimator.MemoryWorth`.

    Examples
    --------
    >>> dmw = DiscountedMemoryWorth(discount=0.5)
    >>> dmw.update(["a"], True).update(["b"], False).counters("a")
    (0.5, 0.0)
    >>> DiscountedMemoryWorth.from_dict(dmw.to_dict()).update(["b"], False).counters("a")
    (0.25, 0.0)
    """

    FORMAT = "forgetting.DiscountedMemoryWorth"
    """The ``"format"`` of :meth:`to_dict`."""

    def __init__(
        self,
        *,
        discount: float = DEFAULT_DISCOUNT,
        prior: float = DEFAULT_PRIOR,
        min_evidence: float = DEFAULT_MIN_EVIDENCE,
        high_threshold: float = DEFAULT_HIGH_THRESHOLD,
        low_threshold: float = DEFAULT_LOW_THRESHOLD,
    ) -> None:
        raise_problems(
            [
                discount_problem(discount),
                *taxonomy_problems(prior, min_evidence, high_threshold, low_threshold),
            ]
        )
        self.discount = discount
        super().__init__(
            prior=prior, min_evidence=min_evidence, high_threshold=high_threshold, low_threshold=low_threshold
        )

    def reset(self) -> Self:
        """Forget all evidence (hyperparameters stay)."""
        self._scaled_successes: dict[Any, float] = {}
        self._scaled_failures: dict[Any, float] = {}
        self._scale = 1.0
        self.n_episodes_ = 0
        return self

    @property
    def successes_(self) -> dict[Any, float]:
        """Discounted ``h+`` per memory id (a new dict computed from the scaled store)."""
        return {m: v * self._scale for m, v in self._scaled_successes.items()}

    @property
    def failures_(self) -> dict[Any, float]:
        """Discounted ``h-`` per memory id (a new dict computed from the scaled store)."""
        return {m: v * self._scale for m, v in self._scaled_failures.items()}

    def _sum_problem(self, keys: list[Any], outcome: bool, values: list[float]) -> str | None:
        """Why :meth:`_add` of this episode would overflow (``None``: it would not).

        Evaluates the very expressions :meth:`_add` will (decay of the scale, the rescale if
        due, ``stored + weight / scale``) on copies of the touched values: the stored value and
        the discounted ``h+ + h-`` must both stay finite.
        """
        scale = decayed(self._scale, self.discount)
        factor = scale if scale < _RESCALE_BELOW else 1.0
        if scale < _RESCALE_BELOW:
            scale = 1.0
        hit, miss = (
            (self._scaled_successes, self._scaled_failures)
            if outcome
            else (self._scaled_failures, self._scaled_successes)
        )
        for key, weight in zip(keys, values):
            other = miss.get(key, 0.0) * factor  # factor 1.0: unchanged, exactly
            stored = hit.get(key, 0.0) * factor + weight / scale
            if not math.isfinite(stored * scale + other * scale):
                return (
                    f"weights must keep h+ + h- finite (float64): weight {shown(weight)} for memory "
                    f"{shown(key)} overflows the discounted counters; nothing was added"
                )
        return None

    def _add(self, keys: list[Any], outcome: bool, values: list[float]) -> None:
        self._scale = decayed(self._scale, self.discount)
        if self._scale < _RESCALE_BELOW:
            for store in (self._scaled_successes, self._scaled_failures):
                for m in store:
                    store[m] *= self._scale
            self._scale = 1.0
        hit, miss = (
            (self._scaled_successes, self._scaled_failures)
            if outcome
            else (self._scaled_failures, self._scaled_successes)
        )
        for key, weight in zip(keys, values):
            hit[key] = hit.get(key, 0.0) + weight / self._scale
            miss.setdefault(key, 0.0)

    def counters(self, mem_id: Hashable) -> tuple[float, float]:
        """Discounted ``(h+, h-)`` of a memory; ``(0.0, 0.0)`` for an id never retrieved
        (``ValueError`` for an id that could never have been stored, :func:`~.estimator.memory_key`)."""
        key = memory_key(mem_id)
        return (
            self._scaled_successes.get(key, 0.0) * self._scale,
            self._scaled_failures.get(key, 0.0) * self._scale,
        )

    def memory_ids(self) -> list[Any]:
        """Ids retrieved at least once, in order of first retrieval."""
        return list(self._scaled_successes)

    # --- JSON -----------------------------------------------------------------------------
    def settings(self) -> dict[str, float]:
        """The keyword arguments this estimator was made with (as floats: JSON-safe)."""
        return {"discount": float(self.discount), **super().settings()}

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-safe data: :meth:`from_dict` of it continues bit for bit.

        As :meth:`MemoryWorth.to_dict <forgetting.worth.estimator.MemoryWorth.to_dict>`, with the
        stored values, not the products: ``"scale": s`` and ``"memories": [[id, h+ / s, h- / s],
        ...]`` (``h = stored * s``; the next episode multiplies ``s`` by ``gamma``), format
        ``"forgetting.DiscountedMemoryWorth"``.
        """
        failures = self._scaled_failures
        rows = [[json_id(m), v, failures[m]] for m, v in self._scaled_successes.items()]
        return self._state_dict({"scale": float(self._scale), "memories": rows})

    def _restore(self, data: dict[str, Any]) -> None:
        scale = data["scale"]
        raise_problems([real_problem("scale", scale, 0.0, 1.0, low_open=True)])
        self._scale = float(scale)  # stored values: h+ + h- = (stored sum) * s <= the stored sum, finite
        restore_counters(data, "memories", self._scaled_successes, self._scaled_failures)


def discounted_counters(
    retrieved_idx: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    discount: float,
    n_memories: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Discounted ``(h+, h-)`` of memories ``0 .. n_memories - 1`` after a block of episodes.

    The closed form: episode ``t`` (1-based) of ``T`` carries weight ``gamma**(T - t)`` for
    each memory it retrieved (unit weights; every counter decays once per episode and the
    episode's own retrievals are added after the decay), summed with ``np.bincount``.

    Parameters
    ----------
    retrieved_idx : int array, shape (T, k)
        Row ``t`` holds the ``k >= 1`` distinct memories retrieved in episode ``t``, each in
        ``[0, n_memories)``.
    outcomes : bool array, shape (T,)
        Success of each episode.
    discount : float
        ``gamma`` in (0, 1].
    n_memories : int
        ``>= 1``: the number of memories, and the length of both returned arrays.

    Raises
    ------
    ValueError
        Every bad argument at once (:func:`~forgetting.worth.batch.block_problems`), so both
        arrays always have length ``n_memories`` and every id counts for a memory that exists.
    """
    count_problem = int_problem("n_memories", n_memories, minimum=1, allow_numpy=True)
    problems, retrieved_idx, outcomes, _ = block_problems(
        retrieved_idx, outcomes, None, None if count_problem else int(n_memories)
    )
    raise_problems([count_problem, discount_problem(discount), *problems])
    n_episodes, k = retrieved_idx.shape
    age_weight = float(discount) ** np.arange(n_episodes - 1, -1, -1, dtype=np.float64)
    weight = np.repeat(age_weight, k)
    hit = np.repeat(outcomes, k)
    index = retrieved_idx.ravel()
    successes = np.asarray(np.bincount(index[hit], weight[hit], minlength=n_memories), dtype=np.float64)
    failures = np.asarray(np.bincount(index[~hit], weight[~hit], minlength=n_memories), dtype=np.float64)
    return successes, failures


def discounted_counter_paths(evidence: npt.ArrayLike, discount: float) -> npt.NDArray[np.float64]:
    """Discounted counters after every episode: ``h_t = gamma * h_{t-1} + x_t`` along axis 0.

    ``evidence[t, m]`` is what episode ``t`` adds to memory ``m``'s counter (its weight if
    retrieved with the matching outcome, else 0); the result has the same shape and row ``t``
    holds the counters after episode ``t``. Feed it the per-episode ``h+`` and ``h-``
    increments separately and read worth with :func:`~forgetting.worth.formulas.memory_worth`.
    Raises ``ValueError`` unless ``discount`` is in (0, 1].
    """
    raise_problems([discount_problem(discount)])
    from scipy.signal import lfilter  # imported here: scipy.signal takes a second to import

    filtered: npt.NDArray[np.float64] = lfilter(
        [1.0], [1.0, -float(discount)], np.asarray(evidence, dtype=np.float64), axis=0
    )
    return filtered
