"""The decay-engine study: every comparison of the book's decay chapters as one function.

A :class:`Policy` names an engine and its parameter; :func:`run_session` replays one
seeded session through it and returns the per-session metrics; the sweeps below
repeat that over seeds and settings and return plain rows (lists of dicts), in
a fixed order, ready for a table or a CSV.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence

from . import metrics
from .decay import (DEFAULT_BASELINE_STABILITY, DEFAULT_EVICTION_THRESHOLD, DEFAULT_WINDOW_SIZE,
                    EbbinghausEngine, Engine, RecencyWindow, decay_eviction_delay,
                    naive_eviction_turn, retention, reinforced_stability, window_eviction_delay)
from .progress import progress
from .sessions import SessionConfig, generate_session
from .simulation import Trace, simulate


@dataclass(frozen=True)
class Policy:
    """An eviction policy: ``kind`` is ``"decay"`` (parameter theta) or ``"window"`` (parameter W)."""

    kind: str
    parameter: float
    baseline_stability: float = DEFAULT_BASELINE_STABILITY

    def engine(self) -> Engine:
        if self.kind == "decay":
            return EbbinghausEngine(self.parameter, self.baseline_stability)
        if self.kind == "window":
            return RecencyWindow(int(self.parameter))
        raise ValueError(f"Policy.kind must be 'decay' or 'window', got {self.kind!r}")

    @property
    def label(self) -> str:
        if self.kind == "decay":
            return f"Ebbinghaus decay (θ = {self.parameter:.2f})"
        return f"Recency window (W = {int(self.parameter)})"

    @property
    def grace_turns(self) -> int:
        """Turns after its last touch at which an unreinforced item is evicted."""
        if self.kind == "decay":
            return decay_eviction_delay(self.baseline_stability, self.parameter)
        return window_eviction_delay(int(self.parameter))


DECAY = Policy("decay", DEFAULT_EVICTION_THRESHOLD)
WINDOW = Policy("window", DEFAULT_WINDOW_SIZE)


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
    _check_positive("n_seeds", n_seeds)
    seeds = progress(range(n_seeds), f"{policy.label}, {n_seeds} seeds")
    return [run_session(policy, config.replace(seed=seed)) for seed in seeds]


def summarize_runs(runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean (and sd of FRR) over seeds, as plain floats."""
    frr = metrics.summarize([r["terminal_frr"] for r in runs])
    return {
        "frr_mean": frr.mean,
        "frr_sd": frr.sd,
        "survival_rate": metrics.summarize([r["terminal_survival_rate"] for r in runs]).mean,
        "facts_evicted": metrics.summarize([r["foundational_evicted"] for r in runs]).mean,
        "footprint_reduction": metrics.summarize([r["footprint_reduction"] for r in runs]).mean,
    }


def headline(config: SessionConfig, n_seeds: int,
             policies: Sequence[Policy] = (DECAY, WINDOW)) -> list[dict[str, Any]]:
    """One summary row per policy over ``n_seeds`` sessions of ``config``."""
    return [{"policy": p.label, **summarize_runs(run_seeds(p, config, n_seeds))} for p in policies]


def noise_sweep(config: SessionConfig, noise_levels: Sequence[int], n_seeds: int,
                policies: Sequence[Policy] = (DECAY, WINDOW)) -> list[dict[str, Any]]:
    """Terminal FRR of each policy at each noise level (a table, never a fitted slope)."""
    rows = []
    for noise in noise_levels:
        row: dict[str, Any] = {"noise_per_turn": noise}
        for policy in policies:
            runs = run_seeds(policy, config.replace(noise_per_turn=noise), n_seeds)
            row[f"{policy.kind}_frr"] = metrics.summarize([r["terminal_frr"] for r in runs]).mean
        rows.append(row)
    return rows


def sensitivity_sweep(config: SessionConfig, thresholds: Sequence[float], windows: Sequence[int],
                      n_seeds: int) -> list[dict[str, Any]]:
    """Decay FRR vs window FRR on the grid thresholds x windows; ``holds`` if decay wins.

    The decay result depends only on theta and the window result only on W, so each
    is simulated once per value and paired on the grid.
    """
    decay_frr = {t: summarize_runs(run_seeds(Policy("decay", t), config, n_seeds))["frr_mean"]
                 for t in thresholds}
    window_frr = {w: summarize_runs(run_seeds(Policy("window", w), config, n_seeds))["frr_mean"]
                  for w in windows}
    return [{"threshold": t, "window": w, "decay_frr": decay_frr[t], "window_frr": window_frr[w],
             "holds": decay_frr[t] > window_frr[w]} for t in thresholds for w in windows]


def trace_session(policy: Policy, config: SessionConfig) -> Trace:
    """The full trace of one session (for the step-by-step chapter)."""
    return simulate(policy.engine(), generate_session(config))


def stability_after_recalls(recalls: int, baseline_stability: float = DEFAULT_BASELINE_STABILITY) -> float:
    """``S0 * prod_{n=2}^{recalls+1} (1 + ln(1 + n))``: stability after ``recalls`` recalls."""
    stability = baseline_stability
    for touch_count in range(2, recalls + 2):
        stability = reinforced_stability(stability, touch_count)
    return stability


def retention_curves(turns: Sequence[int], recalls: Sequence[int],
                     baseline_stability: float = DEFAULT_BASELINE_STABILITY) -> dict[int, list[float]]:
    """Retention against turns since the last touch, for items recalled ``r`` times."""
    return {r: [retention(t, stability_after_recalls(r, baseline_stability)) for t in turns]
            for r in recalls}


def grace_period_table(stabilities: Iterable[float],
                       threshold: float = DEFAULT_EVICTION_THRESHOLD) -> list[dict[str, float]]:
    """Naive eviction turn ``S0 ln(1/theta)`` and the integer turn the engine evicts at."""
    return [{"baseline_stability": s, "naive_eviction_turn": naive_eviction_turn(s, threshold),
             "eviction_delay": decay_eviction_delay(s, threshold)} for s in stabilities]


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


def digest(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj`` (sorted keys, no whitespace)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_jsonable)
    return hashlib.sha256(text.encode()).hexdigest()


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)
    raise TypeError(f"not JSON-serialisable: {obj!r}")


def _check_positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
