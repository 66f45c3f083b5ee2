"""The decay engine and the recency window with a capacity: a fixed budget of items.

Each engine keeps its time rule (decay: retention below ``theta``; window: untouched for more
than ``W`` turns), or none (``None``: the budget alone evicts), and never holds more than
``capacity`` items. Registering into a full working set first evicts one present item, the
*victim*; the incoming item is always stored:

* :class:`CapacityDecay` -- the lowest retention ``exp(-t / S)`` at the current turn, ``t``
  the turns since the item's last touch;
* :class:`CapacityWindow` -- the least recently touched (largest ``t``), recall count ignored.
  With the budget alone it is the library's LRU rule
  (:class:`~forgetting.conversations.capacity.Capacity` with ``rule="lru"``) in the engine form
  the article's replay steps: driven by the same library events, the two hold the same memories
  (``tests/test_decay_capacity.py``).

Ties (equal retention, equal last touch) go to the oldest item, the lowest registration
order, when ``oldest_first`` is true (the default), else to the newest. Retention is
decreasing in ``t / S``, so the victim is the item with the largest ``t / S`` and the
comparison is made on that ratio *exactly*: ``t`` is an int and ``S`` a float, both turned
into :class:`fractions.Fraction` (a float converts without rounding), so two items are
compared as the rationals their values are, never through ``exp`` or a rounded quotient. No
decision hinges on float noise; equal stabilities (the same touch count) give exact ties,
which the tie rule settles. The window compares integer turns only.

A budget eviction happens inside ``register`` (the item leaves the working set at once) and
is reported by the next ``step``, with the time rule's evictions, in registration order: a
driver records it at the turn it happened. Between calls, ``working_set_size() <=
capacity`` always holds. With a budget no smaller than the most items the uncapped engine
ever holds, the engine decides exactly as :class:`~forgetting.decay.engines.EbbinghausEngine`
or :class:`~forgetting.decay.engines.RecencyWindow` (a test replays sessions through both).

Victims are found without a scan: the present items are filed by stability (one class per
distinct ``S``; the window has one class), each class a heap ordered by ``(last touch, tie
order)``, so each class's top is its lowest retention and a victim is the best of a few
tops (lazy deletion, rebuilt when stale entries dominate).
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Hashable
from fractions import Fraction
from typing import Any

from ..._validate import bool_problem, int_problem, plain_id, raise_problems, real_problem
from ...decay.curves import (
    DEFAULT_BASELINE_STABILITY,
    decay_eviction_delay,
    decay_problems,
    reinforced_stability,
    window_eviction_delay,
)
from ...decay.engines import _REQUIRED, MemoryItem, ScheduledEngine

__all__ = ["CapacityDecay", "CapacityWindow", "age_ratio", "victim_key"]

_Entry = tuple[int, int, int, MemoryItem]  # (last touch, tie order, sequence, item)


@functools.lru_cache(maxsize=4096)
def _integer_ratio(stability: float) -> tuple[int, int]:
    """``(p, q)`` with ``stability == p / q`` exactly."""
    return stability.as_integer_ratio()


def age_ratio(age: int, stability: float, by_retention: bool) -> tuple[int, int]:
    """``t / S`` of an item ``age`` turns after its last touch as integers ``(num, den)``,
    ``num / den == t / S`` exactly (``S = p / q`` from :meth:`float.as_integer_ratio`; ``S = inf``:
    0), so two items compare by integer products; ``(t, 1)`` for the window (``by_retention``
    false), which compares ``t`` alone."""
    if not by_retention:
        return age, 1
    if stability == math.inf:
        return 0, 1
    p, q = _integer_ratio(stability)
    return age * q, p


def victim_key(item: MemoryItem, turn: int, by_retention: bool, oldest_first: bool) -> tuple[Fraction, int]:
    """Sort key of ``item`` as a budget victim at ``turn``: the smallest key is evicted first.

    ``(-t / S, order)`` with ``t = turn - last_touched`` as an exact :class:`~fractions.Fraction`
    (``S = inf``: 0) when ``by_retention`` (decay), ``(-t, order)`` otherwise (the window);
    ``order`` is the registration sequence, negated when not ``oldest_first``.
    """
    age = Fraction(turn - item.last_touched)
    if by_retention:
        age = Fraction(0) if item.stability == math.inf else age / Fraction(item.stability)
    return -age, item.sequence if oldest_first else -item.sequence


class _Capped(ScheduledEngine):
    """The budget shared by both engines: victim classes, pending evictions, the bound."""

    _by_retention = True

    def __init__(self, capacity: int, oldest_first: bool) -> None:
        super().__init__()
        self.capacity = capacity
        self.oldest_first = oldest_first
        self._classes: dict[float, list[_Entry]] = {}  # stability -> heap (some entries stale)
        self._class_entries = 0
        self._pending: list[MemoryItem] = []  # evicted by the budget, not yet reported
        self._order: dict[Any, int] = {}  # present id -> registration sequence

    def register(
        self, mem_id: Hashable, content: str = "", turn: int = _REQUIRED, is_foundational: bool = False
    ) -> None:
        """Add an item touched at ``turn``; into a full working set, evict the victim first.

        The call is checked completely (as the uncapped engine checks it) before anything
        changes; the incoming item is never the victim.
        """
        super().register(mem_id, content, turn, is_foundational)  # validates, then stores
        mem_id = plain_id(mem_id)  # as the engine stored it
        item = self._items[mem_id]
        self._order[mem_id] = item.sequence
        while len(self._items) > self.capacity:
            self._evict(self._victim())
        self._push(item)

    def recall(self, mem_id: Hashable, turn: int) -> bool:
        """Touch an item (as the uncapped engine does) and file it under its new stability."""
        found = super().recall(mem_id, turn)
        if found:
            self._push(self._items[plain_id(mem_id)])
        return found

    def step(self, turn: int) -> list[Any]:
        """The time rule's evictions at ``turn`` and the budget's since the last step, in registration order."""
        due = super().step(turn)
        order = self._order
        evicted = [(order.pop(mem_id), mem_id) for mem_id in due]
        evicted += [(item.sequence, item.mem_id) for item in self._pending]
        self._pending = []
        evicted.sort()
        return [mem_id for _, mem_id in evicted]

    # --- internals ---------------------------------------------------------
    def _push(self, item: MemoryItem) -> None:
        order = item.sequence if self.oldest_first else -item.sequence
        heap = self._classes.setdefault(item.stability, [])
        heapq.heappush(heap, (item.last_touched, order, item.sequence, item))
        self._class_entries += 1
        if self._class_entries > 2 * len(self._items) + 16:
            self._rebuild_classes()

    def _victim(self) -> MemoryItem:
        """The present item (the incoming one aside: it is not filed yet) with the smallest :func:`victim_key`.

        The ratio ``t / S`` of each class's top is :func:`age_ratio`'s ``t * q / p`` with ``S = p / q``
        exactly (:meth:`float.as_integer_ratio`), so candidates are compared by integer products.
        """
        best: MemoryItem | None = None
        best_num = best_den = best_order = 0
        clock, items, by_retention = self._clock, self._items, self._by_retention
        for stability, heap in list(self._classes.items()):
            while heap:  # drop stale tops: an entry is current if its item is present, untouched since
                last, order, _, item = heap[0]
                if (
                    items.get(item.mem_id) is item
                    and item.last_touched == last
                    and item.stability == stability
                ):
                    break
                heapq.heappop(heap)
                self._class_entries -= 1
            else:
                del self._classes[stability]
                continue
            num, den = age_ratio(clock - last, stability, by_retention)
            if (
                best is None
                or num * best_den > best_num * den
                or (num * best_den == best_num * den and order < best_order)
            ):
                best, best_num, best_den, best_order = item, num, den, order
        assert best is not None  # over budget means at least one filed item
        return best

    def _evict(self, item: MemoryItem) -> None:
        del self._items[item.mem_id]
        del self._order[item.mem_id]
        item.evict_turn = None  # its time-rule entry goes stale
        self._pending.append(item)

    def _rebuild_classes(self) -> None:
        """One entry per present item (called from :meth:`_push`, once every present item is filed)."""
        classes: dict[float, list[_Entry]] = {}
        for item in self._items.values():
            order = item.sequence if self.oldest_first else -item.sequence
            classes.setdefault(item.stability, []).append((item.last_touched, order, item.sequence, item))
        for heap in classes.values():
            heapq.heapify(heap)
        self._classes = classes
        self._class_entries = sum(map(len, classes.values()))


def _capacity_problems(capacity: object, oldest_first: object) -> list[str | None]:
    return [int_problem("capacity", capacity, minimum=1), bool_problem("oldest_first", oldest_first)]


class CapacityDecay(_Capped):
    """Ebbinghaus decay with a budget: at most ``capacity`` items, the lowest retention evicted.

    Parameters
    ----------
    capacity : int
        ``C >= 1`` items.
    eviction_threshold : float or None, default None
        ``theta`` in (0, 1): also evict an item once ``exp(-t / S) < theta``, as
        :class:`~forgetting.decay.engines.EbbinghausEngine` does; ``None``: the budget alone.
    baseline_stability : float, default 8.0
        ``S0 > 0``; every recall reinforces ``S <- S (1 + ln(1 + n))``, as in the uncapped engine.
    oldest_first : bool, default True
        The tie rule: equal retention evicts the oldest (lowest registration order) first.

    Examples
    --------
    >>> engine = CapacityDecay(2)
    >>> engine.register("fact", "f", turn=1); engine.register("a", "a", turn=1)
    >>> engine.recall("fact", turn=2)
    True
    >>> engine.register("b", "b", turn=3); engine.step(3)
    ['a']
    """

    def __init__(
        self,
        capacity: int,
        eviction_threshold: float | None = None,
        baseline_stability: float = DEFAULT_BASELINE_STABILITY,
        oldest_first: bool = True,
    ) -> None:
        problems = _capacity_problems(capacity, oldest_first)
        if eviction_threshold is None:
            problems.append(real_problem("baseline_stability", baseline_stability, 0.0, low_open=True))
        else:
            problems += decay_problems(eviction_threshold, baseline_stability)
        raise_problems(problems)
        super().__init__(capacity, oldest_first)
        self.eviction_threshold = None if eviction_threshold is None else float(eviction_threshold)
        self.baseline_stability = float(baseline_stability)

    def _delay(self, stability: float) -> int | None:
        theta = self.eviction_threshold
        return None if theta is None else decay_eviction_delay(stability, theta)

    def _initial_stability(self) -> float:
        return self.baseline_stability

    def untouched_delay(self) -> int | None:
        return self._delay(self.baseline_stability)

    def _touched(self, item: MemoryItem) -> int | None:
        item.stability = reinforced_stability(item.stability, item.touch_count)
        return self._delay(item.stability)


class CapacityWindow(_Capped):
    """The recency window with a budget: at most ``capacity`` items, the least recently touched evicted.

    Parameters
    ----------
    capacity : int
        ``C >= 1`` items.
    window_size : int or None, default None
        ``W >= 1``: also evict once ``turn - last_touched > W``, as
        :class:`~forgetting.decay.engines.RecencyWindow` does; ``None``: the budget alone (LRU).
    oldest_first : bool, default True
        The tie rule: equal last touch evicts the oldest (lowest registration order) first.
    """

    _by_retention = False

    def __init__(self, capacity: int, window_size: int | None = None, oldest_first: bool = True) -> None:
        problems = _capacity_problems(capacity, oldest_first)
        if window_size is not None:
            problems.append(int_problem("window_size", window_size, minimum=1))
        raise_problems(problems)
        super().__init__(capacity, oldest_first)
        self.window_size = window_size

    def _initial_stability(self) -> float:
        return math.inf

    def untouched_delay(self) -> int | None:
        return None if self.window_size is None else window_eviction_delay(self.window_size)

    def _touched(self, item: MemoryItem) -> int | None:
        return self.untouched_delay()
