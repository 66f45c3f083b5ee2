"""Two eviction policies behind one interface: Ebbinghaus decay and a recency window.

Both engines keep a working set of memory items and are driven by an explicit
integer turn counter (never the wall clock). Within a turn a caller applies
``register``/``recall`` events and then calls ``step(turn)``, which evicts.

* :class:`EbbinghausEngine` -- retention ``R = exp(-t / S)`` after ``t`` turns
  without a touch; every recall reinforces ``S <- S * (1 + ln(1 + n))`` where ``n``
  is the touch count after the increment (registration sets ``n = 1``). An item is
  evicted at the first step where ``R < theta``.
* :class:`RecencyWindow` -- evicts an item once ``turn - last_touched > W``; how
  often it was recalled is ignored by design.

An item's eviction turn depends only on its own last touch and stability, so both
engines file it under that turn, moving it on every touch: ``step`` costs time in the
number of items it evicts, not in the size of the working set, and the schedule holds
at most one entry per present item however often it is touched. The reference scan
over every item, used to test this, is :func:`forgetting.decay.scan_evictions`.

Every call is checked completely before anything changes: a refused call (``ValueError``)
leaves the items, the schedule and the clock exactly as they were. A well-formed
``recall`` of an id that is not present (never registered, or evicted) is the silent
failure the book studies: it returns ``False``, changes no item, and, like every accepted
call, moves the clock to ``turn``.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

DEFAULT_EVICTION_THRESHOLD = 0.20
DEFAULT_BASELINE_STABILITY = 8.0
DEFAULT_WINDOW_SIZE = 15


def retention(turns_since_touch: int, stability: float) -> float:
    """Ebbinghaus retention ``R = exp(-t / S)`` (exactly 1.0 at ``t = 0``)."""
    if turns_since_touch <= 0:
        return 1.0
    return math.exp(-turns_since_touch / stability)


def reinforced_stability(stability: float, touch_count: int) -> float:
    """Stability after a recall: ``S * (1 + ln(1 + n))``, ``n`` the touch count after the recall."""
    return stability * (1.0 + math.log(1.0 + touch_count))


def naive_eviction_turn(baseline_stability: float, eviction_threshold: float) -> float:
    """Continuous turn at which an untouched item crosses the threshold: ``S0 * ln(1 / theta)``."""
    return baseline_stability * math.log(1.0 / eviction_threshold)


NEVER_TURN = 2**62  # beyond any session: an item this stable is never scheduled


@lru_cache(maxsize=65536)  # pure; every new item shares S0, so most calls are hits
def decay_eviction_delay(stability: float, eviction_threshold: float) -> int | None:
    """Smallest integer ``t >= 1`` with ``retention(t, S) < theta`` (``None`` past ``NEVER_TURN``).

    Starts from the closed form ``floor(S * ln(1/theta))`` and settles the boundary
    with the very expression :func:`retention` evaluates (a bracketing search, since
    for huge ``S`` the closed form can be off by more than one turn), so the
    schedule agrees bit for bit with a direct scan.
    """
    def below(t: int) -> bool:
        return retention(t, stability) < eviction_threshold

    closed_form = naive_eviction_turn(stability, eviction_threshold)
    if not closed_form < NEVER_TURN:  # also catches S = inf after very many recalls
        return None
    guess = max(1, math.floor(closed_form))
    if below(guess):
        low, high, step = guess - 1, guess, 1  # invariant: not below(low) or low == 0
        while low >= 1 and below(low):
            high, low, step = low, max(0, low - step), step * 2
    else:
        low, high, step = guess, guess + 1, 1  # invariant: below(high)
        while not below(high):
            low, high, step = high, high + step, step * 2
    while high - low > 1:  # not below(low) (or low == 0), below(high)
        middle = (low + high) // 2
        if below(middle):
            high = middle
        else:
            low = middle
    return high


def window_eviction_delay(window_size: int) -> int:
    """Turns after the last touch at which the window evicts: ``turn - last > W``."""
    return window_size + 1


@dataclass(slots=True)
class MemoryItem:
    """One item of working memory: what it holds and when it was touched."""

    mem_id: str
    content: str
    is_foundational: bool
    created_turn: int
    last_touched: int
    touch_count: int
    stability: float
    sequence: int  # registration order; evictions are reported in this order


def _by_sequence(item: MemoryItem) -> int:
    return item.sequence


def _check_mem_id(mem_id: object) -> None:
    if type(mem_id) is not str or not mem_id:
        raise ValueError(f"mem_id must be a non-empty str, got {mem_id!r} ({type(mem_id).__name__})")


def _check_turn(turn: object, clock: int) -> int:
    if isinstance(turn, bool) or not isinstance(turn, int):
        raise ValueError(f"turn must be an int, got {turn!r} ({type(turn).__name__})")
    if turn < 0:
        raise ValueError(f"turn must be >= 0, got {turn}")
    if turn < clock:
        raise ValueError(f"turn must not go backwards: got turn={turn} after turn {clock}")
    return turn


class _ScheduledEngine:
    """Shared machinery: items, eviction buckets keyed by turn, a monotone clock.

    Invariants: ``_due[id]`` is the turn a present, scheduled item is filed under, and
    ``_buckets[turn]`` holds exactly the items whose ``_due`` is ``turn`` (no bucket is
    empty), so the buckets hold at most one entry per present item. A touch moves the
    item to its new bucket. ``_bucket_turns`` is a heap containing every bucket turn,
    plus turns of buckets emptied since; it is rebuilt from ``_buckets`` when those
    leftovers outnumber the live turns, so it stays O(items) at O(1) amortized cost.
    """

    def __init__(self) -> None:
        self._items: dict[str, MemoryItem] = {}
        self._due: dict[str, int] = {}  # mem_id -> turn it is filed under
        self._buckets: dict[int, dict[str, MemoryItem]] = {}  # turn -> items due then
        self._bucket_turns: list[int] = []  # heap: every key of _buckets, plus leftovers
        self._clock = 0
        self._sequence = 0

    # --- policy hook -------------------------------------------------------
    def _eviction_delay(self, item: MemoryItem) -> int | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _reinforce(self, item: MemoryItem) -> None:
        """Policy-specific effect of a recall on the item (none for the window)."""

    # --- interface ---------------------------------------------------------
    def register(self, mem_id: str, content: str, turn: int, is_foundational: bool = False) -> None:
        """Add an item touched at ``turn``. An id still present cannot be registered again."""
        if type(turn) is not int or turn < self._clock:  # fast path for the common case
            turn = _check_turn(turn, self._clock)
        if type(mem_id) is not str or not mem_id:
            _check_mem_id(mem_id)
        if mem_id in self._items:
            raise ValueError(f"mem_id {mem_id!r} is already registered (at turn "
                             f"{self._items[mem_id].created_turn}); ids must be unique while present")
        self._clock = turn
        item = MemoryItem(mem_id, content, bool(is_foundational), turn, turn, 1,
                          self._initial_stability(), self._sequence)
        self._sequence += 1
        self._items[mem_id] = item
        delay = self._eviction_delay(item)
        if delay is not None:  # a new id is in no bucket yet
            self._file(item, turn + delay)

    def recall(self, mem_id: str, turn: int) -> bool:
        """Touch an item and return ``True``; ``False`` when the id is not present.

        Either way the call is accepted and the clock moves to ``turn``; a bad ``mem_id``
        (not a non-empty str) or ``turn`` raises ``ValueError`` and changes nothing.
        """
        if type(turn) is not int or turn < self._clock:
            turn = _check_turn(turn, self._clock)
        if type(mem_id) is not str or not mem_id:
            _check_mem_id(mem_id)
        self._clock = turn
        item = self._items.get(mem_id)
        if item is None:
            return False
        item.touch_count += 1
        item.last_touched = turn
        self._reinforce(item)
        self._schedule(item)
        return True

    def step(self, turn: int) -> list[str]:
        """Evict every item due at or before ``turn``; return their ids in registration order."""
        if type(turn) is not int or turn < self._clock:
            turn = _check_turn(turn, self._clock)
        self._clock = turn
        due: list[MemoryItem] = []
        turns = self._bucket_turns
        while turns and turns[0] <= turn:
            bucket = self._buckets.pop(heapq.heappop(turns), None)  # None: a leftover turn
            if bucket is not None:
                due.extend(bucket.values())
        if len(due) > 1:
            due.sort(key=_by_sequence)
        items, scheduled = self._items, self._due
        for item in due:
            del items[item.mem_id]
            del scheduled[item.mem_id]
        return [item.mem_id for item in due]

    def is_present(self, mem_id: str) -> bool:
        return mem_id in self._items

    def working_set_size(self) -> int:
        return len(self._items)

    def item(self, mem_id: str) -> MemoryItem:
        """Read access to a present item (its stability, touch count, last touch)."""
        try:
            return self._items[mem_id]
        except KeyError:
            raise KeyError(f"mem_id {mem_id!r} is not present") from None

    def present_ids(self) -> list[str]:
        """Ids in the working set, in registration order."""
        return list(self._items)

    # --- internals ---------------------------------------------------------
    def _initial_stability(self) -> float:
        return math.inf

    def _schedule(self, item: MemoryItem) -> None:
        """File ``item`` under its eviction turn, removing it from the bucket it was in."""
        delay = self._eviction_delay(item)
        evict_turn = None if delay is None else item.last_touched + delay
        mem_id = item.mem_id
        old_turn = self._due.get(mem_id)
        if old_turn == evict_turn:
            return
        if old_turn is not None:
            old_bucket = self._buckets[old_turn]
            del old_bucket[mem_id]
            if not old_bucket:  # its turn stays in the heap as a leftover
                del self._buckets[old_turn]
            del self._due[mem_id]
        if evict_turn is not None:
            self._file(item, evict_turn)

    def _file(self, item: MemoryItem, evict_turn: int) -> None:
        """Put ``item``, which is in no bucket, into the bucket of ``evict_turn``."""
        self._due[item.mem_id] = evict_turn
        bucket = self._buckets.get(evict_turn)
        if bucket is None:
            bucket = self._buckets[evict_turn] = {}
            turns = self._bucket_turns
            if len(turns) > 2 * len(self._buckets) + 16:  # mostly leftovers: rebuild
                turns[:] = self._buckets
                heapq.heapify(turns)
            else:
                heapq.heappush(turns, evict_turn)
        bucket[item.mem_id] = item


class EbbinghausEngine(_ScheduledEngine):
    """Evict an item the first time its retention ``exp(-t/S)`` drops below ``theta``.

    Parameters
    ----------
    eviction_threshold:
        ``theta`` in (0, 1).
    baseline_stability:
        ``S0 > 0``, the stability of a freshly registered item (in turns).
    """

    def __init__(self, eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
                 baseline_stability: float = DEFAULT_BASELINE_STABILITY) -> None:
        problems = []
        if not _is_real(eviction_threshold) or not 0.0 < eviction_threshold < 1.0:
            problems.append(f"eviction_threshold must be a real number in (0, 1), got {eviction_threshold!r}")
        if not _is_real(baseline_stability) or not baseline_stability > 0.0:
            problems.append(f"baseline_stability must be a finite real number > 0, "
                            f"got {baseline_stability!r}")
        if problems:
            raise ValueError("; ".join(problems))
        super().__init__()
        self.eviction_threshold = float(eviction_threshold)
        self.baseline_stability = float(baseline_stability)

    def retention(self, mem_id: str, turn: int) -> float:
        """Retention of a present item at ``turn``."""
        item = self.item(mem_id)
        return retention(turn - item.last_touched, item.stability)

    def _initial_stability(self) -> float:
        return self.baseline_stability

    def _reinforce(self, item: MemoryItem) -> None:
        item.stability = reinforced_stability(item.stability, item.touch_count)

    def _eviction_delay(self, item: MemoryItem) -> int | None:
        return decay_eviction_delay(item.stability, self.eviction_threshold)


class RecencyWindow(_ScheduledEngine):
    """Evict an item once ``turn - last_touched > window_size``; recall count is ignored."""

    def __init__(self, window_size: int = DEFAULT_WINDOW_SIZE) -> None:
        if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size <= 0:
            raise ValueError(f"window_size must be a positive int, got {window_size!r}")
        super().__init__()
        self.window_size = window_size

    def _eviction_delay(self, item: MemoryItem) -> int:
        return window_eviction_delay(self.window_size)


Engine = _ScheduledEngine
EngineFactory = Callable[[], Engine]


def scan_evictions(engine: Engine, turn: int) -> list[str]:
    """Direct reading of the eviction rule: scan every present item at ``turn``.

    Returns the ids that ``step(turn)`` must evict, without changing the engine.
    Used by the tests as the reference and by the benchmark as the naive cost.
    """
    due = []
    for item in engine._items.values():
        t = turn - item.last_touched
        if isinstance(engine, EbbinghausEngine):
            evict = retention(t, item.stability) < engine.eviction_threshold
        else:
            evict = t > engine.window_size  # type: ignore[attr-defined]
        if evict:
            due.append(item.mem_id)
    return due


def _is_real(value: object) -> bool:
    """A finite int or float (``bool`` excluded; an int too large for a float is not finite)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
