"""The first draft on a virtual clock without replaying events: each item's due turn, read off the clock.

:class:`~forgetting.studies.decay.wallclock.WallClockEngine` is the readable reference; this module
computes the decisions it takes on a generated session (:mod:`~forgetting.studies.decay.sessions`) and
a clock that gives the same reading for a turn whenever it is asked
(:class:`~forgetting.studies.decay.wallclock.VirtualClock`), as :mod:`~forgetting.studies.decay.batch` does
for the turn engines.

Why this is exact. In a generated session no id is registered twice and only the foundational
facts are recalled, at strictly increasing turns, so an item's fate depends on its touches
alone. After a touch at turn ``l`` with stability ``S`` the engine files the item under a safe
time (``WallClockEngine._watch_item``); from the first step whose clock reading reaches it, the
item is a candidate, and each step reads ``unchecked_retention(clock(t) - clock(l), S) <
theta`` until that is true: the item's **due turn**. :func:`due_turn` reads the same rule with
the same function on the same floats at the same turns, in the same order. A recall at turn
``r`` finds the item iff ``r <= due`` (a turn's events come before its step), then touches it
again; otherwise every later recall fails too. Noise items registered at the same turn share
``S0`` and their reading, so they share one due turn. The per-session metrics are then
:func:`~forgetting.studies.decay.batch.session_summaries` of those turns, equal to
:func:`~forgetting.studies.decay.metrics.session_summary` of the event trace.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..._validate import raise_problems, require_int
from ...decay.curves import decay_problems, reinforced_stability, unchecked_retention
from .batch import FACT_REGISTRATION_TURN, BatchReplay, session_summaries
from .sessions import SessionConfig, recall_schedules

__all__ = ["due_turn", "clock_summary", "clock_rows"]


def due_turn(readings: Sequence[float], touched: int, stability: float, eviction_threshold: float) -> int:
    """The step at which :class:`~forgetting.studies.decay.wallclock.WallClockEngine` evicts an item touched
    at turn ``touched`` with ``stability``, the clock reading ``readings[t]`` at turn ``t``
    (non-decreasing, ``readings[0]`` the start); ``len(readings)`` if no step up to the last evicts it.

    The engine's own safe time (a candidate from the first step whose reading reaches it), then
    its own rule at each step from there, in turn order.
    """
    now = readings[touched]
    age = stability * math.log(1.0 / eviction_threshold)
    if eviction_threshold > 0.999:  # every item is a candidate at once
        safe = -math.inf
    elif math.isfinite(age):
        safe = now + age * (1 - 1e-6) - 1e-9 * (1 + abs(now) + age)
    else:
        return len(readings)
    turn = max(touched, bisect.bisect_left(readings, safe))  # first reading >= safe
    while (
        turn < len(readings) and not unchecked_retention(readings[turn] - now, stability) < eviction_threshold
    ):
        turn += 1
    return turn


def clock_summary(
    config: SessionConfig, readings: Sequence[float], eviction_threshold: float, baseline_stability: float
) -> dict[str, Any]:
    """``{"seed": config.seed, **metrics.session_summary(trace)}`` of the session ``config`` replayed
    through ``WallClockEngine`` on a clock that reads ``readings[t]`` at turn ``t = 0 .. L``,
    without replaying it (:func:`due_turn` per touch; the caller has checked the arguments)."""
    length = config.session_length
    if len(readings) != length + 1:
        raise ValueError(f"readings must hold one clock reading per turn 0..{length}, got {len(readings)}")
    beyond = length + 1
    schedules = recall_schedules(config)
    width = config.recalls_per_foundational
    recall_turns = np.zeros((1, config.num_foundational, width), dtype=np.int64)
    found = np.zeros_like(recall_turns, dtype=np.bool_)
    fact_evicted = np.zeros((1, config.num_foundational), dtype=np.int64)
    fact_due = due_turn(readings, FACT_REGISTRATION_TURN, baseline_stability, eviction_threshold)
    for fact, turns in enumerate(schedules):
        stability, touches, due = baseline_stability, 1, fact_due
        for column, turn in enumerate(turns):
            recall_turns[0, fact, column] = turn
            if turn > due:  # evicted at an earlier step: this recall and every later one fail
                continue
            found[0, fact, column] = True
            touches += 1
            stability = reinforced_stability(stability, touches)
            due = due_turn(readings, turn, stability, eviction_threshold)
        fact_evicted[0, fact] = due if due < beyond else 0
    noise_due = [
        due_turn(readings, turn, baseline_stability, eviction_threshold) for turn in range(1, beyond)
    ]
    per_turn = np.array([due if due < beyond else 0 for due in noise_due], dtype=np.int64)
    replay = BatchReplay(
        config,
        (config.seed,),
        recall_turns,
        found,
        fact_evicted,
        np.repeat(np.arange(1, beyond, dtype=np.int64), config.noise_per_turn),
        np.repeat(per_turn, config.noise_per_turn),
    )
    return session_summaries(replay)[0]


def clock_rows(
    config: SessionConfig,
    n_seeds: int,
    clock_for: Callable[[int], Callable[[int], float]],
    eviction_threshold: float,
    baseline_stability: float,
) -> list[dict[str, Any]]:
    """:func:`~forgetting.studies.decay.wallclock.clock_runs`'s rows for a clock that reads the same at a
    turn whenever asked (``clock_for(seed)``, e.g. a ``VirtualClock``), by :func:`clock_summary`.

    The clock is read at turns ``0 .. L`` once, in order; a clock that reads the time of the call
    (a real one) needs ``clock_runs``, which reads it at each event as the engine does.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    raise_problems(decay_problems(eviction_threshold, baseline_stability))
    theta, stability = float(eviction_threshold), float(baseline_stability)
    rows = []
    for seed in range(n_seeds):
        clock = clock_for(seed)
        readings = [clock(turn) for turn in range(config.session_length + 1)]
        rows.append(clock_summary(config.replace(seed=seed), readings, theta, stability))
    return rows
