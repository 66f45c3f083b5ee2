"""The postmortems page's comparisons: grace periods and what they cost, the schedule's bounds, uniform against spaced.

Each function returns plain rows or numbers for one section of the page; the simulation is
:mod:`~forgetting.studies.decay.study`'s (batch replay over seeds), and the bounds are read from the
schedule alone (:func:`first_recall_gap_bounds`), so a chapter can check a share that the
schedule forces (every fact reaches its first recall, or none does) independently of the
simulation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._validate import raise_problems, real_problem, require_int
from ...decay.curves import DEFAULT_EVICTION_THRESHOLD
from .. import stats
from ..executor import Executor
from ..published import load_published
from . import metrics
from .batch import FACT_REGISTRATION_TURN
from .losses import describe_losses
from .policies import DecayPolicy, Policy
from .sessions import SessionConfig, latest_last_recall
from .study import (
    first_recall_in_grace,
    first_recall_on_eviction_turn,
    grace_period_table,
    reaches_first_recall,
    run_policies,
    summarize_runs,
)

__all__ = [
    "jitter_percent",
    "first_recall_gap_bounds",
    "forced_first_recall_share",
    "grace_rows",
    "first_losing_offset",
    "uniform_config",
    "schedule_comparison",
    "grace_values",
    "article_naive_turns",
    "schedule_values",
    "window_loss_values",
]


def jitter_percent(jitter: tuple[float, float]) -> float:
    """The half-width of a jitter range symmetric about 1, in percent: ``100 * (high - 1)``.

    ``(0.7, 1.3)`` is "±30 %". Raises ``ValueError`` for a range that is not ``0 < low <= high``
    or not symmetric about 1 (``low + high``, rounded to 12 digits, is not 2).
    """
    low, high = jitter
    raise_problems([real_problem("jitter[0]", low, 0.0, low_open=True), real_problem("jitter[1]", high, 0.0)])
    if low > high or round(low + high, 12) != 2.0:
        raise ValueError(f"jitter must be (low, high) with low <= high and low + high == 2, got {jitter!r}")
    return round(100 * (high - 1), 12)


def first_recall_gap_bounds(config: SessionConfig) -> tuple[int, int] | None:
    """The fewest and most turns between a fact's registration and its first recall, over every seed.

    Facts are registered at turn 1 (:data:`~forgetting.studies.decay.batch.FACT_REGISTRATION_TURN`).
    Spaced schedule: the first recall is ``1 + round(offset_1 * factor)``, at least turn 2 and at
    most the session's last turn, with ``factor`` in ``recall_jitter``. Uniform schedule: the
    smallest of ``recalls_per_foundational`` distinct turns of ``uniform_range`` (clipped to the
    session), so between its first turn and its last turn minus ``recalls - 1``. ``None`` when no
    fact has a recall.
    """
    if config.recalls_per_foundational == 0:
        return None
    length = config.session_length
    if config.schedule == "uniform":
        first, last = config.uniform_range[0], min(config.uniform_range[1], length)
        if first > last:
            return None
        count = min(config.recalls_per_foundational, last - first + 1)
        low, high = first, last - (count - 1)
    else:
        if length < FACT_REGISTRATION_TURN + 1:
            return None
        offset, (low_j, _) = config.recall_base_offsets[0], config.recall_jitter
        low = max(FACT_REGISTRATION_TURN + 1, min(1 + round(offset * low_j), length))
        latest = latest_last_recall(config.replace(recalls_per_foundational=1))
        assert latest is not None  # one recall, a session of at least two turns
        high = latest
    return low - FACT_REGISTRATION_TURN, high - FACT_REGISTRATION_TURN


def forced_first_recall_share(config: SessionConfig, policy: Policy) -> float | None:
    """The share of facts present at their first recall when the schedule alone decides it.

    ``1.0`` when even the latest first recall comes within ``policy``'s grace period
    (:func:`~forgetting.studies.decay.study.reaches_first_recall`), ``0.0`` when even the earliest comes
    after it, ``None`` when it depends on the seed (or no fact has a recall).
    """
    bounds = first_recall_gap_bounds(config)
    if bounds is None:
        return None
    low, high = bounds
    start = FACT_REGISTRATION_TURN
    if reaches_first_recall(start, start + high, policy.grace_turns):
        return 1.0
    if not reaches_first_recall(start, start + low, policy.grace_turns):
        return 0.0
    return None


def grace_rows(
    config: SessionConfig,
    n_seeds: int,
    stabilities: Sequence[float],
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """:func:`~forgetting.studies.decay.study.grace_period_table` with each ``S0``'s outcome on ``config``.

    Per baseline stability: ``reach_first_recall`` (share present at their first recall),
    ``first_recall_on_eviction_turn`` (share recalled on their eviction turn itself), and
    ``terminal_frr_mean`` / ``terminal_frr_sd`` over seeds ``0..n_seeds-1`` (the sessions are
    generated once for every ``S0``; the rows equal ``study.run_seeds`` of each policy).
    """
    require_int("n_seeds", n_seeds, minimum=1)
    rows = grace_period_table(stabilities, eviction_threshold)
    policies = [DecayPolicy(eviction_threshold, s) for s in stabilities]
    runs = run_policies(policies, config, n_seeds, executor) if policies else []
    for row, policy, policy_runs in zip(rows, policies, runs, strict=True):
        summary = summarize_runs(policy_runs)
        row["reach_first_recall"] = first_recall_in_grace(config, n_seeds, policy)
        row["first_recall_on_eviction_turn"] = first_recall_on_eviction_turn(config, n_seeds, policy)
        row["terminal_frr_mean"], row["terminal_frr_sd"] = summary["frr_mean"], summary["frr_sd"]
    return rows


def first_losing_offset(offset_rows: Sequence[Mapping[str, Any]], label: str) -> tuple[int, float] | None:
    """The first row of a :func:`~forgetting.studies.decay.study.first_offset_sweep` where the policy
    ``label`` keeps fewer than every fact to its first recall: ``(first_offset, share)``, or
    ``None`` when no offset in the sweep loses one."""
    for row in offset_rows:
        if label not in row:
            raise ValueError(f"label {label!r} is not a column of the sweep; columns: {sorted(row)}")
        if row[label] < 1.0:
            return int(row["first_offset"]), float(row[label])
    return None


def uniform_config(config: SessionConfig, first_turn: int) -> SessionConfig:
    """``config`` on the first draft's uniform schedule: recall turns drawn from ``first_turn..L``."""
    require_int("first_turn", first_turn, minimum=2, maximum=max(2, config.session_length))
    return config.replace(schedule="uniform", uniform_range=(first_turn, config.session_length))


