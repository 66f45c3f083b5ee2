"""Replay a session through an engine, turn by turn, and keep a trace of what happened.

The article's sessions run through the library's one driver
(:func:`~forgetting.conversations.policies.replay`): each turn ``1..L`` is one
:class:`~forgetting.conversations.policies.Event` that stores the turn's registrations (a list of
ids, possibly empty) after its recalls, and the driver runs in the article's order
(``order="forget-last"``): the engine steps after the turn's recalls and registrations, so a
recall on an item's eviction turn still finds it. :func:`simulate` reads the :class:`Trace` off
the :class:`~forgetting.conversations.policies.Replay`. Whatever differs between two engines'
traces comes from their eviction rule alone.

The article registers a turn's foundational facts before its recalls and its noise after them;
one event stores them all after the recalls. The two orders are one replay because a fact is
registered at turn 1 and recalled only after it (:class:`~forgetting.studies.decay.sessions.SessionConfig`
refuses a uniform range from turn 1), so no turn both registers a fact and recalls one.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from ..._validate import raise_problems, shown
from ...conversations.policies import Event, Replay, ReplayOrder, replay
from ...decay.engines import Engine
from .sessions import Action, Session

__all__ = ["Trace", "simulate", "session_events"]

#: The time of every event: the article's sessions count turns and have no dates.
SESSION_TIME = datetime(2000, 1, 1)


@dataclass
class Trace:
    """Everything observed while replaying one session through one engine.

    Attributes
    ----------
    session_length : int
        ``L``: turns ``1..L`` were replayed.
    foundational_ids : list of str
        The facts the session must keep.
    created_turn, evicted_turn : dict
        Turn of registration / eviction per id (an id never evicted has no entry).
    working_set_sizes : list of int
        Items present after each turn's ``step``.
    recalls : list of (turn, id, found)
        Every recall in order, with whether the item was present to be recalled.
    foundational_present : list of int
        Foundational facts present after each turn's ``step``.
    """

    session_length: int
    foundational_ids: list[str]
    created_turn: dict[str, int] = field(default_factory=dict)
    evicted_turn: dict[str, int] = field(default_factory=dict)
    working_set_sizes: list[int] = field(default_factory=list)  # after each turn's step
    recalls: list[tuple[int, str, bool]] = field(default_factory=list)  # (turn, id, found?)
    foundational_present: list[int] = field(default_factory=list)  # count after each turn

    def is_present_after(self, mem_id: str, turn: int) -> bool:
        """Whether ``mem_id`` was in the working set at the end of ``turn``."""
        created = self.created_turn.get(mem_id)
        if created is None or turn < created:
            return False
        evicted = self.evicted_turn.get(mem_id)
        return evicted is None or turn < evicted

    def presence(self, mem_id: str) -> list[bool]:
        """Presence of ``mem_id`` at the end of every turn ``1..L``."""
        return [self.is_present_after(mem_id, turn) for turn in range(1, self.session_length + 1)]

    def presence_spans(self, mem_id: str) -> list[tuple[int, int]]:
        """Runs of presence as ``(first turn, number of turns)``, in turn order.

        The run-length encoding of :meth:`presence`: the spans are disjoint, separated by at
        least one absent turn, and their lengths add up to the turns ``mem_id`` was present.
        """
        spans: list[tuple[int, int]] = []
        start: int | None = None
        for turn, present in enumerate([*self.presence(mem_id), False], 1):
            if present and start is None:
                start = turn
            elif not present and start is not None:
                spans.append((start, turn - start))
                start = None
        return spans

    @property
    def items_created(self) -> int:
        """Items ever registered in the session (the denominator of the footprint reduction)."""
        return len(self.created_turn)


def session_events(session: Session) -> list[Event]:
    """One :class:`~forgetting.conversations.policies.Event` per turn ``1..L`` of ``session``:
    the turn's registrations as a list of stored ids, in session order, and its recalls."""
    length = session.config.session_length
    stored: list[list[str]] = [[] for _ in range(length + 1)]
    recalled: list[list[str]] = [[] for _ in range(length + 1)]
    for turn, action, mem_id, _ in session.events:
        (stored if action == Action.REGISTER else recalled)[turn].append(mem_id)
    return [
        Event(turn, SESSION_TIME, 1, stored[turn], tuple(recalled[turn])) for turn in range(1, length + 1)
    ]


