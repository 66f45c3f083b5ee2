"""Metrics over a :class:`~forgetting.studies.decay.simulation.Trace`, each a plain function.

* Foundational recall rate ``FRR(T)`` = foundational facts present at the end of
  turn ``T`` / foundational facts (presence only, not correctness).
* Survival time of an evicted item = eviction turn - registration turn. Items never
  evicted get no survival time; they count in the terminal survival rate instead,
  so no artificial ceiling is averaged in.
* Token-footprint reduction = ``1 - mean(working set size) / items ever created``.
  Item count stands in for token count: every synthetic item weighs the same.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .simulation import Trace

__all__ = [
    "frr",
    "terminal_frr",
    "frr_checkpoints",
    "SurvivalStats",
    "survival_stats",
    "footprint_reduction",
    "session_summary",
    "zero_variance_alarm",
]


def frr(trace: Trace, turn: int) -> float:
    """Fraction of foundational facts present at the end of ``turn`` (1.0 when there are none)."""
    if not 1 <= turn <= trace.session_length:
        raise ValueError(f"turn must be in [1, {trace.session_length}], got {turn}")
    if not trace.foundational_ids:
        return 1.0
    return trace.foundational_present[turn - 1] / len(trace.foundational_ids)


def terminal_frr(trace: Trace) -> float:
    """FRR at the last turn of the session."""
    return frr(trace, trace.session_length)


def frr_checkpoints(trace: Trace, every: int = 10) -> dict[int, float]:
    """FRR every ``every`` turns and at the last turn."""
    turns = list(range(every, trace.session_length + 1, every))
    if trace.session_length not in turns:
        turns.append(trace.session_length)
    return {turn: frr(trace, turn) for turn in turns}


@dataclass(frozen=True)
class SurvivalStats:
    """Survival of a group of items: times of the evicted ones, rate of the rest.

    Survival time = eviction turn - registration turn, over evicted items only (``None``
    when none was evicted); ``terminal_survival_rate`` = share of the items present at the
    last turn.
    """

    n_items: int
    n_evicted: int
    mean_survival_time: float | None
    min_survival_time: int | None
    max_survival_time: int | None
    terminal_survival_rate: float


def survival_stats(trace: Trace, ids: Sequence[str]) -> SurvivalStats:
    """Survival times of evicted ``ids``; survivors only enter the terminal survival rate."""
    times = [trace.evicted_turn[i] - trace.created_turn[i] for i in ids if i in trace.evicted_turn]
    survivors = sum(trace.is_present_after(i, trace.session_length) for i in ids)
    rate = survivors / len(ids) if ids else 0.0
    if not times:
        return SurvivalStats(len(ids), 0, None, None, None, rate)
    return SurvivalStats(len(ids), len(times), statistics.fmean(times), min(times), max(times), rate)


def footprint_reduction(trace: Trace) -> float:
    """``1 - mean(working set) / items ever created`` (item count as a token proxy)."""
    if trace.items_created == 0:
        return 0.0
    return 1.0 - statistics.fmean(trace.working_set_sizes) / trace.items_created


def session_summary(trace: Trace) -> dict[str, float | int | None]:
    """The per-session metrics every decay comparison reports, by name.

    ``terminal_frr``, ``terminal_survival_rate`` and ``foundational_evicted`` /
    ``mean_survival_time`` of the foundational facts, and ``footprint_reduction``.
    """
    survival = survival_stats(trace, trace.foundational_ids)
    return {
        "terminal_frr": terminal_frr(trace),
        "terminal_survival_rate": survival.terminal_survival_rate,
        "foundational_evicted": survival.n_evicted,
        "mean_survival_time": survival.mean_survival_time,
        "footprint_reduction": footprint_reduction(trace),
    }


def zero_variance_alarm(per_seed: Mapping[str, Sequence[float]]) -> list[str]:
    """Names whose metric is identical across every seed (two or more seeds).

    A result that does not move at all while every seed draws a different session
    says the randomness never reaches what is measured: trace the mechanism before
    trusting it (the decay article's second postmortem). The alarm is a prompt to
    look, not a verdict: the chapter on postmortems shows one case where the
    benchmark was unwinnable and one where the mechanism explains the constancy.
    """
    return [name for name, values in per_seed.items() if len(values) > 1 and len(set(values)) == 1]
