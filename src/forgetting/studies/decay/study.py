"""The decay-engine study: every comparison of the book's decay chapters as one function.

A policy (:class:`DecayPolicy` or :class:`WindowPolicy`) names an engine and its parameters;
:func:`run_session` replays one seeded session through it and returns the per-session metrics; the sweeps below
repeat that over seeds and settings and return plain rows (lists of dicts), in
a fixed order, ready for a table or a CSV.

Sweeps over seeds (:func:`run_seeds`, :func:`run_policies` and what calls them) use the batch
simulator of :mod:`~forgetting.studies.decay.batch`, which gives every session exactly the metrics of
:func:`run_session` (the event engine), many sessions at a time; policies swept together
share one generation of the sessions.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..._validate import require_int
from ...decay.curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    decay_eviction_delay,
    naive_eviction_turn,
    retention,
    stability_after_recalls,
)
from ...decay.engines import EbbinghausEngine
from .. import stats
from ..executor import Executor, map_seeds
from . import batch, metrics
from .policies import DECAY, WINDOW, DecayPolicy, Policy, ScheduledPolicy, WindowPolicy
from .sessions import Action, Session, SessionConfig, generate_session, latest_last_recall
from .simulation import Trace, simulate

__all__ = [
    "Policy",
    "DecayPolicy",
    "WindowPolicy",
    "DECAY",
    "WINDOW",
    "run_session",
    "run_seeds",
    "run_policies",
    "summarize_runs",
    "headline",
    "HEADLINE_ENTRIES",
    "headline_values",
    "summary_rows",
    "noise_sweep",
    "noise_sweep_values",
    "sensitivity_sweep",
    "sensitivity_values",
    "sensitivity_advantage",
    "trace_session",
    "mechanism_check",
    "retention_curves",
    "grace_period_table",
    "reaches_first_recall",
    "first_recall_reached",
    "first_recall_in_grace",
    "first_recall_on_eviction_turn",
    "recall_outcomes",
    "earliest_losing_first_offset",
    "first_offset_sweep",
]


def run_session(policy: Policy, config: SessionConfig) -> dict[str, Any]:
    """Replay one session; return its seed and :func:`~forgetting.studies.decay.metrics.session_summary`."""
    trace = simulate(policy.engine(), generate_session(config))
    return {"seed": config.seed, **metrics.session_summary(trace)}


def _policies_chunk(
    policies: tuple[ScheduledPolicy, ...], config: SessionConfig, seeds: Sequence[int]
) -> list[tuple[dict[str, Any], ...]]:
    """Per seed of ``seeds``, one :func:`run_session` row per policy, from the batch simulator
    (sessions generated once, in blocks of at most :data:`~forgetting.studies.decay.batch.BATCH_CELLS`)."""
    delays = [policy.eviction_delays(config.recalls_per_foundational) for policy in policies]
    per_policy: list[list[dict[str, Any]]] = [[] for _ in policies]
    size = batch.block_size(config)
    for start in range(0, len(seeds), size):
        block = list(seeds[start : start + size])
        recall_turns = batch.recall_turn_array(config, block)
        for rows, policy_delays in zip(per_policy, delays, strict=True):
            rows.extend(
                batch.session_summaries(batch.replay_batch(policy_delays, config, recall_turns, block))
            )
    return list(zip(*per_policy, strict=True))


def run_policies(
    policies: Sequence[ScheduledPolicy], config: SessionConfig, n_seeds: int, executor: Executor | None = None
) -> list[list[dict[str, Any]]]:
    """:func:`run_seeds` of each policy, on sessions generated once for all of them.

    Each policy's list equals ``[run_session(policy, config.replace(seed=s)) for s in
    range(n_seeds)]`` exactly (the batch simulator is tested against the event engine).
    ``executor`` (default: this process) runs chunks of seeds; the rows do not depend on it.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    label = policies[0].label if len(policies) == 1 else f"{len(policies)} policies"
    chunk = functools.partial(_policies_chunk, tuple(policies), config)
    rows = map_seeds(chunk, range(n_seeds), executor, label=f"{label}, {n_seeds} seeds")
    return [[row[index] for row in rows] for index in range(len(policies))]


def run_seeds(
    policy: ScheduledPolicy, config: SessionConfig, n_seeds: int, executor: Executor | None = None
) -> list[dict[str, Any]]:
    """:func:`run_session` for seeds ``0..n_seeds-1`` of ``config``, in seed order (computed in
    batches; ``executor`` runs chunks of seeds, and the rows do not depend on it)."""
    return run_policies([policy], config, n_seeds, executor)[0]


