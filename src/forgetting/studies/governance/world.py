"""The governance world: one seeded session of deployment tasks around a change of tool.

* Turn 1: *A* (:data:`STALE`, "deploy with tool X") is registered as foundational; it is
  recalled on a spaced schedule (gaps ``first_gap, 2*first_gap, 4*first_gap, ...``, each
  multiplied by a uniform factor in ``[1 - JITTER, 1 + JITTER]``) until the shift. Before the
  shift there is one deployment fact and every scheduled task retrieves it.
* Turn ``shift_turn``: the world changes, *B* (:data:`TRUE`, "deploy with tool Y") is
  registered. From then on every later turn holds a deployment task with probability
  ``task_rate``. A task finds every deployment fact still in the working set; when both are
  there it retrieves both with probability ``co_retrieval`` and otherwise one of them, each
  equally likely.
* A deployment task after the shift is *hard* with probability 1/2. A hard task succeeds with
  its outcome probability times ``1 - difficulty``, and a task that retrieves one fact alone
  retrieves the true one with probability ``(1 + confound) / 2`` when it is hard and
  ``(1 - confound) / 2`` when it is easy (so still 1/2 over all tasks). At the defaults
  ``confound = difficulty = 0`` being hard changes nothing.
* Every turn ``noise_per_turn`` never-recalled items arrive. They load the working set, and
  with ``crowding > 0`` they cost retrieval: each noise item in the working set is a distractor
  of weight ``crowding`` against the weight 1 of what the task should find, and the search
  returns what it should with probability ``1 / (1 + crowding * n)`` (``n`` noise items
  present), otherwise a distractor and no deployment fact (:func:`crowded_out`). At the default
  ``crowding = 0`` the working set's size changes no outcome.

All randomness of a session is drawn up front (:func:`generate_governance_session`), so every
policy faces exactly the same tasks and the same uniform draws (common random numbers). The
draws are kept (:data:`SESSIONS_CACHED` sessions), since every sweep redraws the same ones. Each
kind of draw has its own stream (:func:`~forgetting.studies.worlds.model.substream` of the seed:
:data:`GAP_STREAM`, :data:`TASK_STREAM`, :data:`BOTH_STREAM`, :data:`WHICH_STREAM`,
:data:`OUTCOME_STREAM`, :data:`CROWD_STREAM`, :data:`HARD_STREAM`), read a fixed amount per
recall, turn or task in turn order, so the tasks and draws up to any turn do not depend on how
long the session runs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from ..._validate import is_int, raise_problems, real_problem, require_int
from ..worlds.model import substream

__all__ = [
    "STALE",
    "TRUE",
    "JITTER",
    "GAP_STREAM",
    "TASK_STREAM",
    "BOTH_STREAM",
    "WHICH_STREAM",
    "OUTCOME_STREAM",
    "CROWD_STREAM",
    "HARD_STREAM",
    "crowded_out",
    "crowding_probability",
    "null_world",
    "omission_world",
    "GovernanceOutcome",
    "GovernanceWorld",
    "GovernanceSession",
    "generate_governance_session",
    "session_arrays",
    "SESSIONS_CACHED",
]

STALE = "A"
"""Id of "deploy with tool X": true until the shift, stale after it."""
TRUE = "B"
"""Id of "deploy with tool Y": registered at the shift, true from then on."""
JITTER = 0.3
"""Relative jitter of each pre-shift recall gap: a uniform factor in ``[1 - JITTER, 1 + JITTER]``."""
GAP_STREAM = 0
"""Index of a session's gap stream (:func:`~forgetting.studies.worlds.model.substream`): one uniform
per pre-shift gap, in order, the jitter factor of that gap (and one for the gap that reaches
the shift)."""
TASK_STREAM = 1
"""Index of a session's task stream: one uniform per post-shift turn, in turn order; a task
when it is below ``task_rate``."""
BOTH_STREAM = 2
"""Index of a session's co-retrieval stream: one uniform per task, in task order (both facts
come back when it is below ``co_retrieval``)."""
WHICH_STREAM = 3
"""Index of a session's which-fact stream: one uniform per task (the stale fact alone when it is
below 1/2, else the true one)."""
OUTCOME_STREAM = 4
"""Index of a session's outcome stream: one uniform per task (success when it is below the
outcome probability)."""
CROWD_STREAM = 5
"""Index of a session's crowding stream: one uniform per task (the search is crowded out by
the noise when it is at or above ``1 / (1 + crowding * n)``, :func:`crowded_out`)."""
HARD_STREAM = 6
"""Index of a session's difficulty stream: one uniform per task (a task after the shift is hard
when it is below 1/2)."""
_FloatArray = npt.NDArray[np.float64]
_CROWD_MARGIN = 1e-9
"""A float product this far from 1 decides :func:`crowded_out` as the exact one would."""


def crowding_probability(crowding: float, noise_items: int) -> float:
    """``crowding * n / (1 + crowding * n)``: the chance that noise crowds out a task's search
    among ``n = noise_items`` noise items (:func:`crowded_out` of a uniform draw).

    Raises ``ValueError`` unless ``crowding`` is a real number in ``[0, 1000]`` and
    ``noise_items`` an int >= 0.
    """
    raise_problems(
        [real_problem("crowding", crowding, 0.0, 1000.0), _int_problem("noise_items", noise_items, 0)]
    )
    weight = crowding * noise_items
    return weight / (1.0 + weight)


def crowded_out(draw: float, crowding: float, noise_items: int) -> bool:
    """Whether a task's search returns a distractor instead of the deployment facts.

    ``True`` when ``draw >= 1 / (1 + crowding * noise_items)``, i.e. with probability
    ``crowding * n / (1 + crowding * n)`` for a uniform ``draw``: the Luce choice between the
    facts (weight 1) and ``n`` distractors (weight ``crowding`` each). Decided as in exact
    rational arithmetic (a float fast path far from the boundary, :class:`~fractions.Fraction`
    near it), so no rounding can move it. No check of the arguments (the policies call it
    once per task with a validated world).
    """
    if crowding == 0 or noise_items == 0:
        return False
    product = draw * (1.0 + crowding * noise_items)
    if abs(product - 1.0) > _CROWD_MARGIN:
        return product > 1.0
    return Fraction(draw) * (1 + Fraction(crowding) * noise_items) >= 1


def _probability_problem(name: str, value: object) -> str | None:
    problem = real_problem(name, value, 0.0, 1.0)
    return None if problem is None else f"{name} must be a probability in [0, 1], got {value!r}"


def _int_problem(name: str, value: object, low: int) -> str | None:
    if is_int(value, allow_numpy=True) and value >= low:  # type: ignore[operator]
        return None
    return f"{name} must be an int >= {low}, got {value!r}"


@dataclass(frozen=True)
class GovernanceOutcome:
    """Success probability of a deployment task from the deployment facts it retrieved.

    Parameters
    ----------
    p_ok : float, default 0.9
        Only the true fact retrieved.
    p_conflict : float, default 0.25
        True and stale fact together (the agent is handed a contradiction).
    p_wrong : float, default 0.05
        Only the stale fact.
    p_none : float, default 0.2
        No deployment fact (the agent must rediscover the answer).

    Raises
    ------
    ValueError
        A value is not a probability in ``[0, 1]`` (every bad one named).
    """

    p_ok: float = 0.9
    p_conflict: float = 0.25
    p_wrong: float = 0.05
    p_none: float = 0.2

    def __post_init__(self) -> None:
        raise_problems(
            _probability_problem(name, getattr(self, name))
            for name in ("p_ok", "p_conflict", "p_wrong", "p_none")
        )

    def probability(self, has_true: bool, has_stale: bool) -> float:
        """Success probability given whether the true and the stale fact were retrieved."""
        if has_true:
            return self.p_conflict if has_stale else self.p_ok
        return self.p_wrong if has_stale else self.p_none


@dataclass(frozen=True)
class GovernanceWorld:
    """The session's shape: length, shift, task rate, retrieval noise, noise items, outcomes.

    Parameters
    ----------
    session_length : int, default 300
        Turns ``1 .. session_length`` (>= 2).
    shift_turn : int, default 40
        Turn at which *B* is registered and *A* becomes stale (``2 <= shift_turn < session_length``).
    task_rate : float, default 0.8
        Chance of a deployment task on each turn after the shift.
    co_retrieval : float, default 0.5
        Chance that a task retrieves both facts when both are in the working set.
    noise_per_turn : int, default 2
        Never-recalled items registered every turn (>= 0).
    crowding : float, default 0
        Weight of each noise item in the working set as a distractor of a task's search
        (:func:`crowded_out`; a real number in ``[0, 1000]``, 0: no retrieval cost).
    first_gap : int, default 2
        First gap of *A*'s spaced pre-shift recalls (>= 1).
    confound : float, default 0
        How much a task's difficulty decides which fact it retrieves alone, in ``[0, 1]``: the true
        one with probability ``(1 + confound) / 2`` when the task is hard, ``(1 - confound) / 2``
        when it is easy.
    difficulty : float, default 0
        A hard task's success probability is its outcome probability times ``1 - difficulty``
        (in ``[0, 1]``; each task after the shift is hard with probability 1/2).
    outcome : GovernanceOutcome
        Success probabilities.

    Raises
    ------
    ValueError
        Every bad value at once, each named.
    """

    session_length: int = 300
    shift_turn: int = 40
    task_rate: float = 0.8
    co_retrieval: float = 0.5
    noise_per_turn: int = 2
    first_gap: int = 2
    outcome: GovernanceOutcome = field(default_factory=GovernanceOutcome)
    crowding: float = 0.0
    confound: float = 0.0
    difficulty: float = 0.0

    def __post_init__(self) -> None:
        problems = [
            _int_problem("session_length", self.session_length, 2),
            _int_problem("shift_turn", self.shift_turn, 2),
            _probability_problem("task_rate", self.task_rate),
            _probability_problem("co_retrieval", self.co_retrieval),
            _int_problem("noise_per_turn", self.noise_per_turn, 0),
            _int_problem("first_gap", self.first_gap, 1),
            real_problem("crowding", self.crowding, 0.0, 1000.0),
            _probability_problem("confound", self.confound),
            _probability_problem("difficulty", self.difficulty),
        ]
        if not any(problems[:2]) and self.shift_turn >= self.session_length:
            problems.append(
                f"shift_turn must be < session_length, got shift_turn={self.shift_turn} "
                f"and session_length={self.session_length}"
            )
        if not isinstance(self.outcome, GovernanceOutcome):
            problems.append(f"outcome must be a GovernanceOutcome, got {self.outcome!r}")
        raise_problems(problems)

    def stale_alone(self, hard: bool) -> float:
        """Chance that a task retrieving one fact alone retrieves the stale one: ``(1 - confound) / 2``
        when ``hard``, ``(1 + confound) / 2`` otherwise (exactly 1/2 at ``confound = 0``)."""
        return (1.0 - self.confound) / 2 if hard else (1.0 + self.confound) / 2

    def success_probability(self, has_true: bool, has_stale: bool, hard: bool) -> float:
        """The outcome's probability, times ``1 - difficulty`` when ``hard`` (unchanged otherwise)."""
        p = self.outcome.probability(has_true, has_stale)
        return p * (1.0 - self.difficulty) if hard else p


