"""The governance policies played on many sessions of one world at once: turn by turn, each
decision an array over the sessions; and :func:`run_governance_seeds`, every policy on the
sessions of a range of seeds, chunk by chunk through the executor.

:func:`play_batch` returns, for each session, the :class:`~.runs.GovernanceRun` that
:func:`~.policies.run_governance` returns for it, field for field (``tests/test_governance_batch.py``
holds the two to that on random worlds, every policy). It is that loop with
the sessions as the array axis (and the two facts as another, :func:`_play`):

* what the draws alone decide (a task, which fact a task retrieving one alone gets, whether each
  set of retrieved facts would succeed, whether the noise crowds a search out) is read once for
  every turn and session, before the loop (:class:`_Batch`), with the scalar rule's comparisons;
* the decay engine holds only the two deployment facts (the noise is counted, as there), so its
  state is per fact and session: present, touch count, eviction turn. A touch sets the eviction
  turn from a table of the engine's own delays by touch count (:func:`delay_table`, the same
  :func:`~forgetting.decay.curves.reinforced_stability` and
  :func:`~forgetting.decay.curves.decay_eviction_delay` the engine calls);
* Memory Worth's counters are whole numbers (``+1.0`` per retrieval), read as ``h+ / (h+ + h-)``
  from a table of that reading for every pair of counts (:func:`_whole_readings`);
* every float that decides something (the crowding product, the effect interval, the sequential
  test's products) is the scalar code's expression evaluated element by element, the same IEEE
  operations in the same order, and where the scalar code settles a near-boundary case exactly
  in rational arithmetic, so does this, session by session, through the same functions.
* the discounted counters (``discounted``) are :class:`~forgetting.worth.DiscountedMemoryWorth`'s
  store, per session: a scale that decays at each update and values stored divided by it,
  rescaled where the scale falls below its bound.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from fractions import Fraction
from itertools import chain

import numpy as np
import numpy.typing as npt

from ..._validate import require_int
from ...decay.curves import (
    DEFAULT_BASELINE_STABILITY,
    DEFAULT_EVICTION_THRESHOLD,
    decay_eviction_delay,
    reinforced_stability,
)
from ...worth import DEFAULT_LOW_THRESHOLD, DEFAULT_MIN_EVIDENCE, DiscountedMemoryWorth, MemoryWorth
from ...worth.discounted import _RESCALE_BELOW
from ...worth.evidence import (
    _INTERVAL_MARGIN,
    _SEQUENTIAL_MARGIN,
    DEFAULT_ALPHA,
    DEFAULT_EFFECT_Z,
    EffectArms,
    _exact_evidence,
    _float_factors,
    _harmful,
    retrieval_chance,
)
from ..executor import Executor, map_seeds
from .policies import POLICIES, SEQUENTIAL, GovernancePolicy, Rules, _check_rules, noise_present
from .runs import GovernanceRun
from .world import (
    _CROWD_MARGIN,
    STALE,
    TRUE,
    GovernanceSession,
    GovernanceWorld,
    generate_governance_session,
    session_arrays,
)

__all__ = ["CHUNK_SESSIONS", "NEVER", "delay_table", "play_batch", "play_seeds", "run_governance_seeds"]

NEVER = 2**62
"""Eviction turn of a fact the engine never evicts (no delay, or the store that never evicts)."""
_RETRIEVED = ((), (STALE,), (TRUE,), (STALE, TRUE))
"""A task's retrieved facts by code: bit 0 the stale fact, bit 1 the true one."""

Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def _object_array(items: Sequence[object]) -> npt.NDArray[np.object_]:
    """``items`` as a 1-d object array, each item one element (a tuple too)."""
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        array[i] = item
    return array


_RETRIEVED_BY_CODE = _object_array(_RETRIEVED)
""":data:`_RETRIEVED` as an array, to look many codes up at once."""


