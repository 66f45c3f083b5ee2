"""The decay-sweeps chapter's computations: the capacity sweep, the frontier's and the fine grid's summaries.

* :func:`capacity_sweep` -- decay and the window with the same budget of items
  (:mod:`~forgetting.studies.decay.capacity`), each with its time rule or the budget alone, over
  noise levels and budgets: terminal FRR and footprint reduction, means with 95 % intervals
  over seeds. Without a budget noise cannot move the FRR (noise draws no random number and an
  item is evicted by its own touches alone); with one, an arriving noise item can push a fact out.
* :func:`frontier_summary` and :func:`fine_summary` -- the values the chapter glues from the
  frontier and from the fine grid, and the rows of its tables.
* :func:`window_full_recall_ceiling` -- the widest window full recall can ever need.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import bool_problem, raise_problems, require_int
from ...conversations.policies import choice_problem
from ...decay.curves import DEFAULT_BASELINE_STABILITY
from .. import stats
from ..executor import Executor, map_seeds
from . import frontier, metrics
from .capacity import CapacityDecay, CapacityWindow
from .capacity_batch import capped_outcome
from .policies import EngineKind
from .sessions import SessionConfig, generate_session
from .simulation import simulate
from .study import DecayPolicy, WindowPolicy

__all__ = [
    "CapacityPolicy",
    "CAPACITY_COLUMNS",
    "capacity_policies",
    "capacity_sweep",
    "capacity_points",
    "capacity_label",
    "noise_moves_frr",
    "window_full_recall_ceiling",
    "frontier_summary",
    "fine_summary",
    "smallest_full_recall_budget",
    "capacity_summary",
]


@dataclass(frozen=True)
class CapacityPolicy:
    """An engine with a budget of ``capacity`` items; ``time_rule`` its ``theta`` or ``W`` (``None``: none).

    ``kind`` is :attr:`EngineKind.DECAY <.policies.EngineKind.DECAY>` (evict the lowest
    retention) or :attr:`EngineKind.WINDOW <.policies.EngineKind.WINDOW>` (the least recently
    touched), given as the member or its value; another is a ``ValueError``.
    """

    kind: EngineKind
    capacity: int
    time_rule: float | int | None = None
    oldest_first: bool = True
    baseline_stability: float = DEFAULT_BASELINE_STABILITY

    def __post_init__(self) -> None:
        allowed = (EngineKind.DECAY, EngineKind.WINDOW)
        raise_problems([choice_problem("kind", self.kind, [str(k) for k in allowed])])
        object.__setattr__(self, "kind", EngineKind(self.kind))

    def engine(self) -> CapacityDecay | CapacityWindow:
        """A fresh :class:`~.capacity.CapacityDecay` or :class:`~.capacity.CapacityWindow`."""
        if self.kind is EngineKind.DECAY:
            theta = None if self.time_rule is None else float(self.time_rule)
            return CapacityDecay(self.capacity, theta, self.baseline_stability, self.oldest_first)
        window = None if self.time_rule is None else int(self.time_rule)
        return CapacityWindow(self.capacity, window, self.oldest_first)

    @property
    def rule(self) -> str:
        """``"budget only"``, ``"budget and θ = 0.2"`` or ``"budget and W = 15"``."""
        if self.time_rule is None:
            return "budget only"
        return (
            f"budget and θ = {self.time_rule:g}"
            if self.kind is EngineKind.DECAY
            else f"budget and W = {self.time_rule}"
        )


CAPACITY_COLUMNS = (
    "noise_per_turn",
    "budget",
    "policy",
    "rule",
    "terminal_frr_mean",
    "terminal_frr_ci95",
    "footprint_reduction_mean",
    "footprint_reduction_ci95",
    "peak_working_set",
)
"""The columns of a :func:`capacity_sweep` row, in order."""


def capacity_policies(
    budget: int, eviction_threshold: float, window_size: int, oldest_first: bool = True
) -> list[CapacityPolicy]:
    """Both policies at ``budget``: decay and the window with the budget alone, then each with its time rule."""
    return [
        CapacityPolicy(EngineKind.DECAY, budget, None, oldest_first),
        CapacityPolicy(EngineKind.WINDOW, budget, None, oldest_first),
        CapacityPolicy(EngineKind.DECAY, budget, eviction_threshold, oldest_first),
        CapacityPolicy(EngineKind.WINDOW, budget, window_size, oldest_first),
    ]


def _capacity_chunk(
    configs: tuple[SessionConfig, ...], policies: tuple[CapacityPolicy, ...], seeds: Sequence[int]
) -> list[list[tuple[float, float, int]]]:
    """Per seed: ``(terminal FRR, footprint reduction, largest working set)`` of each (config, policy)."""
    out = []
    for seed in seeds:
        row: list[tuple[float, float, int]] = []
        for config in configs:
            seeded = config.replace(seed=seed)
            session = None
            for policy in policies:
                engine = policy.engine()
                if policy.oldest_first:  # the engine's decisions, read without its events
                    row.append(capped_outcome(engine, seeded))
                    continue
                if session is None:
                    session = generate_session(seeded)
                trace = simulate(engine, session)
                row.append(
                    (
                        metrics.terminal_frr(trace),
                        metrics.footprint_reduction(trace),
                        max(trace.working_set_sizes),
                    )
                )
        out.append(row)
    return out


def capacity_sweep(
    config: SessionConfig,
    noise_levels: Sequence[int],
    budgets: Sequence[int],
    n_seeds: int,
    eviction_threshold: float,
    window_size: int,
    oldest_first: bool = True,
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """:data:`CAPACITY_COLUMNS` rows for every noise level, budget and :func:`capacity_policies` entry.

    Each setting runs seeds ``0..n_seeds-1`` of ``config`` with its ``noise_per_turn``
    through the capacity engines, every policy on the same sessions: with ``oldest_first``, their
    decisions read without the events (:func:`~.capacity_batch.capped_outcome`, the same
    outcomes), else the events replayed (:func:`~.simulation.simulate`). Means and sds are
    :func:`~forgetting.studies.stats.summarize` over seeds in seed order, widths
    :func:`~forgetting.studies.stats.ci95_half_width`; ``peak_working_set`` is the most items any
    seed's engine held after a turn (never above ``budget``). ``executor`` runs chunks of
    seeds; the rows do not depend on it.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    raise_problems([bool_problem("oldest_first", oldest_first)])
    for index, budget in enumerate(budgets):
        require_int(f"budgets[{index}]", budget, minimum=1)
    configs = tuple(config.replace(noise_per_turn=noise) for noise in noise_levels)
    policies = tuple(
        p for b in budgets for p in capacity_policies(b, eviction_threshold, window_size, oldest_first)
    )
    chunk = functools.partial(_capacity_chunk, configs, policies)
    label = f"capacity sweep, {len(configs) * len(policies)} settings, {n_seeds} seeds"
    per_seed = map_seeds(chunk, range(n_seeds), executor, label=label)
    rows = []
    for c, noise in enumerate(noise_levels):
        for p, policy in enumerate(policies):
            results = [seed_row[c * len(policies) + p] for seed_row in per_seed]
            keep = stats.summarize([r[0] for r in results])
            prune = stats.summarize([r[1] for r in results])
            values = (
                *(noise, policy.capacity, policy.kind, policy.rule, keep.mean, stats.ci95_half_width(keep)),
                *(prune.mean, stats.ci95_half_width(prune), max(r[2] for r in results)),
            )
            rows.append(dict(zip(CAPACITY_COLUMNS, values, strict=True)))
    return rows


