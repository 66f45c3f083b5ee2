"""Forgetting policies on a conversation: which stored turns (memories) are still held.

A conversation is replayed as a stream of :class:`Event` s, one per turn, in order. At each
event, in this order:

1. the policy forgets what its rule drops at this event's turn and time (a time rule: decay,
   the window, a forgetting pass);
2. every id in ``recalled`` that is still held is recalled (a retriever, given as data, named
   it before the turn was stored; an id already dropped is a *missed* recall and changes
   nothing); with :func:`replay`'s ``k``, ``recalled`` is a ranking and only its first ``k``
   held ids are recalled (a top-``k`` retriever over what the store holds);
3. the turn is stored (``stored``), and a capacity rule evicts one held memory first if the
   store is full: the incoming memory is always stored.

A memory dropped in step 1 or 3 of event ``i`` is recorded as dropped at turn ``i``: it is not
held after event ``i`` (and, for a time rule, was not there to be recalled at ``i``).

:func:`replay` drives a policy (anything with ``start()`` and ``label``, :class:`Policy`) over
the events and returns a :class:`Replay`. Turns are ints; real time is the session's
``datetime``; every rule says which unit it reads. Randomness comes from
``numpy.random.default_rng(seed)`` of a seed the policy holds, in event order, as many draws
at each event as the events alone fix (never what was dropped), so a replay of the first ``n``
events is exactly the start of a longer one.
Capacity rules (LRU, FIFO, LFU, random eviction) are in :mod:`.capacity`, the rules of
MemoryBank and YourMemory in :mod:`.field_rules`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import NamedTuple, Protocol

from .._validate import int_problem, raise_problems, shown
from ..decay.curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    decay_problems,
)
from ..decay.engines import EbbinghausEngine, Engine, RecencyWindow
from .records import Conversation

__all__ = [
    "DECAY_CLOCKS",
    "CheckedEvents",
    "Ebbinghaus",
    "Event",
    "Holder",
    "KeepAll",
    "Policy",
    "Replay",
    "Window",
    "check_events",
    "choice_problem",
    "record_drops",
    "conversation_events",
    "day_number",
    "replay",
    "replay_state",
]

#: The clocks of :class:`Ebbinghaus`: the turn counter, or whole calendar days of real time.
DECAY_CLOCKS = ("turns", "days")


class Event(NamedTuple):
    """One turn of the stream: its index, real time and session, the memory stored, the recalls.

    ``recalled`` are ids of memories stored at earlier events, without repeats, named by a
    retriever before ``stored`` is stored (order is kept but never decides anything).
    """

    turn: int
    time: datetime
    session: int
    stored: str
    recalled: tuple[str, ...] = ()


class Holder(Protocol):
    """A policy's running state over one replay (what :func:`replay` calls, in event order)."""

    def forget(self, event: Event) -> list[str]:
        """Step 1: the held ids the rule drops at ``event``."""

    def recall(self, mem_id: str, event: Event) -> None:
        """Step 2: ``mem_id``, held, is recalled."""

    def store(self, event: Event) -> list[str]:
        """Step 3: store ``event.stored``; return the held ids evicted to make room."""


class Policy(Protocol):
    """A forgetting policy: its parameters (checked when it is made) and a fresh state."""

    @property
    def label(self) -> str:
        """Name for tables and legends."""

    def start(self) -> Holder:
        """A fresh state, nothing stored."""


@dataclass(frozen=True)
class Replay:
    """What :func:`replay` returns.

    Attributes
    ----------
    policy : str
        The policy's label.
    stored : tuple of str
        Every memory, in store order.
    dropped : Mapping of str to int
        Each dropped memory's drop turn (absent: never dropped).
    held : tuple of str
        The memories held after the last event, in store order.
    held_counts : tuple of int
        How many memories were held after each event.
    missed_recalls : int
        Recalls that named a memory already dropped.
    """

    policy: str
    stored: tuple[str, ...]
    dropped: Mapping[str, int]
    held: tuple[str, ...]
    held_counts: tuple[int, ...]
    missed_recalls: int

    def dropped_at(self, mem_id: str) -> int | None:
        """The turn ``mem_id`` was dropped, ``None`` if it is held (``KeyError``: never stored)."""
        if mem_id not in self.dropped and mem_id not in self.held:
            raise KeyError(f"mem_id {mem_id!r} was never stored")
        return self.dropped.get(mem_id)


