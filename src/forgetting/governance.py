"""Governance that uses both signals: decay for the working set, outcomes for deprecation.

The decay engine (:mod:`forgetting.decay`) keeps whatever is recalled. When the world
changes and a new fact *B* ("deploy with tool Y") contradicts a foundational fact *A*
("deploy with tool X"), tasks keep retrieving both, so the engine reinforces both and keeps
both -- the limit its own source states. Memory Worth (:mod:`forgetting.worth`) watches
outcomes instead: a memory that keeps travelling with failures drifts to ``low-value``.

The world (one seeded session, integer turns)
----------------------------------------------
* Turn 1: *A* is registered (foundational); it is recalled on a spaced schedule (gaps
  ``first_gap, 2*first_gap, 4*first_gap, ...``, each jittered by up to +-30 %) until the shift.
  Before the shift there is one deployment fact and every scheduled task retrieves it.
* Turn ``shift_turn``: the world changes, *B* is registered. From then on every later turn
  holds a deployment task with probability ``task_rate``. A task finds every deployment fact
  still in the working set; when both are there, the similarity search over two
  near-duplicate facts returns both with probability ``co_retrieval`` and otherwise just one
  of them, each equally likely (``co_retrieval = 1``: both always come back together).
* Every turn ``noise_per_turn`` never-recalled items arrive (they only load the working set).

Outcome model (:class:`OutcomeModel`): the success probability of a deployment task depends
only on which deployment facts it retrieved -- ``p_ok`` with only the true fact, ``p_conflict``
with both (the agent is handed a contradiction), ``p_wrong`` with only the stale fact and
``p_none`` with neither (it must rediscover the answer). Before the shift *A* is the true fact.

All randomness of a session is drawn up front (:func:`generate_session`), so the three
policies of :data:`POLICIES` face exactly the same tasks and the same uniform draws (common
random numbers); only what each policy holds in its working set differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from . import study
from .decay import DEFAULT_EVICTION_THRESHOLD, EbbinghausEngine
from .worth import DEFAULT_LOW_THRESHOLD, DEFAULT_MIN_EVIDENCE, LOW_VALUE, MemoryWorth

__all__ = ["STALE", "TRUE", "POLICIES", "OutcomeModel", "World", "Session", "PolicyRun",
           "generate_session", "run_policy", "run_seeds", "summarize", "digest"]

STALE = "A"  # "deploy with tool X": true until the shift, stale after it
TRUE = "B"   # "deploy with tool Y": registered at the shift, true from then on
POLICIES = ("decay", "worth", "combined")
"""``decay``: Ebbinghaus engine alone; ``worth``: Memory Worth deprecation over a store that
never evicts; ``combined``: the Ebbinghaus engine for the working set plus Memory Worth
deprecation."""

_JITTER = 0.3


def _is_real(value: object) -> bool:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    return math.isfinite(value)


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_probability(name: str, value: object) -> None:
    if not _is_real(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")


def _check_int(name: str, value: object, low: int) -> None:
    if not _is_int(value) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


@dataclass(frozen=True)
class OutcomeModel:
    """Success probability of a deployment task from the facts it retrieved.

    ``p_ok``: only the true fact; ``p_conflict``: true and stale fact together;
    ``p_wrong``: only the stale fact; ``p_none``: no deployment fact at all.
    """

    p_ok: float = 0.9
    p_conflict: float = 0.25
    p_wrong: float = 0.05
    p_none: float = 0.2

    def __post_init__(self) -> None:
        for name in ("p_ok", "p_conflict", "p_wrong", "p_none"):
            _check_probability(name, getattr(self, name))

    def probability(self, has_true: bool, has_stale: bool) -> float:
        """Success probability given whether the true and the stale fact were retrieved."""
        if has_true:
            return self.p_conflict if has_stale else self.p_ok
        return self.p_wrong if has_stale else self.p_none


@dataclass(frozen=True)
class World:
    """The session's shape: length, shift, task rate, retrieval noise, noise items, outcomes."""

    session_length: int = 300
    shift_turn: int = 40
    task_rate: float = 0.8
    co_retrieval: float = 0.5
    noise_per_turn: int = 2
    first_gap: int = 2
    outcome: OutcomeModel = field(default_factory=OutcomeModel)

    def __post_init__(self) -> None:
        _check_int("session_length", self.session_length, 2)
        _check_int("shift_turn", self.shift_turn, 2)
        if self.shift_turn >= self.session_length:
            raise ValueError(f"shift_turn must be < session_length, got shift_turn={self.shift_turn} "
                             f"and session_length={self.session_length}")
        _check_probability("task_rate", self.task_rate)
        _check_probability("co_retrieval", self.co_retrieval)
        _check_int("noise_per_turn", self.noise_per_turn, 0)
        _check_int("first_gap", self.first_gap, 1)
        if not isinstance(self.outcome, OutcomeModel):
            raise ValueError(f"outcome must be an OutcomeModel, got {self.outcome!r}")