def capacity_points(
    rows: Sequence[dict[str, Any]], noise: int, policy: str, budget_only: bool
) -> list[dict[str, Any]]:
    """The :func:`capacity_sweep` rows of one line of its figure, in row (budget) order: ``policy``
    (``"decay"`` or ``"window"``) at ``noise`` items per turn, with the budget alone or with its time rule."""
    return [
        r
        for r in rows
        if r["noise_per_turn"] == noise
        and r["policy"] == policy
        and (r["rule"] == "budget only") == budget_only
    ]


def capacity_label(policy: str, budget_only: bool) -> str:
    """The legend entry of a :func:`capacity_points` line."""
    engine = "Ebbinghaus decay" if policy == EngineKind.DECAY else "recency window"
    return engine + (", budget only" if budget_only else ", budget and time rule")


def noise_moves_frr(rows: Sequence[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """``(budget, policy, rule)`` of every setting whose mean terminal FRR differs between noise levels."""
    seen: dict[tuple[int, str, str], set[float]] = {}
    for row in rows:
        seen.setdefault((row["budget"], row["policy"], row["rule"]), set()).add(row["terminal_frr_mean"])
    return [key for key, means in seen.items() if len(means) > 1]


def window_full_recall_ceiling(config: SessionConfig) -> int:
    """``L - e``, ``e`` the earliest turn a fact's last recall can land on: no session needs a wider window.

    Spaced schedule: every jitter factor just above its lower end (the generator's ``uniform``
    reaches the end itself only when ``random()`` returns exactly 0), so recall ``k`` lands at
    ``e_k = min(L, max(e_{k-1} + 1, 1 + round(offset_k * low)))``. Uniform schedule: the
    ``recalls_per_foundational`` first turns of ``uniform_range``. A window keeps a fact to
    the end iff ``L - last recall <= W``. ``ValueError`` when no recall is scheduled.
    """
    if config.recalls_per_foundational == 0:
        raise ValueError("config must schedule recalls (recalls_per_foundational >= 1), got 0")
    if config.schedule == "uniform":
        earliest = min(config.session_length, config.uniform_range[0] + config.recalls_per_foundational - 1)
        return config.session_length - earliest
    low, high = config.recall_jitter
    factor = math.nextafter(low, high) if low < high else low
    earliest = 1
    for offset in config.recall_base_offsets[: config.recalls_per_foundational]:
        earliest = min(config.session_length, max(earliest + 1, 1 + round(offset * factor)))
    return config.session_length - earliest


def frontier_summary(
    config: SessionConfig,
    n_seeds: int,
    thresholds: Sequence[float],
    windows: Sequence[int],
    default: DecayPolicy,
    executor: Executor | None = None,
) -> dict[str, Any]:
    """The frontier's rows and the values the chapter states about them.

    ``rows`` (:func:`~.frontier.frontier`); ``min_w`` (:func:`~.frontier.window_min_full_recall`,
    ``None`` if no ``W`` keeps every fact) and ``min_w_point``, ``default_point`` (the ``default``
    decay policy); ``values``: the smallest full-recall ``W`` and its footprint reduction
    (mean, sd), the largest ``theta`` of ``thresholds`` with mean FRR 1 and the best footprint
    among those, decay's footprint at ``default``, and ``(1 - window footprint) / (1 - decay
    footprint)``, how many times as many items the window holds at full recall.
    """
    rows = frontier.frontier(config, n_seeds, thresholds, windows, executor=executor)
    min_w = frontier.window_min_full_recall(config, n_seeds)
    min_w_point = frontier.frontier_point(WindowPolicy(min_w), config, n_seeds) if min_w else None
    decay_full = [r for r in rows if r["policy"] == EngineKind.DECAY and r["terminal_frr_mean"] == 1.0]
    default_point = frontier.frontier_point(default, config, n_seeds)
    window_footprint = min_w_point["footprint_reduction_mean"] if min_w_point else 0.0
    values = {
        "window_min_w_full_recall": min_w if min_w else "none up to the session length",
        "window_full_recall_footprint": window_footprint,
        "window_full_recall_footprint_sd": min_w_point["footprint_reduction_sd"] if min_w_point else 0.0,
        "decay_max_theta_full_recall": max(r["parameter"] for r in decay_full) if decay_full else 0.0,
        "decay_best_full_recall_footprint": max(r["footprint_reduction_mean"] for r in decay_full)
        if decay_full
        else 0.0,
        "decay_default_footprint": default_point["footprint_reduction_mean"],
        "window_vs_decay_resident": (1 - window_footprint) / (1 - default_point["footprint_reduction_mean"]),
    }
    return {
        "rows": rows,
        "min_w": min_w,
        "min_w_point": min_w_point,
        "default_point": default_point,
        "values": values,
    }


def fine_summary(
    config: SessionConfig,
    n_seeds: int,
    theta_step: float,
    window_step: int,
    eviction_threshold: float,
    window_size: int,
) -> dict[str, Any]:
    """The fine grid (:func:`~.frontier.frontier_with_intervals` on :func:`~.frontier.fine_settings`) and its summary.

    Returns ``rows``, ``decay`` and ``window`` (the rows by policy), ``thresholds``,
    ``windows`` and ``advantage`` (:func:`~.frontier.advantage_matrix`), ``named`` (labelled
    rows of the settings the chapter names: the defaults, each policy's widest FRR interval
    (the first of equals), the largest ``theta`` and the smallest ``W`` with FRR 1 on every
    seed) and ``values``: the pair counts (decay ahead, tied, behind) and those settings' numbers.
    """
    thresholds, windows = frontier.fine_settings(theta_step, window_step, config.session_length)
    rows = frontier.frontier_with_intervals(config, n_seeds, thresholds, windows)
    theta, w, advantage = frontier.advantage_matrix(rows)
    min_w = frontier.window_min_full_recall(config, n_seeds)
    decay = [r for r in rows if r["policy"] == EngineKind.DECAY]
    window = [r for r in rows if r["policy"] == EngineKind.WINDOW]
    decay_full = [r for r in decay if r["full_recall_share"] == 1.0]
    named_rows = frontier.frontier_with_intervals(
        config, n_seeds, [eviction_threshold], [window_size] + ([min_w] if min_w else [])
    )
    min_w_point = named_rows[2] if min_w else None
    widest = {
        kind: max(part, key=itemgetter("terminal_frr_ci95"))
        for kind, part in ((EngineKind.DECAY, decay), (EngineKind.WINDOW, window))
    }
    last_full = decay_full[-1] if decay_full else None
    named: list[tuple[str, dict[str, Any]]] = [
        (f"decay, θ = {eviction_threshold:g} (default)", named_rows[0]),
        (f"window, W = {window_size}", named_rows[1]),
        (
            f"decay, widest FRR interval (θ = {widest[EngineKind.DECAY]['parameter']:g})",
            widest[EngineKind.DECAY],
        ),
        (
            f"window, widest FRR interval (W = {widest[EngineKind.WINDOW]['parameter']})",
            widest[EngineKind.WINDOW],
        ),
    ]
    if last_full:
        named.append(
            (f"decay, largest θ with FRR 1 on every seed (θ = {last_full['parameter']:g})", last_full)
        )
    if min_w_point:
        named.append((f"window, smallest W with FRR 1 on every seed (W = {min_w})", min_w_point))
    values = {
        "fine_n_thresholds": len(thresholds),
        "fine_n_windows": len(windows),
        "fine_pairs_total": int(advantage.size),
        "fine_pairs_hold": int((advantage > 0).sum()),
        "fine_pairs_tie": int((advantage == 0).sum()),
        "fine_pairs_lose": int((advantage < 0).sum()),
        "fine_min_w_full_recall": min_w if min_w else "none up to the session length",
        "fine_window_full_recall_footprint": min_w_point["footprint_reduction_mean"] if min_w_point else 0.0,
        "fine_window_full_recall_footprint_ci": min_w_point["footprint_reduction_ci95"]
        if min_w_point
        else 0.0,
        "fine_decay_max_theta_full_recall": last_full["parameter"] if last_full else 0.0,
        "fine_decay_full_recall_footprint": last_full["footprint_reduction_mean"] if last_full else 0.0,
        "fine_decay_full_recall_footprint_ci": last_full["footprint_reduction_ci95"] if last_full else 0.0,
        "fine_default_frr": named_rows[0]["terminal_frr_mean"],
        "fine_default_frr_ci": named_rows[0]["terminal_frr_ci95"],
        "fine_decay_widest_ci": widest[EngineKind.DECAY]["terminal_frr_ci95"],
        "fine_decay_widest_ci_at": widest[EngineKind.DECAY]["parameter"],
        "fine_window_widest_ci": widest[EngineKind.WINDOW]["terminal_frr_ci95"],
        "fine_window_widest_ci_at": widest[EngineKind.WINDOW]["parameter"],
    }
    table = [{"setting": label, **{k: r[k] for k in frontier.INTERVAL_COLUMNS[2:]}} for label, r in named]
    advantage_array: npt.NDArray[np.float64] = advantage
    return {
        "rows": rows,
        "decay": decay,
        "window": window,
        "thresholds": theta,
        "windows": w,
        "advantage": advantage_array,
        "named": table,
        "min_w": min_w,
        "values": values,
    }


def smallest_full_recall_budget(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per ``(policy, rule, noise)``, in row order: the smallest budget with mean terminal FRR 1 (``None``: none)."""
    found: dict[tuple[str, str, int], int | None] = {}
    for row in rows:
        key = (row["policy"], row["rule"], row["noise_per_turn"])
        best = found.setdefault(key, None)
        if row["terminal_frr_mean"] == 1.0 and (best is None or row["budget"] < best):
            found[key] = row["budget"]
    return [{"policy": p, "rule": r, "noise_per_turn": n, "budget": b} for (p, r, n), b in found.items()]


def capacity_summary(rows: Sequence[dict[str, Any]], none_text: str = "none of the grid") -> dict[str, Any]:
    """What the chapter states about a :func:`capacity_sweep`, computed from its rows.

    A *cell* is one ``(noise, budget)``. Counts: settings ``(budget, policy, rule)`` and those
    whose mean FRR differs between noise levels (:func:`noise_moves_frr`); cells where, with
    the budget alone, decay and the window have equal footprint, where decay's mean FRR is the
    higher, where the window's is; cells where decay with its time rule has the same mean FRR
    as with the budget alone; the largest mean FRR of the window with its time rule; whether
    no engine ever held more than its budget; and, with the budget alone, the smallest budget
    with mean FRR 1 for decay at the lowest and highest noise and for the window at the lowest
    (``none_text`` when none), with the number of noise levels at which the window has none.
    """
    cells: dict[tuple[int, int], dict[tuple[str, bool], dict[str, Any]]] = {}
    for row in rows:
        cell = cells.setdefault((row["noise_per_turn"], row["budget"]), {})
        cell[row["policy"], row["rule"] == "budget only"] = row
    alone = [(c[EngineKind.DECAY, True], c[EngineKind.WINDOW, True]) for c in cells.values()]
    smallest = {
        (r["policy"], r["rule"] == "budget only", r["noise_per_turn"]): r["budget"]
        for r in smallest_full_recall_budget(rows)
    }
    levels = sorted({row["noise_per_turn"] for row in rows})
    window_none = sum(smallest[EngineKind.WINDOW, True, n] is None for n in levels)

    def shown(value: int | None) -> int | str:
        return none_text if value is None else value

    return {
        "capacity_settings": len({(r["budget"], r["policy"], r["rule"]) for r in rows}),
        "capacity_noise_moves": len(noise_moves_frr(rows)),
        "capacity_cells": len(cells),
        "capacity_same_footprint_cells": sum(
            d["footprint_reduction_mean"] == w["footprint_reduction_mean"] for d, w in alone
        ),
        "capacity_decay_ahead_cells": sum(d["terminal_frr_mean"] > w["terminal_frr_mean"] for d, w in alone),
        "capacity_window_ahead_cells": sum(d["terminal_frr_mean"] < w["terminal_frr_mean"] for d, w in alone),
        "capacity_timed_decay_same_cells": sum(
            c[EngineKind.DECAY, False]["terminal_frr_mean"] == c[EngineKind.DECAY, True]["terminal_frr_mean"]
            for c in cells.values()
        ),
        "capacity_timed_window_frr_max": max(
            c[EngineKind.WINDOW, False]["terminal_frr_mean"] for c in cells.values()
        ),
        "capacity_within_budget": all(r["peak_working_set"] <= r["budget"] for r in rows),
        "capacity_noise_low": levels[0],
        "capacity_noise_high": levels[-1],
        "capacity_decay_budget_low_noise": shown(smallest[EngineKind.DECAY, True, levels[0]]),
        "capacity_decay_budget_high_noise": shown(smallest[EngineKind.DECAY, True, levels[-1]]),
        "capacity_window_budget_low_noise": shown(smallest[EngineKind.WINDOW, True, levels[0]]),
        "capacity_window_none_levels": window_none,
        "capacity_n_noise_levels": len(levels),
    }