def choice_problem(name: str, value: object, allowed: Sequence[str]) -> str | None:
    """``None`` if ``value`` is one of the strings ``allowed``, else the sentence saying why not."""
    if isinstance(value, str) and value in allowed:
        return None
    return f"{name} must be one of {', '.join(map(repr, allowed))}, got {shown(value)}"


def day_number(time: datetime) -> int:
    """Whole calendar days: ``time.date().toordinal()`` (the difference of two is ``t`` in days)."""
    return time.date().toordinal()


def _event_problems(events: Sequence[object]) -> list[str]:
    problems: list[str] = []
    stored: set[str] = set()
    previous: Event | None = None
    for i, event in enumerate(events):
        where = f"events[{i}]"
        if not isinstance(event, Event):
            problems.append(f"{where} must be an Event, got {shown(event)}")
            break
        found = [
            int_problem(f"{where}.turn", event.turn, minimum=0 if previous is None else previous.turn + 1),
            int_problem(
                f"{where}.session", event.session, minimum=1 if previous is None else previous.session
            ),
        ]
        time = event.time
        naive = isinstance(time, datetime) and time.utcoffset() is None
        if (
            previous is not None
            and isinstance(time, datetime)
            and naive != (previous.time.utcoffset() is None)
        ):
            found.append(
                f"{where}.time must be {'aware' if naive else 'naive'} as events[{i - 1}].time is (no mix of "
                f"naive and aware datetimes), got {shown(time)}"
            )
        elif not isinstance(time, datetime) or (previous is not None and time < previous.time):
            found.append(
                f"{where}.time must be a datetime, not before the previous event's, got {shown(time)}"
            )
        if not isinstance(event.stored, str) or not event.stored or event.stored in stored:
            found.append(
                f"{where}.stored must be a non-empty str not stored before, got {shown(event.stored)}"
            )
        recalled = event.recalled
        if not isinstance(recalled, tuple) or len(set(recalled)) != len(recalled):
            found.append(f"{where}.recalled must be a tuple of ids without repeats, got {shown(recalled)}")
        elif unknown := [mem_id for mem_id in recalled if not (isinstance(mem_id, str) and mem_id in stored)]:
            found.append(f"{where}.recalled must name memories stored before, got {shown(unknown)}")
        problems += [p for p in found if p]
        if problems:
            break  # the next event's checks read this one's values
        stored.add(event.stored)
        previous = event
    return problems


class CheckedEvents(tuple[Event, ...]):
    """Events :func:`check_events` accepted: :func:`replay` does not check them again.

    A tuple of immutable :class:`Event` s, so what was checked cannot change afterwards.
    """

    __slots__ = ()


def _events_problem(events: object) -> str | None:
    if isinstance(events, Iterable) and not isinstance(events, (str, bytes)):
        return None
    return f"events must be an iterable of Events, got {shown(events)}"


def check_events(events: Iterable[Event]) -> CheckedEvents:
    """Check ``events`` once (as :func:`replay` does) for replaying many policies over them.

    Raises ``ValueError`` with every problem :func:`replay` would report.
    """
    raise_problems([_events_problem(events)])
    stream = list(events)
    raise_problems(_event_problems(stream))
    return CheckedEvents(stream)


def record_drops(
    policy: Policy, held: dict[str, None], dropped: dict[str, int], ids: list[str], turn: int
) -> None:
    """Move ``ids`` from ``held`` to ``dropped`` at ``turn``; ``ValueError`` (nothing moved) if
    ``policy`` dropped a memory it does not hold."""
    if stray := [mem_id for mem_id in ids if mem_id not in held]:
        raise ValueError(f"policy {policy.label!r} dropped memories it does not hold at turn {turn}: {stray}")
    for mem_id in ids:
        del held[mem_id]
        dropped[mem_id] = turn


