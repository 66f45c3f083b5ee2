"""Credit that estimates a memory's effect on the outcome, not its association with it.

Memory Worth converges to ``p+(m) = Pr[success | m retrieved]``, the success rate of the
episodes that *contain* ``m`` (:mod:`forgetting.worth`). Two estimators of what ``m`` *does*:

* :func:`omission_effects` -- **randomized omission**. With probability ``epsilon`` an
  episode withholds one of the memories it would have retrieved, chosen uniformly. The effect
  of ``m`` is the success rate of the episodes that would retrieve ``m`` and withheld nothing,
  minus the rate of those that withheld ``m``.
* :func:`regression_credit` -- **regression credit**. Least squares of the outcome on the
  retrieval indicators (and on group indicators, such as a task type, where a world has them).

Both take episodes as integer arrays: ``retrieved`` (episodes, k) of memory ids ``0 .. n - 1``
and boolean ``outcomes``; the world that produced them is not needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validate import int_problem, raise_problems, shown

__all__ = ["EffectEstimate", "omission_effects", "RegressionCredit", "regression_credit", "design_counts"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

NULL_TOLERANCE = 1e-9
"""A singular value of ``X^T X`` below this share of the largest spans its null space."""
ESTIMABLE_TOLERANCE = 1e-6
"""A contrast is estimable when its projection on that null space is below this (unit contrasts)."""


@dataclass(frozen=True)
class EffectEstimate:
    """Per memory: ``effect = rate_kept - rate_withheld`` with its plug-in standard error.

    ``kept[m]`` counts the episodes that would retrieve ``m`` and withheld nothing,
    ``withheld[m]`` those that withheld ``m``; ``effect`` and ``se`` are NaN unless both are
    positive.
    """

    effect: FloatArray
    se: FloatArray
    kept: IntArray
    kept_successes: IntArray
    withheld: IntArray
    withheld_successes: IntArray


def _episode_problems(retrieved: Any, outcomes: Any, n_memories: Any) -> tuple[list[str], Any, Any]:
    problems = [p for p in [int_problem("n_memories", n_memories, 1, 10**7)] if p]
    index, ok = np.asarray(retrieved), np.asarray(outcomes)
    if index.ndim != 2 or index.shape[1] < 1 or not np.issubdtype(index.dtype, np.integer):
        problems.append(f"retrieved must be a 2-d integer array (episodes, k), got {shown(retrieved)}")
    elif not problems and index.size and (index.min() < 0 or index.max() >= n_memories):
        problems.append(f"retrieved ids must be in [0, {n_memories - 1}], got {index.min()}..{index.max()}")
    if ok.dtype != np.bool_ or ok.shape != index.shape[:1]:
        problems.append(
            f"outcomes must be booleans, one per episode ({index.shape[:1]}), got {shown(outcomes)}"
        )
    return problems, index, ok


def omission_effects(retrieved: Any, withheld_slot: Any, outcomes: Any, n_memories: int) -> EffectEstimate:
    """Randomized-omission effects of every memory.

    ``retrieved[t]`` is what episode ``t`` *would* retrieve, ``withheld_slot[t]`` the column of
    the memory it withheld (``-1``: none) and ``outcomes[t]`` the outcome with that memory
    absent. For memory ``m``, over the episodes with ``m`` in ``retrieved[t]``::

        effect(m) = successes(kept) / kept  -  successes(withheld m) / withheld(m)
        se(m)     = sqrt(p1 (1 - p1) / kept + p0 (1 - p0) / withheld(m))

    where *kept* are the episodes that withheld nothing. Unbiasedness (given both counts): if
    whether and which slot is withheld is drawn independently of the episode (its set and its
    outcome draws), then among the episodes that would retrieve ``m``, "withheld nothing" and
    "withheld ``m``" are two randomized arms, so each arm's rate is an unbiased estimate of
    ``E[f(W) | m in W]`` and ``E[f(W \\ {m}) | m in W]`` for the world's success probability ``f``,
    and their difference of ``E[f(W) - f(W \\ {m}) | m in W]``, the effect of including ``m``
    beside the companions it is actually retrieved with. Episodes that withheld another memory
    are in neither arm (their outcome lacks that other memory). Assumption: the outcome of an
    episode depends on its own set only (no carry-over between episodes).
    """
    problems, index, ok = _episode_problems(retrieved, outcomes, n_memories)
    slot = np.asarray(withheld_slot)
    if not problems and (
        slot.shape != index.shape[:1]
        or not np.issubdtype(slot.dtype, np.integer)
        or (slot.size and (slot.min() < -1 or slot.max() >= index.shape[1]))
    ):
        problems.append(
            f"withheld_slot must be one int per episode in [-1, {index.shape[1] - 1}], got {shown(withheld_slot)}"
        )
    raise_problems(problems)
    none = slot < 0
    kept = np.bincount(index[none].ravel(), minlength=n_memories)
    kept_ok = np.bincount(
        index[none].ravel(), weights=np.repeat(ok[none], index.shape[1]), minlength=n_memories
    )
    gone = index[~none, slot[~none]]
    withheld = np.bincount(gone, minlength=n_memories)
    withheld_ok = np.bincount(gone, weights=ok[~none], minlength=n_memories)
    effect, se = np.full(n_memories, np.nan), np.full(n_memories, np.nan)
    both = (kept > 0) & (withheld > 0)
    p1, p0 = kept_ok[both] / kept[both], withheld_ok[both] / withheld[both]
    effect[both] = p1 - p0
    se[both] = np.sqrt(p1 * (1 - p1) / kept[both] + p0 * (1 - p0) / withheld[both])
    as_int = (kept, kept_ok.astype(np.intp), withheld, withheld_ok.astype(np.intp))
    return EffectEstimate(effect, se, *as_int)


def design_counts(retrieved: IntArray, n_memories: int, groups: IntArray | None, n_groups: int) -> IntArray:
    """``X^T X`` of the indicator design, as exact integers: columns ``0 .. n - 1`` are the
    memories (``x[t, m] = 1`` when episode ``t`` retrieved ``m``), then one column per group."""
    e, k = retrieved.shape
    columns = retrieved if groups is None else np.column_stack([retrieved, n_memories + groups])
    width = n_memories + (0 if groups is None else n_groups)
    pairs = columns[:, :, None] * width + columns[:, None, :]  # (episodes, j, j'): cell of x_j x_j'
    return np.bincount(pairs.ravel(), minlength=width * width).reshape(width, width).astype(np.intp)


@dataclass(frozen=True)
class RegressionCredit:
    """Least-squares credit ``beta`` per memory (NaN where not identified), centred to mean 0
    over the identified memories; the design's rank against its width, and the basis ``null``
    of its null space over the retrieved memories and seen groups (columns ``seen``)."""

    beta: FloatArray
    identified: npt.NDArray[np.bool_]
    rank: int
    width: int
    solution: FloatArray  # (width,): the minimum-norm least-squares solution, NaN for unseen columns
    seen: npt.NDArray[np.bool_]  # (width,)
    null: FloatArray  # (width - rank, seen columns)

    def difference(self, a: int, b: int) -> float:
        """``beta_a - beta_b`` when that contrast is estimable (orthogonal to the null space), else NaN.

        Two memories always retrieved together are the case where it is not; a pair that is
        sometimes broken makes it estimable even when neither memory is identified alone.
        """
        if not (self.seen[a] and self.seen[b]):
            return float("nan")
        contrast = np.zeros(self.width)
        contrast[a], contrast[b] = 1.0, -1.0
        if self.null.size and np.abs(self.null @ contrast[self.seen]).max() >= ESTIMABLE_TOLERANCE:
            return float("nan")
        return float(self.solution[a] - self.solution[b])


def regression_credit(
    retrieved: Any, outcomes: Any, n_memories: int, groups: Any = None, n_groups: int = 0
) -> RegressionCredit:
    """Regress ``y_t = 1{success}`` on the retrieval indicators (and group indicators)::

        y_t = sum_m beta_m x_{t,m} + sum_g alpha_g 1{g_t = g} + noise

    by least squares, through the exact integer normal equations ``X^T X b = X^T y``
    (:func:`design_counts`). When the outcome's expectation is linear in the indicators (as in
    the book's worlds: the mean utility of ``k`` slots, plus a task type's base rate), ``beta_m``
    is ``m``'s additive effect and least squares is unbiased for every *estimable* contrast.
    Memory ``m`` is *identified* when its differences from the other identified memories are
    estimable (orthogonal to the design's null space). Two memories always retrieved together
    have equal columns, so their difference is not, and their ``beta`` is NaN; so is a memory
    never retrieved, or one retrieved in every episode. With groups, every episode's ``k`` memory
    indicators sum to ``k`` times its group indicators, so a common shift of all ``beta`` is not
    identified either: ``beta`` is reported centred over the identified memories, which only
    differences justify. :meth:`RegressionCredit.difference` gives one estimable difference even
    when neither memory is identified alone.
    Assumption: effects add up (no interaction between
    memories); an interaction is averaged into the ``beta`` of both.
    """
    problems, index, ok = _episode_problems(retrieved, outcomes, n_memories)
    group = None
    if groups is not None:
        group = np.asarray(groups)
        if not np.issubdtype(group.dtype, np.integer) or group.shape != index.shape[:1]:
            problems.append(f"groups must be one int per episode, got {shown(groups)}")
        elif group.size and (group.min() < 0 or group.max() >= n_groups):
            problems.append(
                f"groups must be in [0, {n_groups - 1}] (n_groups={n_groups}), got {group.min()}..{group.max()}"
            )
    raise_problems(problems)
    gram = design_counts(index, n_memories, group, n_groups)
    columns = index if group is None else np.column_stack([index, n_memories + group])
    width = gram.shape[0]
    xty = np.bincount(columns[ok].ravel(), minlength=width).astype(np.float64)
    seen = np.diag(gram) > 0
    design = gram[np.ix_(seen, seen)].astype(np.float64)
    left, singular, vt = np.linalg.svd(design)
    # the minimum-norm least-squares solution from that decomposition, with numpy.linalg.lstsq's
    # default cut (rcond=None: singular values above eps * width times the largest count)
    kept = singular > np.finfo(np.float64).eps * design.shape[0] * (singular[0] if singular.size else 0.0)
    rank = int(np.count_nonzero(kept))
    full = np.full(width, np.nan)
    full[seen] = vt[kept].T @ ((left[:, kept].T @ xty[seen]) / singular[kept])
    # e_a - e_b is estimable when it is orthogonal to the null space, i.e. when the null basis
    # has equal entries at a and b: memories with equal null-space columns form a class whose
    # differences are all estimable, and the largest class is the identified one
    null = vt[singular <= NULL_TOLERANCE * singular[0]] if singular.size else vt
    memory_columns = np.flatnonzero(seen[:n_memories])
    signature = np.round(null[:, : memory_columns.size] / ESTIMABLE_TOLERANCE).astype(np.int64).T
    identified = np.zeros(n_memories, dtype=bool)
    if memory_columns.size:
        classes, label, size = np.unique(signature, axis=0, return_inverse=True, return_counts=True)
        identified[memory_columns] = label.ravel() == np.argmax(size)
    beta = np.where(identified, full[:n_memories], np.nan)
    if identified.any():
        beta = beta - np.nanmean(beta)
    return RegressionCredit(beta, identified, int(rank), int(width), full, seen, null)