def schedule_comparison(
    configs: Mapping[str, SessionConfig],
    policies: Sequence[Policy],
    n_seeds: int,
    executor: Executor | None = None,
) -> tuple[list[dict[str, Any]], dict[str, list[float]], list[str]]:
    """Every policy on every named schedule: rows, per-seed FRR and the zero-variance alarms.

    Rows (schedule-major): ``schedule``, ``policy``, ``frr_mean`` and ``frr_sd`` of the terminal
    FRR over seeds ``0..n_seeds-1``, and ``first_recall_in_grace``. The per-seed FRR is keyed
    ``"<schedule> / <policy kind>"``; the alarms are
    :func:`~forgetting.studies.decay.metrics.zero_variance_alarm` of it.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    rows, per_seed = [], {}
    for name, config in configs.items():
        for policy, runs in zip(policies, run_policies(policies, config, n_seeds, executor), strict=True):
            frr = [r["terminal_frr"] for r in runs]
            summary = stats.summarize(frr)
            per_seed[f"{name} / {policy.kind}"] = frr
            rows.append(
                {
                    "schedule": name,
                    "policy": policy.label,
                    "frr_mean": summary.mean,
                    "frr_sd": summary.sd,
                    "first_recall_in_grace": first_recall_in_grace(config, n_seeds, policy),
                }
            )
    return rows, per_seed, metrics.zero_variance_alarm(per_seed)


def _row_where(rows: Sequence[Mapping[str, Any]], key: str, value: Any) -> Mapping[str, Any]:
    found = [row for row in rows if row[key] == value]
    if len(found) != 1:
        raise ValueError(f"expected one row with {key} = {value!r}, found {len(found)}")
    return found[0]


def grace_values(rows: Sequence[Mapping[str, Any]], short_stability: float) -> dict[str, Any]:
    """What section 1 glues of :func:`grace_rows`: ``naive_turn_s<S0>`` for every row (``<S0>``
    as ``:g``), and, for the row of ``short_stability``, ``naive_turn_short``, ``delay_short``,
    ``reach_first_recall_short``, ``on_eviction_turn_short``, ``frr_short`` and ``frr_short_sd``.
    ``ValueError`` when no row (or more than one) has ``short_stability``."""
    values: dict[str, Any] = {
        f"naive_turn_s{row['baseline_stability']:g}": row["naive_eviction_turn"] for row in rows
    }
    short = _row_where(rows, "baseline_stability", short_stability)
    values |= {
        "naive_turn_short": short["naive_eviction_turn"],
        "delay_short": short["eviction_delay"],
        "reach_first_recall_short": short["reach_first_recall"],
        "on_eviction_turn_short": short["first_recall_on_eviction_turn"],
        "frr_short": short["terminal_frr_mean"],
        "frr_short_sd": short["terminal_frr_sd"],
    }
    return values


def article_naive_turns(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(key, entry)`` for each ``naive_turn_s<S0>`` of ``values`` whose stability the article
    names: the entries ``decay-postmortems.naive_turn_s<S0>`` of ``data/published.yaml`` (a stability
    the article does not name has no entry, and nothing to check)."""
    entries = load_published()
    return [
        (key, f"decay-postmortems.{key}")
        for key in sorted(values)
        if key.startswith("naive_turn_s") and f"decay-postmortems.{key}" in entries
    ]