@dataclass(frozen=True)
class GovernanceSession:
    """One session's tasks and every uniform draw the policies will consume.

    Attributes
    ----------
    world : GovernanceWorld
    seed : int
    task_turns : tuple of int
        Every deployment-task turn (before and after the shift, increasing).
    draw_both, draw_which, draw_outcome, draw_crowd, draw_hard : tuple of float
        Per task ``i``: both facts come back if ``draw_both[i] < co_retrieval``; otherwise the
        stale one alone if ``draw_which[i] <`` :meth:`GovernanceWorld.stale_alone` (1/2 without
        a confound); the task succeeds if ``draw_outcome[i] <`` the outcome probability;
        ``draw_crowd[i]`` decides :func:`crowded_out`; a task after the shift is hard if
        ``draw_hard[i] < 1/2``.
    """

    world: GovernanceWorld
    seed: int
    task_turns: tuple[int, ...]
    draw_both: tuple[float, ...]
    draw_which: tuple[float, ...]
    draw_outcome: tuple[float, ...]
    draw_crowd: tuple[float, ...]
    draw_hard: tuple[float, ...]


def generate_governance_session(world: GovernanceWorld, seed: int) -> GovernanceSession:
    """Draw the session of ``seed`` (any int >= 0), each kind of draw from its own stream.

    Draw order, each stream a :func:`~forgetting.studies.worlds.model.substream` of ``seed``:

    * :data:`GAP_STREAM`: one uniform per pre-shift gap, in order, scaled to the jitter factor
      in ``[1 - JITTER, 1 + JITTER]`` (the last one reaches the shift and places no task);
    * :data:`TASK_STREAM`: one uniform per post-shift turn ``shift_turn + 1 .. session_length``,
      in turn order (a task when it is below ``task_rate``);
    * :data:`BOTH_STREAM`, :data:`WHICH_STREAM`, :data:`OUTCOME_STREAM`, :data:`CROWD_STREAM`,
      :data:`HARD_STREAM`: one uniform each per task, in task order (pre-shift tasks first).

    Each stream is read a fixed amount per gap, turn or task, so the tasks up to turn ``T`` and
    their draws are the same in a session of any length ``>= T`` (same other settings), and
    none of ``co_retrieval``, ``crowding``, ``confound`` and ``difficulty`` changes a draw
    (common random numbers across the sweeps).

    Raises
    ------
    ValueError
        ``world`` is not a :class:`GovernanceWorld` or ``seed`` is not an int >= 0.
    """
    if not isinstance(world, GovernanceWorld):
        raise ValueError(f"world must be a GovernanceWorld, got {world!r}")
    seed = require_int("seed", seed, 0, allow_numpy=True)
    turns, draws = session_arrays(world, seed)
    return GovernanceSession(world, seed, turns, *(tuple(row.tolist()) for row in draws))