def delay_table(eviction_threshold: float, touches: int) -> Ints:
    """``table[n]``: turns until the engine evicts a fact last touched with touch count ``n``
    (``1 .. touches``; :data:`NEVER` where it never does), as ``EbbinghausEngine`` computes them:
    ``S_1 = S0``, ``S_n = reinforced_stability(S_(n-1), n)``, delay ``decay_eviction_delay(S_n)``."""
    stability = float(DEFAULT_BASELINE_STABILITY)
    delays = [NEVER, decay_eviction_delay(stability, eviction_threshold)]
    for n in range(2, touches + 1):
        stability = reinforced_stability(stability, n)
        delays.append(decay_eviction_delay(stability, eviction_threshold))
    return np.array([NEVER if d is None else d for d in delays], dtype=np.int64)


def _crowded(draws: Floats, crowding: float, noise: int | Ints) -> Bools:
    """:func:`~.world.crowded_out` of each draw among ``noise`` noise items (an int, or ints
    broadcast against ``draws``): a float fast path, exact near the boundary."""
    if crowding == 0:
        return np.zeros(draws.shape, dtype=bool)
    items = np.broadcast_to(np.asarray(noise, dtype=np.int64), draws.shape)
    product = draws * (1.0 + crowding * items)  # the scalar rule's float operations, per element
    counted = items != 0
    out: Bools = counted & (product > 1.0)
    for s in zip(*np.nonzero(counted & (np.abs(product - 1.0) <= _CROWD_MARGIN))):
        out[s] = Fraction(float(draws[s])) * (1 + Fraction(crowding) * int(items[s])) >= 1
    return out


def _interval_harmful(where: Bools, n1: Ints, k1: Ints, n0: Ints, k0: Ints, z: float) -> Bools:
    """:func:`~forgetting.worth.evidence._harmful` of each element's arms (any shape, ``where``
    broadcast), in the elements ``where``: its float expressions element by element, those near
    the boundary through ``_harmful`` itself."""
    q1, q0 = (k1 + 1) / (n1 + 2), (k0 + 1) / (n0 + 2)
    gap = q1 - q0
    square, bound = gap * gap, z * z * (q1 * (1 - q1) / (n1 + 2) + q0 * (1 - q0) / (n0 + 2))
    decided = (np.abs(gap) > 1e-12) & (np.abs(square - bound) > _INTERVAL_MARGIN * np.maximum(square, bound))
    out: Bools = where & (gap < 0) & (square > bound)
    for s in zip(*np.nonzero(where & ~decided)):
        out[s] = _harmful(int(n1[s]), int(k1[s]), int(n0[s]), int(k0[s]), z)
    return out


class _Test:
    """The sequential test (:class:`~forgetting.worth.evidence.HarmTest`) of one fact per element
    of ``shape``."""

    def __init__(self, shape: int | tuple[int, ...], co_retrieval: float, alpha: float) -> None:
        self.q = retrieval_chance(co_retrieval)
        self.factors = _float_factors(self.q)
        self.alpha = alpha
        self.arms = [np.zeros(shape, dtype=np.int64) for _ in range(4)]  # n1, k1, n0, k0
        self.products = [np.ones(shape) for _ in self.factors]

    def add_and_check(self, where: Bools, retrieved: Bools, success: Bools) -> Bools:
        """Add the contrast tasks ``where`` (arms and products); where the mixture reached 1/alpha."""
        _add(self.arms, where, retrieved, success)
        for j, factor in enumerate(self.factors):
            step = np.where(
                retrieved,
                np.where(success, factor[True, True], factor[True, False]),
                np.where(success, factor[False, True], factor[False, False]),
            )
            self.products[j] = np.where(where, self.products[j] * step, self.products[j])
        total = self.products[0]
        for product in self.products[1:]:
            total = total + product  # sum(products), left to right
        scaled, bound = self.alpha * total, float(len(self.products))
        out: Bools = where & (scaled > bound)
        for s in zip(*np.nonzero(where & (np.abs(scaled - bound) <= _SEQUENTIAL_MARGIN * bound))):
            arms = EffectArms(*(int(a[s]) for a in self.arms))
            out[s] = Fraction(self.alpha) * _exact_evidence(arms, self.q) >= 1
        return out


def _add(arms: list[Ints], where: Bools, retrieved: Bools, success: Bools) -> None:
    """:meth:`~forgetting.worth.evidence.EffectArms.add` in the elements ``where``:
    ``arms = [n1, k1, n0, k0]``."""
    inside, outside = where & retrieved, where & ~retrieved
    arms[0] += inside
    arms[1] += inside & success
    arms[2] += outside
    arms[3] += outside & success


