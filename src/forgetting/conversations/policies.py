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
   store is full: the incoming memory is always stored. An event may store several memories
   (``stored`` a list of ids, stored in its order) or none (``[]``).

A memory dropped in step 1 or 3 of event ``i`` is recorded as dropped at turn ``i``: it is not
held after event ``i`` (and, for a time rule, was not there to be recalled at ``i``).

:class:`ReplayOrder` says when step 1 comes. ``"forget-first"`` (the default) is the order
above. ``"forget-last"`` runs steps 2 and 3 and then step 1: a turn's recalls and stores come
before the rule forgets at the turn's end, so a memory recalled on the turn it falls due is
kept. That is the decay-engine article's order (its driver registers, recalls, then steps the
engine), and the decay chapters replay its sessions in it.

:func:`replay` drives a policy (anything with ``start()`` and ``label``, :class:`Policy`) over
the events and returns a :class:`Replay`. Turns are ints; real time is the session's
``datetime``; every rule says which unit it reads. Randomness comes from
``numpy.random.default_rng(seed)`` of a seed the policy holds, in event order, as many draws
at each event as the events alone fix (never what was dropped), so a replay of the first ``n``
events is exactly the start of a longer one.
Capacity rules (LRU, FIFO, LFU, random eviction) are in :mod:`.capacity`, the rules of
MemoryBank and YourMemory in :mod:`.field_rules`.

Memory ids are any hashable value but a ``bool`` or a value not equal to itself (NaN), the rule
of :class:`~forgetting.worth.estimator.MemoryWorth`; numpy scalars are read as the Python
values they equal. A policy's parameters are keyword-only; a closed set of settings is an
``enum.StrEnum`` (:class:`DecayClock`), given as the member or its string.

Saving
------
Every policy of this package writes its parameters with ``to_dict()`` and reads them back with
``from_dict()``; the state its ``start()`` returns writes itself with ``to_dict()`` and
``policy.resume(data)`` reads it back. :class:`ReplayRun` is a replay that can stop after any
event, be saved (``to_dict()``, JSON-safe), restored (:meth:`ReplayRun.from_dict`) and fed the
rest of the events: it ends exactly where the uninterrupted replay ends (same drops, same
turns, same random draws). Each dict is ``{"format": "forgetting.<Name>", "version": 1, ...}``;
only ``str`` and ``int`` ids can be saved (JSON reads nothing else back as the same id).
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from itertools import islice
from typing import Any, NamedTuple, Protocol, Self, cast

import numpy as np

from .._validate import int_problem, is_hashable, raise_problems, shown
from ..decay.curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    decay_problems,
)
from ..decay.engines import EbbinghausEngine, RecencyWindow
from ..worth.estimator import is_mergeable_id, plain_id
from .records import Conversation

__all__ = [
    "DECAY_CLOCKS",
    "FORMAT_VERSION",
    "CheckedEvents",
    "DecayClock",
    "REPLAY_ORDERS",
    "ReplayOrder",
    "Ebbinghaus",
    "Event",
    "Holder",
    "KeepAll",
    "Policy",
    "Replay",
    "ReplayRun",
    "SavableHolder",
    "SavablePolicy",
    "SavingPolicy",
    "Window",
    "check_events",
    "choice_problem",
    "record_drops",
    "conversation_events",
    "day_number",
    "policy_from_dict",
    "policy_to_dict",
    "read_id",
    "read_int",
    "read_row",
    "read_event",
    "read_saved",
    "read_time",
    "replay",
    "replay_state",
    "resume_state",
    "saved",
    "saved_event",
    "saved_id",
    "saved_time",
]


class DecayClock(enum.StrEnum):
    """The clock ``t`` of :class:`Ebbinghaus` counts: turns, or whole calendar days of real time."""

    TURNS = "turns"
    """The turn counter (``event.turn``)."""
    DAYS = "days"
    """Whole calendar days between the sessions' dates (:func:`day_number`)."""


#: The clocks of :class:`Ebbinghaus`, as strings: the values of :class:`DecayClock`.
DECAY_CLOCKS = tuple(clock.value for clock in DecayClock)


class ReplayOrder(enum.StrEnum):
    """When :func:`replay` lets the policy forget within an event (module docstring)."""

    FORGET_FIRST = "forget-first"
    """Forget, then recall, then store: a memory due at an event is gone before its recalls."""
    FORGET_LAST = "forget-last"
    """Recall, then store, then forget: the article's order, a turn's step after its recalls."""


#: The orders of :func:`replay`, as strings: the values of :class:`ReplayOrder`.
REPLAY_ORDERS = tuple(order.value for order in ReplayOrder)

#: The ``"version"`` every ``to_dict`` of the conversation policies writes; ``from_dict``,
#: ``resume`` and :meth:`ReplayRun.from_dict` read this version only.
FORMAT_VERSION = 1