class _Stepped:
    """The library's :class:`~forgetting.conversations.policies.Holder` over an engine on turns:
    ``forget`` steps it, ``recall`` and ``store`` touch and register the event's ids."""

    def __init__(self, engine: Engine, foundational: frozenset[str]) -> None:
        self.engine = engine
        self.foundational = foundational

    def forget(self, event: Event) -> list[Hashable]:
        return self.engine.step(event.turn)

    def recall(self, mem_id: Hashable, event: Event) -> None:
        self.engine.recall(mem_id, event.turn)

    def store(self, event: Event) -> list[Hashable]:
        mem_id = event.stored
        self.engine.register(mem_id, str(mem_id), event.turn, mem_id in self.foundational)
        return []


@dataclass(frozen=True)
class _Given:
    """A policy whose one state is the engine it was given (fresh; :func:`simulate` checks)."""

    engine: Engine
    foundational: frozenset[str]

    @property
    def label(self) -> str:
        return type(self.engine).__name__

    def start(self) -> _Stepped:
        return _Stepped(self.engine, self.foundational)


def simulate(engine: Engine, session: Session) -> Trace:
    """Apply every event of ``session`` to ``engine``, stepping once per turn 1..L.

    The library's driver replays :func:`session_events` through ``engine`` in the article's order
    (module docstring): within a turn the recalls, then the registrations, then ``step(turn)``
    evicts, so a recall on an item's eviction turn still finds it.

    ``engine`` must be fresh: no item present and, for an engine that says its ``last_turn``
    (every :class:`~forgetting.decay.engines.ScheduledEngine`), no call accepted after turn 0. A used engine's items
    would be counted in the trace and its clock would refuse the session's early turns midway.
    ``ValueError`` naming the argument (every problem at once) for an engine that is not fresh,
    an ``engine`` without the :class:`~forgetting.decay.engines.Engine` methods or a ``session``
    that is not a :class:`~forgetting.studies.decay.sessions.Session`; nothing is called on the engine then.
    """
    raise_problems(_simulate_problems(engine, session))
    foundational = frozenset(session.foundational_ids)
    events = session_events(session)
    run = replay(_Given(engine, foundational), events, order=ReplayOrder.FORGET_LAST)
    return _trace(session, events, run, foundational)


def _trace(session: Session, events: Iterable[Event], run: Replay, foundational: frozenset[str]) -> Trace:
    """The :class:`Trace` of ``run``, a replay of ``events`` in the article's order: a recall at
    turn ``t`` found its item unless the item was dropped before ``t`` (a drop at ``t`` follows it)."""
    drops = cast(dict[str, int], dict(run.dropped))
    trace = Trace(session.config.session_length, list(session.foundational_ids))
    trace.evicted_turn = drops
    trace.working_set_sizes = list(run.held_counts)
    present = 0
    lost_at: dict[int, int] = {}
    for mem_id in foundational.intersection(drops):
        lost_at[drops[mem_id]] = lost_at.get(drops[mem_id], 0) + 1
    for event in events:
        turn = event.turn
        for mem_id in cast(list[str], event.stored):
            trace.created_turn[mem_id] = turn
            present += mem_id in foundational
        for recalled in cast(tuple[str, ...], event.recalled):
            gone = drops.get(recalled)
            trace.recalls.append((turn, recalled, gone is None or gone >= turn))
        present -= lost_at.get(turn, 0)
        trace.foundational_present.append(present)
    return trace


_ENGINE_METHODS = ("register", "recall", "step", "working_set_size")


def _simulate_problems(engine: object, session: object) -> list[str]:
    """Why :func:`simulate` cannot replay ``session`` through ``engine`` (``[]``: it can)."""
    problems = []
    if not all(callable(getattr(engine, name, None)) for name in _ENGINE_METHODS):
        problems.append(f"engine must be an engine ({', '.join(_ENGINE_METHODS)}), got {shown(engine)}")
    else:
        held = engine.working_set_size()  # type: ignore[attr-defined]
        last = getattr(engine, "last_turn", 0)
        if held or last:
            why = f"it holds {held} item(s)" if held else f"its clock is at turn {last}"
            problems.append(
                f"engine must be fresh (no item, its clock at turn 0): {why}; make a new engine for each session"
            )
    if not isinstance(session, Session):
        problems.append(f"session must be a Session (from generate_session), got {type(session).__name__}")
    return problems
