"""The fair comparison: terminal FRR against footprint over each policy's whole parameter range.

A single window size against a single threshold says little: a wide enough window keeps
every fact, at the price of pruning less. Sweeping ``theta`` for decay and ``W`` for the
window over the same seeds traces the trade-off a user actually chooses on, one point
per setting, each with its spread over seeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import require_int, require_real
from .. import stats
from ..executor import Executor
from . import batch
from .policies import EngineKind
from .sessions import SessionConfig, latest_last_recall
from .study import DecayPolicy, Policy, WindowPolicy, run_policies

__all__ = [
    "FRONTIER_COLUMNS",
    "INTERVAL_COLUMNS",
    "frontier_with_intervals",
    "advantage_matrix",
    "fine_settings",
    "point_labels",
    "frontier_point",
    "frontier",
    "window_certain_loss_below",
    "window_min_full_recall",
]

FRONTIER_COLUMNS = (
    "policy",
    "parameter",
    "terminal_frr_mean",
    "terminal_frr_sd",
    "footprint_reduction_mean",
    "footprint_reduction_sd",
)
"""The columns of a frontier row, in order."""


def frontier_point(policy: Policy, config: SessionConfig, n_seeds: int) -> dict[str, Any]:
    """One frontier row: ``policy`` over seeds ``0..n_seeds-1``, mean and sample sd of each axis."""
    return _point(policy, run_policies([policy], config, n_seeds)[0])


def _point(policy: Policy, runs: list[dict[str, Any]]) -> dict[str, Any]:
    frr = stats.summarize([r["terminal_frr"] for r in runs])
    footprint = stats.summarize([r["footprint_reduction"] for r in runs])
    parameter = policy.eviction_threshold if isinstance(policy, DecayPolicy) else policy.window_size
    return dict(
        zip(FRONTIER_COLUMNS, (policy.kind, parameter, frr.mean, frr.sd, footprint.mean, footprint.sd))
    )


def frontier(
    config: SessionConfig,
    n_seeds: int,
    thresholds: Sequence[float],
    windows: Sequence[int],
    baseline_stability: float | None = None,
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """Frontier rows for decay at every ``theta`` in ``thresholds``, then the window at every ``W``.

    ``baseline_stability`` is the decay engine's ``S0`` (its default when ``None``); ``executor``
    runs the seeds.
    """
    policies: list[Policy] = [
        DecayPolicy(t) if baseline_stability is None else DecayPolicy(t, baseline_stability)
        for t in thresholds
    ]
    policies += [WindowPolicy(w) for w in windows]
    runs = run_policies(policies, config, n_seeds, executor)
    return [_point(policy, policy_runs) for policy, policy_runs in zip(policies, runs, strict=True)]


def window_certain_loss_below(config: SessionConfig) -> int | None:
    """The ``W`` below which the window loses every foundational fact by the last turn, for any seed.

    A fact is present at the end of turn ``L`` only if ``L - last touch <= W``; its last
    touch is at most :func:`~forgetting.studies.decay.sessions.latest_last_recall`, so every
    ``W < L - latest_last_recall`` gives terminal FRR 0 by construction, whatever the
    seeds. ``None`` when no recall is scheduled (then only ``W >= L - 1`` keeps a fact).
    """
    latest = latest_last_recall(config)
    return None if latest is None else config.session_length - latest


def window_min_full_recall(config: SessionConfig, n_seeds: int, max_window: int | None = None) -> int | None:
    """Smallest ``W`` whose window keeps every foundational fact to the end in seeds ``0..n_seeds-1``.

    Scans ``W = 1, 2, ...`` up to ``max_window`` (default: the session length), starting at
    :func:`window_certain_loss_below` since nothing below it can keep a fact; ``None``
    when no ``W`` in range reaches terminal FRR 1.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    last = config.session_length if max_window is None else require_int("max_window", max_window, minimum=1)
    start = max(1, window_certain_loss_below(config) or 1)
    sessions = list(batch.seed_batches(config, n_seeds, f"smallest W with FRR 1, {n_seeds} seeds"))
    for window in range(start, last + 1):
        delays = WindowPolicy(window).eviction_delays(config.recalls_per_foundational)
        if all(
            not batch.replay_batch(delays, config, recall_turns, seeds).fact_evicted_turn.any()
            for seeds, recall_turns in sessions
        ):
            return window
    return None


INTERVAL_COLUMNS = (
    "policy",
    "parameter",
    "terminal_frr_mean",
    "terminal_frr_sd",
    "terminal_frr_ci95",
    "footprint_reduction_mean",
    "footprint_reduction_sd",
    "footprint_reduction_ci95",
    "full_recall_share",
)
"""The columns of a :func:`frontier_with_intervals` row, in order."""