class Event(NamedTuple):
    """One turn of the stream: its index, real time and session, the memory stored, the recalls.

    ``stored`` is one memory id, or a list of ids (the memories the turn stores, in order; ``[]``
    for none): a list is never an id, as it is not hashable. ``recalled`` are ids of memories
    stored at earlier events, without repeats, named by a retriever before ``stored`` is stored
    (order is kept but never decides anything).

    An ``Event`` holds what it was given (a record: it converts nothing). :func:`check_events`,
    :func:`replay` and :meth:`ReplayRun.feed` read it as users write it and pass the policies
    the event converted: ``turn`` and ``session`` any integer (``operator.index``: numpy ints
    too; ``bool``, float and str refused), as ``int``; ``stored`` and ``recalled`` ids any
    hashable value but a ``bool`` or a value not equal to itself, numpy scalars as the Python
    values they equal (``stored`` a list of them too); ``recalled`` a tuple, a list (JSON's) or a
    1-d array, as a tuple.
    """

    turn: int
    time: datetime
    session: int
    # a memory id or a list of them: typed Any, as a holder's ``store`` always gets one id (the
    # driver passes each id of a list as an event of its own), which it may index with
    stored: Any
    recalled: Sequence[Hashable] = ()


class Holder(Protocol):
    """A policy's running state over one replay (what :func:`replay` calls, in event order)."""

    def forget(self, event: Event) -> list[Hashable]:
        """Step 1: the held ids the rule drops at ``event``."""

    def recall(self, mem_id: Hashable, event: Event) -> None:
        """Step 2: ``mem_id``, held, is recalled."""

    def store(self, event: Event) -> list[Hashable]:
        """Step 3: store ``event.stored`` (always one id: the driver calls ``store`` once for each
        id of an event that stores several); return the held ids evicted to make room."""


class SavableHolder(Holder, Protocol):
    """A :class:`Holder` that writes itself as JSON-safe data (read back by ``policy.resume``)."""

    def to_dict(self) -> dict[str, Any]:
        """``{"format": "forgetting.<Policy>.state", "version": 1, "policy": ..., ...}``."""


class Policy(Protocol):
    """A forgetting policy: its parameters (checked when it is made) and a fresh state."""

    @property
    def label(self) -> str:
        """Name for tables and legends."""

    def start(self) -> Holder:
        """A fresh state, nothing stored."""


class SavablePolicy(Policy, Protocol):
    """A :class:`Policy` whose parameters and states can be saved: every policy of this package."""

    def to_dict(self) -> dict[str, Any]:
        """``{"format": "forgetting.<Policy>", "version": 1, <each parameter>}``."""

    def resume(self, data: Any) -> SavableHolder:
        """The state ``holder.to_dict()`` wrote (after ``json.loads`` too), ready to go on."""


@dataclass(frozen=True)
class Replay:
    """What :func:`replay` returns.

    Attributes
    ----------
    policy : str
        The policy's label.
    stored : tuple of ids
        Every memory, in store order.
    dropped : Mapping of id to int
        Each dropped memory's drop turn (absent: never dropped).
    held : tuple of ids
        The memories held after the last event, in store order.
    held_counts : tuple of int
        How many memories were held after each event.
    missed_recalls : int
        Recalls that named a memory already dropped.
    """

    policy: str
    stored: tuple[Hashable, ...]
    dropped: Mapping[Hashable, int]
    held: tuple[Hashable, ...]
    held_counts: tuple[int, ...]
    missed_recalls: int

    def dropped_at(self, mem_id: Hashable) -> int | None:
        """The turn ``mem_id`` was dropped, ``None`` if it is held (``KeyError``: never stored)."""
        if mem_id not in self.dropped and mem_id not in self.held:
            raise KeyError(f"mem_id {mem_id!r} was never stored")
        return self.dropped.get(mem_id)


def choice_problem(name: str, value: object, allowed: Sequence[str]) -> str | None:
    """``None`` if ``value`` is one of the strings ``allowed`` (an enum member of one of them
    too), else the sentence saying why not, the allowed values quoted as strings."""
    if isinstance(value, str) and value in allowed:
        return None
    return f"{name} must be one of {', '.join(repr(str(a)) for a in allowed)}, got {shown(value)}"


def day_number(time: datetime) -> int:
    """Whole calendar days: ``time.date().toordinal()`` (the difference of two is ``t`` in days)."""
    return time.date().toordinal()


# --- reading events -------------------------------------------------------------------------


