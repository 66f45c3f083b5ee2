"""The decay-engine study: every comparison of the book's decay chapters as one function.

A policy (:class:`DecayPolicy` or :class:`WindowPolicy`) names an engine and its parameters;
:func:`run_session` replays one seeded session through it and returns the per-session metrics; the sweeps below
repeat that over seeds and settings and return plain rows (lists of dicts), in
a fixed order, ready for a table or a CSV.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import stats
from .._validate import require_int
from ..progress import progress
from . import metrics
from .curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    decay_eviction_delay,
    naive_eviction_turn,
    retention,
    stability_after_recalls,
    window_eviction_delay,
)
from .engines import EbbinghausEngine, Engine, RecencyWindow
from .sessions import SessionConfig, generate_session
from .simulation import Trace, simulate

__all__ = [
    "Policy",
    "DecayPolicy",
    "WindowPolicy",
    "DECAY",
    "WINDOW",
    "run_session",
    "run_seeds",
    "summarize_runs",
    "headline",
    "noise_sweep",
    "sensitivity_sweep",
    "trace_session",
    "mechanism_check",
    "retention_curves",
    "grace_period_table",
    "first_recall_in_grace",
]


@dataclass(frozen=True)
class DecayPolicy:
    """The Ebbinghaus decay engine with its two parameters.

    Attributes
    ----------
    eviction_threshold : float, default 0.20
        ``theta``: an item is evicted the first turn its retention falls below it.
    baseline_stability : float, default 8.0
        ``S0``, the stability of a new item (turns).
    """

    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD
    baseline_stability: float = DEFAULT_BASELINE_STABILITY
    kind: ClassVar[str] = "decay"

    def engine(self) -> Engine:
        """A fresh :class:`~forgetting.decay.engines.EbbinghausEngine`."""
        return EbbinghausEngine(self.eviction_threshold, self.baseline_stability)

    @property
    def label(self) -> str:
        """Name for tables and legends, e.g. ``Ebbinghaus decay (θ = 0.20)``."""
        return f"Ebbinghaus decay (θ = {self.eviction_threshold:.2f})"

    @property
    def grace_turns(self) -> int:
        """Turns after its last touch at which an unreinforced item is evicted."""
        delay = decay_eviction_delay(self.baseline_stability, self.eviction_threshold)
        assert delay is not None  # S0 is finite, so the delay is too
        return delay


@dataclass(frozen=True)
class WindowPolicy:
    """The recency window: evict when ``turn - last_touched > window_size``.

    Attributes
    ----------
    window_size : int, default 15
        ``W``, in turns.
    """

    window_size: int = DEFAULT_WINDOW_SIZE
    kind: ClassVar[str] = "window"

    def engine(self) -> Engine:
        """A fresh :class:`~forgetting.decay.engines.RecencyWindow`."""
        return RecencyWindow(self.window_size)

    @property
    def label(self) -> str:
        """Name for tables and legends, e.g. ``Recency window (W = 15)``."""
        return f"Recency window (W = {self.window_size})"

    @property
    def grace_turns(self) -> int:
        """Turns after its last touch at which an unreinforced item is evicted."""
        return window_eviction_delay(self.window_size)


Policy = DecayPolicy | WindowPolicy
"""An eviction policy: the engine it builds and the name it carries in tables."""

DECAY = DecayPolicy()
"""The decay engine at its defaults (theta 0.20, S0 8)."""
WINDOW = WindowPolicy()
"""The recency window at its default (W 15)."""


def run_session(policy: Policy, config: SessionConfig) -> dict[str, Any]:
    """Replay one session; return its terminal FRR, foundational survival and footprint."""
    trace = simulate(policy.engine(), generate_session(config))
    survival = metrics.survival_stats(trace, trace.foundational_ids)
    return {
        "seed": config.seed,
        "terminal_frr": metrics.terminal_frr(trace),
        "terminal_survival_rate": survival.terminal_survival_rate,
        "foundational_evicted": survival.n_evicted,
        "mean_survival_time": survival.mean_survival_time,
        "footprint_reduction": metrics.footprint_reduction(trace),
    }


def run_seeds(policy: Policy, config: SessionConfig, n_seeds: int) -> list[dict[str, Any]]:
    """:func:`run_session` for seeds ``0..n_seeds-1`` of ``config``."""
    require_int("n_seeds", n_seeds, minimum=1)
    seeds = progress(range(n_seeds), f"{policy.label}, {n_seeds} seeds")
    return [run_session(policy, config.replace(seed=seed)) for seed in seeds]


def summarize_runs(runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean (and sd of FRR) over seeds, as plain floats."""
    frr = stats.summarize([r["terminal_frr"] for r in runs])
    return {
        "frr_mean": frr.mean,
        "frr_sd": frr.sd,
        "survival_rate": stats.summarize([r["terminal_survival_rate"] for r in runs]).mean,
        "facts_evicted": stats.summarize([r["foundational_evicted"] for r in runs]).mean,
        "footprint_reduction": stats.summarize([r["footprint_reduction"] for r in runs]).mean,
    }


def headline(
    config: SessionConfig, n_seeds: int, policies: Sequence[Policy] = (DECAY, WINDOW)
) -> list[dict[str, Any]]:
    """One summary row per policy over ``n_seeds`` sessions of ``config``."""
    return [{"policy": p.label, **summarize_runs(run_seeds(p, config, n_seeds))} for p in policies]


def noise_sweep(
    config: SessionConfig,
    noise_levels: Sequence[int],
    n_seeds: int,
    policies: Sequence[Policy] = (DECAY, WINDOW),
) -> list[dict[str, Any]]:
    """Terminal FRR of each policy at each noise level (a table, never a fitted slope)."""
    rows = []
    for noise in noise_levels:
        row: dict[str, Any] = {"noise_per_turn": noise}
        for policy in policies:
            runs = run_seeds(policy, config.replace(noise_per_turn=noise), n_seeds)
            row[f"{policy.kind}_frr"] = stats.summarize([r["terminal_frr"] for r in runs]).mean
        rows.append(row)
    return rows


def sensitivity_sweep(
    config: SessionConfig, thresholds: Sequence[float], windows: Sequence[int], n_seeds: int
) -> list[dict[str, Any]]:
    """Decay FRR vs window FRR on the grid thresholds x windows; ``holds`` if decay wins.

    The decay result depends only on theta and the window result only on W, so each
    is simulated once per value and paired on the grid.
    """
    decay_frr = {
        t: summarize_runs(run_seeds(DecayPolicy(t), config, n_seeds))["frr_mean"] for t in thresholds
    }
    window_frr = {w: summarize_runs(run_seeds(WindowPolicy(w), config, n_seeds))["frr_mean"] for w in windows}
    return [
        {
            "threshold": t,
            "window": w,
            "decay_frr": decay_frr[t],
            "window_frr": window_frr[w],
            "holds": decay_frr[t] > window_frr[w],
        }
        for t in thresholds
        for w in windows
    ]


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
    engine = EbbinghausEngine(eviction_threshold, baseline_stability)
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


def first_recall_in_grace(config: SessionConfig, n_seeds: int, policy: Policy) -> float:
    """Share of foundational facts whose first recall comes before ``policy`` evicts them.

    A fact whose first recall lands after its grace period is lost whatever the
    policy does: a benchmark where this share is near zero cannot be won.
    """
    hits = total = 0
    for seed in range(n_seeds):
        session = generate_session(config.replace(seed=seed))
        for fid in session.foundational_ids:
            turns = session.recall_turns(fid)
            total += 1
            hits += bool(turns) and turns[0] - 1 < policy.grace_turns
    return hits / total if total else math.nan