Reading = tuple[float, float, float, float]
"""A Memory Worth estimator's ``(prior, min_evidence, high_threshold, low_threshold)``."""


def _read_worth(positive: Floats, negative: Floats, reading: Reading) -> tuple[Floats, Bools]:
    """Memory Worth ``h+ / (h+ + h-)`` of each element (the prior at no evidence) and whether
    its class is ``low-value``, as :func:`~.policies._read_worth` reads one fact."""
    prior, min_evidence, high_threshold, low_threshold = reading
    total = positive + negative
    rate = np.divide(positive, total, out=np.full(positive.shape, prior), where=total > 0)
    low = (total >= min_evidence) & ~(rate >= high_threshold) & (rate <= low_threshold)
    return rate, low


@functools.lru_cache(maxsize=8)
def _whole_readings(bound: int, reading: Reading) -> tuple[Floats, Bools]:
    """:func:`_read_worth` of every pair of whole counters ``0 <= h+, h- <= bound`` (the
    counters of :class:`~forgetting.worth.MemoryWorth`, ``+1.0`` per retrieval, are exactly
    those floats), flat at ``h+ * (bound + 1) + h-``; read-only."""
    counts = np.arange(bound + 1, dtype=np.float64)
    rate, low = _read_worth(np.repeat(counts, bound + 1), np.tile(counts, bound + 1), reading)
    rate.flags.writeable = low.flags.writeable = False
    return rate, low


_DRAWS = ("draw_both", "draw_which", "draw_outcome", "draw_crowd", "draw_hard")


class _Batch:
    """Sessions of one world as arrays with the turn as row (``0 .. session_length``) and the
    session as column, and what the world decides from the draws alone, for every policy.

    Invariant: ``tasks = (turns, columns)`` holds every task's cell, session by session in task
    order, session ``s``'s being ``bounds[s] .. bounds[s + 1] - 1``; a cell without a task has
    ``has`` false and 0 draws.
    """

    def __init__(
        self,
        world: GovernanceWorld,
        seeds: Sequence[int],
        task_turns: Sequence[tuple[int, ...]],
        draws: Sequence[Floats],
    ) -> None:
        """``draws`` holds the tasks' draws of each kind of :data:`_DRAWS`, in the order of the tasks."""
        self.world, self.seeds, self.task_turns = world, seeds, task_turns
        size, length, shift = len(seeds), world.session_length, world.shift_turn
        counts = [len(turns) for turns in task_turns]
        self.bounds: list[int] = np.cumsum([0, *counts]).tolist()
        turns = np.fromiter(chain.from_iterable(task_turns), np.int64, self.bounds[-1])
        self.tasks = (turns, np.repeat(np.arange(size), counts))
        self.has = np.zeros((length + 1, size), dtype=bool)
        self.has[self.tasks] = True
        both, which, outcome, self.crowd_draws, hard_draws = (np.zeros((length + 1, size)) for _ in _DRAWS)
        for spread, values in zip((both, which, outcome, self.crowd_draws, hard_draws), draws):
            spread[self.tasks] = values
        hard = self.has & (np.arange(length + 1) > shift)[:, None] & (hard_draws < 0.5)
        split = both >= world.co_retrieval
        stale_only = which < np.where(hard, world.stale_alone(True), world.stale_alone(False))
        # dropped[turn, m]: a task retrieving one fact alone leaves m out (stale row 0, true row 1)
        self.dropped = np.stack([split & ~stale_only, split & stale_only], axis=1)
        # succeeds[turn, code, s]: the task succeeds if it retrieved the facts of code (_RETRIEVED)
        self.succeeds = np.zeros((length + 1, 4, size), dtype=bool)
        probability, hard_factor = world.outcome.probability, 1.0 - world.difficulty
        before = (np.arange(length + 1) < shift)[:, None]
        for code in range(4):
            has_true, has_stale = bool(code & 2), bool(code & 1)
            p = np.where(before, probability(code > 0, False), probability(has_true, has_stale))
            p = np.where(hard, p * hard_factor, p)
            self.succeeds[:, code] = self.has & (outcome < p)
        self.busy = frozenset(np.flatnonzero(self.has.any(axis=1)).tolist())  # turns with a task

    @classmethod
    def of_sessions(cls, sessions: Sequence[GovernanceSession]) -> _Batch:
        """The batch of ``sessions`` (one world's); ``ValueError`` unless each has one draw of
        each kind per task."""
        if any(len(getattr(s, name)) != len(s.task_turns) for s in sessions for name in _DRAWS):
            raise ValueError("sessions must hold one draw of each kind per task")
        total = sum(len(s.task_turns) for s in sessions)
        draws = [
            np.fromiter(chain.from_iterable(getattr(s, name) for s in sessions), np.float64, total)
            for name in _DRAWS
        ]
        return cls(sessions[0].world, [s.seed for s in sessions], [s.task_turns for s in sessions], draws)

    @classmethod
    def of_seeds(cls, world: GovernanceWorld, seeds: Sequence[int]) -> _Batch:
        """The batch of the sessions :func:`~.world.generate_governance_session` draws for ``seeds``."""
        drawn = [session_arrays(world, seed) for seed in seeds]
        draws = [np.concatenate([arrays[k] for _, arrays in drawn]) for k in range(len(_DRAWS))]
        return cls(world, seeds, [turns for turns, _ in drawn], draws)

    def crowded(self, noise_delay: int | None) -> Bools:
        """Each task's :func:`~.world.crowded_out` with the noise of a store whose untouched
        items leave after ``noise_delay`` turns (``None``: never)."""
        world = self.world
        if not world.crowding:
            return np.zeros(self.has.shape, dtype=bool)
        noise = [
            noise_present(t, world.noise_per_turn, noise_delay, stepped=False) for t in range(len(self.has))
        ]
        return self.has & _crowded(self.crowd_draws, world.crowding, np.array(noise)[:, None])