def schedule_values(
    rows: Sequence[Mapping[str, Any]], uniform: str, spaced: str, decay: Policy, window: Policy
) -> dict[str, float]:
    """What section 2 glues of :func:`schedule_comparison`'s rows, found by the schedule names given
    to it (``uniform``, ``spaced``) and the policies' labels: the terminal FRR mean and sd of both
    policies on the uniform schedule (``uniform_frr_window``, ``uniform_frr_window_sd``,
    ``uniform_frr_decay``, ``uniform_frr_decay_sd``) and the share of facts whose first recall
    comes within the grace period (``uniform_winnable_window``, ``uniform_winnable_decay``,
    ``spaced_winnable_window``). ``ValueError`` for a pair with no row or several."""

    def row(schedule: str, policy: Policy) -> Mapping[str, Any]:
        found = [r for r in rows if r["schedule"] == schedule and r["policy"] == policy.label]
        if len(found) != 1:
            raise ValueError(f"expected one row for ({schedule!r}, {policy.label!r}), found {len(found)}")
        return found[0]

    return {
        "uniform_frr_window": row(uniform, window)["frr_mean"],
        "uniform_frr_window_sd": row(uniform, window)["frr_sd"],
        "uniform_frr_decay": row(uniform, decay)["frr_mean"],
        "uniform_frr_decay_sd": row(uniform, decay)["frr_sd"],
        "uniform_winnable_window": row(uniform, window)["first_recall_in_grace"],
        "uniform_winnable_decay": row(uniform, decay)["first_recall_in_grace"],
        "spaced_winnable_window": row(spaced, window)["first_recall_in_grace"],
    }


def window_loss_values(uniform: Mapping[str, Any], spaced: Mapping[str, Any]) -> dict[str, Any]:
    """What section 2 glues of the window's losses (:func:`~.losses.where_lost`) on the uniform and
    the spaced schedule: on the uniform one, the facts lost before their first recall
    (``uniform_window_lost_before_first``), those that reach it (``uniform_window_reached_first``)
    and where those are lost (``uniform_window_lost_later``); on the spaced one, the facts lost
    before their first recall (``spaced_window_lost_before_first``), in a gap between two recalls
    (``window_lost_between``, by recall in ``window_lost_between_by_recall``) and after the last
    (``window_lost_after_last``)."""
    return {
        "uniform_window_lost_before_first": uniform["before_first"],
        "uniform_window_reached_first": uniform["reached_first"],
        "uniform_window_lost_later": describe_losses(uniform["outcomes"], from_recall=2),
        "spaced_window_lost_before_first": spaced["before_first"],
        "window_lost_between": spaced["between"],
        "window_lost_between_by_recall": describe_losses(spaced["outcomes"], from_recall=2, after_last=False),
        "window_lost_after_last": spaced["after_last"],
    }
