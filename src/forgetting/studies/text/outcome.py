"""Experiment 5's outcome model: the success probability of one episode from what it retrieved."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..._validate import raise_problems, real_problem

__all__ = ["OutcomeModel"]


@dataclass(frozen=True)
class OutcomeModel:
    """Success probability of one episode.

    With ``f`` the fraction of the memories the task needs (in this phase) that were
    retrieved, ``Pr[success] = p_none + (p_all - p_none) * f``, unless the agent is *misled* by
    a memory that is wrong now; then ``Pr[success] = p_stale``.

    Parameters
    ----------
    p_all, p_none, p_stale : float
        Probabilities in ``[0, 1]``. The default ``p_all`` is the paper's pre-shift worth of
        the stale memory (entry ``mw-exp5.stale_mw_before`` of ``data/published.yaml``; a test
        keeps the two equal): a true memory's episodes succeed as often as the paper's did.
    stale_misleads_any_task : bool, default True
        ``True``: misled whenever any retrieved memory is wrong now. ``False``: misled only if
        the highest-ranked retrieved memory that the task needs in some phase is wrong now.

    Raises
    ------
    ValueError
        Every bad value at once, each named.
    """

    p_all: float = 0.97
    p_none: float = 0.25
    p_stale: float = 0.05
    stale_misleads_any_task: bool = True

    def __post_init__(self) -> None:
        problems = [
            real_problem(name, getattr(self, name), 0.0, 1.0) for name in ("p_all", "p_none", "p_stale")
        ]
        if not isinstance(self.stale_misleads_any_task, bool):
            problems.append(
                f"stale_misleads_any_task must be True or False, got {self.stale_misleads_any_task!r}"
            )
        raise_problems(problems)

    @property
    def misled_rule(self) -> str:
        """The misleading rule in words, as the chapter's prose states it."""
        if self.stale_misleads_any_task:
            return "the agent is misled whenever a memory that is wrong in the current phase is among those retrieved"
        return (
            "the agent acts on the highest-ranked retrieved memory that bears on the task (one the "
            "task needs in some phase) and is misled only if that memory is wrong now"
        )

    def probability(self, fraction_needed: npt.ArrayLike, misled: npt.ArrayLike) -> np.ndarray:
        """Success probability per episode (or query), elementwise; see the class docstring."""
        fraction = np.asarray(fraction_needed, dtype=np.float64)
        return np.where(misled, self.p_stale, self.p_none + (self.p_all - self.p_none) * fraction)