def play_batch(
    sessions: Sequence[GovernanceSession], policy: GovernancePolicy | str, rules: Rules
) -> list[GovernanceRun]:
    """Play ``policy`` (one of :data:`~.policies.ALL_POLICIES`) on every session of ``sessions`` (one world).

    ``rules`` is :data:`~.policies.Rules`, as :func:`~.policies.run_governance` takes them.
    Raises ``ValueError`` for a bad rule or policy, or sessions of different worlds.
    """
    if not sessions:
        return []
    policy = _check_rules(sessions[0], policy, rules)
    world = sessions[0].world
    if any(not isinstance(s, GovernanceSession) or s.world != world for s in sessions):
        raise ValueError("sessions must all be GovernanceSessions of one world")
    return _play(_Batch.of_sessions(sessions), policy, rules)


def play_seeds(
    world: GovernanceWorld, seeds: Sequence[int], policies: Sequence[GovernancePolicy | str], rules: Rules
) -> list[list[GovernanceRun]]:
    """Each seed's runs of every policy of ``policies``, in that order: :func:`play_batch` of each
    policy on the sessions :func:`~.world.generate_governance_session` draws for ``seeds`` (ints
    >= 0), their arrays built once for all policies. Raises as :func:`play_batch` does."""
    if not seeds:
        return []
    first = generate_governance_session(world, seeds[0])  # checks world and seed
    members = [_check_rules(first, policy, rules) for policy in policies]
    batch = _Batch.of_seeds(world, [require_int("seed", seed, 0, allow_numpy=True) for seed in seeds])
    return [list(runs) for runs in zip(*(_play(batch, p, rules) for p in members))]


