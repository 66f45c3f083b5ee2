"""Two eviction policies behind one interface: Ebbinghaus decay and a recency window.

Both engines keep a working set of memory items and are driven by an explicit integer turn
counter (never the wall clock). Within a turn a caller applies ``register``/``recall``
events and then calls ``step(turn)``, which evicts.

* :class:`EbbinghausEngine` -- retention ``R = exp(-t / S)`` after ``t`` turns without a touch; every
  recall reinforces ``S <- S * (1 + ln(1 + n))`` where ``n`` is the touch count after the increment
  (registration sets ``n = 1``). An item is evicted at the first step where ``R < theta``.
* :class:`RecencyWindow` -- evicts an item once ``turn - last_touched > W``; how often it
  was recalled is ignored by design.

Both satisfy :class:`Engine`, the protocol through which the library's driver
(:func:`~forgetting.conversations.replay`, by way of the policies
:class:`~forgetting.conversations.Ebbinghaus` and :class:`~forgetting.conversations.Window`) steps
them.

An item's eviction turn depends only on its own last touch and stability, so both engines file it
under that turn on every touch: ``step`` costs time in the items it evicts and a touch a fixed
number of dict and list operations, whatever the size of the working set (the reference scan over
every item, used to test this, is :func:`scan_evictions`).

Every call is checked completely before anything changes: a refused call (``ValueError``) leaves
the items, the schedule and the clock exactly as they were. A well-formed ``recall`` of an id that
is not present (never registered, or evicted) is the silent failure the book studies: it returns
``False``, changes no item, and, like every accepted call, moves the clock to ``turn``.

Ids and turns
-------------
A memory id is what it is in every class of the library (:class:`~forgetting.worth.MemoryWorth`,
:class:`~forgetting.GovernedMemory`): any hashable value but a ``bool`` (``True == 1``) or a value
not equal to itself (NaN), numpy scalars stored as the Python values they equal. A turn is an
integer: a Python ``int`` or a numpy integer (anything :func:`operator.index` reads), never a
``bool``, a float or a string. ``content`` is optional (``""``); no engine reads it.

Each engine's constructor takes keyword arguments only, and :meth:`EbbinghausEngine.to_dict` /
:meth:`~EbbinghausEngine.from_dict` (and the window's) write and read its whole state as JSON-safe
data: the restored engine makes every later call exactly as the original would.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol, Self

from .._validate import (
    bool_problem,
    check_header,
    id_problem,
    int_problem,
    is_bool,
    json_header,
    json_id,
    json_rows,
    plain_id,
    raise_problems,
    reading,
    shown,
)
from .curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    decay_eviction_delay,
    decay_problems,
    reinforced_stability,
    retention,
    window_eviction_delay,
)

__all__ = [
    "MemoryItem",
    "Engine",
    "EngineFactory",
    "WorkingSet",
    "ScheduledEngine",
    "EbbinghausEngine",
    "RecencyWindow",
    "scan_evictions",
    "FORMAT_VERSION",
]

FORMAT_VERSION = 1
"""The ``"version"`` of every engine's ``to_dict``; ``from_dict`` reads this version only."""


class _Required:
    """The default of an argument that must be given (``turn``, after the optional ``content``)."""

    def __repr__(self) -> str:
        return "<required>"


_REQUIRED: Any = _Required()


@dataclass(slots=True)
class MemoryItem:
    """One item of working memory: what it holds and when it was touched.

    Attributes
    ----------
    mem_id : hashable
        Unique among present items (a ``str``, an ``int``, any hashable id: module docstring).
    content : str
        What the item holds (``""`` if not given; the engines never read it).
    is_foundational : bool
        A fact the session must keep (what FRR counts).
    created_turn, last_touched : int
        Turn of registration and of the latest registration or recall.
    touch_count : int
        ``n``: 1 at registration, +1 per recall.
    stability : float
        ``S`` in turns (``inf`` for the window, which ignores it).
    sequence : int
        Registration order; evictions are reported in this order.
    evict_turn : int or None
        The turn whose ``step`` will evict it; ``None`` when no turn will (or once evicted).
    """

    mem_id: Any
    content: str
    is_foundational: bool
    created_turn: int
    last_touched: int
    touch_count: int
    stability: float
    sequence: int
    evict_turn: int | None = None


