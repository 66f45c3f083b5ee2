"""Capacity-limited forgetting: a store of at most ``C`` memories, one eviction per full store.

:class:`Capacity` evicts by a deterministic rule (LRU, FIFO, LFU); :class:`RandomEviction`
evicts a held memory chosen by a seeded generator. Both are :class:`~.policies.Policy` s for
:func:`~.policies.replay`; the incoming memory is always stored. Both save their parameters and
their running state (``to_dict``, ``from_dict``, ``resume``: :mod:`.policies`, "Saving").
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from .._validate import int_problem, raise_problems, seed_problem, shown
from .policies import (
    Event,
    SavingPolicy,
    choice_problem,
    read_id,
    read_int,
    read_row,
    saved,
    saved_id,
)

__all__ = ["CAPACITY_RULES", "Capacity", "CapacityRule", "RandomEviction"]


class CapacityRule(enum.StrEnum):
    """The victim rule of :class:`Capacity`: the held memory of the smallest key goes."""

    LRU = "lru"
    """``(last, s)``: the least recently stored-or-recalled, then the earliest stored."""
    FIFO = "fifo"
    """``s``: the earliest stored, recalls ignored."""
    LFU = "lfu"
    """``(recalls, s)``: the fewest recalls, then the earliest stored."""


#: The rules of :class:`Capacity`, as strings: the values of :class:`CapacityRule`.
CAPACITY_RULES = tuple(rule.value for rule in CapacityRule)
#: Draws :class:`RandomEviction` takes from its generator at once: ``rng.integers(C, size=n)``
#: gives the numbers ``n`` calls ``rng.integers(C)`` would (a test holds it to them).
RANDOM_DRAW_BLOCK = 256


@dataclass
class _Entry:
    sequence: int  # store order
    last: int  # turn stored or last recalled
    recalls: int = 0


@dataclass
class _CapacityHolder:
    """The held entries in store order, and two views that find a victim without a scan:
    ``recency``, the held ids by their latest store or recall (a touch moves an id to the end,
    so ``last`` never decreases along it), and ``frequency``, a heap of ``(recalls, sequence,
    id)`` with one item per touch, of which only an id's latest is current. ``rule`` is ``None``
    for random eviction (``rng`` set)."""

    policy: Capacity | RandomEviction
    rule: CapacityRule | None
    capacity: int
    rng: np.random.Generator | None = None
    entries: dict[Hashable, _Entry] = field(default_factory=dict)
    sequence: int = 0
    recency: dict[Hashable, None] = field(default_factory=dict)
    frequency: list[tuple[int, int, Hashable]] = field(default_factory=list)
    draws: list[int] = field(default_factory=list)  # random eviction's next draws, the next last

    SAVED = ("entries", "sequence", "generator", "draws")

    def forget(self, event: Event) -> list[Hashable]:
        return []

    def recall(self, mem_id: Hashable, event: Event) -> None:
        entry = self.entries[mem_id]
        entry.last = event.turn
        entry.recalls += 1
        self._touched(mem_id, entry)

    def _touched(self, mem_id: Hashable, entry: _Entry) -> None:
        if self.rule is CapacityRule.LRU:
            self.recency.pop(mem_id, None)
            self.recency[mem_id] = None
        elif self.rule is CapacityRule.LFU:
            heapq.heappush(self.frequency, (entry.recalls, entry.sequence, mem_id))

    def _victim(self) -> Hashable:
        """The held id of the smallest key (:class:`Capacity`)."""
        entries = self.entries
        if self.rule is CapacityRule.FIFO:
            return next(iter(entries))  # store order
        if self.rule is CapacityRule.LRU:
            # the ids of the oldest ``last`` lead ``recency``: the earliest stored of them
            ids = iter(self.recency)
            victim = next(ids)
            oldest = entries[victim].last
            for mem_id in ids:
                if entries[mem_id].last != oldest:
                    break
                victim = min(victim, mem_id, key=lambda m: entries[m].sequence)
            return victim
        while True:  # lfu: the least current item of the heap
            recalls, _, mem_id = heapq.heappop(self.frequency)
            if mem_id in entries and entries[mem_id].recalls == recalls:
                return mem_id

    def store(self, event: Event) -> list[Hashable]:
        evicted: list[Hashable] = []
        if self.rng is not None:  # one draw per event, used only at capacity
            if not self.draws:
                self.draws = self.rng.integers(self.capacity, size=RANDOM_DRAW_BLOCK).tolist()[::-1]
            position = self.draws.pop()
            if len(self.entries) == self.capacity:
                evicted = [next(islice(self.entries, position, None))]
        elif len(self.entries) == self.capacity:
            evicted = [self._victim()]
        for mem_id in evicted:
            del self.entries[mem_id]
            self.recency.pop(mem_id, None)
        entry = self.entries[event.stored] = _Entry(self.sequence, event.turn)
        self._touched(event.stored, entry)
        self.sequence += 1
        return evicted

    def to_dict(self) -> dict[str, Any]:
        """``{..., "policy", "entries": [[id, store number, last touch, recalls], ...] (store order),
        "sequence": the next store number, "generator": the numpy generator's
        ``bit_generator.state`` and "draws": the draws taken and not yet used (random eviction;
        else ``None`` and ``[]``)}``. The recency order and the heap follow from the entries."""
        return saved(
            f"{type(self.policy).__name__}.state",
            policy=self.policy.to_dict(),
            entries=[[saved_id(m), e.sequence, e.last, e.recalls] for m, e in self.entries.items()],
            sequence=self.sequence,
            generator=None if self.rng is None else self.rng.bit_generator.state,
            draws=list(self.draws),
        )

    def restore(self, entries: Mapping[str, Any]) -> None:
        """Fill a fresh store from ``entries``: the held entries in store order, the recency order
        sorted by ``(last, s)`` and the heap one item per entry (they choose the same victims as
        the orders the touches made: the smallest key), the generator's state and its draws."""
        sequence = read_int(entries["sequence"], "sequence", minimum=0)
        before = -1
        for item in entries["entries"]:
            mem_id, number, last, recalls = read_row(item, 4, "entries entry")
            read_id(mem_id)
            good = all(type(v) is int for v in (number, last, recalls))
            if (
                not (good and before < number < sequence and last >= 0 and recalls >= 0)
                or mem_id in self.entries
            ):
                raise ValueError(f"entries entry {shown(item)} is not a held memory")
            before = number
            self.entries[mem_id] = _Entry(number, last, recalls)
        if len(self.entries) > self.capacity:
            raise ValueError(f"entries must hold at most {self.capacity} memories, got {len(self.entries)}")
        self.sequence = sequence
        if self.rule is CapacityRule.LRU:
            order = sorted(self.entries, key=lambda m: (self.entries[m].last, self.entries[m].sequence))
            self.recency = dict.fromkeys(order)
        elif self.rule is CapacityRule.LFU:
            self.frequency = [(e.recalls, e.sequence, m) for m, e in self.entries.items()]
            heapq.heapify(self.frequency)
        generator, draws = entries["generator"], entries["draws"]
        if self.rng is None:
            if generator is not None or draws != []:
                raise ValueError(f"a {self.policy.label!r} store has no generator, got {shown(generator)}")
            return
        try:
            self.rng.bit_generator.state = generator
        except (ValueError, TypeError, KeyError) as error:
            raise ValueError(f"generator is not a numpy generator's state ({error})") from None
        self.draws = [read_int(d, "draw", minimum=0, maximum=self.capacity - 1) for d in draws]
        if len(self.draws) >= RANDOM_DRAW_BLOCK:
            raise ValueError(f"draws must be fewer than {RANDOM_DRAW_BLOCK}, got {len(self.draws)}")