def _as_int(value: object) -> int | None:
    """``operator.index(value)`` (an int, numpy ints too), ``None`` for a bool or a non-integer."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


def _int_like_problem(name: str, value: object, number: int | None, minimum: int) -> str | None:
    if number is not None and number >= minimum:
        return None
    return f"{name} must be an int >= {minimum}, got {shown(value)}"


def _is_id(mem_id: object) -> bool:
    """A memory id: hashable, not a ``bool``, equal to itself (a plain value: :func:`plain_id` first)."""
    if type(mem_id) is str or type(mem_id) is int:  # the common ids, at once
        return True
    return is_hashable(mem_id) and not is_mergeable_id(mem_id)


def _is_plain(mem_id: object) -> bool:
    return type(mem_id) is str or type(mem_id) is int


def _read_events(
    events: Sequence[object], previous: Event | None = None, known: set[Hashable] | None = None
) -> tuple[list[Event], list[str]]:
    """The events converted as :class:`Event` says, and every problem until the first bad event.

    ``previous`` and ``known`` (the ids stored so far) are what came before the first event,
    for a stream that continues another (:meth:`ReplayRun.feed`).
    """
    problems: list[str] = []
    stored_ids: set[Hashable] = set() if known is None else set(known)
    out: list[Event] = []
    for i, event in enumerate(events):
        where = f"events[{i}]"
        if not isinstance(event, Event):
            problems.append(f"{where} must be an Event, got {shown(event)}")
            break
        turn, session = _as_int(event.turn), _as_int(event.session)
        found = [
            _int_like_problem(
                f"{where}.turn", event.turn, turn, 0 if previous is None else previous.turn + 1
            ),
            _int_like_problem(
                f"{where}.session", event.session, session, 1 if previous is None else previous.session
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
        given = event.stored
        several = isinstance(given, list)
        stored: Hashable | list[Hashable]
        if not isinstance(given, list):
            stored = plain_id(given)
        elif all(map(_is_plain, given)):
            stored = [*given]  # the common ids: a copy, nothing to convert
        else:
            stored = list(map(plain_id, given))
        new: list[Hashable] = stored if isinstance(stored, list) else [stored]
        if not all(map(_is_id, new)):
            found.append(
                f"{where}.stored must be a memory id (hashable, not a bool, equal to itself) or a "
                f"list of them, got {shown(event.stored)}"
            )
        elif not several and stored in stored_ids:
            found.append(f"{where}.stored must be an id not stored before, got {shown(event.stored)}")
        elif several and (
            repeated := [mem_id for mem_id in new if mem_id in stored_ids]
            or (new if len(set(new)) != len(new) else [])
        ):
            found.append(f"{where}.stored must list ids not stored before, each once, got {shown(repeated)}")
        recalled = event.recalled
        listed = isinstance(recalled, (tuple, list)) or (
            isinstance(recalled, np.ndarray) and recalled.ndim == 1
        )
        ids: tuple[Hashable, ...] = ()
        if type(recalled) is tuple and all(map(_is_plain, recalled)):
            ids = recalled  # the common recalls: nothing to convert
        elif listed:
            ids = tuple(map(plain_id, recalled))
        if not listed:
            found.append(
                f"{where}.recalled must be a tuple or list of ids without repeats, got {shown(recalled)}"
            )
        elif bad := [mem_id for mem_id in ids if not _is_id(mem_id)]:
            found.append(
                f"{where}.recalled must hold memory ids (hashable, not a bool, equal to itself), got {shown(bad)}"
            )
        elif len(set(ids)) != len(ids):
            found.append(
                f"{where}.recalled must be a tuple or list of ids without repeats, got {shown(recalled)}"
            )
        elif unknown := [mem_id for mem_id in ids if mem_id not in stored_ids]:
            found.append(f"{where}.recalled must name memories stored before, got {shown(unknown)}")
        problems += [p for p in found if p]
        if problems or turn is None or session is None:
            break  # the next event's checks read this one's values
        stored_ids.update(new)
        if not (  # anything converted: a new event (else the one given, as it is)
            type(recalled) is tuple
            and turn is event.turn
            and session is event.session
            and stored is event.stored  # a list is always copied: the checked one is the run's
            and all(map(operator.is_, recalled, ids))
        ):
            event = Event(turn, time, session, stored, ids)
        out.append(event)
        previous = event
    return out, problems


_event = tuple.__new__  # ``Event(*fields)`` without the keyword handling, for the driver's loop


class CheckedEvents(tuple[Event, ...]):
    """Events :func:`check_events` accepted, converted: :func:`replay` does not check them again.

    A tuple of immutable :class:`Event` s, so what was checked cannot change afterwards (an
    event's list of stored ids is the checker's own copy: nothing else holds it).
    """

    __slots__ = ()


def _events_problem(events: object) -> str | None:
    if isinstance(events, Iterable) and not isinstance(events, (str, bytes)):
        return None
    return f"events must be an iterable of Events, got {shown(events)}"


def _policy_problem(policy: object) -> str | None:
    if isinstance(getattr(policy, "label", None), str) and callable(getattr(policy, "start", None)):
        return None
    return f"policy must be a policy (a str label and start()), got {shown(policy)}"


def check_events(events: Iterable[Event]) -> CheckedEvents:
    """Check ``events`` once (as :func:`replay` does) for replaying many policies over them.

    Returns them converted as :class:`Event` says (ints, plain ids, ``recalled`` a tuple).
    Raises ``ValueError`` with every problem :func:`replay` would report.
    """
    raise_problems([_events_problem(events)])
    stream, problems = _read_events(list(events))
    raise_problems(problems)
    return CheckedEvents(stream)


def record_drops(
    policy: Policy,
    held: dict[Hashable, None],
    dropped: dict[Hashable, int],
    ids: list[Hashable],
    turn: int,
) -> None:
    """Move ``ids`` from ``held`` to ``dropped`` at ``turn``; ``ValueError`` (nothing moved) if
    ``policy`` dropped a memory it does not hold."""
    if stray := [mem_id for mem_id in ids if mem_id not in held]:
        raise ValueError(f"policy {policy.label!r} dropped memories it does not hold at turn {turn}: {stray}")
    for mem_id in ids:
        del held[mem_id]
        dropped[mem_id] = turn


def replay(
    policy: Policy,
    events: Iterable[Event],
    k: int | None = None,
    *,
    order: ReplayOrder | str = ReplayOrder.FORGET_FIRST,
) -> Replay:
    """Replay ``events`` through a fresh state of ``policy`` (the module docstring's three steps,
    in ``order``: :class:`ReplayOrder` or its value).

    ``k=None``: every held id of ``event.recalled`` is recalled. ``k`` an int: ``recalled`` is a
    ranking (best first, e.g. every earlier memory by similarity) and the first ``k`` ids of it
    that are still held are recalled, as a top-``k`` retriever over what the store holds.
    ``missed_recalls`` counts, in both cases, the ids a retriever over the whole history would
    have recalled (all of ``recalled``, or its first ``k``) that were already dropped.

    Raises
    ------
    ValueError
        ``k`` not ``None`` or an int ``>= 1``; ``order`` not one of :data:`REPLAY_ORDERS`; an
        event that is not an :class:`Event`, turns that do not increase (integers ``>= 0``),
        sessions that decrease, a time before the previous one, a stored id (or an id of a
        stored list) that is not a memory id or is repeated, recalled ids that
        repeat or name no earlier memory; or a policy that drops or evicts a memory it does not
        hold. Every event is checked before the first one runs. Also ``policy`` without a str
        ``label`` and a ``start()``, ``events`` not an iterable, and times that mix naive and
        aware datetimes (which cannot be compared), each naming the argument.
    """
    return replay_state(policy, events, k, order=order)[0]


def replay_state(
    policy: Policy,
    events: Iterable[Event],
    k: int | None = None,
    *,
    order: ReplayOrder | str = ReplayOrder.FORGET_FIRST,
) -> tuple[Replay, Holder]:
    """:func:`replay`, and the policy's state after the last event (for a caller that reads it)."""
    raise_problems([_policy_problem(policy), _events_problem(events)])
    stream: Sequence[Event]
    problems: list[str] = []
    if isinstance(events, CheckedEvents):
        stream = events
    else:
        stream, problems = _read_events(list(events))
    raise_problems(
        [
            None if k is None else int_problem("k", k, minimum=1),
            choice_problem("order", order, REPLAY_ORDERS),
            *problems,
        ]
    )
    run = ReplayRun._fresh(policy, k, ReplayOrder(order))
    run._run(stream)
    return run.result(), run.state


