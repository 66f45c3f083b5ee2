"""Seeded synthetic agent sessions: a few foundational facts amid never-recalled noise.

A session is a list of :data:`SessionEvent` s ``(turn, action, mem_id, is_foundational)`` with
``action`` an :class:`Action` (``"register"`` or ``"recall"``), sorted by turn (stable within a
turn: foundational registrations, then recalls, then noise). It is the article's session, written
as the article's generator writes it; :func:`~forgetting.studies.decay.simulation.simulate`
replays it through the library's driver, one
:class:`~forgetting.conversations.policies.Event` per turn (the turn's registrations as a list
of stored ids, its recalls) in the article's order, the engine stepped after the turn's recalls.

Rules (the decay-engine article's generator, stated so its sessions come out exactly):

* one ``random.Random(seed)`` drives the whole session;
* every foundational fact is registered at turn 1;
* ``"spaced"`` schedule: for each fact in order, and each base offset in
  ``recall_base_offsets`` up to ``recalls_per_foundational`` of them, draw one
  ``factor = uniform(*recall_jitter)``; the recall lands at
  ``1 + round(offset * factor)``, clamped to ``[previous + 1, L]``; the fact's
  schedule stops once a turn would fall past ``L``;
* ``"uniform"`` schedule (the article's first draft, its postmortem 2): each fact's
  recall turns are ``recalls_per_foundational`` distinct turns drawn uniformly from
  ``uniform_range`` clipped to the session (:class:`SessionConfig` refuses more than the
  clipped range holds, as it refuses more spaced recalls than :func:`max_recalls`);
* ``noise_per_turn`` never-recalled items are registered every turn.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..._validate import is_int as _is_int
from ..._validate import is_real as _is_real
from ..._validate import shown

__all__ = [
    "Action",
    "SessionEvent",
    "Schedule",
    "RECALL_BASE_OFFSETS",
    "RECALL_JITTER",
    "UNIFORM_RANGE",
    "SCHEDULES",
    "MAX_SESSION_SIZE",
    "SessionConfig",
    "Session",
    "spaced_recall_turns",
    "uniform_recall_turns",
    "latest_last_recall",
    "max_recalls",
    "recall_schedules",
    "generate_session",
]


class Action(enum.StrEnum):
    """What a :data:`SessionEvent` does to its item (a member is its string)."""

    REGISTER = "register"
    """The item is registered (stored) at the event's turn."""
    RECALL = "recall"
    """The item is recalled at the event's turn."""


SessionEvent = tuple[int, Action, str, bool]
"""``(turn, action, mem_id, is_foundational)``: one action of the article's session."""
Schedule = Literal["spaced", "uniform"]
"""How recall turns are placed: the article's spaced schedule or its first draft's uniform one."""

RECALL_BASE_OFFSETS = (3, 8, 20, 45, 90, 150)
"""Base turns after registration of the spaced schedule's recalls (the article's generator)."""
RECALL_JITTER = (0.7, 1.3)
"""Range of the uniform factor each base offset is multiplied by."""
UNIFORM_RANGE = (10, 150)
"""Turns the uniform (first-draft) schedule draws recall turns from."""
SCHEDULES = ("spaced", "uniform")
"""The allowed values of :attr:`SessionConfig.schedule`."""
MAX_SESSION_SIZE = 10**7
"""The most turns, and the most events, one session may have.

A generated session is held in memory, one tuple and one id string per event (about 170 bytes
each in CPython: some 1.7 GB at this bound), and a replay steps once per turn. The book's
published sessions have 150 or 300 turns and at most a few thousand events (the largest noise
level of the sweeps, 20 items per turn over 150 turns), so the bound is more than a thousand
times what the book uses; a session beyond it would exhaust the memory (or the patience) of the
machines the book runs on, and is refused with the numbers instead.
"""


