"""One fact's timeline: where its recalls fall around an eviction, and how low its retention gets.

Per fact of a :class:`~forgetting.studies.decay.simulation.Trace`:

* :func:`recalls_around_eviction` -- its recalls before and after the turn it was evicted, and
  the gap from its last touch to that turn;
* :func:`held_moments` -- the moments its decay retention is lowest while it is held: at each
  recall that finds it (before the recall reinforces it) and at the last turn it is present
  (the session's end, or the turn before its eviction). Retention falls between touches, so
  the lowest of these is the lowest the fact ever has while held.

The same lowest retention over many sessions (:func:`lowest_held_retention`, batched on
:mod:`~forgetting.studies.decay.batch`) and its bound over every seed the schedule can draw
(:func:`held_retention_floor`, from :func:`recall_turn_bounds`). Both take the largest integer
gap after ``k`` recalls and evaluate :func:`~forgetting.decay.curves.retention` once per ``k``
in Python: no vectorized float function is on the result path.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..._validate import raise_problems, require_int
from ...decay.curves import DEFAULT_BASELINE_STABILITY, retention, stability_after_recalls, stability_problem
from ..executor import Executor, map_seeds
from . import batch, metrics
from .frontier import frontier_point, window_certain_loss_below, window_min_full_recall
from .policies import DecayPolicy, EngineKind, WindowPolicy
from .sessions import SessionConfig, latest_last_recall
from .simulation import Trace
from .study import reaches_first_recall, recall_outcomes, trace_session

__all__ = [
    "RecallsAroundEviction",
    "recalls_around_eviction",
    "recall_rows",
    "HeldRetention",
    "held_moments",
    "lowest_in_trace",
    "held_elapsed",
    "lowest_held_retention",
    "recall_turn_bounds",
    "held_retention_bounds",
    "held_retention_floor",
    "held_retention_values",
    "jitter_text",
    "window_zero_causes",
    "window_zero_values",
    "window_zero_expected",
    "trace_values",
    "silent_loss_seeds",
    "require_silent_loss",
    "ARTICLE_TRACE_RECALLS",
    "article_trace_checks",
]


@dataclass(frozen=True)
class RecallsAroundEviction:
    """A fact's recalls split at its eviction turn (``evicted_turn`` ``None``: never evicted).

    ``before`` are the recalls that found it, ``after`` the ones that came once it was gone,
    ``last_touch`` its last touch before the eviction (registration or the last recall in
    ``before``) and ``gap = evicted_turn - last_touch`` (``None`` when never evicted).
    """

    recall_turns: tuple[int, ...]
    evicted_turn: int | None
    before: tuple[int, ...]
    after: tuple[int, ...]
    last_touch: int
    gap: int | None

    @property
    def first_after(self) -> int:
        """The first recall after the eviction; ``ValueError`` if there is none."""
        if not self.after:
            raise ValueError(
                f"no recall comes after the eviction (evicted_turn={self.evicted_turn}, "
                f"recalls {list(self.recall_turns)}); a later recall is needed"
            )
        return self.after[0]


def _recalls(trace: Trace, fact: str) -> list[tuple[int, bool]]:
    if fact not in trace.created_turn:
        raise ValueError(f"fact must be an id registered in the trace, got {fact!r}")
    return [(turn, found) for turn, mem_id, found in trace.recalls if mem_id == fact]


def recalls_around_eviction(trace: Trace, fact: str) -> RecallsAroundEviction:
    """``fact``'s recall turns split at its eviction turn (a turn's recalls come before its eviction
    check, so a recall on the eviction turn would have found the fact and postponed it)."""
    recalls = _recalls(trace, fact)
    evicted = trace.evicted_turn.get(fact)
    turns = tuple(turn for turn, _ in recalls)
    before = tuple(t for t in turns if evicted is None or t < evicted)
    after = tuple(t for t in turns if evicted is not None and t >= evicted)
    last_touch = before[-1] if before else trace.created_turn[fact]
    return RecallsAroundEviction(
        turns, evicted, before, after, last_touch, None if evicted is None else evicted - last_touch
    )


def silent_loss_seeds(
    config: SessionConfig, window: WindowPolicy, count: int = 5, tries: int = 1000
) -> list[int]:
    """The first ``count`` seeds (of ``0 .. tries - 1``) whose session, ``config`` otherwise, has a
    recall of its first foundational fact after ``window`` dropped it: the sessions the trace
    chapter can tell (a loss the window never notices)."""
    seeds = []
    for seed in range(tries):
        trace = trace_session(window, dataclasses.replace(config, seed=seed))
        if trace.foundational_ids and recalls_around_eviction(trace, trace.foundational_ids[0]).after:
            seeds.append(seed)
            if len(seeds) == count:
                break
    return seeds


def require_silent_loss(trace: Trace, fact: str, config: SessionConfig, window: WindowPolicy) -> None:
    """``ValueError`` naming the seed, and seeds that work, unless the window (``trace``) drops
    ``fact`` before a later recall of it: the trace chapter has nothing to show without one."""
    split = recalls_around_eviction(trace, fact)
    if split.after:
        return
    what = (
        "never drops the fact"
        if split.evicted_turn is None
        else f"drops the fact at turn {split.evicted_turn}, after its last recall"
    )
    seeds = silent_loss_seeds(config, window)
    raise ValueError(
        f"seed must give a session in which the window drops the fact before a later recall of it; "
        f"with seed={config.seed} the window {what} (recalls at turns {list(split.recall_turns)}). "
        f"Seeds that do, with the other parameters as given: {seeds or 'none of the first 1000'}"
    )


def recall_rows(traces: Mapping[str, Trace], fact: str) -> list[dict[str, Any]]:
    """One row per recall of ``fact``: its ``turn`` and, per trace name ``k``, ``k_found``."""
    found = {name: dict(_recalls(trace, fact)) for name, trace in traces.items()}
    turns = sorted(set().union(*(f.keys() for f in found.values())))
    return [{"turn": t, **{f"{name}_found": f[t] for name, f in found.items()}} for t in turns]


@dataclass(frozen=True)
class HeldRetention:
    """A moment a fact is held: ``elapsed`` turns after its last touch, ``recalls`` recalls behind it.

    ``retention = retention(elapsed, stability)`` with ``stability = S0`` reinforced ``recalls``
    times; ``turn`` is where it happens (``None`` for a bound or a minimum over sessions).
    """

    elapsed: int
    recalls: int
    stability: float
    retention: float
    turn: int | None = None

    def no_lower_than(self, other: HeldRetention) -> bool:
        """``retention >= other.retention``, decided exactly: retention falls as ``elapsed / S``
        grows, compared as fractions (``S`` read as the exact value of its float), so the answer
        does not depend on the last digits of ``exp`` on this CPU."""
        return Fraction(self.elapsed) / Fraction(self.stability) <= Fraction(other.elapsed) / Fraction(
            other.stability
        )


def _falling(moment: HeldRetention) -> Fraction:
    """Sort key, ascending in retention and decided exactly: ``-elapsed / S`` as a fraction."""
    return -Fraction(moment.elapsed) / Fraction(moment.stability)


def _moment(elapsed: int, recalls: int, baseline_stability: float, turn: int | None = None) -> HeldRetention:
    stability = stability_after_recalls(recalls, baseline_stability)
    return HeldRetention(elapsed, recalls, stability, retention(elapsed, stability), turn)


def held_moments(
    trace: Trace, fact: str, baseline_stability: float = DEFAULT_BASELINE_STABILITY
) -> list[HeldRetention]:
    """Each recall that finds ``fact`` (before it reinforces) and the last turn it is held, in turn order.

    ``elapsed`` counts from the previous touch (registration, then each finding recall); the
    last moment is turn ``L`` if the fact is present at the end, else the turn before its
    eviction. The retention is the decay engine's at ``S0 = baseline_stability``.
    """
    raise_problems([stability_problem(baseline_stability, "baseline_stability")])
    touch, recalls, moments = trace.created_turn.get(fact, 0), 0, []
    for turn, found in _recalls(trace, fact):
        if found:
            moments.append(_moment(turn - touch, recalls, baseline_stability, turn))
            touch, recalls = turn, recalls + 1
    evicted = trace.evicted_turn.get(fact)
    last = trace.session_length if evicted is None else evicted - 1
    moments.append(_moment(last - touch, recalls, baseline_stability, last))
    return moments


def lowest_in_trace(
    trace: Trace, fact: str, baseline_stability: float = DEFAULT_BASELINE_STABILITY
) -> HeldRetention:
    """The :func:`held_moments` entry of lowest retention (the earliest of equals)."""
    return min(held_moments(trace, fact, baseline_stability), key=_falling)


def held_elapsed(replay: batch.BatchReplay) -> batch.IntArray:
    """Turns since the last touch at each held moment, shape (sessions, facts, recalls + 1).

    Entry ``k`` is the moment ending the fact's ``k``-th interval between touches (``k`` recalls
    behind it): the ``k + 1``-th recall if it found the fact, else the last turn the fact is
    held (``L``, or its eviction turn minus 1) if it had exactly ``k`` finding recalls; ``-1``
    where no such moment exists. Integer arithmetic only.
    """
    turns, found = replay.recall_turns, replay.recall_found
    start = np.full(turns.shape[:2] + (1,), batch.FACT_REGISTRATION_TURN, dtype=np.int64)
    touches = np.concatenate([start, turns], axis=2)
    elapsed = np.full(touches.shape, -1, dtype=np.int64)
    elapsed[:, :, :-1] = np.where(found, turns - touches[:, :, :-1], -1)
    finding = found.sum(axis=2)[:, :, None]
    last_touch = np.take_along_axis(touches, finding, axis=2)[:, :, 0]
    evicted = replay.fact_evicted_turn
    last_held = np.where(evicted > 0, evicted - 1, replay.config.session_length)
    np.put_along_axis(elapsed, finding, (last_held - last_touch)[:, :, None], axis=2)
    return elapsed


def _max_elapsed_chunk(
    delays: tuple[int | None, ...], config: SessionConfig, seeds: Sequence[int]
) -> list[tuple[int, ...]]:
    """Per seed of ``seeds``: the largest :func:`held_elapsed` of its facts after each ``k`` recalls."""
    replay = batch.replay_batch(delays, config, batch.recall_turn_array(config, seeds), list(seeds))
    widest = held_elapsed(replay).max(axis=1)
    return [tuple(row) for row in widest.tolist()]


def _lowest(widest: Sequence[int], baseline_stability: float) -> HeldRetention:
    """Lowest retention over ``k`` of the widest gap ``widest[k]`` after ``k`` recalls (``-1``: none)."""
    moments = [_moment(gap, k, baseline_stability) for k, gap in enumerate(widest) if gap >= 0]
    return min(moments, key=_falling)


def lowest_held_retention(
    config: SessionConfig, n_seeds: int, policy: DecayPolicy, executor: Executor | None = None
) -> HeldRetention:
    """The lowest retention any foundational fact has while held, over seeds ``0..n_seeds-1``.

    :func:`held_moments` of every fact of every session under ``policy``, computed with
    :func:`held_elapsed` on the batch replay: for each ``k`` the widest gap (an integer, exact),
    then ``min_k retention(widest_k, S_k)`` (retention falls with the gap at a fixed ``S``).
    ``executor`` runs chunks of seeds; the result does not depend on it.
    """
    require_int("n_seeds", n_seeds, minimum=1)
    if config.num_foundational < 1:
        raise ValueError(
            f"config.num_foundational must be >= 1 (facts to measure), got {config.num_foundational}"
        )
    delays = tuple(policy.eviction_delays(config.recalls_per_foundational))
    chunk = functools.partial(_max_elapsed_chunk, delays, config)
    rows = map_seeds(chunk, range(n_seeds), executor, label=f"lowest retention, {n_seeds} seeds")
    return _lowest(np.array(rows, dtype=np.int64).max(axis=0).tolist(), policy.baseline_stability)


def recall_turn_bounds(config: SessionConfig) -> tuple[tuple[int, int], ...]:
    """``(earliest, latest)`` turn of each spaced recall some seed places, over every factor in ``recall_jitter``.

    Recall ``k`` lands at ``max(previous + 1, min(1 + round(offset_k * factor), L))``, monotone in
    every factor (``round`` and float products by a positive offset are), so all factors at
    ``low`` give every earliest turn and all at ``high`` every latest (capped at ``L``; the last
    latest is :func:`~forgetting.studies.decay.sessions.latest_last_recall`). A schedule stops after a
    recall on turn ``L``, so the list ends where even the earliest turn would pass ``L``, and a
    seed places fewer recalls only when its last one is on turn ``L``. ``ValueError`` for the
    uniform schedule.
    """
    if config.schedule != "spaced":
        raise ValueError(f"config.schedule must be 'spaced' for recall bounds, got {config.schedule!r}")
    length = config.session_length
    bounds: list[tuple[int, int]] = []
    early, late = 1, 1
    for offset in config.recall_base_offsets[: config.recalls_per_foundational]:
        early = max(early + 1, min(1 + round(offset * config.recall_jitter[0]), length))
        late = min(length, max(late + 1, 1 + round(offset * config.recall_jitter[1])))
        if early > length:
            break
        bounds.append((early, late))
    return tuple(bounds)


def _widest_gaps(config: SessionConfig) -> list[int]:
    bounds = recall_turn_bounds(config)
    earliest = [batch.FACT_REGISTRATION_TURN, *(early for early, _ in bounds)]
    widest = [late - earliest[k] for k, (_, late) in enumerate(bounds)]
    return [*widest, config.session_length - earliest[-1]]


def held_retention_bounds(
    config: SessionConfig, baseline_stability: float = DEFAULT_BASELINE_STABILITY
) -> list[HeldRetention]:
    """The lowest retention a fact held by decay can have after ``k`` recalls, for any seed, one per ``k``.

    After ``k`` recalls the gap to the next recall is at most ``latest_{k+1} - earliest_k``
    (:func:`recall_turn_bounds`; ``earliest_0`` is the registration turn), and after its last
    recall at most ``L - earliest_last`` (a seed that places fewer recalls ends on turn ``L``,
    with no gap after); a fact evicted in between is held for less. Entry ``k`` is that widest
    gap at ``S_k`` (``S0`` reinforced ``k`` times), in the order of ``k``.
    """
    raise_problems([stability_problem(baseline_stability, "baseline_stability")])
    return [_moment(gap, k, baseline_stability) for k, gap in enumerate(_widest_gaps(config))]


def held_retention_floor(
    config: SessionConfig, baseline_stability: float = DEFAULT_BASELINE_STABILITY
) -> HeldRetention:
    """The lowest retention a fact held by decay can have, for any seed: a bound from the schedule.

    The minimum over ``k`` of :func:`held_retention_bounds` (the earliest of equals, decided
    exactly): every :func:`lowest_held_retention` is at least this.
    """
    raise_problems([stability_problem(baseline_stability, "baseline_stability")])
    return _lowest(_widest_gaps(config), baseline_stability)


def held_retention_values(
    lowest: HeldRetention, floor: HeldRetention, eviction_threshold: float
) -> dict[str, Any]:
    """What the headline states of the lowest retention while held and of the schedule's floor.

    ``lowest_*`` and ``floor_*``: ``retention`` to 3 decimals (``math.exp``, far from a rounding
    boundary at the published parameters), ``elapsed`` and ``stability`` to 1 decimal; and
    ``lowest_ratio``, the lowest retention in multiples of ``eviction_threshold`` to 1 decimal.
    """
    values: dict[str, Any] = {}
    for name, moment in (("lowest", lowest), ("floor", floor)):
        values[f"{name}_retention"] = round(moment.retention, 3)
        values[f"{name}_elapsed"] = moment.elapsed
        values[f"{name}_stability"] = round(moment.stability, 1)
    values["lowest_ratio"] = round(lowest.retention / eviction_threshold, 1)
    return values


def jitter_text(jitter: tuple[float, float]) -> str:
    """A factor range ``(low, high)`` around 1 in percent: ``"±30 %"`` for ``(0.7, 1.3)``, else ``"−20 % to +30 %"``."""
    if not (len(jitter) == 2 and 0 < jitter[0] <= 1 <= jitter[1]):
        raise ValueError(f"jitter must be a pair (low, high) with 0 < low <= 1 <= high, got {jitter!r}")
    minus, plus = round(100 * (1 - jitter[0])), round(100 * (jitter[1] - 1))
    return f"±{plus} %" if minus == plus else f"−{minus} % to +{plus} %"


def window_zero_causes(config: SessionConfig, n_seeds: int, window_size: int) -> dict[str, Any]:
    """Why the window ``W`` keeps no fact: where facts are lost and what the schedule guarantees.

    From :func:`~forgetting.studies.decay.study.recall_outcomes` over seeds ``0..n_seeds-1``:
    ``found_first_recall``, ``found_last_recall`` (at the ``recalls_per_foundational``-th
    recall) and ``lost_after_last`` (passed every recall, gone by ``L``). From the schedule
    alone (:func:`recall_turn_bounds`): ``latest_first_recall``, ``first_recall_certain``
    (``latest_first_recall - 1`` within the window's grace, so every seed's facts reach it),
    ``latest_last_recall`` and ``certain_loss_below`` (``L - latest_last_recall``: every smaller
    ``W`` keeps nothing). And ``min_w_full_recall``, the smallest ``W`` keeping every fact on
    these seeds (``None``: none up to ``L``), with its footprint reduction mean and sd.
    """
    policy = WindowPolicy(window_size)
    outcomes = recall_outcomes(config, n_seeds, policy)
    by_recall = {row["recall"]: row for row in outcomes}
    bounds = recall_turn_bounds(config) if config.schedule == "spaced" else ()
    min_w = window_min_full_recall(config, n_seeds)
    point = frontier_point(WindowPolicy(min_w), config, n_seeds) if min_w else None
    return {
        "found_first_recall": by_recall[1]["found"] if 1 in by_recall else 0,
        "found_last_recall": by_recall.get(config.recalls_per_foundational, {"found": 0})["found"],
        "lost_after_last": by_recall[0]["first_lost"],
        "latest_first_recall": bounds[0][1] if bounds else None,
        "first_recall_certain": bool(bounds) and reaches_first_recall(1, bounds[0][1], policy.grace_turns),
        "latest_last_recall": latest_last_recall(config),
        "certain_loss_below": window_certain_loss_below(config),
        "min_w_full_recall": min_w,
        "min_w_footprint": point["footprint_reduction_mean"] if point else None,
        "min_w_footprint_sd": point["footprint_reduction_sd"] if point else None,
    }


def window_zero_values(causes: Mapping[str, Any], n_facts: int) -> dict[str, Any]:
    """What the headline glues of :func:`window_zero_causes`, with a number where a bound is missing.

    ``window_found_first_recall``, ``window_found_last_recall``, ``window_lost_after_last``; the
    schedule's ``latest_first_recall``, ``latest_last_recall`` and ``certain_loss_below`` (``0``
    when undefined); ``min_w_full_recall`` (a text when no ``W`` up to the session length keeps
    every fact) with its footprint mean and sd (``0.0`` then); and ``n_facts``.
    """
    values: dict[str, Any] = {"n_facts": n_facts}
    for key in ("found_first_recall", "found_last_recall", "lost_after_last"):
        values[f"window_{key}"] = causes[key]
    for key in ("latest_first_recall", "latest_last_recall", "certain_loss_below"):
        values[key] = causes[key] or 0
    values["min_w_full_recall"] = causes["min_w_full_recall"] or "none up to the session length"
    values["min_w_footprint"] = causes["min_w_footprint"] or 0.0
    values["min_w_footprint_sd"] = causes["min_w_footprint_sd"] or 0.0
    return values


def window_zero_expected(causes: Mapping[str, Any], n_facts: int, window_size: int) -> dict[str, int | None]:
    """What the schedule alone guarantees of :func:`window_zero_causes`, for any seed.

    ``window_found_first_recall``: ``n_facts`` when the schedule's latest first recall falls
    within the window's grace (``None``: not guaranteed); ``window_lost_after_last``: every fact
    found at its last recall, when ``window_size`` is below ``certain_loss_below`` (``None``
    otherwise). A chapter asserts each against the simulated count.
    """
    return {
        "window_found_first_recall": n_facts if causes["first_recall_certain"] else None,
        "window_lost_after_last": causes["found_last_recall"]
        if window_size < (causes["certain_loss_below"] or 0)
        else None,
    }


def trace_values(
    traces: Mapping[str, Trace], fact: str, checkpoint_turn: int, policy: DecayPolicy
) -> dict[str, Any]:
    """What the step-by-step chapter states of ``fact`` in a decay and a window trace of one session.

    ``traces`` maps ``"decay"`` and ``"window"`` to their :class:`Trace`. From the window's
    :func:`recalls_around_eviction`: ``early_recalls`` (the recalls before its eviction, as a
    text), ``last_early_recall``, ``window_eviction_turn``, ``window_gap`` and ``late_recall``
    (the first recall after it) with whether each engine found the fact there; the FRR of each
    at ``checkpoint_turn``; whether each holds the fact at the session's end; and the decay
    trace's lowest retention while held (:func:`lowest_in_trace` at ``policy``'s ``S0``): its
    turn, turns since the last touch, value (3 decimals) and ratio to ``policy``'s threshold.
    """
    split = recalls_around_eviction(traces[EngineKind.WINDOW], fact)
    found = {kind: dict(_recalls(trace, fact)) for kind, trace in traces.items()}
    lowest = lowest_in_trace(traces[EngineKind.DECAY], fact, policy.baseline_stability)
    end = traces[EngineKind.DECAY].session_length
    return {
        "early_recalls": ", ".join(map(str, split.before)),
        "last_early_recall": split.last_touch,
        "frr_checkpoint_decay": metrics.frr(traces[EngineKind.DECAY], checkpoint_turn),
        "frr_checkpoint_window": metrics.frr(traces[EngineKind.WINDOW], checkpoint_turn),
        "window_eviction_turn": split.evicted_turn,
        "window_gap": split.gap,
        "late_recall": split.first_after,
        "late_recall_window": found[EngineKind.WINDOW][split.first_after],
        "late_recall_decay": found[EngineKind.DECAY][split.first_after],
        "present_at_end_decay": traces[EngineKind.DECAY].is_present_after(fact, end),
        "present_at_end_window": traces[EngineKind.WINDOW].is_present_after(fact, end),
        "lowest_retention": round(lowest.retention, 3),
        "lowest_turn": lowest.turn,
        "lowest_elapsed": lowest.elapsed,
        "lowest_ratio": round(lowest.retention / policy.eviction_threshold, 1),
    }


#: How many recalls before the window's eviction the decay article's traced session reports.
ARTICLE_TRACE_RECALLS = 3


def article_trace_checks(traces: Mapping[str, Trace], fact: str) -> list[tuple[str, str, int | bool]]:
    """``(label, entry, value)``: what the decay article reports of its traced session, as these traces give it.

    ``entry`` is the part after ``decay-trace.`` of an entry of ``data/published.yaml``: the
    number of recalls before the window's eviction and the turns of the first
    :data:`ARTICLE_TRACE_RECALLS` of them, whether the first recall after the eviction finds
    the fact under the window (the article: it returns ``False``) and under decay, and whether
    decay holds it at the session's end (``True`` counts as 1).
    """
    split = recalls_around_eviction(traces[EngineKind.WINDOW], fact)
    found = {kind: dict(_recalls(trace, fact)) for kind, trace in traces.items()}
    end = traces[EngineKind.DECAY].session_length
    checks: list[tuple[str, str, int | bool]] = [
        ("recalls before the window's eviction", "recalls_before_eviction", len(split.before))
    ]
    for index, turn in zip(range(1, ARTICLE_TRACE_RECALLS + 1), split.before, strict=False):
        checks.append((f"recall {index} before the eviction", f"recall_{index}", turn))
    checks += [
        (
            "late recall found by the window",
            "late_recall_found_window",
            found[EngineKind.WINDOW][split.first_after],
        ),
        ("late recall found by decay", "late_recall_found_decay", found[EngineKind.DECAY][split.first_after]),
        (
            "fact held by decay at the end",
            "present_at_end_decay",
            traces[EngineKind.DECAY].is_present_after(fact, end),
        ),
    ]
    return checks