def conversation_events(
    conversation: Conversation, recalled: Sequence[Sequence[str]] | None = None
) -> list[Event]:
    """One :class:`Event` per turn of ``conversation``: its index, time, session and ``dia_id``.

    ``recalled[i]`` (``dia_id`` s) is what the retriever named before turn ``i`` was stored;
    ``None``: no recalls. :func:`replay` checks the ids.
    """
    rows = [(turn.index, turn.time, turn.session, turn.dia_id) for turn in conversation.turns]
    return stream_events(rows, recalled, "turn")


def stream_events(
    rows: Sequence[tuple[int, datetime, int, Hashable]],
    recalled: Sequence[Sequence[Hashable]] | None,
    unit: str,
) -> list[Event]:
    """One :class:`Event` per ``(turn, time, session, stored)`` row, ``recalled[i]`` its recalls
    (``None``: none); ``ValueError`` naming ``unit`` when ``recalled`` is not one sequence per row.
    What a benchmark's loader shares (:func:`conversation_events`, LongMemEval's ``question_events``)."""
    if recalled is not None and (isinstance(recalled, str) or len(recalled) != len(rows)):
        raise ValueError(f"recalled must hold one sequence per {unit} ({len(rows)}), got {shown(recalled)}")
    return [Event(*row, () if recalled is None else tuple(recalled[i])) for i, row in enumerate(rows)]


# --- saving: the pieces every to_dict and from_dict shares ------------------------------------


def saved(kind: str, **entries: Any) -> dict[str, Any]:
    """``{"format": "forgetting.<kind>", "version": FORMAT_VERSION, **entries}``."""
    return {"format": f"forgetting.{kind}", "version": FORMAT_VERSION, **entries}


def read_saved(data: Any, kind: str, entries: Sequence[str], optional: Sequence[str] = ()) -> dict[str, Any]:
    """The entries of ``data`` if it is what :func:`saved` wrote for ``kind`` with exactly these
    ``entries`` (those of ``optional`` may be absent, and are then absent from the result), else
    ``ValueError`` saying what it got and what it reads."""
    name = f"forgetting.{kind}"
    if not isinstance(data, Mapping):
        raise ValueError(f"data must be a dict with format {name!r}, got {shown(data)}")
    if data.get("format") != name:
        raise ValueError(f"data must be a dict with format {name!r}, got format {shown(data.get('format'))}")
    version = data.get("version")
    if type(version) is not int or version != FORMAT_VERSION:
        raise ValueError(
            f"data of format {name!r} has version {shown(version)}; this library reads version {FORMAT_VERSION}"
        )
    expected = {"format", "version", *entries}
    if set(data) != expected and not (set(data) <= expected and expected - set(data) <= set(optional)):
        missing, unknown = (
            sorted(expected - set(data) - set(optional)),
            sorted(map(str, set(data) - expected)),
        )
        raise ValueError(
            f"data of format {name!r} is damaged: missing entries {missing}, unknown entries {unknown}"
        )
    return {key: data[key] for key in entries if key in data}


def saved_id(mem_id: Hashable) -> str | int:
    """``mem_id`` if it is a ``str`` or an ``int``, else ``ValueError`` naming it."""
    if type(mem_id) is str or type(mem_id) is int:
        return mem_id
    raise ValueError(
        f"to_dict writes str and int ids only (JSON reads nothing else back as the same id), "
        f"got the id {shown(mem_id)} ({type(mem_id).__name__})"
    )


def read_id(value: Any, name: str = "memory id") -> str | int:
    """``value`` if it is a ``str`` or an ``int`` (what :func:`saved_id` writes), else ``ValueError``."""
    if type(value) is str or type(value) is int:
        return value
    raise ValueError(f"{name} must be a str or an int, got {shown(value)}")


