"""Capacity-limited forgetting: a store of at most ``C`` memories, one eviction per full store.

:class:`Capacity` evicts by a deterministic rule (LRU, FIFO, LFU); :class:`RandomEviction`
evicts a held memory chosen by a seeded generator. Both are :class:`~.policies.Policy` s for
:func:`~.policies.replay`; the incoming memory is always stored.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from .._validate import int_problem, raise_problems, seed_problem
from .policies import Event, Holder, choice_problem

__all__ = ["CAPACITY_RULES", "Capacity", "RandomEviction"]

#: The rules of :class:`Capacity`.
CAPACITY_RULES = ("lru", "fifo", "lfu")
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
    id)`` with one item per touch, of which only an id's latest is current."""

    rule: str
    capacity: int
    rng: np.random.Generator | None = None
    entries: dict[str, _Entry] = field(default_factory=dict)
    sequence: int = 0
    recency: dict[str, None] = field(default_factory=dict)
    frequency: list[tuple[int, int, str]] = field(default_factory=list)
    draws: list[int] = field(default_factory=list)  # random eviction's next draws, the next last

    def forget(self, event: Event) -> list[str]:
        return []

    def recall(self, mem_id: str, event: Event) -> None:
        entry = self.entries[mem_id]
        entry.last = event.turn
        entry.recalls += 1
        self._touched(mem_id, entry)

    def _touched(self, mem_id: str, entry: _Entry) -> None:
        if self.rule == "lru":
            self.recency.pop(mem_id, None)
            self.recency[mem_id] = None
        elif self.rule == "lfu":
            heapq.heappush(self.frequency, (entry.recalls, entry.sequence, mem_id))

    def _victim(self) -> str:
        """The held id of the smallest key (:class:`Capacity`)."""
        entries = self.entries
        if self.rule == "fifo":
            return next(iter(entries))  # store order
        if self.rule == "lru":  # the ids of the oldest ``last`` lead ``recency``: the earliest stored
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

    def store(self, event: Event) -> list[str]:
        evicted: list[str] = []
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


@dataclass(frozen=True)
class Capacity:
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
    rule : {"lru", "fifo", "lfu"}, default "lru"
    """

    capacity: int
    rule: str = "lru"

    def __post_init__(self) -> None:
        raise_problems(
            [
                int_problem("capacity", self.capacity, minimum=1),
                choice_problem("rule", self.rule, CAPACITY_RULES),
            ]
        )

    @property
    def label(self) -> str:
        """E.g. ``LRU (C = 50)``."""
        return f"{self.rule.upper()} (C = {self.capacity})"

    def start(self) -> Holder:
        """An empty store."""
        return _CapacityHolder(self.rule, self.capacity)


@dataclass(frozen=True)
class RandomEviction:
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

    def start(self) -> Holder:
        """An empty store and a fresh generator."""
        return _CapacityHolder("random", self.capacity, np.random.default_rng(int(self.seed)))
