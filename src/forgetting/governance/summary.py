"""Seed means of governance runs, their digest, and the rows of the chapter's tables."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..executor import Executor
from ..hashing import digest
from .policies import POLICIES, GovernanceRun, run_governance_seeds
from .world import GovernanceWorld

__all__ = [
    "POLICY_LABELS",
    "summarize_governance",
    "governance_digest",
    "late_window",
    "late_success",
    "policy_table",
    "co_retrieval_sweep",
]

POLICY_LABELS = {"decay": "decay alone", "worth": "Memory Worth alone", "combined": "combined governance"}
"""How tables and figures name each policy of :data:`~forgetting.governance.policies.POLICIES`."""


def summarize_governance(runs: Sequence[GovernanceRun]) -> dict[str, float]:
    """Means over seeds of one policy's runs.

    Keys: ``success_after_shift`` (mean of the per-session success rates after the shift);
    ``stale_removed`` / ``true_lost`` (share of sessions in which the stale / true fact left
    the working set); ``turns_to_remove_stale`` (mean turns from the shift to the stale fact's
    removal over the sessions where it was removed, NaN if never); ``true_survives`` (share of
    sessions ending with the true fact in the working set); ``both_at_end`` (share ending with
    both contradicting facts in it); ``working_set`` (mean post-shift working-set size).

    Raises
    ------
    ValueError
        ``runs`` is empty or holds something other than :class:`GovernanceRun`.
    """
    if not runs or not all(isinstance(r, GovernanceRun) for r in runs):
        raise ValueError(f"runs must be a non-empty sequence of GovernanceRun, got {runs!r}")
    delays = [r.stale_removed_turn - r.shift_turn for r in runs if r.stale_removed_turn is not None]
    return {
        "success_after_shift": float(np.mean([r.success_after_shift for r in runs])),
        "stale_removed": float(np.mean([r.stale_removed_turn is not None for r in runs])),
        "turns_to_remove_stale": float(np.mean(delays)) if delays else math.nan,
        "true_survives": float(np.mean([r.true_removed_turn is None for r in runs])),
        "both_at_end": float(
            np.mean([r.stale_removed_turn is None and r.true_removed_turn is None for r in runs])
        ),
        "working_set": float(np.mean([r.mean_working_set for r in runs])),
    }


def governance_digest(runs: Mapping[str, Sequence[GovernanceRun]]) -> str:
    """SHA-256 (:func:`forgetting.hashing.digest`) over every policy's outcomes, removals and
    working-set sizes, by seed."""
    body = {
        p: [[r.seed, r.successes, r.stale_removed_turn, r.true_removed_turn, r.working_set] for r in rs]
        for p, rs in sorted(runs.items())
    }
    return digest(body)


def late_window(world: GovernanceWorld) -> tuple[int, int]:
    """First and last turn of the last ``(L - shift) // 2`` turns of the session.

    ``(L - (L - shift) // 2 + 1, L)`` with ``L = session_length``: the second half of the
    post-shift turns, rounded down (empty when only one turn follows the shift).
    """
    length = world.session_length
    return length - (length - world.shift_turn) // 2 + 1, length


def late_success(runs: Sequence[GovernanceRun], first_turn: int, last_turn: int) -> float:
    """Mean over sessions (NaN-skipping) of the success rate in turns ``first_turn .. last_turn``."""
    return float(np.nanmean([r.success_between(first_turn, last_turn) for r in runs]))


def policy_table(runs: Mapping[str, Sequence[GovernanceRun]], world: GovernanceWorld) -> list[dict[str, Any]]:
    """One row per policy: :func:`summarize_governance` and :func:`late_success` over :func:`late_window`."""
    first, last = late_window(world)
    rows = []
    for p in POLICIES:
        s = summarize_governance(runs[p])
        rows.append(
            {
                "policy": POLICY_LABELS[p],
                "success after shift": s["success_after_shift"],
                "success, late turns": late_success(runs[p], first, last),
                "stale fact removed": s["stale_removed"],
                "turns to remove stale": s["turns_to_remove_stale"],
                "true fact survives": s["true_survives"],
                "both kept at end": s["both_at_end"],
                "mean working set": s["working_set"],
            }
        )
    return rows


def co_retrieval_sweep(
    world: GovernanceWorld,
    values: Sequence[float],
    n_seeds: int,
    base_seed: int = 0,
    executor: Executor | None = None,
    **rules: float,
) -> list[dict[str, Any]]:
    """``decay`` and ``combined`` on the same sessions at each ``co_retrieval`` in ``values``.

    One row per value and policy (in that order): ``co_retrieval``, ``policy`` (its label) and
    :func:`summarize_governance`. ``rules`` are the keyword rules of
    :func:`~forgetting.governance.policies.run_governance`; ``executor`` runs the seeds.
    """
    rows = []
    for value in values:
        runs = run_governance_seeds(
            replace(world, co_retrieval=value),
            n_seeds,
            base_seed,
            policies=("decay", "combined"),
            executor=executor,
            **rules,
        )
        for p in ("decay", "combined"):
            rows.append({"co_retrieval": value, "policy": POLICY_LABELS[p], **summarize_governance(runs[p])})
    return rows
