"""What the governance chapter reports over sessions: estimates with 95 % intervals, the cost
split by what happened to the true fact, the order of the losses, the digest and the tables.

Every share is a :func:`~.intervals.share_estimate` (Wilson) and every mean a
:func:`~.intervals.mean_estimate` (bootstrap over sessions); see :mod:`.intervals`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..._validate import require_int, shown
from ...hashing import digest
from ..executor import Executor
from .batch import run_governance_seeds
from .intervals import NO_SESSION, Estimate, mean_estimate, share_estimate
from .policies import POLICIES, GovernancePolicy
from .runs import FactState, GovernanceRun, success_in
from .world import GovernanceWorld

__all__ = [
    "POLICY_LABELS",
    "estimate_columns",
    "MEASURES",
    "summarize_governance",
    "crowding_summary",
    "governance_digest",
    "late_window",
    "policy_table",
    "CostGroup",
    "cost_split",
    "cost_split_table",
    "MEASURE_DIGITS",
    "loss_order",
    "same_removals",
    "world_sweep",
    "co_retrieval_sweep",
    "sweep_table",
    "describe_decay_fates",
]

POLICY_LABELS: dict[str, str] = {
    GovernancePolicy.DECAY: "decay alone",
    GovernancePolicy.WORTH: "Memory Worth alone",
    GovernancePolicy.COMBINED: "combined governance",
    GovernancePolicy.NEWEST: "newest fact wins",
    GovernancePolicy.DISCOUNTED: "combined, discounted worth",
    GovernancePolicy.EFFECT: "combined, effect interval",
    GovernancePolicy.SEQUENTIAL: "combined, sequential test",
}
"""How tables and figures name each policy of :data:`~forgetting.studies.governance.policies.ALL_POLICIES`."""
MEASURES = {
    "success_after_shift": "success after shift",
    "success_late": "success, late turns",
    "stale_removed": "stale fact removed",
    "turns_to_remove_stale": "turns to remove stale",
    "turns_to_lose_true": "turns to lose true",
    "true_survives": "true fact survives",
    "true_left_first": "true fact left before stale",
    "both_at_end": "both kept at end",
    "working_set": "mean working set",
}
"""The keys of :func:`summarize_governance` and how the tables name them."""
MEASURE_DIGITS = {key: 1 if key.startswith("turns_") or key == "working_set" else 3 for key in MEASURES}
"""Decimals the prose shows for each measure (turns and item counts: 1; rates and shares: 3)."""


def _check_runs(runs: object) -> Sequence[GovernanceRun]:
    if not isinstance(runs, Sequence) or not runs or not all(isinstance(r, GovernanceRun) for r in runs):
        raise ValueError(f"runs must be a non-empty sequence of GovernanceRun, got {runs!r}")
    return runs


def _mean(values: Sequence[float]) -> Estimate:
    """:func:`mean_estimate` of ``values``, :data:`NO_SESSION` when no session has the quantity."""
    return mean_estimate(values) if values else NO_SESSION


def _share(flags: Sequence[bool]) -> Estimate:
    """:func:`share_estimate` of ``flags``, :data:`NO_SESSION` when no session counts."""
    return share_estimate(flags) if flags else NO_SESSION


def _check_policy_runs(runs: object, policies: Sequence[str]) -> Mapping[str, Sequence[GovernanceRun]]:
    """``runs`` if it maps every name in ``policies`` to its runs, else a ``ValueError`` naming the missing."""
    if not isinstance(runs, Mapping):
        raise ValueError(f"runs must be a mapping of policy name to its runs, got {shown(runs)}")
    missing = [str(p) for p in policies if p not in runs]
    if missing:
        raise ValueError(
            f"runs must hold the runs of every policy {[str(p) for p in policies]} (as run_governance_seeds "
            f"returns them), missing {missing}; got the keys {shown(sorted(map(str, runs)))}"
        )
    return runs


def _late_bounds(session_length: int, shift_turn: int) -> tuple[int, int]:
    return session_length - (session_length - shift_turn) // 2 + 1, session_length


def late_window(world: GovernanceWorld) -> tuple[int, int]:
    """First and last turn of the last ``(L - shift) // 2`` turns of the session.

    ``(L - (L - shift) // 2 + 1, L)`` with ``L = session_length``: the second half of the
    post-shift turns, rounded down (empty when only one turn follows the shift).
    """
    return _late_bounds(world.session_length, world.shift_turn)


def _true_left_first(run: GovernanceRun) -> bool:
    """The true fact left the working set strictly before the stale one (or the stale one never left)."""
    return run.true_removed_turn is not None and (
        run.stale_removed_turn is None or run.true_removed_turn < run.stale_removed_turn
    )


def summarize_governance(runs: Sequence[GovernanceRun]) -> dict[str, Estimate]:
    """One policy's runs over sessions, each measure with its 95 % interval (keys :data:`MEASURES`).

    Means over sessions (bootstrap interval; a session without the quantity is skipped, and
    ``n`` says how many counted): ``success_after_shift`` (per-session success rate of the
    tasks after the shift), ``success_late`` (the same over :func:`late_window`),
    ``turns_to_remove_stale`` (turns from the shift to the stale fact's removal, over the
    sessions that removed it), ``turns_to_lose_true`` (the same for the true fact, over the
    sessions that lost it), ``working_set`` (mean post-shift working-set size). Shares of
    sessions (Wilson interval): ``stale_removed`` (the stale fact left the working set),
    ``true_survives`` (the true fact is in it at the end), ``true_left_first`` (the true fact
    left strictly before the stale one), ``both_at_end`` (both contradicting facts kept).

    Raises
    ------
    ValueError
        ``runs`` is empty or holds something other than :class:`GovernanceRun`.
    """
    runs = _check_runs(runs)
    late = [_late_bounds(len(r.working_set), r.shift_turn) for r in runs]
    return {
        "success_after_shift": _mean([r.success_after_shift for r in runs]),
        "success_late": _mean([success_in(r, *w) for r, w in zip(runs, late)]),
        "stale_removed": _share([r.stale_removed_turn is not None for r in runs]),
        "turns_to_remove_stale": _mean(
            [r.stale_removed_turn - r.shift_turn for r in runs if r.stale_removed_turn is not None]
        ),
        "turns_to_lose_true": _mean(
            [r.true_removed_turn - r.shift_turn for r in runs if r.true_removed_turn is not None]
        ),
        "true_survives": _share([r.true_removed_turn is None for r in runs]),
        "true_left_first": _share([_true_left_first(r) for r in runs]),
        "both_at_end": _share([r.stale_removed_turn is None and r.true_removed_turn is None for r in runs]),
        "working_set": _mean([r.mean_working_set for r in runs]),
    }


def crowding_summary(runs: Sequence[GovernanceRun]) -> dict[str, Estimate]:
    """:func:`summarize_governance` and ``crowded_out``: the mean over sessions of the share of
    post-shift tasks whose search noise crowded out (bootstrap interval)."""
    return {
        **summarize_governance(runs),
        "crowded_out": _mean([r.crowded_after_shift for r in _check_runs(runs)]),
    }


def governance_digest(runs: Mapping[str, Sequence[GovernanceRun]]) -> str:
    """SHA-256 (:func:`forgetting.hashing.digest`) over every policy's outcomes, removals and
    working-set sizes, by seed."""
    body = {
        p: [[r.seed, r.successes, r.stale_removed_turn, r.true_removed_turn, r.working_set] for r in rs]
        for p, rs in sorted(runs.items())
    }
    return digest(body)


def estimate_columns(name: str, estimate: Estimate) -> dict[str, float]:
    """A table row's columns for one estimate: ``name``, ``name_ci95_low``, ``name_ci95_high``."""
    return {name: estimate.value, f"{name}_ci95_low": estimate.low, f"{name}_ci95_high": estimate.high}


def policy_table(
    runs: Mapping[str, Sequence[GovernanceRun]], policies: Sequence[str] = POLICIES
) -> list[dict[str, Any]]:
    """One row per policy of ``policies`` and measure: ``policy``, ``measure``, ``value``,
    ``ci95_low``, ``ci95_high`` and ``sessions`` (how many sessions the value is over; a mean
    over no session is NaN). ``runs`` maps every one of ``policies`` to its runs
    (:func:`run_governance_seeds`); ``ValueError`` names any policy missing."""
    runs = _check_policy_runs(runs, policies)
    rows = []
    for p in policies:
        for key, estimate in summarize_governance(runs[p]).items():
            rows.append(
                {
                    "policy": POLICY_LABELS[p],
                    "measure": MEASURES[key],
                    "value": estimate.value,
                    "ci95_low": estimate.low,
                    "ci95_high": estimate.high,
                    "sessions": estimate.n,
                }
            )
    return rows


def _paired(runs: Mapping[str, Sequence[GovernanceRun]]) -> list[tuple[GovernanceRun, GovernanceRun]]:
    both = (GovernancePolicy.COMBINED, GovernancePolicy.DECAY)
    runs = _check_policy_runs(runs, both)
    combined, decay = (_check_runs(runs[p]) for p in both)
    if [r.seed for r in combined] != [r.seed for r in decay]:
        raise ValueError("runs['combined'] and runs['decay'] must be the same sessions (seeds), in order")
    return list(zip(combined, decay))


@dataclass(frozen=True)
class CostGroup:
    """Combined governance against decay alone on one group of sessions.

    ``sessions``: how many; ``success_combined`` / ``success_decay``: mean success rate after
    the shift under each policy (bootstrap interval); ``combined_worse``: share of the sessions
    (with a task after the shift) in which combined governance had a strictly lower success
    rate after the shift than decay alone (Wilson interval).
    """

    sessions: int
    success_combined: Estimate
    success_decay: Estimate
    combined_worse: Estimate


def cost_split(runs: Mapping[str, Sequence[GovernanceRun]]) -> dict[str, CostGroup]:
    """:class:`CostGroup` of the sessions in which combined governance kept the true fact to
    the end (``"true fact kept"``), of those in which it lost it (``"true fact lost"``) and of
    all of them (``"all sessions"``); ``runs["combined"]`` and ``runs["decay"]`` must be runs
    of the same sessions."""
    pairs = _paired(runs)
    groups = {
        "true fact kept": [(c, d) for c, d in pairs if c.true_removed_turn is None],
        "true fact lost": [(c, d) for c, d in pairs if c.true_removed_turn is not None],
        "all sessions": pairs,
    }
    return {
        name: CostGroup(
            len(members),
            _mean([c.success_after_shift for c, _ in members]),
            _mean([d.success_after_shift for _, d in members]),
            _share(
                [
                    c.success_after_shift < d.success_after_shift
                    for c, d in members
                    if not math.isnan(c.success_after_shift)  # NaN: no task after the shift
                ]
            ),
        )
        for name, members in groups.items()
    }


def cost_split_table(split: Mapping[str, CostGroup]) -> list[dict[str, Any]]:
    """One row per group of :func:`cost_split`: ``group``, ``sessions``, and each estimate with
    ``_ci95_low`` / ``_ci95_high`` columns."""
    return [
        {
            "group": name,
            "sessions": group.sessions,
            **estimate_columns("success_combined", group.success_combined),
            **estimate_columns("success_decay", group.success_decay),
            **estimate_columns("combined_worse", group.combined_worse),
        }
        for name, group in split.items()
    ]


def loss_order(runs: Sequence[GovernanceRun]) -> dict[str, int]:
    """How the sessions that lost the true fact lost it, relative to the stale fact.

    ``lost`` (sessions whose true fact left the working set), split into ``true_first`` (it
    left strictly before the stale fact, or the stale fact never left), ``same_turn`` (both
    left on the same turn, i.e. on the same task) and ``stale_first``.
    """
    lost = [r for r in _check_runs(runs) if r.true_removed_turn is not None]
    same = sum(r.true_removed_turn == r.stale_removed_turn for r in lost)
    first = sum(_true_left_first(r) for r in lost)
    return {
        "lost": len(lost),
        "true_first": first,
        "same_turn": same,
        "stale_first": len(lost) - first - same,
    }


def same_removals(first: Sequence[GovernanceRun], second: Sequence[GovernanceRun]) -> int:
    """Number of sessions in which two policies removed both facts on the same turns (or never)."""
    if [r.seed for r in _check_runs(first)] != [r.seed for r in _check_runs(second)]:
        raise ValueError("first and second must be runs of the same sessions (seeds), in order")
    return sum(
        (a.stale_removed_turn, a.true_removed_turn) == (b.stale_removed_turn, b.true_removed_turn)
        for a, b in zip(first, second)
    )


def world_sweep(
    world: GovernanceWorld,
    field: str,
    values: Sequence[float],
    n_seeds: int,
    base_seed: int = 0,
    executor: Executor | None = None,
    policies: Sequence[str] = (GovernancePolicy.DECAY, GovernancePolicy.COMBINED),
    *,
    known: Mapping[str, Mapping[str, Estimate]] | None = None,
    summarize: Callable[[Sequence[GovernanceRun]], dict[str, Estimate]] = summarize_governance,
    rules: Mapping[str, float] | None = None,
) -> dict[float, dict[str, dict[str, Estimate]]]:
    """``policies`` on the same sessions at each value of one field of ``world``.

    ``sweep[value][policy]`` is ``summarize`` (:func:`summarize_governance` or
    :func:`crowding_summary`) of that policy's runs in the world
    with ``field`` set to ``value`` (``co_retrieval``, ``crowding``, ...: none of them changes a
    session's draws, :func:`~.world.generate_governance_session`); ``rules`` holds keyword
    rules of :func:`~forgetting.studies.governance.policies.run_governance`; ``executor`` runs the seeds
    (the results do not depend on it). ``known`` holds the summaries, by policy, that the caller
    already has at ``world``'s own value of ``field`` (same sessions and rules): those policies
    are taken there, not rerun.

    Raises ``ValueError`` for a field ``world`` does not have (or ``outcome``), a bad value
    (from :class:`~.world.GovernanceWorld`) or a bad ``n_seeds``, before any run.
    """
    require_int("n_seeds", n_seeds, 1, allow_numpy=True)
    fields = [f.name for f in dataclasses.fields(world) if f.name != "outcome"]
    if field not in fields:
        raise ValueError(f"field must be one of {fields}, got {field!r}")
    changes: list[dict[str, Any]] = [{field: value} for value in values]
    worlds = {change[field]: replace(world, **change) for change in changes}
    sweep = {}
    for value, swept in worlds.items():
        have = dict(known or {}) if value == getattr(world, field) else {}
        missing = tuple(p for p in policies if p not in have)
        runs = (
            run_governance_seeds(
                swept, n_seeds, base_seed, policies=missing, executor=executor, **(rules or {})
            )
            if missing
            else {}
        )
        sweep[value] = {p: dict(have[p]) if p in have else summarize(runs[p]) for p in policies}
    return sweep


def co_retrieval_sweep(
    world: GovernanceWorld,
    values: Sequence[float],
    n_seeds: int,
    base_seed: int = 0,
    executor: Executor | None = None,
    policies: Sequence[str] = (GovernancePolicy.DECAY, GovernancePolicy.COMBINED),
    **rules: float,
) -> dict[float, dict[str, dict[str, Estimate]]]:
    """:func:`world_sweep` of ``co_retrieval``: ``policies`` on the same sessions at each value."""
    return world_sweep(world, "co_retrieval", values, n_seeds, base_seed, executor, policies, rules=rules)


def sweep_table(
    sweep: Mapping[float, Mapping[str, Mapping[str, Estimate]]], field: str = "co_retrieval"
) -> list[dict[str, Any]]:
    """One row per value and policy of :func:`world_sweep`: the value under ``field``,
    ``policy`` (its label), and each measure with ``_ci95_low`` / ``_ci95_high`` columns."""
    rows = []
    for value, policies in sweep.items():
        for p, summary in policies.items():
            columns: dict[str, Any] = {field: value, "policy": POLICY_LABELS[p]}
            for key, estimate in summary.items():
                columns.update(estimate_columns(key, estimate))
            rows.append(columns)
    return rows


def describe_decay_fates(states: Mapping[str, FactState], eviction_threshold: float) -> str:
    """What the decay engine did with the two deployment facts, as a clause for the prose.

    Both present at the last turn: the lower of their two retentions against ``θ``; otherwise
    which fact the engine evicted, and when.
    """
    evicted = {m: s.evicted_turn for m, s in states.items() if s.evicted_turn is not None}
    if not evicted:
        lowest = min(s.retention for s in states.values() if s.retention is not None)
        relation = "above" if lowest >= eviction_threshold else "below"
        return (
            f"at the last turn the lower of their two retentions is {lowest:.3f}, {relation} the threshold "
            f"θ = {eviction_threshold:.2f}: both are reinforced, and both are kept"
        )
    # plain ids: glued text is not parsed as markdown, so no emphasis
    parts = [f"it evicts {m} at turn {t}" for m, t in sorted(evicted.items(), key=lambda x: (x[1], x[0]))]
    kept = [m for m in states if m not in evicted]
    return "; ".join(parts) + (f", and keeps {kept[0]} to the end" if kept else "")
