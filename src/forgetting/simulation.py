"""Replay a session through an engine, turn by turn, and keep a trace of what happened.

The driver holds no policy: it applies each turn's events, calls ``step(turn)``
once, and records. Whatever differs between two engines' traces comes from their
eviction rule alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .decay import Engine
from .sessions import Session


@dataclass
class Trace:
    """Everything observed while replaying one session through one engine."""

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

    @property
    def items_created(self) -> int:
        return len(self.created_turn)


def simulate(engine: Engine, session: Session) -> Trace:
    """Apply every event of ``session`` to ``engine``, stepping once per turn 1..L."""
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
            if action == "register":
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