def read_row(value: Any, size: int, name: str) -> list[Any]:
    """``value`` if it is a list of ``size`` entries (a row of a saved table), else ``ValueError``."""
    if isinstance(value, list) and len(value) == size:
        return value
    raise ValueError(f"{name} must be a list of {size} entries, got {shown(value)}")


def read_int(value: Any, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` if it is an ``int`` in ``[minimum, maximum]``, else ``ValueError`` naming ``name``."""
    raise_problems([int_problem(name, value, minimum, maximum)])
    return int(value)


def saved_time(time: datetime) -> str:
    """``time.isoformat()``: naive, or aware with a fixed offset (a ``datetime.timezone``).

    Another ``tzinfo`` (a ``zoneinfo`` zone) is a ``ValueError``: read back it would be a fixed
    offset, and two datetimes of one zone object compare by wall clock, of two by instant.
    """
    if time.tzinfo is not None and not isinstance(time.tzinfo, timezone):
        raise ValueError(
            f"to_dict writes naive times and times of a fixed offset (datetime.timezone) only, "
            f"got {shown(time)}"
        )
    return time.isoformat()


def read_time(value: Any, name: str) -> datetime:
    """The datetime :func:`saved_time` wrote, else ``ValueError`` naming ``name``."""
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a datetime in ISO format, got {shown(value)}") from None


def saved_event(event: Event) -> dict[str, Any]:
    """``{"turn", "time", "session", "stored"}`` of ``event`` (its recalls are not kept; a list of
    stored ids as a list)."""
    stored = event.stored
    return {
        "turn": event.turn,
        "time": saved_time(event.time),
        "session": event.session,
        "stored": [saved_id(mem_id) for mem_id in stored] if type(stored) is list else saved_id(stored),
    }


def read_event(value: Any, name: str) -> Event:
    """The event :func:`saved_event` wrote (no recalls), else ``ValueError`` naming ``name``."""
    if not isinstance(value, Mapping) or set(value) != {"turn", "time", "session", "stored"}:
        raise ValueError(f"{name} must be an event (turn, time, session, stored), got {shown(value)}")
    stored = value["stored"]
    return Event(
        read_int(value["turn"], f"{name}.turn", minimum=0),
        read_time(value["time"], f"{name}.time"),
        read_int(value["session"], f"{name}.session", minimum=1),
        [read_id(mem_id, f"{name}.stored id") for mem_id in stored]
        if type(stored) is list
        else read_id(stored, f"{name}.stored"),
    )


def _plain_value(value: Any) -> Any:
    """A parameter as JSON writes it: an enum member's value, a numpy scalar's Python value."""
    if isinstance(value, enum.Enum):
        return value.value
    return value.item() if isinstance(value, np.generic) else value


def _later(cls: type[Any]) -> tuple[str, ...]:
    """The fields ``cls`` gained after version 1 of its format was first written (its
    ``LATER_FIELDS``): saved only when they differ from their default, read as the default when
    absent, so every dict saved before they existed reads back as the policy it was."""
    later: tuple[str, ...] = getattr(cls, "LATER_FIELDS", ())
    return later


def policy_to_dict(policy: Any) -> dict[str, Any]:
    """``{"format": "forgetting.<class>", "version": 1, <each field of the dataclass>}`` (a field
    of :func:`_later` only when it is not at its default)."""
    later = _later(type(policy))
    return saved(
        type(policy).__name__,
        **{
            f.name: _plain_value(getattr(policy, f.name))
            for f in fields(policy)
            if f.name not in later or getattr(policy, f.name) != f.default
        },
    )


def policy_from_dict(cls: type[Any], data: Any) -> Any:
    """The policy of class ``cls`` :func:`policy_to_dict` wrote; ``ValueError`` otherwise."""
    return cls(**read_saved(data, cls.__name__, [f.name for f in fields(cls)], optional=_later(cls)))


def resume_state(policy: Any, data: Any, holder: Any) -> Any:
    """``holder`` (a fresh ``policy.start()``) filled from ``data``, the ``holder.to_dict()`` of a
    state of ``policy``: ``holder.SAVED`` names its entries, ``holder.restore`` reads them.

    ``ValueError`` for another format or version, the state of another policy, or damaged data.
    """
    kind = f"{type(policy).__name__}.state"
    entries = read_saved(data, kind, ("policy", *holder.SAVED))
    if entries["policy"] != policy.to_dict():
        raise ValueError(
            f"data is a state of the policy {shown(entries['policy'], 240)}, not of {policy.label!r}"
        )
    try:
        holder.restore(entries)
    except (KeyError, TypeError, IndexError, AttributeError, OverflowError) as error:
        raise ValueError(
            f"data of format 'forgetting.{kind}' is damaged ({type(error).__name__}: {error})"
        ) from None
    return holder


class SavingPolicy:
    """Saving for a policy that is a frozen dataclass of its parameters: ``to_dict`` writes them,
    ``from_dict`` reads them back, ``resume`` restores a running state its holder saved.

    ``policy.to_dict()`` is ``{"format": "forgetting.<class>", "version": 1, <each parameter>}``
    (enums as their strings); ``type(policy).from_dict(policy.to_dict()) == policy``. For a state
    ``holder = policy.start()`` fed some events, ``policy.resume(holder.to_dict())`` is a holder
    that the rest of the events leave exactly where they leave ``holder``.
    """

    def to_dict(self) -> dict[str, Any]:
        """``{"format": "forgetting.<class>", "version": 1, <each parameter>}``, JSON-safe."""
        return policy_to_dict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """The policy :meth:`to_dict` wrote; ``ValueError`` for another format or version, other
        entries, or a parameter the constructor refuses."""
        policy: Self = policy_from_dict(cls, data)
        return policy

    def resume(self, data: Any) -> SavableHolder:
        """The running state whose ``to_dict()`` is ``data``, as ``start()`` and the same events
        made it (``ValueError`` for a state saved by another policy, or damaged)."""
        holder: SavableHolder = resume_state(self, data, cast(Policy, self).start())
        return holder


# --- a replay under way ---------------------------------------------------------------------


class ReplayRun:
    """A replay that can stop after any event and go on later: ``feed`` more events, ``result()``.

    Invariant: ``ReplayRun(policy, k, order=order)`` fed ``events[:cut]``, saved (:meth:`to_dict`,
    JSON-safe), restored (:meth:`from_dict`) and fed ``events[cut:]`` ends with the :meth:`result`
    of ``replay(policy, events, k, order=order)`` and the state of that replay (the same drops at the same
    turns, the same random draws): it is one replay.

    ``feed`` checks its events as the continuation of every event fed before (turns go on
    increasing, ``recalled`` may name memories stored before the cut) and refuses a bad event
    before any event runs. A policy's own error during ``feed`` leaves the run unusable.

    >>> from datetime import datetime
    >>> events = [Event(t, datetime(2024, 1, 1), 1, f"m{t}") for t in range(30)]
    >>> first = ReplayRun(Window(window_size=5)).feed(events[:12]).to_dict()
    >>> ReplayRun.from_dict(first, Window(window_size=5)).feed(events[12:]).result().held
    ('m24', 'm25', 'm26', 'm27', 'm28', 'm29')
    """

    def __init__(
        self, policy: Policy, k: int | None = None, *, order: ReplayOrder | str = ReplayOrder.FORGET_FIRST
    ) -> None:
        """A run of a fresh state of ``policy`` (``k`` and ``order`` as :func:`replay`'s), no
        event fed yet."""
        raise_problems(
            [
                _policy_problem(policy),
                None if k is None else int_problem("k", k, minimum=1),
                choice_problem("order", order, REPLAY_ORDERS),
            ]
        )
        self._begin(policy, k, ReplayOrder(order), policy.start())

    @classmethod
    def _fresh(
        cls, policy: Policy, k: int | None, order: ReplayOrder = ReplayOrder.FORGET_FIRST
    ) -> ReplayRun:
        """A run of checked arguments."""
        run = cls.__new__(cls)
        run._begin(policy, k, order, policy.start())
        return run

    def _begin(self, policy: Policy, k: int | None, order: ReplayOrder, state: Holder) -> None:
        self.policy = policy
        self.k = k
        self.order = order
        self.state = state
        self.held: dict[Hashable, None] = {}
        self.dropped: dict[Hashable, int] = {}
        self.stored: list[Hashable] = []
        self.counts: list[int] = []
        self.missed = 0
        self.last: Event | None = None
        self._broken = False

    def _usable(self) -> None:
        if self._broken:
            raise ValueError(
                f"this run of policy {self.policy.label!r} stopped at an error of the policy: start another"
            )

    def feed(self, events: Iterable[Event]) -> Self:
        """Replay ``events`` after those fed before (checked first as their continuation);
        return the run. ``ValueError`` as :func:`replay`'s, nothing run."""
        self._usable()
        raise_problems([_events_problem(events)])
        if self.last is None and isinstance(events, CheckedEvents):
            stream: Sequence[Event] = events
        else:
            stream, problems = _read_events(list(events), self.last, set(self.stored))
            raise_problems(problems)
        self._run(stream)
        return self

    def _run(self, stream: Sequence[Event]) -> None:
        """The three steps of each event (module docstring), in the run's order, on checked events."""
        self._broken = True
        policy, state, k = self.policy, self.state, self.k
        held, dropped, counts, stored = self.held, self.dropped, self.counts, self.stored
        missed = self.missed
        is_held = held.__contains__
        forget_last = self.order is ReplayOrder.FORGET_LAST
        for event in stream:
            if not forget_last and (forgotten := state.forget(event)):
                record_drops(policy, held, dropped, forgotten, event.turn)
            ranking = event.recalled
            head = ranking if k is None else ranking[:k]
            missed += len(head) - sum(map(is_held, head))
            for mem_id in islice(filter(is_held, ranking), k):  # a recall drops nothing: ``held`` stays
                state.recall(mem_id, event)
            new = event.stored
            if type(new) is not list:  # one memory: the common event, as it is
                if evicted := state.store(event):
                    record_drops(policy, held, dropped, evicted, event.turn)
                held[new] = None
                stored.append(new)
            else:
                turn, time, session = event.turn, event.time, event.session
                for mem_id in new:  # each its own store, in order
                    if evicted := state.store(_event(Event, (turn, time, session, mem_id, ranking))):
                        record_drops(policy, held, dropped, evicted, event.turn)
                    held[mem_id] = None
                    stored.append(mem_id)
            if forget_last and (forgotten := state.forget(event)):
                record_drops(policy, held, dropped, forgotten, event.turn)
            counts.append(len(held))
        self.missed = missed
        if stream:
            self.last = stream[-1]
        self._broken = False

    def result(self) -> Replay:
        """The :class:`Replay` of every event fed so far."""
        self._usable()
        return Replay(
            self.policy.label,
            tuple(self.stored),
            dict(self.dropped),
            tuple(self.held),
            tuple(self.counts),
            self.missed,
        )

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON-safe data: ``{"format": "forgetting.ReplayRun", "version": 1, "k",
        "state": the policy state's to_dict, "stored": [id, ...] (store order), "dropped": [[id,
        turn], ...] (drop order), "counts": the held count after each event, "missed": n, "last":
        the last event's {turn, time, session, stored} or None}``, and ``"order"`` when it is not
        ``"forget-first"`` (a run saved before the order existed reads back as forget-first).

        ``ValueError`` for a state that cannot be saved (no ``to_dict``), an id that is neither a
        ``str`` nor an ``int`` (naming it), or a time of a zone that is not a fixed offset.
        """
        self._usable()
        to_dict = getattr(self.state, "to_dict", None)
        if not callable(to_dict):
            raise ValueError(
                f"the state of policy {self.policy.label!r} cannot be saved (it has no to_dict())"
            )
        return saved(
            "ReplayRun",
            k=self.k,
            state=to_dict(),
            stored=[saved_id(mem_id) for mem_id in self.stored],
            dropped=[[saved_id(mem_id), turn] for mem_id, turn in self.dropped.items()],
            counts=list(self.counts),
            missed=self.missed,
            last=None if self.last is None else saved_event(self.last),
            **({} if self.order is ReplayOrder.FORGET_FIRST else {"order": self.order.value}),
        )

    @classmethod
    def from_dict(cls, data: Any, policy: SavablePolicy) -> ReplayRun:
        """The run :meth:`to_dict` wrote (after ``json.loads`` too), of ``policy`` (the policy the
        data was saved with; e.g. ``Capacity.from_dict(data["state"]["policy"])``).

        ``ValueError`` for another format or version, the data of another policy, a policy that
        cannot resume a state, or damaged data.
        """
        entries = read_saved(
            data,
            "ReplayRun",
            ("k", "state", "stored", "dropped", "counts", "missed", "last", "order"),
            optional=("order",),
        )
        k = entries["k"]
        order = entries.get("order", ReplayOrder.FORGET_FIRST.value)
        raise_problems(
            [
                _policy_problem(policy)
                or (
                    None
                    if callable(getattr(policy, "resume", None))
                    else f"policy must be a policy that resumes a saved state (resume()), got {shown(policy)}"
                ),
                None if k is None else int_problem("k", k, minimum=1),
                choice_problem("order", order, REPLAY_ORDERS),
            ]
        )
        state = policy.resume(entries["state"])
        run = cls._fresh(policy, k, ReplayOrder(order))
        run.state = state
        try:
            run._restore(entries)
        except (KeyError, TypeError, IndexError, AttributeError) as error:
            raise ValueError(
                f"data of format 'forgetting.ReplayRun' is damaged ({type(error).__name__}: {error})"
            ) from None
        return run

    def _restore(self, entries: Mapping[str, Any]) -> None:
        """Fill the driver's record from ``entries`` (their format checked by the caller)."""
        stored: list[Hashable] = [read_id(mem_id, "stored id") for mem_id in entries["stored"]]
        if len(set(stored)) != len(stored):
            raise ValueError(f"stored must not repeat an id, got {shown(stored)}")
        counts = [read_int(count, "held count", minimum=0) for count in entries["counts"]]
        last = None if entries["last"] is None else read_event(entries["last"], "last")
        tail = [] if last is None else last.stored if type(last.stored) is list else [last.stored]
        if (last is None) != (not counts) or (tail and stored[-len(tail) :] != tail):
            raise ValueError(
                f"last must be the last event, whose stored ids end the stored ones, got {shown(entries['last'])}"
            )
        known = set(stored)
        dropped: dict[Hashable, int] = {}
        for row in entries["dropped"]:
            mem_id, turn = read_row(row, 2, "dropped entry")
            if read_id(mem_id, "dropped id") not in known or mem_id in dropped:
                raise ValueError(f"dropped must name stored ids once each, got {shown(mem_id)}")
            dropped[mem_id] = read_int(turn, "drop turn", minimum=0, maximum=last.turn if last else 0)
        held: dict[Hashable, None] = {mem_id: None for mem_id in stored if mem_id not in dropped}
        if (stored and not counts) or (counts and counts[-1] != len(held)):
            raise ValueError(
                f"counts must hold one count per event, the last the held ones, got {shown(counts)}"
            )
        self.stored, self.dropped, self.held, self.counts = stored, dropped, held, counts
        self.missed = read_int(entries["missed"], "missed", minimum=0)
        self.last = last


# --- the policies -------------------------------------------------------------------------------


class _EngineHolder:
    """A :mod:`forgetting.decay` engine driven by an integer clock read off each event; memories
    are filed in it under the digits of their store number (the engine takes str ids only)."""

    SAVED = ("clock", "items")

    def __init__(
        self, policy: Ebbinghaus | Window, engine: EbbinghausEngine | RecencyWindow, days: bool
    ) -> None:
        self.policy = policy
        self.engine = engine
        self.days = days
        self.keys: dict[Hashable, str] = {}  # held id -> engine key
        self.ids: dict[str, Hashable] = {}  # engine key -> held id
        self.stores = 0

    def _clock(self, event: Event) -> int:
        return day_number(event.time) if self.days else event.turn

    def forget(self, event: Event) -> list[Hashable]:
        evicted = self.engine.step(self._clock(event))
        if not evicted:
            return []
        ids, keys = self.ids, self.keys
        out = [ids.pop(key) for key in evicted]
        for mem_id in out:
            del keys[mem_id]
        return out

    def recall(self, mem_id: Hashable, event: Event) -> None:
        self.engine.recall(self.keys[mem_id], self._clock(event))

    def store(self, event: Event) -> list[Hashable]:
        key = str(self.stores)
        self.stores += 1
        self.keys[event.stored] = key
        self.ids[key] = event.stored
        self.engine.register(key, "", self._clock(event))
        return []

    def to_dict(self) -> dict[str, Any]:
        """``{..., "policy", "clock": the engine's last clock, "items": [[id, stored at, last
        touch, touches], ...] (the held memories, in store order)}``, clocks in the policy's unit."""
        engine = self.engine
        items = [engine.item(key) for key in engine.present_ids()]
        return saved(
            f"{type(self.policy).__name__}.state",
            policy=self.policy.to_dict(),
            clock=engine.last_turn,
            items=[
                [saved_id(self.ids[i.mem_id]), i.created_turn, i.last_touched, i.touch_count] for i in items
            ],
        )

    def restore(self, entries: Mapping[str, Any]) -> None:
        """Rebuild the engine by replaying each held memory's store and recalls (its stability is a
        function of its touches): stored at its turn, recalled ``touches - 2`` times then and once at
        its last touch, sorted by clock, stores first, in store order."""
        clock = read_int(entries["clock"], "clock", minimum=0)
        calls: list[tuple[int, int, int]] = []
        created_before = 0
        for position, item in enumerate(entries["items"]):
            mem_id, created, touched, touches = read_row(item, 4, "items entry")
            read_id(mem_id)
            good = all(type(v) is int for v in (created, touched, touches))
            if not (good and created_before <= created <= touched <= clock and touches >= 1):
                raise ValueError(f"items entry {shown(item)} is not a held memory")
            if touches == 1 and touched != created:
                raise ValueError(f"items entry {shown(item)} is not a held memory")
            if mem_id in self.keys:
                raise ValueError(f"items must not repeat an id, got {shown(mem_id)}")
            key = str(position)
            self.keys[mem_id], self.ids[key] = key, mem_id
            created_before = created
            calls.append((created, 0, position))
            calls += [(created, 1, position)] * max(touches - 2, 0)
            if touches >= 2:
                calls.append((touched, 1, position))
        self.stores = len(self.keys)
        engine = self.engine
        for turn, kind, position in sorted(calls):
            if kind == 0:
                engine.register(str(position), "", turn)
            else:
                engine.recall(str(position), turn)
        engine.recall("clock", clock)  # no memory's key (they are digits): moves the clock only


@dataclass(frozen=True, kw_only=True)
class Ebbinghaus(SavingPolicy):
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
    clock : DecayClock or its value, default "turns"
        ``t`` in turns, or in whole calendar days between the sessions' dates
        (:func:`day_number`; two sessions on one date are 0 days apart); read as the member.
    """

    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD
    baseline_stability: float = DEFAULT_BASELINE_STABILITY
    clock: DecayClock | str = DecayClock.TURNS

    def __post_init__(self) -> None:
        raise_problems(
            [
                *decay_problems(self.eviction_threshold, self.baseline_stability),
                choice_problem("clock", self.clock, DECAY_CLOCKS),
            ]
        )
        object.__setattr__(self, "clock", DecayClock(self.clock))

    @property
    def label(self) -> str:
        """E.g. ``Ebbinghaus decay on turns (θ = 0.20, S₀ = 8)``."""
        return f"Ebbinghaus decay on {self.clock} (θ = {self.eviction_threshold:.2f}, S₀ = {self.baseline_stability:g})"

    def start(self) -> _EngineHolder:
        """The engine, empty."""
        engine = EbbinghausEngine(
            eviction_threshold=float(self.eviction_threshold),
            baseline_stability=float(self.baseline_stability),
        )
        return _EngineHolder(self, engine, days=self.clock is DecayClock.DAYS)


@dataclass(frozen=True, kw_only=True)
class Window(SavingPolicy):
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

    def start(self) -> _EngineHolder:
        """The window, empty."""
        return _EngineHolder(self, RecencyWindow(window_size=self.window_size), days=False)


class _Nothing:
    """Never drops anything."""

    SAVED: tuple[str, ...] = ()

    def __init__(self, policy: KeepAll) -> None:
        self.policy = policy

    def forget(self, event: Event) -> list[Hashable]:
        return []

    def recall(self, mem_id: Hashable, event: Event) -> None:
        return None

    def store(self, event: Event) -> list[Hashable]:
        return []

    def to_dict(self) -> dict[str, Any]:
        """``{"format": "forgetting.KeepAll.state", "version": 1, "policy"}``: nothing else to save."""
        return saved(f"{type(self.policy).__name__}.state", policy=self.policy.to_dict())

    def restore(self, entries: Mapping[str, Any]) -> None:
        """Nothing to restore."""


@dataclass(frozen=True, kw_only=True)
class KeepAll(SavingPolicy):
    """Keep every memory: the bound every other policy is measured against."""

    @property
    def label(self) -> str:
        """``Keep everything``."""
        return "Keep everything"

    def start(self) -> _Nothing:
        """A state that never drops anything."""
        return _Nothing(self)