def run_governance_seeds(
    world: GovernanceWorld,
    n_seeds: int,
    base_seed: int = 0,
    eviction_threshold: float = DEFAULT_EVICTION_THRESHOLD,
    min_evidence: float = DEFAULT_MIN_EVIDENCE,
    low_threshold: float = DEFAULT_LOW_THRESHOLD,
    policies: Sequence[GovernancePolicy | str] = POLICIES,
    executor: Executor | None = None,
    discount: float = 1.0,
    effect_z: float = DEFAULT_EFFECT_Z,
    alpha: float = DEFAULT_ALPHA,
) -> dict[str, list[GovernanceRun]]:
    """Every policy in ``policies`` on the sessions of seeds ``base_seed .. base_seed + n_seeds - 1``.

    ``executor`` (default: this process) runs chunks of seeds; the runs, listed in seed
    order, do not depend on it. Raises ``ValueError`` unless ``n_seeds >= 1`` and
    ``base_seed >= 0`` are ints.
    """
    n_seeds = require_int("n_seeds", n_seeds, 1, allow_numpy=True)
    base_seed = require_int("base_seed", base_seed, 0, allow_numpy=True)
    rules = (eviction_threshold, min_evidence, low_threshold, discount, effect_z, alpha)
    chunk = functools.partial(_governance_chunk, world, tuple(policies), rules)
    seeds = range(base_seed, base_seed + n_seeds)
    per_seed = map_seeds(
        chunk, seeds, executor, chunk_size=CHUNK_SESSIONS, label=f"governance, {n_seeds} seeds"
    )
    return {p: [runs[i] for runs in per_seed] for i, p in enumerate(policies)}


CHUNK_SESSIONS = 500
"""Sessions per chunk of :func:`run_governance_seeds`: the batch plays a chunk's sessions at once,
so a larger chunk costs less per session (beyond-governance's cells: 14.8 CPU-s with 250, 13.4
with 500); 500 keeps the published 1000 seeds in two chunks, one per worker of ``--workers 2``."""


def _governance_chunk(
    world: GovernanceWorld, policies: tuple[GovernancePolicy | str, ...], rules: Rules, seeds: Sequence[int]
) -> list[list[GovernanceRun]]:
    """Each seed's runs of every policy, :func:`play_seeds` on the chunk's sessions (the runs
    :func:`~.policies.run_governance` gives, field for field)."""
    return play_seeds(world, seeds, policies, rules)