def replay(policy: Policy, events: Iterable[Event], k: int | None = None) -> Replay:
    """Replay ``events`` through a fresh state of ``policy`` (the module docstring's three steps).

    ``k=None``: every held id of ``event.recalled`` is recalled. ``k`` an int: ``recalled`` is a
    ranking (best first, e.g. every earlier memory by similarity) and the first ``k`` ids of it
    that are still held are recalled, as a top-``k`` retriever over what the store holds.
    ``missed_recalls`` counts, in both cases, the ids a retriever over the whole history would
    have recalled (all of ``recalled``, or its first ``k``) that were already dropped.

    Raises
    ------
    ValueError
        ``k`` not ``None`` or an int ``>= 1``; an event that is not an :class:`Event`, turns
        that do not increase (ints ``>= 0``), sessions that decrease, a time before the previous
        one, a stored id that is empty or repeated, recalled ids that repeat or name no earlier
        memory; or a policy that drops or evicts a memory it does not hold. Every event is
        checked before the first one runs. Also ``policy`` without a str ``label`` and a
        ``start()``, ``events`` not an iterable, and times that mix naive and aware datetimes
        (which cannot be compared), each naming the argument.
    """
    return replay_state(policy, events, k)[0]


def replay_state(policy: Policy, events: Iterable[Event], k: int | None = None) -> tuple[Replay, Holder]:
    """:func:`replay`, and the policy's state after the last event (for a caller that reads it)."""
    arguments = [
        None
        if isinstance(getattr(policy, "label", None), str) and callable(getattr(policy, "start", None))
        else f"policy must be a policy (a str label and start()), got {shown(policy)}",
        _events_problem(events),
    ]
    raise_problems(arguments)
    stream = events if isinstance(events, CheckedEvents) else list(events)
    problems = [] if isinstance(stream, CheckedEvents) else _event_problems(stream)
    raise_problems([None if k is None else int_problem("k", k, minimum=1), *problems])
    state = policy.start()
    held: dict[str, None] = {}
    dropped: dict[str, int] = {}
    counts: list[int] = []
    missed = 0
    is_held = held.__contains__
    for event in stream:
        if forgotten := state.forget(event):
            record_drops(policy, held, dropped, forgotten, event.turn)
        ranking = event.recalled
        head = ranking if k is None else ranking[:k]
        missed += len(head) - sum(map(is_held, head))
        for mem_id in islice(filter(is_held, ranking), k):  # a recall drops nothing: ``held`` stays
            state.recall(mem_id, event)
        if evicted := state.store(event):
            record_drops(policy, held, dropped, evicted, event.turn)
        held[event.stored] = None
        counts.append(len(held))
    stored = tuple(event.stored for event in stream)
    return Replay(policy.label, stored, dropped, tuple(held), tuple(counts), missed), state


def conversation_events(
    conversation: Conversation, recalled: Sequence[Sequence[str]] | None = None
) -> list[Event]:
    """One :class:`Event` per turn of ``conversation``: its index, time, session and ``dia_id``.

    ``recalled[i]`` (``dia_id`` s) is what the retriever named before turn ``i`` was stored;
    ``None``: no recalls. :func:`replay` checks the ids.
    """
    turns = conversation.turns
    if recalled is not None and (isinstance(recalled, str) or len(recalled) != len(turns)):
        raise ValueError(f"recalled must hold one sequence per turn ({len(turns)}), got {shown(recalled)}")
    return [
        Event(
            turn.index, turn.time, turn.session, turn.dia_id, () if recalled is None else tuple(recalled[i])
        )
        for i, turn in enumerate(turns)
    ]


# --- the policies -------------------------------------------------------------------------------