@dataclass(frozen=True)
class Session:
    """One session's tasks and every uniform draw the policies will consume.

    ``task_turns`` lists all deployment-task turns (before and after the shift, increasing);
    for task ``i``, ``draw_both[i]`` decides whether both facts come back (below
    ``co_retrieval``), ``draw_which[i]`` which one comes back alone (the stale one below 1/2)
    and ``draw_outcome[i]`` the outcome (success below the model's probability).
    """

    world: World
    seed: int
    task_turns: tuple[int, ...]
    draw_both: tuple[float, ...]
    draw_which: tuple[float, ...]
    draw_outcome: tuple[float, ...]


def generate_session(world: World, seed: int) -> Session:
    """Draw the session of ``seed`` (any int >= 0) with ``numpy.random.default_rng(seed)``."""
    if not isinstance(world, World):
        raise ValueError(f"world must be a World, got {world!r}")
    _check_int("seed", seed, 0)
    rng = np.random.default_rng(int(seed))
    turns, turn, gap = [], 1, world.first_gap
    while True:  # spaced recalls of A before the shift
        turn += max(1, int(round(gap * rng.uniform(1 - _JITTER, 1 + _JITTER))))
        if turn >= world.shift_turn:
            break
        turns.append(turn)
        gap *= 2
    after = np.arange(world.shift_turn + 1, world.session_length + 1)
    turns += [int(t) for t in after[rng.random(after.size) < world.task_rate]]
    draws = rng.random((3, len(turns)))
    return Session(world, int(seed), tuple(turns), *(tuple(float(x) for x in row) for row in draws))


@dataclass(frozen=True)
class PolicyRun:
    """What one policy did in one session.

    ``task_turns``/``successes``/``retrieved`` per deployment task; ``working_set`` the size
    after each turn (deprecated items excluded); ``worth_trace`` the Memory Worth of
    ``(A, B)`` after each task (``None`` for the decay-alone policy); ``stale_removed_turn`` /
    ``true_removed_turn`` the first turn the fact was no longer in the working set (deprecated
    or evicted), ``None`` if it never left.
    """

    policy: str
    seed: int
    shift_turn: int
    task_turns: tuple[int, ...]
    successes: tuple[bool, ...]
    retrieved: tuple[tuple[str, ...], ...]
    working_set: tuple[int, ...]
    worth_trace: tuple[tuple[float, float], ...] | None
    stale_removed_turn: int | None
    true_removed_turn: int | None

    @property
    def success_after_shift(self) -> float:
        """Success rate of the deployment tasks after the shift (NaN if there were none)."""
        after = [s for t, s in zip(self.task_turns, self.successes) if t > self.shift_turn]
        return float(np.mean(after)) if after else math.nan

    def success_between(self, first_turn: int, last_turn: int) -> float:
        """Success rate of the deployment tasks in turns ``first_turn .. last_turn`` (NaN if none)."""
        _check_int("first_turn", first_turn, 0)
        _check_int("last_turn", last_turn, 0)
        chosen = [s for t, s in zip(self.task_turns, self.successes) if first_turn <= t <= last_turn]
        return float(np.mean(chosen)) if chosen else math.nan

    @property
    def mean_working_set(self) -> float:
        """Mean working-set size over the turns after the shift."""
        return float(np.mean(self.working_set[self.shift_turn:]))


class _Store:
    """A store that never evicts (the 'Memory Worth alone' policy); same interface subset."""

    def __init__(self) -> None:
        self._ids: dict[str, None] = {}

    def register(self, mem_id: str, content: str, turn: int, is_foundational: bool = False) -> None:
        self._ids[mem_id] = None

    def recall(self, mem_id: str, turn: int) -> bool:
        return mem_id in self._ids

    def step(self, turn: int) -> list[str]:
        return []

    def is_present(self, mem_id: str) -> bool:
        return mem_id in self._ids

    def working_set_size(self) -> int:
        return len(self._ids)