class Engine(Protocol):
    """What a driver needs from an eviction policy.

    Invariants: turns never go backwards across calls; ``step(turn)`` returns the ids it
    evicted in registration order; a refused call (``ValueError``) changes nothing.
    """

    def register(
        self, mem_id: Hashable, content: str = "", turn: int = ..., is_foundational: bool = False
    ) -> None:
        """Add an item touched at ``turn`` (required; ``content`` is optional)."""

    def recall(self, mem_id: Hashable, turn: int) -> bool:
        """Touch an item; ``False`` when it is not present."""

    def step(self, turn: int) -> list[Any]:
        """Evict every item due at or before ``turn``."""

    def is_present(self, mem_id: Hashable) -> bool:
        """Whether ``mem_id`` is in the working set."""

    def working_set_size(self) -> int:
        """Number of present items."""

    def item(self, mem_id: Hashable) -> MemoryItem:
        """A present item (``KeyError`` otherwise)."""

    def present_ids(self) -> list[Any]:
        """Present ids in registration order."""


EngineFactory = Callable[[], Engine]
"""A zero-argument callable returning a fresh engine."""


def _by_sequence(item: MemoryItem) -> int:
    return item.sequence


def _check_mem_id(mem_id: object) -> Any:
    """``mem_id`` as the engines store it (:func:`~forgetting._validate.plain_id`: numpy scalars as
    Python values), or ``ValueError`` for an unhashable id, a ``bool`` or a value not equal to itself."""
    key = plain_id(mem_id)
    raise_problems([id_problem("mem_id", key)])
    return key


def _check_turn(turn: object, clock: int) -> int:
    """``turn`` as an ``int`` (:func:`operator.index`: Python and numpy integers, never a ``bool``),
    ``>= 0`` and not before ``clock``; ``ValueError`` naming it otherwise."""
    try:
        value = None if is_bool(turn) else operator.index(turn)  # type: ignore[arg-type]
    except TypeError:
        value = None
    if value is None:
        raise ValueError(
            f"turn must be an int (a Python or numpy integer; not a bool, a float or a str), "
            f"got {shown(turn)} ({type(turn).__name__})"
        )
    if value < 0:
        raise ValueError(f"turn must be >= 0, got {value}")
    if value < clock:
        raise ValueError(f"turn must not go backwards: got turn={value} after turn {clock}")
    return value


class WorkingSet:
    """Read access shared by every engine: the present items, in registration order.

    An engine keeps its present items in ``_items`` (id -> :class:`MemoryItem`); these
    methods only read it.
    """

    _items: dict[Any, MemoryItem]

    def is_present(self, mem_id: Hashable) -> bool:
        """Whether ``mem_id`` is in the working set (``ValueError`` for an id no item can have)."""
        if type(mem_id) is not str and type(mem_id) is not int:
            mem_id = _check_mem_id(mem_id)
        return mem_id in self._items

    def working_set_size(self) -> int:
        """Number of present items."""
        return len(self._items)

    def item(self, mem_id: Hashable) -> MemoryItem:
        """Read access to a present item (its stability, touch count, last touch); ``KeyError`` for an
        id not present, ``ValueError`` for an id no item can have."""
        if type(mem_id) is not str and type(mem_id) is not int:
            mem_id = _check_mem_id(mem_id)
        try:
            return self._items[mem_id]
        except KeyError:
            raise KeyError(f"mem_id {mem_id!r} is not present") from None

    def turns_since_touch(self, mem_id: Hashable, turn: int) -> int:
        """``turn - last_touched`` of a present item, the ``t`` its retention is read at.

        ``turn`` is an int (numpy integers too: this only reads) no earlier than the item's last
        touch: retention is defined from that touch on, and an earlier turn (or a negative one)
        would read as ``R = 1``. ``ValueError`` naming ``turn`` otherwise, ``KeyError`` for an
        item not present.
        """
        item = self.item(mem_id)
        problem = int_problem("turn", turn, minimum=item.last_touched, allow_numpy=True)
        if problem is not None:
            raise ValueError(f"{problem} (the last touch of {mem_id!r}: retention is not defined before it)")
        return int(turn) - item.last_touched

    def present_ids(self) -> list[Any]:
        """Ids in the working set, in registration order."""
        return list(self._items)


