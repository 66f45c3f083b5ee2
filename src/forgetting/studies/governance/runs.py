"""What one policy did in one session (:class:`GovernanceRun`), and a deployment fact as the
decay engine holds it at the end (:class:`FactState`)."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from ..._validate import require_int

__all__ = ["GovernanceRun", "FactState", "success_in"]


def _rate(values: Sequence[int]) -> float:
    """``float(np.mean(values))`` of whole numbers (bools or ints, sums below ``2**53``; NaN for
    none), exactly: every partial sum is a whole number a float holds exactly, so numpy's sum in
    any order is the int sum, and the mean the one division of it by the count."""
    return float(sum(values) / len(values)) if values else math.nan


@dataclass(frozen=True)
class GovernanceRun:
    """What one policy did in one session.

    Attributes
    ----------
    policy : str
        One of :data:`~.policies.ALL_POLICIES`.
    seed, shift_turn : int
    task_turns : tuple of int
        The deployment-task turns (the session's, increasing).
    successes : tuple of bool
        Outcome of each task.
    retrieved : tuple of tuple of str
        Deployment facts each task retrieved.
    working_set : tuple of int
        Working-set size after each turn ``1 .. session_length`` (deprecated items excluded).
    worth_trace : tuple of (float, float), or None
        Memory Worth of ``(A, B)`` after each task (``None`` for ``decay``).
    stale_removed_turn, true_removed_turn : int or None
        First turn the fact was no longer in the working set (deprecated or evicted),
        ``None`` if it never left.
    crowded_out : tuple of bool
        Whether noise crowded out each task's search (:func:`~.world.crowded_out`; all
        ``False`` at ``crowding = 0``).
    """

    policy: str
    seed: int
    shift_turn: int
    task_turns: tuple[int, ...]
    successes: tuple[bool, ...]
    retrieved: tuple[tuple[str, ...], ...]
    working_set: tuple[int, ...]
    worth_trace: tuple[tuple[float, float], ...] | None
    stale_removed_turn: int | None
    true_removed_turn: int | None
    crowded_out: tuple[bool, ...] = ()

    @property
    def success_after_shift(self) -> float:
        """Success rate of the deployment tasks after the shift (NaN if there were none)."""
        return _rate(self.successes[bisect_right(self.task_turns, self.shift_turn) :])

    def success_between(self, first_turn: int, last_turn: int) -> float:
        """Success rate of the deployment tasks in turns ``first_turn .. last_turn`` (NaN if none).

        Raises ``ValueError`` unless both turns are ints >= 0.
        """
        require_int("first_turn", first_turn, 0, allow_numpy=True)
        require_int("last_turn", last_turn, 0, allow_numpy=True)
        return success_in(self, first_turn, last_turn)

    @property
    def crowded_after_shift(self) -> float:
        """Share of the tasks after the shift whose search noise crowded out (NaN if none)."""
        return _rate(self.crowded_out[bisect_right(self.task_turns, self.shift_turn) :])

    @property
    def mean_working_set(self) -> float:
        """Mean working-set size over the turns after the shift."""
        return _rate(self.working_set[self.shift_turn :])


def success_in(run: GovernanceRun, first_turn: int, last_turn: int) -> float:
    """:meth:`GovernanceRun.success_between` without checking the turns (for callers that chose them)."""
    turns = run.task_turns
    return _rate(run.successes[bisect_left(turns, first_turn) : bisect_right(turns, last_turn)])


@dataclass(frozen=True)
class FactState:
    """A deployment fact in the decay engine at the end of a session.

    ``recalls``: successful recalls after registration; ``evicted_turn``: the turn the engine
    evicted it (``None`` if it is still present at the last turn). For a present fact,
    ``stability`` is its ``S`` and ``retention`` is ``exp(-(last turn - last touch) / S)`` at
    the last turn; both are ``None`` for an evicted fact.
    """

    recalls: int
    evicted_turn: int | None
    stability: float | None
    retention: float | None