def run_policy(session: Session, policy: str, eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
               min_evidence: float = DEFAULT_MIN_EVIDENCE,
               low_threshold: float = DEFAULT_LOW_THRESHOLD) -> PolicyRun:
    """Play ``session`` under ``policy`` (one of :data:`POLICIES`).

    Within a turn: registrations, then the deployment task (retrieval, recall of what was
    retrieved, outcome, Memory Worth update), then deprecation of any retrieved fact whose
    class is now ``low-value`` (needs ``min_evidence``; worth ``<= low_threshold``), then
    ``step`` of the engine. A deprecated fact is never retrieved again and no longer counts
    in the working set; in the decay engine it is simply never recalled again.
    """
    if not isinstance(session, Session):
        raise ValueError(f"session must be a Session, got {session!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if not _is_real(eviction_threshold) or not 0.0 < eviction_threshold < 1.0:
        raise ValueError(f"eviction_threshold must be in (0, 1), got {eviction_threshold!r}")
    if not _is_real(min_evidence) or min_evidence < 1:
        raise ValueError(f"min_evidence must be a number >= 1, got {min_evidence!r}")
    if not _is_real(low_threshold) or not 0.0 <= low_threshold < 0.7:
        raise ValueError(f"low_threshold must be in [0, 0.7), got {low_threshold!r}")
    world = session.world
    engine: Any = _Store() if policy == "worth" else EbbinghausEngine(eviction_threshold)
    worth = None if policy == "decay" else MemoryWorth(min_evidence=min_evidence, low_threshold=low_threshold)
    deprecated: set[str] = set()
    removed: dict[str, int] = {}
    tasks = {t: i for i, t in enumerate(session.task_turns)}
    successes, retrieved_log, sizes, trace = [], [], [], []

    def available(mem_id: str) -> bool:
        return mem_id not in deprecated and engine.is_present(mem_id)

    for turn in range(1, world.session_length + 1):
        if turn == 1:
            engine.register(STALE, "deploy with tool X", turn, is_foundational=True)
        if turn == world.shift_turn:
            engine.register(TRUE, "deploy with tool Y", turn)
        for j in range(world.noise_per_turn):
            engine.register(f"noise-{turn}-{j}", "unrelated detail", turn)
        i = tasks.get(turn)
        if i is not None:
            if turn < world.shift_turn:  # one deployment fact: the search always finds it
                retrieved = [STALE] if available(STALE) else []
                success = session.draw_outcome[i] < world.outcome.probability(bool(retrieved), False)
            else:
                retrieved = [m for m in (STALE, TRUE) if available(m)]
                if len(retrieved) == 2 and session.draw_both[i] >= world.co_retrieval:
                    retrieved = [STALE] if session.draw_which[i] < 0.5 else [TRUE]
                success = session.draw_outcome[i] < world.outcome.probability(TRUE in retrieved,
                                                                               STALE in retrieved)
            for mem_id in retrieved:
                engine.recall(mem_id, turn)
            if worth is not None and retrieved:
                worth.update(retrieved, bool(success))
                for mem_id in retrieved:
                    if worth.classify(mem_id) == LOW_VALUE:
                        deprecated.add(mem_id)
            successes.append(bool(success))
            retrieved_log.append(tuple(retrieved))
            if worth is not None:
                trace.append((worth.worth(STALE), worth.worth(TRUE)))
        engine.step(turn)
        for mem_id, born in ((STALE, 1), (TRUE, world.shift_turn)):
            if turn >= born and mem_id not in removed and not available(mem_id):
                removed[mem_id] = turn
        sizes.append(engine.working_set_size() - sum(engine.is_present(m) for m in deprecated))
    return PolicyRun(policy, session.seed, world.shift_turn, session.task_turns, tuple(successes),
                     tuple(retrieved_log), tuple(sizes), None if worth is None else tuple(trace),
                     removed.get(STALE), removed.get(TRUE))


def run_seeds(world: World, n_seeds: int, base_seed: int = 0, **governance: Any) -> dict[str, list[PolicyRun]]:
    """Every policy on the sessions of seeds ``base_seed .. base_seed + n_seeds - 1``."""
    _check_int("n_seeds", n_seeds, 1)
    _check_int("base_seed", base_seed, 0)
    sessions = [generate_session(world, base_seed + k) for k in range(n_seeds)]
    return {p: [run_policy(s, p, **governance) for s in sessions] for p in POLICIES}


def summarize(runs: Sequence[PolicyRun]) -> dict[str, float]:
    """Means over seeds: success after the shift, removal shares and delays, survival, size.

    ``stale_removed`` / ``true_lost``: share of sessions in which the stale / true fact left
    the working set; ``turns_to_remove_stale``: mean turns from the shift to the stale fact's
    removal over the sessions where it was removed (NaN if never); ``true_survives``: share
    of sessions ending with the true fact in the working set; ``both_at_end``: share ending
    with both contradicting facts in it.
    """
    if not runs or not all(isinstance(r, PolicyRun) for r in runs):
        raise ValueError(f"runs must be a non-empty sequence of PolicyRun, got {runs!r}")
    delays = [r.stale_removed_turn - r.shift_turn for r in runs if r.stale_removed_turn is not None]
    return {
        "success_after_shift": float(np.mean([r.success_after_shift for r in runs])),
        "stale_removed": float(np.mean([r.stale_removed_turn is not None for r in runs])),
        "turns_to_remove_stale": float(np.mean(delays)) if delays else math.nan,
        "true_survives": float(np.mean([r.true_removed_turn is None for r in runs])),
        "both_at_end": float(np.mean([r.stale_removed_turn is None and r.true_removed_turn is None
                                      for r in runs])),
        "working_set": float(np.mean([r.mean_working_set for r in runs])),
    }


def digest(runs: dict[str, list[PolicyRun]]) -> str:
    """SHA-256 over every policy's outcomes, removals and working-set sizes."""
    body = {p: [[r.seed, r.successes, r.stale_removed_turn, r.true_removed_turn, r.working_set]
                for r in rs] for p, rs in sorted(runs.items())}
    return study.digest(body)