@dataclass(frozen=True)
class SessionConfig:
    """Parameters of one synthetic session; invalid values raise ``ValueError``.

    Everything :func:`generate_session` relies on is checked here, all at once: ints are
    ints (not bools or floats), ``seed >= 0`` (``random.Random`` hashes ``-s`` like ``s``, so a
    negative seed would silently repeat another session), ``recall_jitter`` is a pair of
    finite numbers ``0 < low <= high``, ``uniform_range`` a pair of ints
    ``2 <= first <= last`` (a fact is registered at turn 1 and recalled after it), and
    ``recalls_per_foundational`` is at most
    ``len(recall_base_offsets)`` (and, for the ``"uniform"`` schedule, at most the number of
    turns in ``uniform_range``) and at most :func:`max_recalls`, what the schedule can place in
    ``session_length`` turns for any seed: a request no seed can honour is refused, never
    capped. (A request some seeds honour stays allowed; the spaced schedule of a seed whose
    recall lands on the last turn stops there, as the rules say.) A session must fit in memory:
    at most :data:`MAX_SESSION_SIZE` turns and as many events, ``session_length *
    noise_per_turn + num_foundational * (1 + recalls_per_foundational)``.
    """

    seed: int
    session_length: int = 150
    num_foundational: int = 3
    recalls_per_foundational: int = 4
    noise_per_turn: int = 3
    schedule: Schedule = "spaced"
    recall_base_offsets: tuple[int, ...] = RECALL_BASE_OFFSETS
    recall_jitter: tuple[float, float] = RECALL_JITTER
    uniform_range: tuple[int, int] = UNIFORM_RANGE

    def __post_init__(self) -> None:
        problems = []
        for name, low in (
            ("seed", 0),
            ("session_length", 1),
            ("num_foundational", 0),
            ("recalls_per_foundational", 0),
            ("noise_per_turn", 0),
        ):
            value = getattr(self, name)
            if not _is_int(value):
                problems.append(f"{name} must be an int, got {shown(value)}")
            elif value < low:
                problems.append(f"{name} must be >= {low}, got {value}")
            elif name == "session_length" and value > MAX_SESSION_SIZE:
                problems.append(f"session_length must be <= {MAX_SESSION_SIZE}, got {value}")
        if self.schedule not in SCHEDULES:
            problems.append(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        offsets = self.recall_base_offsets
        offsets_ok = (
            isinstance(offsets, (tuple, list))
            and bool(offsets)
            and all(_is_int(o) and o >= 1 for o in offsets)
        )
        if not offsets_ok:
            problems.append(f"recall_base_offsets must be a non-empty tuple of ints >= 1, got {offsets!r}")
        elif _is_int(self.recalls_per_foundational) and self.recalls_per_foundational > len(offsets):
            problems.append(
                f"recalls_per_foundational must be <= {len(offsets)} (one recall per base "
                f"offset), got {self.recalls_per_foundational}"
            )
        jitter = self.recall_jitter
        if not _is_pair(jitter, _is_real) or not 0 < jitter[0] <= jitter[1]:
            problems.append(
                f"recall_jitter must be a pair (low, high) of finite numbers with "
                f"0 < low <= high, got {jitter!r}"
            )
        elif offsets_ok and not _is_real(_product(max(offsets), jitter[1])):
            problems.append(
                f"recall_jitter must keep every offset * factor finite, got high {jitter[1]!r} "
                f"with the largest recall_base_offsets entry {max(offsets)!r}"
            )
        span = self.uniform_range
        if not _is_pair(span, _is_int) or not 2 <= span[0] <= span[1]:
            problems.append(
                f"uniform_range must be a pair (first, last) of ints with 2 <= first <= last (a fact "
                f"is registered at turn 1 and recalled after it), got {span!r}"
            )
        elif (
            self.schedule == "uniform"
            and _is_int(self.recalls_per_foundational)
            and self.recalls_per_foundational > span[1] - span[0] + 1
        ):
            problems.append(
                f"recalls_per_foundational must be <= {span[1] - span[0] + 1} (the turns in "
                f"uniform_range {span!r}) for schedule 'uniform', "
                f"got {self.recalls_per_foundational}"
            )
        if not problems and self.events_count() > MAX_SESSION_SIZE:
            problems.append(
                f"a session must have at most {MAX_SESSION_SIZE} events (session_length * noise_per_turn "
                f"+ num_foundational * (1 + recalls_per_foundational)), got {self.events_count()}"
            )
        if not problems and self.recalls_per_foundational > max_recalls(self):
            problems.append(
                f"recalls_per_foundational must be <= {max_recalls(self)} for session_length="
                f"{self.session_length} (the most recalls the {self.schedule!r} schedule can place "
                f"in {self.session_length} turns, for any seed), got {self.recalls_per_foundational}"
            )
        if problems:
            raise ValueError("invalid SessionConfig: " + "; ".join(problems))

    def events_count(self) -> int:
        """The most events a session of this config can have: every noise item, and every
        fact's registration and recalls (a spaced schedule may place fewer)."""
        return self.session_length * self.noise_per_turn + self.num_foundational * (
            1 + self.recalls_per_foundational
        )

    @classmethod
    def from_dict(cls, params: Mapping[str, Any]) -> SessionConfig:
        """Build from a mapping; unknown names raise ``ValueError`` listing the allowed ones."""
        allowed = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise ValueError(f"unknown session parameter(s) {unknown}; allowed: {allowed}")
        return cls(**params)

    def replace(self, **changes: Any) -> SessionConfig:
        """A copy with some fields changed (validated like the constructor)."""
        return SessionConfig.from_dict({**dataclasses.asdict(self), **changes})


def _product(a: float, b: float) -> float:
    try:
        return a * b
    except OverflowError:  # an int too large for a float
        return math.inf


def _is_pair(value: object, check: Callable[[object], bool]) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2 and all(map(check, value))


@dataclass(frozen=True)
class Session:
    """One generated session: its config, its events sorted by turn, its foundational ids."""

    config: SessionConfig
    events: list[SessionEvent]
    foundational_ids: list[str]

    def recall_turns(self, mem_id: str) -> list[int]:
        """Turns at which ``mem_id`` is recalled, ascending."""
        return [turn for turn, action, eid, _ in self.events if action == Action.RECALL and eid == mem_id]


def spaced_recall_turns(rng: random.Random, config: SessionConfig) -> list[int]:
    """One fact's spaced schedule: ``1 + round(offset * uniform(lo, hi))``, clamped, increasing."""
    low_j, high_j = config.recall_jitter
    length = config.session_length
    turns: list[int] = []
    previous = 1
    for offset in config.recall_base_offsets[: config.recalls_per_foundational]:
        candidate = 1 + round(offset * rng.uniform(low_j, high_j))
        turn = max(previous + 1, min(candidate, length))
        if turn > length:
            break
        turns.append(turn)
        previous = turn
    return turns


def uniform_recall_turns(rng: random.Random, config: SessionConfig) -> list[int]:
    """One fact's first-draft schedule: distinct turns drawn uniformly from ``uniform_range``."""
    first, last = config.uniform_range
    last = min(last, config.session_length)
    if first > last:
        return []
    population = range(first, last + 1)
    count = min(config.recalls_per_foundational, len(population))
    return sorted(rng.sample(population, count))


def latest_last_recall(config: SessionConfig) -> int | None:
    """The latest turn a fact's last scheduled recall can land on, over every seed.

    Spaced schedule: recall ``k`` lands at most at ``b_k = min(L, max(b_{k-1} + 1,
    1 + round(offset_k * high)))`` (``round`` is monotone and a factor never exceeds
    ``high``); uniform schedule: the last turn of ``uniform_range`` inside the session.
    ``None`` when no recall is scheduled.

    >>> latest_last_recall(SessionConfig(seed=0))
    59
    """
    length = config.session_length
    if config.recalls_per_foundational == 0:
        return None
    if config.schedule == "uniform":
        first, last = config.uniform_range
        return min(last, length) if first <= length else None
    bound = 1
    for offset in config.recall_base_offsets[: config.recalls_per_foundational]:
        bound = min(length, max(bound + 1, 1 + round(offset * config.recall_jitter[1])))
    return bound


def max_recalls(config: SessionConfig) -> int:
    """The most recalls one fact can get in a session of ``config``, over every seed.

    Whatever ``recalls_per_foundational`` asks. Spaced schedule: the factors all at ``low``
    give every recall its earliest turn (``round`` and the clamp are monotone), and a schedule
    stops only after a recall lands on turn ``L``, so that draw places the most; it is counted
    over all of ``recall_base_offsets``. Uniform schedule: the turns of ``uniform_range`` inside
    the session, at most ``len(recall_base_offsets)`` (the cap both schedules share). This is
    the largest ``recalls_per_foundational`` a config of these settings accepts.

    >>> short = SessionConfig(seed=0, session_length=5, recalls_per_foundational=2)
    >>> max_recalls(SessionConfig(seed=0)), max_recalls(short)
    (6, 2)
    """
    length = config.session_length
    if config.schedule == "uniform":
        first, last = config.uniform_range
        return min(len(config.recall_base_offsets), max(0, min(last, length) - first + 1))
    low = config.recall_jitter[0]
    placed, previous = 0, 1
    for offset in config.recall_base_offsets:  # spaced_recall_turns with every factor at low
        turn = max(previous + 1, min(1 + round(offset * low), length))
        if turn > length:
            break
        placed, previous = placed + 1, turn
    return placed


def recall_schedules(config: SessionConfig) -> list[list[int]]:
    """Each foundational fact's recall turns, in fact order: the only random part of a session.

    The draws of :func:`generate_session` (which calls this), without building the noise
    events: one ``random.Random(config.seed)``, the facts' schedules drawn one after another.
    """
    rng = random.Random(config.seed)
    schedule = spaced_recall_turns if config.schedule == "spaced" else uniform_recall_turns
    return [schedule(rng, config) for _ in range(config.num_foundational)]


def generate_session(config: SessionConfig) -> Session:
    """The session ``config`` describes; the same config always gives the same events."""
    foundational_ids = [f"foundational_{i}" for i in range(config.num_foundational)]
    events: list[SessionEvent] = [(1, Action.REGISTER, fid, True) for fid in foundational_ids]
    for fid, turns in zip(foundational_ids, recall_schedules(config)):
        events.extend((turn, Action.RECALL, fid, True) for turn in turns)
    noise_index = 0
    for turn in range(1, config.session_length + 1):
        for _ in range(config.noise_per_turn):
            events.append((turn, Action.REGISTER, f"noise_{turn}_{noise_index}", False))
            noise_index += 1
    events.sort(key=lambda event: event[0])
    return Session(config, events, foundational_ids)
