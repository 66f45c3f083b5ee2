"""Replay a session through an engine, turn by turn, and keep a trace of what happened.

The driver holds no policy: it applies each turn's events, calls ``step(turn)``
once, and records. Whatever differs between two engines' traces comes from their
eviction rule alone.

This is the article's driver, not the library's
(:func:`~forgetting.conversations.policies.replay`): a turn registers several items or none,
and its step comes after its recalls, where the library's driver forgets before an event's
recalls and stores one memory per event. CONTRIBUTING.md ("The article's replay and the
library's driver") gives the counterexamples, and ``tests/test_decay_simulation.py`` holds the two
drivers to agreeing everywhere else for one fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..._validate import raise_problems, shown
from ...decay.engines import Engine
from .sessions import Action, Session

__all__ = ["Trace", "simulate"]


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
        Every recall in order, with what the engine returned.
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


def simulate(engine: Engine, session: Session) -> Trace:
    """Apply every event of ``session`` to ``engine``, stepping once per turn 1..L.

    Within a turn the events are applied in session order, then ``step(turn)`` evicts, so a
    recall on an item's eviction turn still finds it.

    ``engine`` must be fresh: no item present and, for an engine that says its ``last_turn``
    (every :class:`~forgetting.decay.engines.ScheduledEngine`), no call accepted after turn 0. A used engine's items
    would be counted in the trace and its clock would refuse the session's early turns midway.
    ``ValueError`` naming the argument (every problem at once) for an engine that is not fresh,
    an ``engine`` without the :class:`~forgetting.decay.engines.Engine` methods or a ``session``
    that is not a :class:`~forgetting.studies.decay.sessions.Session`; nothing is called on the engine then.
    """
    raise_problems(_simulate_problems(engine, session))
    length = session.config.session_length
    trace = Trace(length, list(session.foundational_ids))
    foundational = set(session.foundational_ids)
    events = session.events
    index = 0
    present_foundational = 0
    for turn in range(1, length + 1):
        while index < len(events) and events[index][0] == turn:
            _, action, mem_id, _is_foundational = events[index]
            index += 1
            if action == Action.REGISTER:
                engine.register(mem_id, mem_id, turn, _is_foundational)
                trace.created_turn[mem_id] = turn
                present_foundational += mem_id in foundational
            else:
                trace.recalls.append((turn, mem_id, engine.recall(mem_id, turn)))
        for mem_id in engine.step(turn):
            trace.evicted_turn[mem_id] = turn
            present_foundational -= mem_id in foundational
        trace.working_set_sizes.append(engine.working_set_size())
        trace.foundational_present.append(present_foundational)
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
