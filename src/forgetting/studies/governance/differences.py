"""Policies compared session by session, and one policy's rule swept over the same sessions.

Every policy plays the same sessions (common random numbers, :mod:`.world`), so the question
"does policy X keep the true fact more often than Y?" has a sharper answer than two separate
intervals: the per-session difference ``x_s - y_s`` and the bootstrap interval of its mean
(:func:`~.intervals.mean_estimate`). Two separate 95 % intervals that overlap say little about
the difference; the paired interval is narrower whenever the policies succeed and fail on the
same sessions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..executor import Executor
from .batch import run_governance_seeds
from .intervals import Estimate, mean_estimate
from .runs import GovernanceRun
from .summary import POLICY_LABELS, estimate_columns, summarize_governance
from .world import GovernanceWorld

__all__ = [
    "SESSION_MEASURES",
    "session_value",
    "paired_difference",
    "difference_table",
    "rule_sweep",
    "rule_sweep_table",
    "null_level_rows",
]

SESSION_MEASURES = {
    "success_after_shift": "success after shift",
    "true_survives": "true fact survives",
    "stale_removed": "stale fact removed",
}
"""The per-session quantities :func:`paired_difference` compares, and how tables name them."""


def session_value(run: GovernanceRun, measure: str) -> float:
    """One session's ``measure`` (a key of :data:`SESSION_MEASURES`): its success rate after the
    shift (NaN without a task there), or 1.0 / 0.0 for the true fact kept / stale fact removed.

    Raises ``ValueError`` for another measure.
    """
    if measure == "success_after_shift":
        return run.success_after_shift
    if measure == "true_survives":
        return float(run.true_removed_turn is None)
    if measure == "stale_removed":
        return float(run.stale_removed_turn is not None)
    raise ValueError(f"measure must be one of {tuple(SESSION_MEASURES)}, got {measure!r}")


def paired_difference(
    first: Sequence[GovernanceRun], second: Sequence[GovernanceRun], measure: str
) -> Estimate:
    """Mean over sessions of ``first``'s ``measure`` minus ``second``'s, with its bootstrap 95 %
    interval; a session where either value is NaN is skipped (``n`` counts the rest).

    Raises ``ValueError`` unless both are non-empty runs of the same seeds in the same order.
    """
    if not first or [r.seed for r in first] != [r.seed for r in second]:
        raise ValueError(
            "first and second must be runs of the same sessions in the same order, got seeds "
            f"{[r.seed for r in first][:5]}... and {[r.seed for r in second][:5]}..."
        )
    return mean_estimate(
        [session_value(a, measure) - session_value(b, measure) for a, b in zip(first, second)]
    )


def difference_table(
    runs: Mapping[str, Sequence[GovernanceRun]], pairs: Sequence[tuple[str, str]]
) -> list[dict[str, Any]]:
    """One row per pair ``(x, y)`` and measure of :data:`SESSION_MEASURES`: the paired
    difference x - y with ``_ci95_low`` / ``_ci95_high`` and the sessions it is over."""
    rows = []
    for x, y in pairs:
        for measure, label in SESSION_MEASURES.items():
            estimate = paired_difference(runs[x], runs[y], measure)
            rows.append(
                {
                    "policy": POLICY_LABELS[x],
                    "minus": POLICY_LABELS[y],
                    "measure": label,
                    "difference": estimate.value,
                    "difference_ci95_low": estimate.low,
                    "difference_ci95_high": estimate.high,
                    "sessions": estimate.n,
                }
            )
    return rows


def rule_sweep(
    world: GovernanceWorld,
    policy: str,
    rule: str,
    values: Sequence[float],
    n_seeds: int,
    base_seed: int = 0,
    executor: Executor | None = None,
    known: Mapping[float, dict[str, Estimate]] | None = None,
    **rules: float,
) -> dict[float, dict[str, Estimate]]:
    """:func:`~.summary.summarize_governance` of ``policy`` on the same sessions at each value of
    one keyword rule of :func:`~.policies.run_governance` (``rule``, e.g. ``"effect_z"``); the
    other ``rules`` stay fixed. ``known`` holds summaries the caller already has of the same
    policy, sessions and rules at some values: those are taken, not rerun. Raises
    ``ValueError`` if ``rule`` is also in ``rules``."""
    if rule in rules:
        raise ValueError(f"rule {rule!r} is swept, so it must not also be given in rules")
    sweep = {}
    for value in values:
        if known is not None and value in known:
            sweep[value] = known[value]
            continue
        runs = run_governance_seeds(
            world, n_seeds, base_seed, policies=(policy,), executor=executor, **{rule: value}, **rules
        )
        sweep[value] = summarize_governance(runs[policy])
    return sweep


def rule_sweep_table(sweep: Mapping[float, Mapping[str, Estimate]], rule: str) -> list[dict[str, Any]]:
    """One row per value of :func:`rule_sweep`: the value under ``rule`` and every measure with
    its ``_ci95_low`` / ``_ci95_high`` columns."""
    rows = []
    for value, summary in sweep.items():
        row: dict[str, Any] = {rule: value}
        for key, estimate in summary.items():
            row.update(estimate_columns(key, estimate))
        rows.append(row)
    return rows


def null_level_rows(
    effect_sweep: Mapping[float, Mapping[str, Estimate]], alpha_sweep: Mapping[float, Mapping[str, Estimate]]
) -> list[dict[str, Any]]:
    """One row per swept rule of the two tests in a world where no fact matters
    (:func:`~.world.null_world`): the test, its setting, the chance per fact it promises for a
    whole session (``alpha``; NaN for the interval, which promises none), and the share of
    sessions that deprecated the true and the stale fact, each with its 95 % interval."""
    rows = []
    for test, symbol, sweep in (
        ("effect interval", "z", effect_sweep),
        ("sequential test", "alpha", alpha_sweep),
    ):
        for value, summary in sweep.items():
            row: dict[str, Any] = {
                "test": test,
                "setting": f"{symbol} = {value:g}",
                "promised": value if symbol == "alpha" else math.nan,
            }
            lost, removed = summary["true_survives"], summary["stale_removed"]
            row.update(
                estimate_columns("true_lost", Estimate(1 - lost.value, 1 - lost.high, 1 - lost.low, lost.n))
            )
            row.update(estimate_columns("stale_lost", removed))
            rows.append(row)
    return rows