def summarize_runs(runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean and sample sd over seeds of each per-session metric, as plain floats.

    Keys: ``frr``, ``survival_rate``, ``facts_evicted`` and ``footprint_reduction``, each
    with ``_mean`` and ``_sd`` (the FRR keys are ``frr_mean`` and ``frr_sd``).
    """
    summary: dict[str, float] = {}
    for name, key in (
        ("frr", "terminal_frr"),
        ("survival_rate", "terminal_survival_rate"),
        ("facts_evicted", "foundational_evicted"),
        ("footprint_reduction", "footprint_reduction"),
    ):
        values = stats.summarize([r[key] for r in runs])
        summary[f"{name}_mean"], summary[f"{name}_sd"] = values.mean, values.sd
    return summary


def headline(
    config: SessionConfig,
    n_seeds: int,
    policies: Sequence[Policy] = (DECAY, WINDOW),
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """One summary row per policy over ``n_seeds`` sessions of ``config`` (run by ``executor``)."""
    return [{"policy": p.label, **summarize_runs(run_seeds(p, config, n_seeds, executor))} for p in policies]


#: The headline's values that reproduce the decay article, each with its entry of
#: ``data/published.yaml`` (after ``decay-headline.``).
HEADLINE_ENTRIES = {
    **{
        key: key
        for key in (
            "frr_decay",
            "frr_window",
            "frr_decay_sd",
            "frr_window_sd",
            "survival_decay",
            "survival_window",
            "evicted_decay",
            "evicted_window",
        )
    },
    "footprint_decay": "footprint_reduction_decay",
    "footprint_window": "footprint_reduction_window",
}

_HEADLINE_METRICS = (
    ("frr", "frr"),
    ("survival_rate", "survival"),
    ("facts_evicted", "evicted"),
    ("footprint_reduction", "footprint"),
)


def headline_values(summary: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The headline's numbers from :func:`summarize_runs` per policy kind (``summary[kind]``).

    ``<name>_<kind>`` is a metric's mean and ``<name>_<kind>_sd`` its sd, with ``name`` one of
    ``frr``, ``survival``, ``evicted`` and ``footprint``, for each kind of ``summary``.
    """
    values: dict[str, float] = {}
    for kind, metrics_ in summary.items():
        for key, name in _HEADLINE_METRICS:
            values[f"{name}_{kind}"] = metrics_[f"{key}_mean"]
            values[f"{name}_{kind}_sd"] = metrics_[f"{key}_sd"]
    return values


def summary_rows(
    policies: Sequence[Policy], summary: Mapping[str, Mapping[str, float]]
) -> list[dict[str, Any]]:
    """One table row per policy: its label and its :func:`summarize_runs` (``summary[policy.kind]``)."""
    return [{"policy": p.label, **summary[p.kind]} for p in policies]


def noise_sweep(
    config: SessionConfig,
    noise_levels: Sequence[int],
    n_seeds: int,
    policies: Sequence[Policy] = (DECAY, WINDOW),
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """Terminal FRR (mean and sd over seeds) of each policy at each noise level.

    A table, never a fitted slope: FRR is bounded in [0, 1]. ``executor`` runs the seeds.
    """
    rows = []
    for noise in noise_levels:
        row: dict[str, Any] = {"noise_per_turn": noise}
        runs = run_policies(policies, config.replace(noise_per_turn=noise), n_seeds, executor)
        for policy, policy_runs in zip(policies, runs, strict=True):
            summary = summarize_runs(policy_runs)
            row[f"{policy.kind}_frr_mean"] = summary["frr_mean"]
            row[f"{policy.kind}_frr_sd"] = summary["frr_sd"]
        rows.append(row)
    return rows


def sensitivity_sweep(
    config: SessionConfig,
    thresholds: Sequence[float],
    windows: Sequence[int],
    n_seeds: int,
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """Decay FRR vs window FRR (mean and sd) on the grid thresholds x windows; ``holds`` if decay wins.

    The decay result depends only on theta and the window result only on W, so each
    is simulated once per value and paired on the grid. ``executor`` runs the seeds.
    """
    policies: list[Policy] = [*map(DecayPolicy, thresholds), *map(WindowPolicy, windows)]
    summaries = [summarize_runs(runs) for runs in run_policies(policies, config, n_seeds, executor)]
    decay = dict(zip(thresholds, summaries[: len(thresholds)], strict=True))
    window = dict(zip(windows, summaries[len(thresholds) :], strict=True))
    return [
        {
            "threshold": t,
            "window": w,
            "decay_frr_mean": decay[t]["frr_mean"],
            "decay_frr_sd": decay[t]["frr_sd"],
            "window_frr_mean": window[w]["frr_mean"],
            "window_frr_sd": window[w]["frr_sd"],
            "holds": decay[t]["frr_mean"] > window[w]["frr_mean"],
        }
        for t in thresholds
        for w in windows
    ]


def noise_sweep_values(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the chapter states of a :func:`noise_sweep` of decay and the window.

    ``noise_frr_decay_max`` and ``noise_frr_window_max``: each policy's mean terminal FRR at the
    last (heaviest) noise level of ``rows``; ``noise_all_levels_hold``: decay keeps every fact
    and the window none, on average, at every level.
    """
    if not rows:
        raise ValueError("rows must hold at least one noise level, got none")
    return {
        "noise_frr_decay_max": rows[-1]["decay_frr_mean"],
        "noise_frr_window_max": rows[-1]["window_frr_mean"],
        "noise_all_levels_hold": all(
            r["decay_frr_mean"] == 1.0 and r["window_frr_mean"] == 0.0 for r in rows
        ),
    }


def sensitivity_values(grid: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the chapter states of a :func:`sensitivity_sweep`: the grid's size, where decay wins,
    and the widest window's mean FRR (the same at every threshold: it depends on ``W`` alone)."""
    if not grid:
        raise ValueError("grid must hold at least one (threshold, window) pair, got none")
    widest = max(r["window"] for r in grid)
    return {
        "n_thresholds": len({r["threshold"] for r in grid}),
        "n_windows": len({r["window"] for r in grid}),
        "sensitivity_holds": sum(r["holds"] for r in grid),
        "sensitivity_total": len(grid),
        "widest_window": widest,
        "widest_window_frr": next(r["window_frr_mean"] for r in grid if r["window"] == widest),
    }


def sensitivity_advantage(grid: Sequence[dict[str, Any]]) -> tuple[list[float], list[int], Any]:
    """The thresholds, the windows (in grid order) and ``A[i, j] = FRR(decay, theta_i) - FRR(window, W_j)``.

    Means over seeds of a :func:`sensitivity_sweep`, as a float64 array (each difference is
    taken in Python, then stored: the heat map's numbers are exactly the rows' differences).
    """
    import numpy as np

    thresholds = list(dict.fromkeys(r["threshold"] for r in grid))
    windows = list(dict.fromkeys(r["window"] for r in grid))
    advantage = np.array(
        [
            [r["decay_frr_mean"] - r["window_frr_mean"] for r in grid if r["threshold"] == t]
            for t in thresholds
        ]
    )
    return thresholds, windows, advantage


def trace_session(policy: Policy, config: SessionConfig) -> Trace:
    """The full trace of one session (for the step-by-step chapter)."""
    return simulate(policy.engine(), generate_session(config))


def mechanism_check(
    config: SessionConfig,
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
    baseline_stability: float = DEFAULT_BASELINE_STABILITY,
) -> dict[str, Any]:
    """State of the first foundational fact after one session under decay.

    Returns its recall turns (comma-separated), ``recalls`` (touch count - 1), its
    ``stability``, the ``turns_since`` its last touch at the last turn ``L`` and its
    ``retention`` ``exp(-turns_since / stability)`` there. Raises ``ValueError`` when the
    session has no foundational fact, ``KeyError`` when the fact was evicted.
    """
    session = generate_session(config)
    if not session.foundational_ids:
        raise ValueError(f"config must have num_foundational >= 1, got {config.num_foundational}")
    engine = EbbinghausEngine(eviction_threshold=eviction_threshold, baseline_stability=baseline_stability)
    simulate(engine, session)
    fact = session.foundational_ids[0]
    item = engine.item(fact)
    length = config.session_length
    return {
        "recall_turns": ", ".join(map(str, session.recall_turns(fact))),
        "recalls": item.touch_count - 1,
        "stability": item.stability,
        "turns_since": length - item.last_touched,
        "retention": engine.retention(fact, length),
    }


def retention_curves(
    turns: Sequence[int], recalls: Sequence[int], baseline_stability: float = DEFAULT_BASELINE_STABILITY
) -> dict[int, list[float]]:
    """Retention against turns since the last touch, for items recalled ``r`` times."""
    return {r: [retention(t, stability_after_recalls(r, baseline_stability)) for t in turns] for r in recalls}


def grace_period_table(
    stabilities: Iterable[float], threshold: float = DEFAULT_EVICTION_THRESHOLD
) -> list[dict[str, float | None]]:
    """Naive eviction turn ``S0 ln(1/theta)`` and the integer turn the engine evicts at."""
    return [
        {
            "baseline_stability": s,
            "naive_eviction_turn": naive_eviction_turn(s, threshold),
            "eviction_delay": decay_eviction_delay(s, threshold),
        }
        for s in stabilities
    ]


def reaches_first_recall(registered_turn: int, first_recall_turn: int, grace_turns: int) -> bool:
    """Whether an untouched item is still present when its first recall comes.

    An item registered at turn ``r`` and never touched is evicted by ``step(r + grace)``;
    events of a turn are applied *before* its ``step``, so a recall on the eviction turn
    itself still finds the item: the test is ``first_recall - r <= grace`` (not ``<``).
    """
    return first_recall_turn - registered_turn <= grace_turns


def first_recall_reached(session: Session, policy: Policy) -> list[bool]:
    """For each foundational fact, in order: is it present at its first recall under ``policy``?

    ``False`` also for a fact that is never recalled. Foundational facts are registered at
    turn 1 and nothing else touches them before their first recall, so the answer depends
    only on that gap and the policy's grace period (:func:`reaches_first_recall`).
    """
    registered = {mem_id: turn for turn, action, mem_id, _ in session.events if action == Action.REGISTER}
    reached = []
    for fid in session.foundational_ids:
        turns = session.recall_turns(fid)
        reached.append(bool(turns) and reaches_first_recall(registered[fid], turns[0], policy.grace_turns))
    return reached


def first_recall_in_grace(config: SessionConfig, n_seeds: int, policy: Policy) -> float:
    """Share of foundational facts (seeds ``0..n_seeds-1``) present at their first recall.

    A fact whose first recall lands after its grace period is lost whatever the
    policy does: a benchmark where this share is near zero cannot be won.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    reached = [
        hit
        for seed in range(n_seeds)
        for hit in first_recall_reached(generate_session(config.replace(seed=seed)), policy)
    ]
    return sum(reached) / len(reached) if reached else math.nan


def first_recall_on_eviction_turn(config: SessionConfig, n_seeds: int, policy: Policy) -> float:
    """Share of foundational facts whose first recall lands exactly on their eviction turn.

    These are the facts a ``step``-before-recall order (or a strict ``<`` in the
    statistic) would wrongly count as lost.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    hits = total = 0
    for seed in range(n_seeds):
        session = generate_session(config.replace(seed=seed))
        for fid in session.foundational_ids:
            turns = session.recall_turns(fid)
            total += 1
            hits += bool(turns) and turns[0] - 1 == policy.grace_turns
    return hits / total if total else math.nan


def recall_outcomes(config: SessionConfig, n_seeds: int, policy: Policy) -> list[dict[str, int]]:
    """Where foundational facts are lost, by scheduled recall, over seeds ``0..n_seeds-1``.

    One row per recall index ``k`` (1 = first recall): ``scheduled`` facts with a
    ``k``-th recall, ``found`` of them present then, and ``first_lost`` whose first failed
    recall is the ``k``-th. A last row (``recall = 0``) counts the facts that passed every
    recall and were still lost by the last turn (``first_lost``), out of ``scheduled``
    facts that passed every recall.
    """
    totals: dict[int, dict[str, int]] = {}
    delays = policy.eviction_delays(config.recalls_per_foundational)
    for seeds, recall_turns in batch.seed_batches(config, n_seeds, f"{policy.label}, {n_seeds} seeds"):
        replay = batch.replay_batch(delays, config, recall_turns, seeds)
        for row in batch.recall_outcome_rows(replay):
            total = totals.setdefault(row["recall"], dict.fromkeys(row, 0))
            for key, value in row.items():
                total[key] = row["recall"] if key == "recall" else total[key] + value
    return [totals[k] for k in sorted(totals) if k] + [totals[0]]


def earliest_losing_first_offset(
    config: SessionConfig, policy: Policy, max_offset: int = 10_000
) -> int | None:
    """Smallest first base offset whose latest possible first recall comes after ``policy`` evicts.

    A fact registered at turn 1 and first recalled at most at ``b = 1 + round(offset * high)``
    (:func:`~forgetting.studies.decay.sessions.latest_last_recall` of a one-recall schedule) is
    safe for every seed while ``b - 1 <= grace``; from the returned offset on, some seeds
    lose facts before their first recall. ``None`` if no offset up to ``max_offset`` does.
    """
    for offset in range(1, max_offset + 1):
        one_recall = config.replace(
            recall_base_offsets=(offset,), recalls_per_foundational=1, schedule="spaced"
        )
        latest = latest_last_recall(one_recall)
        if latest is not None and not reaches_first_recall(1, latest, policy.grace_turns):
            return offset
    return None


def first_offset_sweep(
    config: SessionConfig, n_seeds: int, first_offsets: Sequence[int], policies: Sequence[Policy]
) -> list[dict[str, Any]]:
    """Share of facts present at their first recall as the first base offset grows.

    ``config.recall_base_offsets`` with its first entry replaced by each value (the
    later recalls are unchanged): the condition under which a short grace period loses a
    fact before its first reinforcement, shown rather than asserted.
    """
    rows = []
    for offset in first_offsets:
        shifted = config.replace(recall_base_offsets=(offset, *config.recall_base_offsets[1:]))
        row: dict[str, Any] = {"first_offset": offset}
        for policy in policies:
            row[policy.label] = first_recall_in_grace(shifted, n_seeds, policy)
        rows.append(row)
    return rows