def frontier_with_intervals(
    config: SessionConfig, n_seeds: int, thresholds: Sequence[float], windows: Sequence[int]
) -> list[dict[str, Any]]:
    """Frontier rows with the half-width of each mean's 95 % interval, for large seed counts.

    Decay at every ``theta`` in ``thresholds`` (``S0`` at its default), then the window at
    every ``W`` in ``windows``, all on the same sessions (seeds ``0..n_seeds-1``, generated
    once). Means and sds are :func:`~forgetting.studies.stats.summarize` over seeds in seed order,
    widths :func:`~forgetting.studies.stats.ci95_half_width`; ``full_recall_share`` is the share of
    seeds that keep every fact to the end.
    """
    policies: list[Policy] = [*map(DecayPolicy, thresholds), *map(WindowPolicy, windows)]
    delays = [policy.eviction_delays(config.recalls_per_foundational) for policy in policies]
    frr: list[list[npt.NDArray[np.float64]]] = [[] for _ in policies]
    footprint: list[list[npt.NDArray[np.float64]]] = [[] for _ in policies]
    label = f"frontier, {len(policies)} settings, {n_seeds} seeds"
    for seeds, recall_turns in batch.seed_batches(config, n_seeds, label):
        for index, policy_delays in enumerate(delays):
            metrics = batch.session_metrics(batch.replay_batch(policy_delays, config, recall_turns, seeds))
            frr[index].append(metrics.terminal_frr)
            footprint[index].append(metrics.footprint_reduction)
    rows = []
    for policy, frr_parts, footprint_parts in zip(policies, frr, footprint, strict=True):
        frr_values = np.concatenate(frr_parts).tolist()
        keep = stats.summarize(frr_values)
        prune = stats.summarize(np.concatenate(footprint_parts).tolist())
        parameter = policy.eviction_threshold if isinstance(policy, DecayPolicy) else policy.window_size
        values = (
            *(policy.kind, parameter, keep.mean, keep.sd, stats.ci95_half_width(keep)),
            *(prune.mean, prune.sd, stats.ci95_half_width(prune)),
            frr_values.count(1.0) / n_seeds,
        )
        rows.append(dict(zip(INTERVAL_COLUMNS, values, strict=True)))
    return rows


def advantage_matrix(
    rows: Sequence[dict[str, Any]],
) -> tuple[list[float], list[int], npt.NDArray[np.float64]]:
    """Terminal FRR of decay minus that of the window on every pair ``(theta, W)`` of frontier rows.

    Returns the thresholds, the windows (in row order) and the matrix ``A[i, j] =
    FRR(theta_i) - FRR(W_j)`` (means over seeds): decay depends only on ``theta`` and the
    window only on ``W``, so the grid is the difference of the two lists.
    """
    decay = [r for r in rows if r["policy"] == EngineKind.DECAY]
    window = [r for r in rows if r["policy"] == EngineKind.WINDOW]
    advantage = np.subtract.outer(
        np.array([r["terminal_frr_mean"] for r in decay]), np.array([r["terminal_frr_mean"] for r in window])
    )
    return [r["parameter"] for r in decay], [r["parameter"] for r in window], advantage


def fine_settings(theta_step: float, window_step: int, max_window: int) -> tuple[list[float], list[int]]:
    """A regular grid over each policy's range: ``theta = k * step < 1`` and ``W = 1, 1 + step, ... <= max``.

    Thresholds are rounded to 10 decimals (``3 * 0.01`` is ``0.03``, not ``0.030000000000000002``).
    """
    require_real("theta_step", theta_step, 0.0, 0.5, low_open=True)
    require_int("window_step", window_step, minimum=1)
    require_int("max_window", max_window, minimum=1)
    count = math.ceil(1 / theta_step)
    thresholds = [theta for k in range(1, count + 1) if (theta := round(k * theta_step, 10)) < 1]
    return thresholds, list(range(1, max_window + 1, window_step))


def point_labels(
    rows: Sequence[dict[str, Any]], policy: str, min_dx: float, min_dy: float = 0.05
) -> list[tuple[float, float, str]]:
    """Labels for ``policy``'s frontier points that do not print on top of each other.

    Points are taken in row order (``(footprint mean, FRR mean, parameter)``); a run of
    consecutive points each within ``min_dx`` and ``min_dy`` of the previous one gets one
    label, ``"first–last"``, at its first point.
    """
    labels: list[tuple[float, float, str]] = []
    run: list[dict[str, Any]] = []

    def close_run() -> None:
        first, last = run[0], run[-1]
        text = f"{first['parameter']:g}" + ("" if len(run) == 1 else f"–{last['parameter']:g}")
        labels.append((first["footprint_reduction_mean"], first["terminal_frr_mean"], text))

    for row in (r for r in rows if r["policy"] == policy):
        if run and not (
            abs(row["footprint_reduction_mean"] - run[-1]["footprint_reduction_mean"]) < min_dx
            and abs(row["terminal_frr_mean"] - run[-1]["terminal_frr_mean"]) < min_dy
        ):
            close_run()
            run = []
        run.append(row)
    if run:
        close_run()
    return labels