def session_arrays(world: GovernanceWorld, seed: int) -> tuple[tuple[int, ...], tuple[_FloatArray, ...]]:
    """The task turns and the draws of :func:`generate_governance_session` as read-only arrays
    (``draw_both, draw_which, draw_outcome, draw_crowd, draw_hard``), unchecked: for callers that
    checked ``world`` and ``seed`` (an int >= 0)."""
    return _session_draws(seed, world.first_gap, world.shift_turn, world.session_length, world.task_rate)


SESSIONS_CACHED = 4096
"""How many sessions' draws :func:`generate_governance_session` keeps (about 10 kB each at the
defaults), so that every sweep over the settings that change no draw reuses them."""


@functools.lru_cache(maxsize=SESSIONS_CACHED)
def _session_draws(
    seed: int, first_gap: int, shift_turn: int, session_length: int, task_rate: float
) -> tuple[tuple[int, ...], tuple[_FloatArray, ...]]:
    """The task turns and the five per-task draws of the session of ``seed``: a function of
    the seed and of the only settings that change them (the arguments), so cached. The
    arrays are read-only."""
    gaps = substream(seed, GAP_STREAM)
    turns, turn, gap = [], 1, first_gap
    while True:  # spaced recalls of A before the shift
        turn += max(1, int(round(gap * gaps.uniform(1 - JITTER, 1 + JITTER))))
        if turn >= shift_turn:
            break
        turns.append(turn)
        gap *= 2
    after = np.arange(shift_turn + 1, session_length + 1)
    turns += [int(t) for t in after[substream(seed, TASK_STREAM).random(after.size) < task_rate]]
    draws = tuple(
        substream(seed, stream).random(len(turns))
        for stream in (BOTH_STREAM, WHICH_STREAM, OUTCOME_STREAM, CROWD_STREAM, HARD_STREAM)
    )
    for row in draws:
        row.flags.writeable = False
    return tuple(turns), draws


