"""What the governance chapter says in words about its settings and its traced session.

Each function turns a setting, a constant or one traced :class:`~forgetting.studies.governance.policies.GovernanceRun`
into the count or clause the chapter glues, so the chapter only calls, glues and plots:

* :func:`late_turns` -- how many turns :func:`~forgetting.studies.governance.summary.late_window` spans;
* :func:`gap_schedule`, :func:`jitter_percent` -- the pre-shift recall schedule as the world draws it;
* :func:`list_text` -- values as an English list ("0, 0.5 and 1");
* :func:`worth_after_shift`, :func:`pre_shift_counts`, :func:`stale_fate`, :func:`true_fate` --
  the traced session's worth curves, its pre-shift recalls of the stale fact, and each fact's fate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..._validate import raise_problems, require_int
from .runs import GovernanceRun
from .summary import late_window
from .world import JITTER, STALE, GovernanceWorld

__all__ = [
    "late_turns",
    "gap_schedule",
    "jitter_percent",
    "list_text",
    "worth_after_shift",
    "pre_shift_counts",
    "stale_fate",
    "true_fate",
]


def late_turns(world: GovernanceWorld) -> int:
    """Number of turns in :func:`~forgetting.studies.governance.summary.late_window`: ``last - first + 1``."""
    first, last = late_window(world)
    return last - first + 1


def gap_schedule(world: GovernanceWorld, count: int = 3) -> tuple[int, ...]:
    """The first ``count`` nominal gaps of the stale fact's pre-shift recalls: ``first_gap * 2**i``.

    These are the gaps before jitter, as :func:`~forgetting.studies.governance.world.generate_governance_session`
    doubles them; ``count`` is an int ``>= 1``.
    """
    count = require_int("count", count, 1)
    return tuple(world.first_gap * 2**i for i in range(count))


def jitter_percent() -> float:
    """:data:`~forgetting.studies.governance.world.JITTER` in percent: ``100 * JITTER``."""
    return 100 * JITTER


def list_text(values: Sequence[Any], form: Callable[[Any], str] = str) -> str:
    """``values`` as an English list: ``"a"``, ``"a and b"``, ``"a, b and c"``; each value written by ``form``.

    Raises ``ValueError`` for an empty sequence.
    """
    if not values:
        raise ValueError("values must hold at least one value, got an empty sequence")
    words = [form(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" and {words[-1]}"


def _check_traced(run: GovernanceRun) -> None:
    raise_problems(
        [
            None if isinstance(run, GovernanceRun) else f"run must be a GovernanceRun, got {run!r}",
            None
            if not isinstance(run, GovernanceRun) or run.worth_trace is not None
            else f"run must have a worth trace (a Memory Worth policy), got policy {run.policy!r}",
        ]
    )


def worth_after_shift(run: GovernanceRun) -> tuple[list[int], list[float], list[float]]:
    """The task turns from the shift on (``turn >= shift_turn``) and the Memory Worth of the stale
    and the true fact after each of them, read from ``run.worth_trace``."""
    _check_traced(run)
    trace = run.worth_trace or ()
    after = [i for i, t in enumerate(run.task_turns) if t >= run.shift_turn]
    return (
        [run.task_turns[i] for i in after],
        [trace[i][0] for i in after],
        [trace[i][1] for i in after],
    )


def pre_shift_counts(run: GovernanceRun) -> tuple[int, int]:
    """``(recalls, successes)`` of the stale fact before the shift: tasks with ``turn < shift_turn``
    that retrieved it, and those of them that succeeded."""
    if not isinstance(run, GovernanceRun):
        raise ValueError(f"run must be a GovernanceRun, got {run!r}")
    pre = [i for i, t in enumerate(run.task_turns) if t < run.shift_turn]
    recalls = sum(STALE in run.retrieved[i] for i in pre)
    successes = sum(run.successes[i] and STALE in run.retrieved[i] for i in pre)
    return recalls, successes


def stale_fate(run: GovernanceRun) -> str:
    """When the stale fact left the working set, as the chapter words it: ``"never"`` or ``"at turn T"``."""
    return "never" if run.stale_removed_turn is None else f"at turn {run.stale_removed_turn}"


def true_fate(run: GovernanceRun) -> str:
    """What happened to the true fact: ``"is kept to the end"`` or ``"leaves it at turn T"``."""
    return (
        "is kept to the end"
        if run.true_removed_turn is None
        else f"leaves it at turn {run.true_removed_turn}"
    )
