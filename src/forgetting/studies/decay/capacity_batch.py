"""The capacity engines on a generated session without replaying its events: noise in groups.

:class:`~forgetting.studies.decay.capacity.CapacityDecay` and
:class:`~forgetting.studies.decay.capacity.CapacityWindow` stay the readable reference;
:func:`capped_outcome` computes what :func:`~forgetting.studies.decay.simulation.simulate` records when
one of them, with the default tie rule (the oldest first), replays a session of
:func:`~forgetting.studies.decay.sessions.generate_session`, as :mod:`~forgetting.studies.decay.batch` does for
the uncapped engines.

Why this is exact. In a generated session the foundational facts are registered at turn 1
before anything else and are the only items recalled; every turn then registers
``noise_per_turn`` items after the turn's recalls. Never touched, the noise items of one turn
share their last touch and their stability (``S0``; the window's ``inf``), so the engine's
victim rule tells them apart by registration order alone, and one group ``[turn, first, end)``
of consecutive sequence numbers stands for those still present. Of all the noise, the group of
the earliest turn has the largest ``t / S`` (the window: the largest ``t``) and its first item
the lowest order; so the victim of a registration is the best of the present facts and that
item, compared as the engine compares them (:func:`~.capacity.age_ratio`: ``t * q`` against ``p``
for ``S = p / q`` exactly), then the registration order. Within a turn no key changes, so
the registrations that evict from one group in a row are applied at once, until the group is
used up: its first item is the victim only if every present fact has a smaller ``t / S`` (a
fact of equal ``t / S`` has the lower order, registered before all the noise, so it goes
first), and the group's next items have the same ``t / S``. The time
rule evicts at the end of the turn, as ``step`` does: a fact at its due turn (reset by each
recall that finds it), a group ``untouched_delay()`` turns after its turn.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

from ...decay.curves import decay_eviction_delay, reinforced_stability
from .batch import FACT_REGISTRATION_TURN
from .capacity import CapacityDecay, CapacityWindow, age_ratio
from .sessions import SessionConfig, recall_schedules

__all__ = ["CappedOutcome", "capped_outcome"]


class CappedOutcome(NamedTuple):
    """What the capacity sweep reads off a trace (:mod:`~forgetting.studies.decay.metrics`' formulas)."""

    terminal_frr: float
    footprint_reduction: float
    peak_working_set: int


@dataclass
class _Fact:
    sequence: int
    last: int  # turn of the registration or the last recall
    stability: float
    touches: int
    due: int | None  # the turn whose step evicts it by the time rule (None: none will)
    present: bool = True


def capped_outcome(engine: CapacityDecay | CapacityWindow, config: SessionConfig) -> CappedOutcome:
    """``(terminal FRR, footprint reduction, largest working set)`` of
    ``simulate(engine, generate_session(config))``, read from the module docstring's groups.

    ``engine`` is a fresh engine with ``oldest_first=True``: only its settings are read, and it
    is left as it was (``ValueError`` for an engine that holds items or breaks ties newest first;
    ``TypeError`` for another engine or a config that is not a :class:`~.sessions.SessionConfig`).
    """
    if not isinstance(engine, (CapacityDecay, CapacityWindow)):
        raise TypeError(f"engine must be a CapacityDecay or CapacityWindow, got {type(engine).__name__}")
    if not isinstance(config, SessionConfig):
        raise TypeError(f"config must be a SessionConfig, got {type(config).__name__}")
    if engine.working_set_size() or not engine.oldest_first:
        raise ValueError("capped_outcome needs a fresh engine with oldest_first=True")
    decay, theta, first_stability = False, None, math.inf  # every item starts at S0 (the window's: inf)
    if isinstance(engine, CapacityDecay):
        decay, theta, first_stability = True, engine.eviction_threshold, engine.baseline_stability
    first_delay = engine.untouched_delay()
    capacity, length = engine.capacity, config.session_length

    def touched_delay(stability: float) -> int | None:
        if not decay:
            return first_delay
        return None if theta is None else decay_eviction_delay(stability, theta)

    facts: list[_Fact] = []
    groups: deque[list[int]] = deque()  # [turn, first, end): the present noise of one turn
    present = sequence = 0

    def victim(turn: int) -> tuple[_Fact | None, float]:
        """The next victim: a fact, or ``None`` for the earliest group's first item and how many
        registrations in a row take their victim from that group (the module docstring)."""
        best: _Fact | None = None
        if groups:
            g_turn, g_first, g_end = groups[0]
            num, den = age_ratio(turn - g_turn, first_stability, decay)
            order = g_first
        for fact in facts:
            if fact.present:
                f_num, f_den = age_ratio(turn - fact.last, fact.stability, decay)
                if (
                    (best is None and not groups)
                    or f_num * den > num * f_den
                    or (f_num * den == num * f_den and fact.sequence < order)
                ):
                    best, num, den, order = fact, f_num, f_den, fact.sequence
        if best is not None:
            return best, 0
        return None, math.inf if g_turn == turn else g_end - g_first  # the turn's own group is never used up

    def add_noise(turn: int, count: int) -> None:
        nonlocal sequence
        if groups and groups[-1][0] == turn:
            groups[-1][2] += count
        else:
            groups.append([turn, sequence, sequence + count])
        sequence += count

    def register(turn: int, incoming: int, fact: bool) -> None:
        """``incoming`` noise items (or one fact) registered at ``turn``, each evicting when full."""
        nonlocal present, sequence
        while incoming:
            if present < capacity:
                count = 1 if fact else min(incoming, capacity - present)
            else:
                fact_victim, run = victim(turn)
                if fact_victim is not None:
                    fact_victim.present, fact_victim.due = False, None
                    count = 1
                else:  # the earliest group's first items (the turn's own group: its earlier ones)
                    count = 1 if fact else int(min(incoming, run))
                    groups[0][1] += count
                present -= count
            if fact:
                due = None if first_delay is None else turn + first_delay
                facts.append(_Fact(sequence, turn, first_stability, 1, due))
                sequence += 1
            else:
                add_noise(turn, count)
            if groups and groups[0][1] == groups[0][2]:  # used up (the turn's own group never is)
                groups.popleft()
            present += count
            incoming -= count

    recalls: dict[int, list[int]] = {}
    for index, turns in enumerate(recall_schedules(config)):
        for turn in turns:
            recalls.setdefault(turn, []).append(index)
    sizes: list[int] = []
    for turn in range(1, length + 1):
        if turn == FACT_REGISTRATION_TURN:
            for _ in range(config.num_foundational):
                register(turn, 1, fact=True)
        for index in recalls.get(turn, ()):
            fact = facts[index]
            if fact.present:
                fact.touches += 1
                fact.last = turn
                if decay:
                    fact.stability = reinforced_stability(fact.stability, fact.touches)
                delay = touched_delay(fact.stability)
                fact.due = None if delay is None else turn + delay
        register(turn, config.noise_per_turn, fact=False)
        for fact in facts:  # the time rule, at the turn's step
            if fact.present and fact.due is not None and fact.due <= turn:
                fact.present, fact.due = False, None
                present -= 1
        while first_delay is not None and groups and groups[0][0] + first_delay <= turn:
            g_turn, g_first, g_end = groups.popleft()
            present -= g_end - g_first
        sizes.append(present)
    held = sum(fact.present for fact in facts)
    created = config.num_foundational + config.noise_per_turn * length
    return CappedOutcome(
        held / config.num_foundational if config.num_foundational else 1.0,
        1.0 - statistics.fmean(sizes) / created if created else 0.0,
        max(sizes),
    )
