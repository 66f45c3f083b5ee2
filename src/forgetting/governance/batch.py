"""The governance policies played on many sessions of one world at once: turn by turn, each
decision an array over the sessions.

:func:`play_batch` returns, for each session, the :class:`~.runs.GovernanceRun` that
:func:`~.policies.run_governance` returns for it, field for field (``tests/test_governance_batch.py``
holds the two to that on random worlds, every policy). It is that loop with
the sessions as the array axis:

* the decay engine holds only the two deployment facts (the noise is counted, as there), so its
  state is per fact and session: present, touch count, eviction turn. A touch sets the eviction
  turn from a table of the engine's own delays by touch count (:func:`delay_table`, the same
  :func:`~forgetting.decay.curves.reinforced_stability` and
  :func:`~forgetting.decay.curves.decay_eviction_delay` the engine calls);
* Memory Worth's counters are whole numbers (``+1.0`` per retrieval), read as ``h+ / (h+ + h-)``;
* every float that decides something (the crowding product, the effect interval, the sequential
  test's products) is the scalar code's expression evaluated element by element, the same IEEE
  operations in the same order, and where the scalar code settles a near-boundary case exactly
  in rational arithmetic, so does this, session by session, through the same functions.
* the discounted counters (``discounted``) are :class:`~forgetting.worth.DiscountedMemoryWorth`'s
  store, per session: a scale that decays at each update and values stored divided by it,
  rescaled where the scale falls below its bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from ..decay.curves import DEFAULT_BASELINE_STABILITY, decay_eviction_delay, reinforced_stability
from ..worth import DiscountedMemoryWorth, MemoryWorth
from ..worth.discounted import _RESCALE_BELOW
from .evidence import (
    _INTERVAL_MARGIN,
    _SEQUENTIAL_MARGIN,
    EffectArms,
    _exact_evidence,
    _float_factors,
    _harmful,
    retrieval_chance,
)
from .policies import SEQUENTIAL, Rules, _check_rules, noise_present
from .runs import GovernanceRun
from .world import _CROWD_MARGIN, STALE, TRUE, GovernanceSession

__all__ = ["NEVER", "delay_table", "play_batch"]

NEVER = 2**62
"""Eviction turn of a fact the engine never evicts (no delay, or the store that never evicts)."""
_RETRIEVED = ((), (STALE,), (TRUE,), (STALE, TRUE))
"""A task's retrieved facts by code: bit 0 the stale fact, bit 1 the true one."""

Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


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


def _crowded(draws: Floats, crowding: float, noise: int) -> Bools:
    """:func:`~.world.crowded_out` of each draw (a float fast path, exact near the boundary)."""
    if crowding == 0 or noise == 0:
        return np.zeros(draws.shape, dtype=bool)
    product = draws * (1.0 + crowding * noise)
    out: Bools = product > 1.0
    for s in np.flatnonzero(np.abs(product - 1.0) <= _CROWD_MARGIN):
        out[s] = Fraction(float(draws[s])) * (1 + Fraction(crowding) * noise) >= 1
    return out


def _interval_harmful(where: Bools, n1: Ints, k1: Ints, n0: Ints, k0: Ints, z: float) -> Bools:
    """:func:`~.evidence._harmful` of each session's arms, in the sessions ``where``: its float
    expressions element by element, those near the boundary through ``_harmful`` itself."""
    q1, q0 = (k1 + 1) / (n1 + 2), (k0 + 1) / (n0 + 2)
    gap = q1 - q0
    square, bound = gap * gap, z * z * (q1 * (1 - q1) / (n1 + 2) + q0 * (1 - q0) / (n0 + 2))
    decided = (np.abs(gap) > 1e-12) & (np.abs(square - bound) > _INTERVAL_MARGIN * np.maximum(square, bound))
    out: Bools = where & (gap < 0) & (square > bound)
    for s in np.flatnonzero(where & ~decided):
        out[s] = _harmful(int(n1[s]), int(k1[s]), int(n0[s]), int(k0[s]), z)
    return out


class _Test:
    """The sequential test (:class:`~.evidence.HarmTest`) of one fact in every session."""

    def __init__(self, size: int, co_retrieval: float, alpha: float) -> None:
        self.q = retrieval_chance(co_retrieval)
        self.factors = _float_factors(self.q)
        self.alpha = alpha
        self.arms = [np.zeros(size, dtype=np.int64) for _ in range(4)]  # n1, k1, n0, k0
        self.products = [np.ones(size) for _ in self.factors]

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
        for s in np.flatnonzero(where & (np.abs(scaled - bound) <= _SEQUENTIAL_MARGIN * bound)):
            arms = EffectArms(*(int(a[s]) for a in self.arms))
            out[s] = Fraction(self.alpha) * _exact_evidence(arms, self.q) >= 1
        return out