def _play(batch: _Batch, policy: GovernancePolicy, rules: Rules) -> list[GovernanceRun]:
    """:func:`play_batch` of ``policy`` on the checked sessions of ``batch``.

    The state of both facts is one array each, fact by row (stale 0, true 1) and session by
    column, updated with the scalar loop's element operations; ``alive[turn]`` is what the
    working set holds after the turn's step, from which the removal turns and sizes are read.
    """
    eviction_threshold, min_evidence, low_threshold, discount, effect_z, alpha = rules
    world = batch.world
    size, length, shift = len(batch.seeds), world.session_length, world.shift_turn
    evicts = policy.evicts
    delays = delay_table(float(eviction_threshold), length + 2) if evicts else np.full(length + 3, NEVER)
    noise_delay = None if delays[1] == NEVER else int(delays[1])
    out = batch.crowded(noise_delay)
    reach = batch.has & ~out

    present = np.zeros((2, size), dtype=bool)
    touches = np.zeros((2, size), dtype=np.int64)  # <= turn <= length: an index of delays
    evict = np.full((2, size), NEVER, dtype=np.int64)
    deprecated = np.zeros((2, size), dtype=bool)
    alive = np.zeros((length + 1, 2, size), dtype=bool)
    worth: MemoryWorth | None = None
    if policy in (GovernancePolicy.WORTH, GovernancePolicy.COMBINED):
        worth = MemoryWorth(min_evidence=min_evidence, low_threshold=low_threshold)
    elif policy is GovernancePolicy.DISCOUNTED:
        worth = DiscountedMemoryWorth(
            discount=discount, min_evidence=min_evidence, low_threshold=low_threshold
        )
        decay = discount**1  # formulas.decayed(scale, discount), one episode
    if worth is not None:
        reading = (worth.prior, worth.min_evidence, worth.high_threshold, worth.low_threshold)
        if policy is not GovernancePolicy.DISCOUNTED:  # whole counters: h+ + h- <= a fact's tasks <= length
            rates, lows = _whole_readings(length, reading)
    scale = np.ones(size)  # the discounted store's scale; its counters are stored / scale
    positive, negative = np.zeros((2, size)), np.zeros((2, size))  # discounted: h+, h- stored
    counted = np.zeros((2, size), dtype=np.int64)  # the others: h+ * (length + 1) + h-
    arms = [np.zeros((2, size), dtype=np.int64) for _ in range(4)]
    test = _Test((2, size), world.co_retrieval, alpha) if policy is SEQUENTIAL else None
    successes = np.zeros((length + 1, size), dtype=bool)
    codes = np.zeros((length + 1, size), dtype=np.int64)
    trace = np.zeros((length + 1, 2, size))  # the worth after each task (discounted)
    keys = np.zeros((length + 1, 2, size), dtype=np.int64)  # the whole counters after each task
    columns = np.arange(size)

    for turn in range(1, length + 1):
        for fact, born in ((0, 1), (1, shift)):
            if turn == born:
                present[fact], touches[fact], evict[fact] = True, 1, turn + delays[1]
        if turn == shift and policy is GovernancePolicy.NEWEST:
            deprecated[0] = True
        if turn in batch.busy:
            live = present & ~deprecated
            got = reach[turn] & live & ~(live[::-1] & batch.dropped[turn])
            code = got[0] + 2 * got[1]
            success = batch.succeeds[turn, code, columns]
            if turn >= shift and policy is GovernancePolicy.EFFECT:
                contrast = batch.has[turn] & live[0] & live[1]
                if contrast.any():  # no contrast task: no arm and no decision changes
                    _add(arms, contrast, got, success)
                    n1, k1, n0, k0 = arms
                    deprecated |= _interval_harmful(contrast, n1, k1, n0, k0, float(effect_z))
            if turn >= shift and test is not None:
                contrast = reach[turn] & live[0] & live[1]
                if contrast.any():
                    deprecated |= test.add_and_check(contrast, got, success)
            touches += got
            evict = np.where(got, turn + delays[touches], evict)
            if worth is not None:
                if (
                    policy is GovernancePolicy.DISCOUNTED
                ):  # DiscountedMemoryWorth._add: decay, rescale, add 1 / scale
                    updated = got[0] | got[1]
                    scale = np.where(updated, scale * decay, scale)
                    rescaled = updated & (scale < _RESCALE_BELOW)
                    positive[:, rescaled] *= scale[rescaled]
                    negative[:, rescaled] *= scale[rescaled]
                    scale[rescaled] = 1.0
                    step = 1.0 / scale
                    positive = np.where(got & success, positive + step, positive)
                    negative = np.where(got & ~success, negative + step, negative)
                    rate, low = _read_worth(positive * scale, negative * scale, reading)  # counters()
                    trace[turn] = rate
                else:
                    counted += np.where(success, length + 1, 1) * got
                    low = lows[counted]
                    keys[turn] = counted
                deprecated |= got & low
            successes[turn] = success
            codes[turn] = code
        present &= evict > turn  # the engine's step
        np.logical_and(present, ~deprecated, out=alive[turn])

    removed = []
    for fact, born in ((0, 1), (1, shift)):
        gone = ~alive[born:, fact]  # once a fact leaves, it never comes back
        removed.append(np.where(gone.any(axis=0), gone.argmax(axis=0) + born, 0).tolist())
    noise = [noise_present(t, world.noise_per_turn, noise_delay, stepped=True) for t in range(length + 1)]
    sizes = (alive[:, 0].astype(np.int64) + alive[:, 1] + np.array(noise)[:, None])[1:].T.tolist()
    tasks = batch.tasks  # every task's cell, session by session: slices of these are each run's
    flags = tuple(successes[tasks].tolist())
    retrieved = tuple(_RETRIEVED_BY_CODE[codes[tasks]].tolist())
    crowded = tuple(out[tasks].tolist())
    traced = None
    if worth is not None:
        if policy is not GovernancePolicy.DISCOUNTED:
            trace = rates[keys]
        traced = tuple(zip(trace[tasks[0], 0, tasks[1]].tolist(), trace[tasks[0], 1, tasks[1]].tolist()))
    runs = []
    for s, (seed, task_turns) in enumerate(zip(batch.seeds, batch.task_turns)):
        first, last = batch.bounds[s], batch.bounds[s + 1]
        runs.append(
            GovernanceRun(
                policy,
                seed,
                shift,
                task_turns,
                flags[first:last],
                retrieved[first:last],
                tuple(sizes[s]),
                None if traced is None else traced[first:last],
                removed[0][s] or None,
                removed[1][s] or None,
                crowded[first:last],
            )
        )
    return runs
