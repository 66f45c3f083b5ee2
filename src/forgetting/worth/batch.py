"""The vectorized form of Memory Worth over integer ids ``0 .. n - 1``.

Fed the same stream, :func:`update_batch` and :class:`WorthArrays` produce bit-for-bit the same
counters as :class:`~forgetting.worth.estimator.MemoryWorth`, because they add the same float64
weights in the same order (episode by episode, and within an episode in retrieval order).
:func:`add_episodes` is the unchecked kernel, public for simulations that build valid blocks.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np
import numpy.typing as npt

from .._validate import int_problem, raise_problems, real_problem, shown
from .formulas import DEFAULT_PRIOR, evidence_volume, memory_worth, ratio_or_prior
from .taxonomy import (
    DEFAULT_HIGH_THRESHOLD,
    DEFAULT_LOW_THRESHOLD,
    DEFAULT_MIN_EVIDENCE,
    taxonomy_problems,
    worth_class,
)

__all__ = [
    "FloatArray",
    "IntArray",
    "BoolArray",
    "validate_batch",
    "validate_block",
    "block_problems",
    "sum_problem",
    "SAFE_TOTAL",
    "UNIT_COUNT_LIMIT",
    "counts_are_exact",
    "add_episodes",
    "update_batch",
    "UnitCounters",
    "WorthArrays",
]

FloatArray = npt.NDArray[np.float64]
"""A float64 numpy array."""
IntArray = npt.NDArray[np.integer[Any]]
"""An integer numpy array."""
BoolArray = npt.NDArray[np.bool_]
"""A boolean numpy array."""


def validate_batch(
    successes: Any, failures: Any, retrieved_idx: Any, outcomes: Any, weights: Any
) -> tuple[IntArray, BoolArray, FloatArray | None]:
    """Check a block of episodes against its counter arrays; return ``(index, outcomes, weights)``.

    One ``ValueError`` lists every problem; see :func:`update_batch` for what is allowed.
    Nothing is written: the counters are only read (to check that every ``h+ + h-`` stays
    finite after the block, :func:`sum_problem`).
    """
    problems: list[str] = []
    for name, counter in (("successes", successes), ("failures", failures)):
        if not isinstance(counter, np.ndarray) or counter.dtype != np.float64 or counter.ndim != 1:
            problems.append(
                f"{name} must be a 1-d float64 numpy array (updated in place), got "
                f"{getattr(counter, 'dtype', type(counter).__name__)} "
                f"shape {getattr(counter, 'shape', None)}"
            )
        elif not counter.flags.writeable:
            problems.append(f"{name} must be a writable array (it is updated in place), got a read-only one")
        elif not np.all(np.isfinite(counter)) or np.any(counter < 0):
            problems.append(f"{name} must hold finite counts >= 0, got {shown(counter)}")
    raise_problems(problems)
    if successes.shape != failures.shape:
        raise ValueError(
            f"successes and failures must have the same shape, got {successes.shape} and {failures.shape}"
        )
    if np.shares_memory(successes, failures):
        raise ValueError(
            "successes and failures must be distinct arrays, got the same or overlapping "
            "memory (every failure would also be written into the successes)"
        )
    index, outcome, weight = validate_block(retrieved_idx, outcomes, weights, successes.size)
    raise_problems([sum_problem(successes, failures, index, outcome, weight)])
    return index, outcome, weight


def validate_block(
    retrieved_idx: Any, outcomes: Any, weights: Any, n_memories: int
) -> tuple[IntArray, BoolArray, FloatArray | None]:
    """Check a block of episodes over memories ``0 .. n_memories - 1``; return ``(index, outcomes, weights)``.

    ``retrieved_idx`` is a 2-d int array (episodes x k, ``k >= 1``) of distinct ids per row in
    ``[0, n_memories)``, ``outcomes`` a 1-d bool array with one entry per episode, ``weights``
    ``None`` or finite weights ``>= 0`` of the shape of ``retrieved_idx``. One ``ValueError``
    lists every problem (:func:`block_problems`).
    """
    problems, index, outcome, weight = block_problems(retrieved_idx, outcomes, weights, n_memories)
    raise_problems(problems)
    return index, outcome, weight


def block_problems(
    retrieved_idx: Any, outcomes: Any, weights: Any, n_memories: int | None
) -> tuple[list[str], IntArray, BoolArray, FloatArray | None]:
    """The problems of a block of episodes (see :func:`validate_block`) and its arrays.

    ``n_memories=None`` skips the range check of the ids (the caller reports a bad count).
    """
    problems: list[str] = []
    index = np.asarray(retrieved_idx)
    outcome = np.asarray(outcomes)
    if index.ndim != 2 or not np.issubdtype(index.dtype, np.integer) or index.shape[1] == 0:
        problems.append(
            f"retrieved_idx must be a 2-d int array (episodes x k, k >= 1), got dtype "
            f"{index.dtype} shape {index.shape}"
        )
    else:
        if n_memories is not None and index.size and (index.min() < 0 or index.max() >= n_memories):
            problems.append(
                f"retrieved_idx must be in [0, {n_memories}), got values in [{index.min()}, {index.max()}]"
            )
        if _has_repeat_in_a_row(index):
            ordered = np.sort(index, axis=1)
            repeated = np.flatnonzero(np.any(ordered[:, 1:] == ordered[:, :-1], axis=1))
            problems.append(
                f"retrieved_idx must not repeat an id within an episode, episodes {repeated[:10].tolist()} do"
            )
    if outcome.dtype != np.bool_ or outcome.ndim != 1:
        problems.append(f"outcomes must be a 1-d bool array, got dtype {outcome.dtype} shape {outcome.shape}")
    elif index.ndim == 2 and outcome.shape[0] != index.shape[0]:
        problems.append(
            f"outcomes must have one entry per episode: got {outcome.shape[0]} for {index.shape[0]} episodes"
        )
    weight = None
    if weights is not None:
        weight = np.asarray(weights)
        if weight.shape != index.shape:
            problems.append(f"weights must have the shape of retrieved_idx {index.shape}, got {weight.shape}")
        elif not (np.issubdtype(weight.dtype, np.integer) or np.issubdtype(weight.dtype, np.floating)):
            problems.append(f"weights must be real numbers, got dtype {weight.dtype}")
        else:
            weight = weight.astype(np.float64)
            if not np.all(np.isfinite(weight)) or np.any(weight < 0):
                problems.append("weights must be finite and >= 0")
    return problems, index, outcome, weight


SAFE_TOTAL = 2.0**1000
"""Counters and added weights summing to less than this cannot overflow float64 (``max ~ 2**1024``)."""


def sum_problem(
    successes: FloatArray,
    failures: FloatArray,
    retrieved_idx: IntArray,
    outcomes: BoolArray,
    weights: FloatArray | None,
) -> str | None:
    """``None`` if adding the (checked) block keeps every ``h+``, ``h-`` and ``h+ + h-`` finite.

    Counters and weights are ``>= 0``, so the partial sums only grow: it is enough that every
    final ``h+ + h-`` is finite. When ``max h+ + max h- + sum(weights)`` is below
    :data:`SAFE_TOTAL` no sum can overflow; otherwise the block is added to copies (the same
    kernel, :func:`add_episodes`) and the copies are read. Reads, never writes, the counters.
    """
    with np.errstate(over="ignore"):
        added = float(retrieved_idx.size) if weights is None else float(np.sum(weights))
    largest = (float(successes.max()) if successes.size else 0.0) + (
        float(failures.max()) if failures.size else 0.0
    )
    if largest + added < SAFE_TOTAL:
        return None
    pos, neg = successes.copy(), failures.copy()
    with np.errstate(over="ignore"):
        add_episodes(pos, neg, retrieved_idx, outcomes, weights)
        total = pos + neg
    overflowing = np.flatnonzero(~np.isfinite(total))
    if not overflowing.size:
        return None
    return (
        f"weights must keep every h+ + h- finite (float64), but this block makes it overflow for "
        f"memories {overflowing[:10].tolist()}; nothing was added"
    )


UNIT_COUNT_LIMIT = 2**53
"""Below this, adding ``c`` unit weights at once equals adding ``1.0`` ``c`` times (exact integers)."""


def counts_are_exact(successes: FloatArray, failures: FloatArray, n_updates: int) -> bool:
    """Whether unit weights may be added as integer counts, bit for bit like one at a time.

    True when every counter is a non-negative integer value (no ``-0.0``: ``-0.0 + 0`` would
    flip its sign) and stays below :data:`UNIT_COUNT_LIMIT` after ``n_updates`` more units.
    """
    for counter in (successes, failures):
        if counter.size == 0:
            continue
        if np.signbit(counter).any() or not np.array_equal(counter, np.trunc(counter)):
            return False
        if counter.max() + n_updates >= UNIT_COUNT_LIMIT:
            return False
    return True


def _add_unit_counts(
    successes: FloatArray, failures: FloatArray, index: IntArray, outcomes: BoolArray
) -> None:
    """Add weight 1.0 per retrieval as integer counts (precondition: :func:`counts_are_exact`)."""
    n_memories = successes.size
    # np.compress selects whole rows, several times faster than boolean indexing
    successes += np.bincount(np.compress(outcomes, index, axis=0).ravel(), minlength=n_memories)
    failures += np.bincount(np.compress(~outcomes, index, axis=0).ravel(), minlength=n_memories)


PAIRWISE_MAX_K = 16
"""Up to this many ids per episode, repeats are found by comparing columns pairwise (no sort)."""


def _has_repeat_in_a_row(index: IntArray) -> bool:
    """Whether some row of a 2-d int array holds an id twice.

    For small ``k`` the ``k (k - 1) / 2`` column comparisons on contiguous columns are cheaper
    than sorting every row; beyond :data:`PAIRWISE_MAX_K`, rows are sorted.
    """
    k = index.shape[1]
    if k > PAIRWISE_MAX_K:
        ordered = np.sort(index, axis=1)
        return bool((ordered[:, 1:] == ordered[:, :-1]).any())
    small = np.int32 if index.size and index.min() >= -(2**31) and index.max() < 2**31 else index.dtype
    columns = np.ascontiguousarray(index.T, dtype=small)
    return any(bool((columns[j + 1 :] == columns[j]).any()) for j in range(k - 1))


def add_episodes(
    successes: FloatArray,
    failures: FloatArray,
    retrieved_idx: IntArray,
    outcomes: BoolArray,
    weights: FloatArray | None = None,
) -> None:
    """Add a block of episodes to counter arrays in place, unchecked: the kernel of :func:`update_batch`.

    For every episode ``t`` and column ``j``, ``weights[t, j]`` (1.0 when omitted) is added to
    ``successes[retrieved_idx[t, j]]`` if ``outcomes[t]`` else to ``failures[...]``, in episode
    order then column order. Callers guarantee what :func:`validate_batch` checks (distinct
    in-range ids per row, bool outcomes, distinct float64 counter arrays); simulations that
    build their own valid blocks call this directly to skip the checks.

    Unit weights on integer-valued counters (:func:`counts_are_exact`) are added as counts
    from ``np.bincount``: every partial sum is an exact integer, so the result is the same
    bit for bit as one addition at a time, at the speed of a counting pass. Anything else
    goes through ``np.add.at``, which adds one by one in that order.
    """
    if weights is None and counts_are_exact(successes, failures, retrieved_idx.size):
        _add_unit_counts(successes, failures, retrieved_idx, outcomes)
        return
    if weights is None:
        weights = np.ones(retrieved_idx.shape)
    # Row-major ravel keeps episode order, then retrieval order: np.add.at applies the
    # additions one by one in that order, exactly like the scalar loop.
    hit = np.repeat(outcomes, retrieved_idx.shape[1])
    index = retrieved_idx.ravel()
    weight = weights.ravel()
    np.add.at(successes, index[hit], weight[hit])
    np.add.at(failures, index[~hit], weight[~hit])


class UnitCounters:
    """``h+`` and ``h-`` of ``size`` memories that start at zero and only receive unit-weight
    episodes, read as Memory Worth between episodes: a simulation's per-episode loop.

    Every counter is a whole number below :data:`UNIT_COUNT_LIMIT` by construction, so the
    checks :func:`add_episodes` (:func:`counts_are_exact`) and :func:`memory_worth` (finite,
    ``>= 0``) make on every call hold without being made again: :meth:`add` is
    :func:`add_episodes` with unit weights and :meth:`worth` is :func:`memory_worth`, the same
    float operations, bit for bit. Callers pass blocks as :func:`add_episodes` takes them
    (distinct in-range ids per row, bool outcomes); a block that would take the number of
    additions to :data:`UNIT_COUNT_LIMIT` is refused before anything is added.
    """

    def __init__(self, size: int, prior: float = DEFAULT_PRIOR) -> None:
        raise_problems([int_problem("size", size, minimum=0), real_problem("prior", prior, 0.0, 1.0)])
        self.prior = float(prior)
        self.successes: FloatArray = np.zeros(size)
        self.failures: FloatArray = np.zeros(size)
        self._added = 0

    def add(self, retrieved_idx: IntArray, outcomes: BoolArray) -> None:
        """Add one block of unit-weight episodes (``retrieved_idx`` shape (episodes, k))."""
        if self._added + retrieved_idx.size >= UNIT_COUNT_LIMIT:
            raise ValueError(
                f"retrieved_idx would take the counters to {UNIT_COUNT_LIMIT} additions, beyond "
                f"which counts are not exact; nothing was added"
            )
        _add_unit_counts(self.successes, self.failures, retrieved_idx, outcomes)
        self._added += retrieved_idx.size

    def worth(self) -> FloatArray:
        """Memory Worth of every memory, the prior where nothing was added (:func:`memory_worth`)."""
        rate: FloatArray = ratio_or_prior(self.successes, self.successes + self.failures, self.prior)
        return rate


def update_batch(
    successes: FloatArray,
    failures: FloatArray,
    retrieved_idx: npt.ArrayLike,
    outcomes: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
) -> None:
    """Add a block of episodes to counter arrays, in place.

    Parameters
    ----------
    successes, failures : ndarray of float64, shape (n_memories,)
        ``h+`` and ``h-`` of memories ``0 .. n_memories - 1``; modified in place.
    retrieved_idx : int array, shape (episodes, k)
        Row ``t`` holds the ``k`` distinct memories retrieved in episode ``t``.
    outcomes : bool array, shape (episodes,)
        Success of each episode.
    weights : array, shape (episodes, k), optional
        Per-retrieval weights (finite, >= 0); 1.0 when omitted. Every ``h+ + h-`` must stay
        finite after the block (:func:`sum_problem`).

    Every counter receives its additions one at a time in episode order and, within an
    episode, in column order, which is the order in which :meth:`MemoryWorth.update` adds
    them. The resulting float64 values are therefore identical bit for bit to the scalar
    estimator fed the same episodes (ids ``i`` mapped to memory ``i``), for any weights.
    All input is checked before anything is added: the counters must be distinct, writable,
    finite and ``>= 0``; on a ``ValueError`` neither array has changed.
    """
    index, outcome, weight = validate_batch(successes, failures, retrieved_idx, outcomes, weights)
    add_episodes(successes, failures, index, outcome, weight)


class WorthArrays:
    """Memory Worth for memories ``0 .. n_memories - 1`` held in two float64 arrays.

    The vectorized counterpart of :class:`MemoryWorth` (same hyperparameters, same
    formulas); :meth:`update_batch` takes a whole block of episodes at once.

    >>> arrays = WorthArrays(3).update_batch([[0, 1], [1, 2]], [True, False])
    >>> arrays.successes_.tolist(), arrays.failures_.tolist(), arrays.worth().tolist()
    ([1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.5, 0.0])
    """

    def __init__(
        self,
        n_memories: int,
        prior: float = DEFAULT_PRIOR,
        min_evidence: float = DEFAULT_MIN_EVIDENCE,
        high_threshold: float = DEFAULT_HIGH_THRESHOLD,
        low_threshold: float = DEFAULT_LOW_THRESHOLD,
    ) -> None:
        raise_problems(
            [
                int_problem("n_memories", n_memories, minimum=1, allow_numpy=True),
                *taxonomy_problems(prior, min_evidence, high_threshold, low_threshold),
            ]
        )
        self.n_memories = int(n_memories)
        self.prior = prior
        self.min_evidence = min_evidence
        self.high_threshold = high_threshold
        self.low_threshold = low_threshold
        self.reset()

    def reset(self) -> Self:
        """Zero all counters."""
        self.successes_: FloatArray = np.zeros(self.n_memories)
        self.failures_: FloatArray = np.zeros(self.n_memories)
        self.n_episodes_ = 0
        self._units = 0  # unit weights added so far; -1 once a weighted block made counters non-integral
        return self

    def update_batch(
        self, retrieved_idx: npt.ArrayLike, outcomes: npt.ArrayLike, weights: npt.ArrayLike | None = None
    ) -> Self:
        """Add a block of episodes (see :func:`update_batch`)."""
        index, outcome, weight = validate_batch(
            self.successes_, self.failures_, retrieved_idx, outcomes, weights
        )
        units = self._units + index.size
        if weight is None and self._units >= 0 and units < UNIT_COUNT_LIMIT:
            # counters hold integer counts only: skip counts_are_exact's pass over them
            _add_unit_counts(self.successes_, self.failures_, index, outcome)
            self._units = units
        else:
            add_episodes(self.successes_, self.failures_, index, outcome, weight)
            self._units = -1
        self.n_episodes_ += index.shape[0]
        return self

    def worth(self) -> FloatArray:
        """Memory Worth of every memory (:func:`memory_worth`)."""
        worth: FloatArray = memory_worth(self.successes_, self.failures_, prior=self.prior)
        return worth

    def evidence(self) -> FloatArray:
        """Evidence volume of every memory (:func:`evidence_volume`)."""
        volume: FloatArray = evidence_volume(self.successes_, self.failures_)
        return volume

    def classify(self) -> npt.NDArray[np.str_]:
        """Taxonomy label of every memory (:func:`worth_class`)."""
        labels: npt.NDArray[np.str_] = worth_class(
            self.worth(), self.evidence(), self.min_evidence, self.high_threshold, self.low_threshold
        )
        return labels