def null_world(world: GovernanceWorld, success: float) -> GovernanceWorld:
    """``world`` with every task succeeding with probability ``success`` whatever it retrieves:
    no fact has an effect, so any deprecation in it is a false one.

    Raises ``ValueError`` unless ``world`` is a :class:`GovernanceWorld` and ``success`` a
    probability in ``[0, 1]``.
    """
    if not isinstance(world, GovernanceWorld):
        raise ValueError(f"world must be a GovernanceWorld, got {world!r}")
    raise_problems([_probability_problem("success", success)])
    return replace(world, outcome=GovernanceOutcome(success, success, success, success))


def omission_world(world: GovernanceWorld, omission: float) -> GovernanceWorld:
    """``world`` played by an agent that breaks the pair on purpose: at a task that would retrieve
    both facts, it withholds one of them, each equally likely, with probability ``omission``.

    A task then retrieves both with probability ``co_retrieval * (1 - omission)`` and otherwise
    one of the two at random, independently of its outcome draw, which is exactly the retrieval
    law of ``world`` with ``co_retrieval`` set to that product: this returns that world. (The
    law is equal, and so is every measure of a policy; a session's draws are those of the new
    ``co_retrieval``.) The tests that read the world's randomisation (the effect interval, the
    sequential test) then read the agent's coin as well, as they should.

    Raises ``ValueError`` unless ``world`` is a :class:`GovernanceWorld` and ``omission`` a
    probability in ``[0, 1]``.
    """
    if not isinstance(world, GovernanceWorld):
        raise ValueError(f"world must be a GovernanceWorld, got {world!r}")
    raise_problems([_probability_problem("omission", omission)])
    return replace(world, co_retrieval=world.co_retrieval * (1.0 - omission))