def _add(arms: list[Ints], where: Bools, retrieved: Bools, success: Bools) -> None:
    """:meth:`~.evidence.EffectArms.add` in the sessions ``where``: ``arms = [n1, k1, n0, k0]``."""
    inside, outside = where & retrieved, where & ~retrieved
    arms[0] += inside
    arms[1] += inside & success
    arms[2] += outside
    arms[3] += outside & success


def play_batch(sessions: Sequence[GovernanceSession], policy: str, rules: Rules) -> list[GovernanceRun]:
    """Play ``policy`` (one of :data:`~.policies.ALL_POLICIES`) on every session of ``sessions`` (one world).

    ``rules`` is :data:`~.policies.Rules`, as :func:`~.policies.run_governance` takes them.
    Raises ``ValueError`` for a bad rule or policy, or sessions of different worlds.
    """
    if not sessions:
        return []
    _check_rules(sessions[0], policy, rules)
    world = sessions[0].world
    if any(not isinstance(s, GovernanceSession) or s.world != world for s in sessions):
        raise ValueError("sessions must all be GovernanceSessions of one world")
    eviction_threshold, min_evidence, low_threshold, discount, effect_z, alpha = rules
    size, length, shift = len(sessions), world.session_length, world.shift_turn
    evicts = policy != "worth"
    delays = delay_table(float(eviction_threshold), length + 2) if evicts else np.full(length + 3, NEVER)
    noise_delay = None if delays[1] == NEVER else int(delays[1])

    task = np.full((size, length + 1), -1, dtype=np.int64)
    names = ("draw_both", "draw_which", "draw_outcome", "draw_crowd", "draw_hard")
    draws = {name: np.zeros((size, length + 1)) for name in names}
    for s, session in enumerate(sessions):
        turns = np.array(session.task_turns, dtype=np.int64)
        task[s, turns] = np.arange(turns.size)
        for name in names:
            draws[name][s, turns] = getattr(session, name)

    present = {m: np.zeros(size, dtype=bool) for m in (STALE, TRUE)}
    touches = {m: np.zeros(size, dtype=np.int64) for m in (STALE, TRUE)}
    evict = {m: np.full(size, NEVER, dtype=np.int64) for m in (STALE, TRUE)}
    deprecated = {m: np.zeros(size, dtype=bool) for m in (STALE, TRUE)}
    removed = {m: np.zeros(size, dtype=np.int64) for m in (STALE, TRUE)}
    worth: MemoryWorth | None = None
    if policy in ("worth", "combined"):
        worth = MemoryWorth(min_evidence=min_evidence, low_threshold=low_threshold)
    elif policy == "discounted":
        worth = DiscountedMemoryWorth(discount, min_evidence=min_evidence, low_threshold=low_threshold)
        decay = discount**1  # formulas.decayed(scale, discount), one episode
    scale = np.ones(size)  # the discounted store's scale; its counters are stored / scale
    counts = {m: (np.zeros(size), np.zeros(size)) for m in (STALE, TRUE)}  # h+, h- (discounted: stored)
    arms = {m: [np.zeros(size, dtype=np.int64) for _ in range(4)] for m in (STALE, TRUE)}
    tests = {m: _Test(size, world.co_retrieval, alpha) for m in (STALE, TRUE)} if policy == SEQUENTIAL else {}
    successes = np.zeros((size, length + 1), dtype=bool)
    codes = np.zeros((size, length + 1), dtype=np.int64)
    crowded = np.zeros((size, length + 1), dtype=bool)
    trace = {m: np.zeros((size, length + 1)) for m in (STALE, TRUE)}
    sizes = np.zeros((size, length + 1), dtype=np.int64)
    probability = world.outcome.probability
    after_shift = np.array(
        [[probability(t, st) for st in (False, True)] for t in (False, True)]
    )  # [true, stale]
    hard_factor = 1.0 - world.difficulty
    alone_hard, alone_easy = world.stale_alone(True), world.stale_alone(False)

    for turn in range(1, length + 1):
        for mem_id, born in ((STALE, 1), (TRUE, shift)):
            if turn == born:
                present[mem_id][:], touches[mem_id][:] = True, 1
                evict[mem_id][:] = turn + delays[1]
        if turn == shift and policy == "newest":
            deprecated[STALE][:] = True
        has = task[:, turn] >= 0
        if has.any():
            available = {m: has & present[m] & ~deprecated[m] for m in (STALE, TRUE)}
            contrast = available[STALE] & available[TRUE]
            hard = has & (turn > shift) & (draws["draw_hard"][:, turn] < 0.5)
            split = contrast & (draws["draw_both"][:, turn] >= world.co_retrieval)
            stale_only = draws["draw_which"][:, turn] < np.where(hard, alone_hard, alone_easy)
            noise = (
                noise_present(turn, world.noise_per_turn, noise_delay, stepped=False) if world.crowding else 0
            )
            out = has & _crowded(draws["draw_crowd"][:, turn], world.crowding, noise)
            got = {
                STALE: available[STALE] & ~(split & ~stale_only) & ~out,
                TRUE: available[TRUE] & ~(split & stale_only) & ~out,
            }
            if turn < shift:
                p = np.where(got[STALE] | got[TRUE], probability(True, False), probability(False, False))
            else:
                p = after_shift[got[TRUE].astype(np.intp), got[STALE].astype(np.intp)]
                p = np.where(hard, p * hard_factor, p)
            success = has & (draws["draw_outcome"][:, turn] < p)
            if turn >= shift and policy == "effect":
                for mem_id in (STALE, TRUE):
                    _add(arms[mem_id], contrast, got[mem_id], success)
                    n1, k1, n0, k0 = arms[mem_id]
                    deprecated[mem_id] |= _interval_harmful(contrast, n1, k1, n0, k0, float(effect_z))
            if turn >= shift and tests:
                for mem_id, test in tests.items():
                    deprecated[mem_id] |= test.add_and_check(contrast & ~out, got[mem_id], success)
            for mem_id in (STALE, TRUE):
                recalled = got[mem_id]
                touches[mem_id] += recalled
                evict[mem_id] = np.where(
                    recalled, turn + delays[np.minimum(touches[mem_id], length + 2)], evict[mem_id]
                )
            if worth is not None:
                if (
                    policy == "discounted"
                ):  # DiscountedMemoryWorth._add: decay the scale, rescale, add 1 / scale
                    updated = got[STALE] | got[TRUE]
                    scale = np.where(updated, scale * decay, scale)
                    rescaled = updated & (scale < _RESCALE_BELOW)
                    for store in (store for pair in counts.values() for store in pair):
                        store[rescaled] *= scale[rescaled]
                    scale[rescaled] = 1.0
                for mem_id in (STALE, TRUE):
                    positive, negative = counts[mem_id]
                    if policy == "discounted":
                        positive[:] = np.where(got[mem_id] & success, positive + 1.0 / scale, positive)
                        negative[:] = np.where(got[mem_id] & ~success, negative + 1.0 / scale, negative)
                        positive, negative = positive * scale, negative * scale  # counters()
                    else:
                        positive += got[mem_id] & success
                        negative += got[mem_id] & ~success
                    total = positive + negative
                    rate = np.divide(positive, total, out=np.full(size, worth.prior), where=total > 0)
                    low = (
                        (total >= worth.min_evidence)
                        & ~(rate >= worth.high_threshold)
                        & (rate <= worth.low_threshold)
                    )
                    deprecated[mem_id] |= got[mem_id] & low
                    trace[mem_id][:, turn] = rate
            successes[:, turn] = success
            codes[:, turn] = got[STALE] + 2 * got[TRUE]
            crowded[:, turn] = out
        for mem_id in (STALE, TRUE):  # the engine's step
            present[mem_id] &= evict[mem_id] > turn
        for mem_id, born in ((STALE, 1), (TRUE, shift)):
            if turn >= born:
                gone = (removed[mem_id] == 0) & (deprecated[mem_id] | ~present[mem_id])
                removed[mem_id][gone] = turn
        held = present[STALE].astype(np.int64) + present[TRUE]
        held_deprecated = (present[STALE] & deprecated[STALE]).astype(np.int64) + (
            present[TRUE] & deprecated[TRUE]
        )
        sizes[:, turn] = (
            held + noise_present(turn, world.noise_per_turn, noise_delay, stepped=True) - held_deprecated
        )

    runs = []
    for s, session in enumerate(sessions):
        cols = list(session.task_turns)
        runs.append(
            GovernanceRun(
                policy,
                session.seed,
                shift,
                session.task_turns,
                tuple(successes[s, cols].tolist()),
                tuple(_RETRIEVED[c] for c in codes[s, cols].tolist()),
                tuple(sizes[s, 1:].tolist()),
                tuple(zip(trace[STALE][s, cols].tolist(), trace[TRUE][s, cols].tolist()))
                if worth is not None
                else None,
                int(removed[STALE][s]) or None,
                int(removed[TRUE][s]) or None,
                tuple(crowded[s, cols].tolist()),
            )
        )
    return runs
