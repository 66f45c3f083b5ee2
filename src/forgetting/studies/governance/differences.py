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
    "TARGET_SHARE",
    "meets_target",
    "lost_estimate",
    "meeting_text",
    "target_text",
    "discount_floor",
    "rule_sweep_values",
]

TARGET_SHARE = 0.99
"""The target a reader may set: keep the true fact and remove the stale one, each in at least
this share of the sessions (:func:`meets_target`)."""

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
            row.update(estimate_columns("true_lost", lost_estimate(summary)))
            row.update(estimate_columns("stale_lost", summary["stale_removed"]))
            rows.append(row)
    return rows


def meets_target(summary: Mapping[str, Estimate], share: float = TARGET_SHARE) -> bool:
    """Whether a policy's summary keeps the true fact and removes the stale one, each in at least
    ``share`` of the sessions: on the point estimates (``value``), not on their intervals."""
    return summary["true_survives"].value >= share and summary["stale_removed"].value >= share


def lost_estimate(summary: Mapping[str, Estimate]) -> Estimate:
    """The share of sessions that deprecated the true fact, ``1 - true_survives``, with its
    interval turned round (``1 - high``, ``1 - low``)."""
    kept = summary["true_survives"]
    return Estimate(1 - kept.value, 1 - kept.high, 1 - kept.low, kept.n)


def meeting_text(sweep: Mapping[float, Mapping[str, Estimate]], symbol: str) -> str:
    """The swept values of a rule that meet the target, as the chapter says them: ``"z in 1.645
    and 1.96"``, or ``"none of the swept z"``."""
    from .narrative import list_text

    meeting = [value for value, summary in sweep.items() if meets_target(summary)]
    return f"{symbol} in " + list_text(meeting, "{:g}".format) if meeting else f"none of the swept {symbol}"


def target_text(sweep: Mapping[float, Mapping[str, Mapping[str, Estimate]]], policy: str) -> dict[str, str]:
    """Where ``policy`` meets the target over a sweep of the world (value -> policy -> summary):
    ``meets`` and ``fails`` (the values, or ``"none"``) and ``target``, the clause the chapter
    says ("meets the target at every swept value", "... at no swept value", "... at 0 and 0.003
    and not at 0.03")."""
    from .narrative import list_text

    met = [value for value in sweep if meets_target(sweep[value][policy])]
    failed = [value for value in sweep if value not in met]
    if not failed:
        target = "meets the target at every swept value"
    elif not met:
        target = "meets the target at no swept value"
    else:
        target = f"meets the target at {list_text(met, '{:g}'.format)} and not at {list_text(failed, '{:g}'.format)}"
    return {
        "meets": list_text(met, "{:g}".format) if met else "none",
        "fails": list_text(failed, "{:g}".format) if failed else "none",
        "target": target,
    }


def discount_floor(gamma_sweep: Mapping[float, Mapping[str, Estimate]]) -> tuple[list[float], list[float]]:
    """The swept discounts, in order, split into those under which the discounted policy never
    removed the stale fact (``silent``: its evidence stays below ``1 / (1 - gamma)``, under
    ``min_evidence`` when ``gamma <= 1 - 1 / min_evidence``) and the others (``acting``)."""
    silent = [g for g in sorted(gamma_sweep) if gamma_sweep[g]["stale_removed"].value == 0]
    return silent, [g for g in sorted(gamma_sweep) if g not in silent]


def rule_sweep_values(
    z_sweep: Mapping[float, Mapping[str, Estimate]],
    gamma_sweep: Mapping[float, Mapping[str, Estimate]],
    min_evidence: float,
) -> dict[str, Any]:
    """What beyond-governance says of the sweeps of the effect interval's z and the discounted
    estimator's gamma, by glue key: the values that meet the target (:func:`meeting_text`); at
    the smallest and largest z the share of sessions that keep the true fact, remove the stale one
    and the turns it takes (``z_low_*``, ``z_high_*``); the z of highest success after the shift;
    the discount floor ``1 - 1 / min_evidence``, the clause on the gammas at or below it that
    never deprecate (:func:`discount_floor`), and the smallest gamma above it with its share of
    sessions that keep the true fact and its turns to remove the stale one."""
    from .narrative import list_text
    from .summary import MEASURE_DIGITS

    values: dict[str, Any] = {
        "z_meeting_target": meeting_text(z_sweep, "z"),
        "gamma_meeting_target": meeting_text(gamma_sweep, "γ"),
    }
    for end, value in (("low", min(z_sweep)), ("high", max(z_sweep))):
        values[f"z_{end}"] = value
        for measure in ("true_survives", "stale_removed", "turns_to_remove_stale"):
            values[f"z_{end}_{measure}_text"] = z_sweep[value][measure].text(MEASURE_DIGITS[measure])
    best_z = max(z_sweep, key=lambda z: z_sweep[z]["success_after_shift"].value)
    values["best_success_z"] = best_z
    values["best_success_z_text"] = z_sweep[best_z]["success_after_shift"].text(3)
    silent, acting = discount_floor(gamma_sweep)
    values["gamma_bound"] = 1 - 1 / min_evidence
    values["min_evidence_value"] = min_evidence
    values["gamma_silent_clause"] = (
        f"at γ = {list_text(silent, '{:g}'.format)} the policy never deprecates and is decay alone"
        if silent
        else "none of the swept γ is that small"
    )
    lowest = gamma_sweep[acting[0]] if acting else None
    values["gamma_acting_low"] = f"{acting[0]:g}" if acting else "none"
    for measure in ("true_survives", "turns_to_remove_stale"):
        values[f"gamma_acting_low_{measure}_text"] = (
            lowest[measure].text(MEASURE_DIGITS[measure]) if lowest else "nan (no session)"
        )
    return values