@dataclass(frozen=True, kw_only=True)
class Capacity(SavingPolicy):
    """Hold at most ``C`` memories; storing into a full store evicts one held memory first.

    The victim has the smallest key, ties between keys impossible (store order is unique):

    * ``"lru"`` -- ``(last, s)``: the least recently stored-or-recalled, then the earliest stored;
    * ``"fifo"`` -- ``s``: the earliest stored, recalls ignored;
    * ``"lfu"`` -- ``(recalls, s)``: the fewest recalls, then the earliest stored.

    ``s`` is the store order, ``last`` the turn of the latest store or recall (the classic
    cache rules; LFU as in Aho, Denning and Ullman 1971, with store order breaking its ties).

    Attributes
    ----------
    capacity : int
        ``C >= 1``.
    rule : CapacityRule or its value, default "lru"
        Read as the member (:class:`CapacityRule`).
    """

    capacity: int
    rule: CapacityRule | str = CapacityRule.LRU

    def __post_init__(self) -> None:
        raise_problems(
            [
                int_problem("capacity", self.capacity, minimum=1),
                choice_problem("rule", self.rule, CAPACITY_RULES),
            ]
        )
        object.__setattr__(self, "rule", CapacityRule(self.rule))

    @property
    def label(self) -> str:
        """E.g. ``LRU (C = 50)``."""
        return f"{self.rule.upper()} (C = {self.capacity})"

    def start(self) -> _CapacityHolder:
        """An empty store."""
        return _CapacityHolder(self, CapacityRule(self.rule), self.capacity)


@dataclass(frozen=True, kw_only=True)
class RandomEviction(SavingPolicy):
    """Hold at most ``C`` memories; a full store evicts one held memory uniformly at random.

    Each event draws ``j = rng.integers(C)`` from ``numpy.random.default_rng(seed)`` (one draw
    per event, whether or not the store is full, so the draws depend only on the event count);
    at capacity the ``j``-th held memory in store order is evicted.

    Attributes
    ----------
    capacity : int
        ``C >= 1``.
    seed : int
        An int ``>= 0``.
    """

    capacity: int
    seed: int

    def __post_init__(self) -> None:
        raise_problems([int_problem("capacity", self.capacity, minimum=1), seed_problem("seed", self.seed)])

    @property
    def label(self) -> str:
        """E.g. ``Random eviction (C = 50, seed 0)``."""
        return f"Random eviction (C = {self.capacity}, seed {self.seed})"

    def start(self) -> _CapacityHolder:
        """An empty store and a fresh generator."""
        return _CapacityHolder(self, None, self.capacity, np.random.default_rng(int(self.seed)))