class _Bucket(list[MemoryItem]):
    """The items filed under one eviction turn; ``turn`` is the int object they all point at."""

    __slots__ = ("turn",)

    def __init__(self, turn: int) -> None:
        super().__init__()
        self.turn = turn


class ScheduledEngine(WorkingSet):
    """Shared machinery: items, eviction buckets keyed by turn, a monotone clock.

    Each present, scheduled item sits in ``_buckets[t]`` with ``item.evict_turn`` set to that
    bucket's own ``turn`` object; ``_bucket_turns`` is a heap of the keys of ``_buckets``. A
    touch files the item under its new turn and leaves the old entry behind (lazy deletion);
    ``step`` pops the due buckets and evicts the current entries (``item.evict_turn is
    bucket.turn``), setting ``evict_turn`` to ``None``. Comparing by identity and never
    visiting the old bucket keeps a touch to a fixed number of memory accesses however large
    the working set (a CPython int is an object; reading one can miss the cache). When stale
    entries outnumber the items the buckets are rebuilt: O(items) space, O(1) amortized time.
    """

    def __init__(self) -> None:
        self._items: dict[Any, MemoryItem] = {}
        self._buckets: dict[int, _Bucket] = {}  # turn -> items filed under it (some stale)
        self._bucket_turns: list[int] = []  # heap of the keys of _buckets
        self._entries = 0  # entries in all buckets, stale ones included
        self._clock = 0
        self._sequence = 0

    @property
    def last_turn(self) -> int:
        """The turn of the latest accepted call (0 for a fresh engine); no call may go before it."""
        return self._clock

    # --- policy hooks: S of a new item, its eviction delay (None: never), a recall's effect -----
    def _initial_stability(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def untouched_delay(self) -> int | None:  # pragma: no cover - abstract
        """Turns after its registration that an item never recalled is evicted (``None``: never)."""
        raise NotImplementedError

    def _touched(self, item: MemoryItem) -> int | None:  # pragma: no cover - abstract
        """Apply a recall to ``item`` (count and last touch already moved); return its delay."""
        raise NotImplementedError

    def _recalled_delay(self, stability: float) -> int | None:  # pragma: no cover - abstract
        """The delay :meth:`_touched` gives a recalled item that now has ``stability``."""
        raise NotImplementedError

    # --- interface ---------------------------------------------------------
    def register(
        self, mem_id: Hashable, content: str = "", turn: int = _REQUIRED, is_foundational: bool = False
    ) -> None:
        """Add an item touched at ``turn`` (required; ``content`` a str, ``""`` if not given;
        ``is_foundational`` a bool); a present id cannot be added again."""
        if type(turn) is not int or turn < self._clock:  # fast path for the common case
            if turn is _REQUIRED:
                raise TypeError("register() missing 1 required argument: 'turn'")
            turn = _check_turn(turn, self._clock)
        if type(mem_id) is not str and type(mem_id) is not int:
            mem_id = _check_mem_id(mem_id)
        if type(content) is not str:
            raise ValueError(f"content must be a str (what the item holds), got {shown(content)}")
        if is_foundational is not False and is_foundational is not True:  # "no" is truthy: refused
            raise_problems([bool_problem("is_foundational", is_foundational)])
        items = self._items
        if mem_id in items:
            raise ValueError(
                f"mem_id {mem_id!r} is already registered (at turn "
                f"{items[mem_id].created_turn}); ids must be unique while present"
            )
        self._clock = turn
        item = MemoryItem(
            mem_id, content, bool(is_foundational), turn, turn, 1, self._initial_stability(), self._sequence
        )
        self._sequence += 1
        items[mem_id] = item
        delay = self.untouched_delay()
        if delay is not None:
            self._file(item, turn + delay)

    def recall(self, mem_id: Hashable, turn: int) -> bool:
        """Touch an item and return ``True``; ``False`` when the id is not present.

        Either way the call is accepted and the clock moves to ``turn``; a bad ``mem_id``
        (unhashable, a bool, NaN) or ``turn`` raises ``ValueError`` and changes nothing.
        """
        if type(turn) is not int or turn < self._clock:
            turn = _check_turn(turn, self._clock)
        if type(mem_id) is not str and type(mem_id) is not int:
            mem_id = _check_mem_id(mem_id)
        self._clock = turn
        item = self._items.get(mem_id)
        if item is None:
            return False
        item.touch_count += 1
        item.last_touched = turn
        delay = self._touched(item)
        if delay is None:  # never evicted now: any entry it had goes stale
            item.evict_turn = None
        else:
            self._file(item, turn + delay)
        return True

    def step(self, turn: int) -> list[Any]:
        """Evict every item due at or before ``turn``; return their ids in registration order."""
        if type(turn) is not int or turn < self._clock:
            turn = _check_turn(turn, self._clock)
        self._clock = turn
        turns = self._bucket_turns
        if not turns or turns[0] > turn:
            return []
        due: list[MemoryItem] = []
        buckets = self._buckets
        while turns and turns[0] <= turn:
            bucket = buckets.pop(heapq.heappop(turns))
            self._entries -= len(bucket)
            current = bucket.turn
            for item in bucket:
                if item.evict_turn is current:  # not stale (nor a second entry of an evicted item)
                    item.evict_turn = None
                    due.append(item)
        if len(due) > 1:
            due.sort(key=_by_sequence)
        items = self._items
        for item in due:
            del items[item.mem_id]
        return [item.mem_id for item in due]

    # --- JSON (the engines' to_dict and from_dict) ----------------------------
    def _state_dict(self, format_name: str, settings: dict[str, Any]) -> dict[str, Any]:
        """The whole state as JSON-safe data (the engines' ``to_dict``)."""
        items = [
            [
                json_id(item.mem_id),
                item.content,
                item.is_foundational,
                item.created_turn,
                item.last_touched,
                item.touch_count,
                None if item.stability == math.inf else item.stability,
                item.sequence,
            ]
            for item in self._items.values()
        ]
        return {
            **json_header(format_name, FORMAT_VERSION),
            "settings": settings,
            "turn": self._clock,
            "registrations": self._sequence,
            "items": items,
        }

    @classmethod
    def _from_state(cls, data: object, format_name: str) -> Self:
        """The engine :meth:`_state_dict` wrote (the engines' ``from_dict``)."""
        checked = check_header(data, format_name, FORMAT_VERSION)
        with reading(cls.__name__):
            settings = checked["settings"]
            if not isinstance(settings, dict):
                raise ValueError(f"data['settings'] must be a dict, got {shown(settings)}")
            engine = cls(**settings)
            engine._restore(checked)
        return engine

    def _restore(self, data: dict[str, Any]) -> None:
        """Fill this fresh engine from ``data``: every item as written, each filed under the turn its
        last touch and stability give (the schedule is a function of the items)."""
        turn, registrations = data["turn"], data["registrations"]
        raise_problems(
            [int_problem("turn", turn, minimum=0), int_problem("registrations", registrations, minimum=0)]
        )
        initial = self._initial_stability()
        items: dict[Any, MemoryItem] = {}
        previous = -1  # the sequence of the item before (registration order)
        for row in json_rows(data, "items", 8):
            mem_id, content, flag, created, touched, touches, stability, sequence = row
            counts = (created, touched, touches, sequence)
            if stability is None:
                stability = math.inf
            problem = None
            if type(mem_id) is not str and type(mem_id) is not int:
                problem = "its id is not a str or an int"
            elif mem_id in items:
                problem = "its id is there twice"
            elif type(content) is not str or type(flag) is not bool:
                problem = "its content is not a str or its flag not a bool"
            elif not all(type(v) is int for v in counts):
                problem = "its turns, touches and sequence are not all ints"
            elif not 0 <= created <= touched <= turn or touches < 1 or (touches == 1 and touched != created):
                problem = (
                    "its turns and touches are not those of an item (0 <= created <= last touch <= turn)"
                )
            elif type(stability) is not float or not stability > 0 or (touches == 1 and stability != initial):
                problem = f"its stability is not a float > 0 (null: inf), {initial!r} before any recall"
            elif initial == math.inf and stability != math.inf:
                problem = "its stability must be null (the window reads none)"
            elif not previous < sequence < registrations:
                problem = "its sequence is not above the previous item's and below registrations"
            if problem is not None:
                raise ValueError(f"items entry {shown(row)} is not an item: {problem}")
            if touches == 1:
                stability = initial  # the very object a registration gives (the engines' caches compare it)
            items[mem_id] = MemoryItem(mem_id, content, flag, created, touched, touches, stability, sequence)
            previous = sequence
        self._items, self._clock, self._sequence = items, turn, registrations
        for item in items.values():
            delay = self.untouched_delay() if item.touch_count == 1 else self._recalled_delay(item.stability)
            if delay is not None:
                self._file(item, item.last_touched + delay)

    # --- internals ---------------------------------------------------------
    def _file(self, item: MemoryItem, evict_turn: int) -> None:
        """Add an entry for ``item`` to the bucket of ``evict_turn`` and point the item at it."""
        bucket = self._buckets.get(evict_turn)
        if bucket is None:
            bucket = self._buckets[evict_turn] = _Bucket(evict_turn)
            heapq.heappush(self._bucket_turns, evict_turn)
        bucket.append(item)
        item.evict_turn = bucket.turn
        self._entries += 1
        if self._entries > 2 * len(self._items) + 8:  # mostly stale entries: rebuild
            self._rebuild()

    def _rebuild(self) -> None:
        """Buckets holding exactly one entry per present, scheduled item."""
        buckets: dict[int, _Bucket] = {}
        for item in self._items.values():
            if item.evict_turn is not None:
                bucket = buckets.get(item.evict_turn)
                if bucket is None:
                    bucket = buckets[item.evict_turn] = _Bucket(item.evict_turn)
                bucket.append(item)
                item.evict_turn = bucket.turn
        self._buckets = buckets
        self._bucket_turns = list(buckets)
        heapq.heapify(self._bucket_turns)
        self._entries = sum(map(len, buckets.values()))


#: The reinforcement caches of :class:`EbbinghausEngine`, one per ``(S0, theta)``.
_TRAJECTORIES: dict[tuple[float, float], dict[int, tuple[float, float, int | None]]] = {}


class EbbinghausEngine(ScheduledEngine):
    """Evict an item the first time its retention ``exp(-t / S)`` drops below ``theta``.

    Parameters
    ----------
    eviction_threshold : float, default 0.20
        ``theta`` in (0, 1); keyword-only, as every constructor argument of the engines.
    baseline_stability : float, default 8.0
        ``S0 > 0``, the stability of a freshly registered item (in turns).

    Examples
    --------
    >>> engine = EbbinghausEngine(eviction_threshold=0.2)
    >>> engine.register("fact", "the user is vegetarian", turn=1)
    >>> engine.register(42, turn=2)  # any hashable id; content is optional
    >>> engine.step(13), engine.step(14)
    ([], ['fact'])
    >>> EbbinghausEngine.from_dict(engine.to_dict()).step(15)
    [42]
    """

    FORMAT = "forgetting.EbbinghausEngine"
    """The ``"format"`` of :meth:`to_dict`."""

    def __init__(
        self,
        *,
        eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
        baseline_stability: float = DEFAULT_BASELINE_STABILITY,
    ) -> None:
        raise_problems(decay_problems(eviction_threshold, baseline_stability))
        super().__init__()
        self.eviction_threshold = float(eviction_threshold)
        self.baseline_stability = float(baseline_stability)
        self._first = decay_eviction_delay(self.baseline_stability, self.eviction_threshold)
        self._trajectory = _TRAJECTORIES.setdefault((self.baseline_stability, self.eviction_threshold), {})

    def retention(self, mem_id: Hashable, turn: int) -> float:
        """Retention of a present item at ``turn`` (:func:`~forgetting.decay.curves.retention`), an
        int no earlier than its last touch (:meth:`~ScheduledEngine.turns_since_touch`)."""
        return retention(self.turns_since_touch(mem_id, turn), self.item(mem_id).stability)

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-safe data: ``json.loads(json.dumps(...))`` into :meth:`from_dict`
        gives an engine whose every later call returns what this one's would, floats bit for bit.

        ``{"format": "forgetting.EbbinghausEngine", "version": 1, "settings": {keyword arguments},
        "turn": last turn, "registrations": n, "items": [[id, content, is_foundational, created
        turn, last touch, touches, stability (null: inf), sequence], ...] (registration order)}``.
        ``ValueError`` naming the first id that is neither a ``str`` nor an ``int`` (JSON reads
        nothing else back as the same id).
        """
        settings = {
            "eviction_threshold": self.eviction_threshold,
            "baseline_stability": self.baseline_stability,
        }
        return self._state_dict(self.FORMAT, settings)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The engine :meth:`to_dict` wrote (after ``json.loads`` too): same state, same future.

        ``ValueError`` for another format or version, or data that is not what :meth:`to_dict`
        writes (saying what it got).
        """
        return cls._from_state(data, cls.FORMAT)

    def _initial_stability(self) -> float:
        return self.baseline_stability

    def untouched_delay(self) -> int | None:
        return self._first

    def _recalled_delay(self, stability: float) -> int | None:
        return decay_eviction_delay(stability, self.eviction_threshold)

    def _touched(self, item: MemoryItem) -> int | None:
        # Every item starts from the same S0 object and is reinforced by the same formula, so
        # the n-th touch maps the same stability object to the same result: cache it by n,
        # checked by identity (no read of the float), shared by the engines of equal S0 and
        # theta (an entry serves only the object it came from, so sharing changes no value).
        count = item.touch_count
        cached = self._trajectory.get(count)
        if cached is not None and item.stability is cached[0]:
            item.stability = cached[1]
            return cached[2]
        before = item.stability
        after = item.stability = reinforced_stability(before, count)
        delay = decay_eviction_delay(after, self.eviction_threshold)
        previous = self._trajectory.get(count - 1)
        if before is (self.baseline_stability if count == 2 else previous and previous[1]):
            self._trajectory[count] = (before, after, delay)
        return delay


class RecencyWindow(ScheduledEngine):
    """Evict an item once ``turn - last_touched > window_size``; recall count is ignored.

    Parameters
    ----------
    window_size : int, default 15
        ``W >= 1``, in turns (keyword-only).

    Examples
    --------
    >>> window = RecencyWindow(window_size=15)
    >>> window.register("fact", turn=1)
    >>> window.step(16), window.step(17)
    ([], ['fact'])
    """

    FORMAT = "forgetting.RecencyWindow"
    """The ``"format"`` of :meth:`to_dict`."""

    def __init__(self, *, window_size: int = DEFAULT_WINDOW_SIZE) -> None:
        raise_problems([int_problem("window_size", window_size, minimum=1)])
        super().__init__()
        self.window_size = window_size
        self._delay = window_eviction_delay(window_size)

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-safe data, as :meth:`EbbinghausEngine.to_dict` writes it (format
        ``"forgetting.RecencyWindow"``, settings ``{"window_size": W}``, every stability null)."""
        return self._state_dict(self.FORMAT, {"window_size": int(self.window_size)})

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The window :meth:`to_dict` wrote: same state, same future (``ValueError`` otherwise)."""
        return cls._from_state(data, cls.FORMAT)

    def _initial_stability(self) -> float:
        return math.inf

    def untouched_delay(self) -> int:
        return self._delay

    def _touched(self, item: MemoryItem) -> int:
        return self._delay

    def _recalled_delay(self, stability: float) -> int:
        return self._delay


def scan_evictions(engine: EbbinghausEngine | RecencyWindow, turn: int) -> list[Any]:
    """Direct reading of the eviction rule: scan every present item at ``turn``.

    Returns the ids that ``step(turn)`` must evict (``R < theta``, or ``turn - last > W``),
    without changing the engine. Used by the tests as the reference and by the benchmark as
    the naive cost.
    """
    due = []
    for mem_id in engine.present_ids():
        item = engine.item(mem_id)
        turns_since_touch = turn - item.last_touched
        if isinstance(engine, EbbinghausEngine):
            evict = retention(turns_since_touch, item.stability) < engine.eviction_threshold
        else:
            evict = turns_since_touch > engine.window_size
        if evict:
            due.append(mem_id)
    return due