class _EngineHolder:
    """A :mod:`forgetting.decay` engine driven by an integer clock read off each event."""

    def __init__(self, engine: Engine, days: bool) -> None:
        self.engine = engine
        self.days = days

    def _clock(self, event: Event) -> int:
        return day_number(event.time) if self.days else event.turn

    def forget(self, event: Event) -> list[str]:
        return self.engine.step(self._clock(event))

    def recall(self, mem_id: str, event: Event) -> None:
        self.engine.recall(mem_id, self._clock(event))

    def store(self, event: Event) -> list[str]:
        self.engine.register(event.stored, "", self._clock(event))
        return []


@dataclass(frozen=True)
class Ebbinghaus:
    """The decay engine (:class:`~forgetting.decay.engines.EbbinghausEngine`) on a conversation.

    A memory is dropped at the first event where ``exp(-t / S) < theta``, ``t`` the time since
    it was stored or last recalled; a memory exactly at ``theta`` is kept. ``S`` starts at
    ``S0`` and each recall multiplies it by ``1 + ln(1 + n)`` (``n`` the touch count after the
    recall, :func:`~forgetting.decay.curves.reinforced_stability`); the engine itself runs, so
    its formula and constants are used, not re-derived (the decay-engine article,
    github.com/Emmimal/memory-decay-engine).

    Attributes
    ----------
    eviction_threshold : float, default 0.20
        ``theta`` in (0, 1).
    baseline_stability : float, default 8.0
        ``S0 > 0``, in the unit of ``clock``.
    clock : {"turns", "days"}, default "turns"
        ``t`` in turns, or in whole calendar days between the sessions' dates
        (:func:`day_number`; two sessions on one date are 0 days apart).
    """

    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD
    baseline_stability: float = DEFAULT_BASELINE_STABILITY
    clock: str = "turns"

    def __post_init__(self) -> None:
        raise_problems(
            [
                *decay_problems(self.eviction_threshold, self.baseline_stability),
                choice_problem("clock", self.clock, DECAY_CLOCKS),
            ]
        )

    @property
    def label(self) -> str:
        """E.g. ``Ebbinghaus decay on turns (θ = 0.20, S₀ = 8)``."""
        return f"Ebbinghaus decay on {self.clock} (θ = {self.eviction_threshold:.2f}, S₀ = {self.baseline_stability:g})"

    def start(self) -> Holder:
        """The engine, empty."""
        engine = EbbinghausEngine(
            eviction_threshold=float(self.eviction_threshold),
            baseline_stability=float(self.baseline_stability),
        )
        return _EngineHolder(engine, days=self.clock == "days")


@dataclass(frozen=True)
class Window:
    """The recency window (:class:`~forgetting.decay.engines.RecencyWindow`) on turns.

    A memory is dropped at the first event ``i`` with ``i - last > W``, ``last`` the turn it
    was stored or last recalled: it is held for the ``W`` turns after its last touch.

    Attributes
    ----------
    window_size : int, default 15
        ``W >= 1``, in turns.
    """

    window_size: int = DEFAULT_WINDOW_SIZE

    def __post_init__(self) -> None:
        raise_problems([int_problem("window_size", self.window_size, minimum=1)])

    @property
    def label(self) -> str:
        """E.g. ``Recency window (W = 15)``."""
        return f"Recency window (W = {self.window_size})"

    def start(self) -> Holder:
        """The window, empty."""
        return _EngineHolder(RecencyWindow(window_size=self.window_size), days=False)


class _Nothing:
    def forget(self, event: Event) -> list[str]:
        return []

    def recall(self, mem_id: str, event: Event) -> None:
        return None

    def store(self, event: Event) -> list[str]:
        return []


@dataclass(frozen=True)
class KeepAll:
    """Keep every memory: the bound every other policy is measured against."""

    @property
    def label(self) -> str:
        """``Keep everything``."""
        return "Keep everything"

    def start(self) -> Holder:
        """A state that never drops anything."""
        return _Nothing()
