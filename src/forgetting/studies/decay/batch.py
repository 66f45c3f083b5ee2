"""Many sessions at once: the replay of :mod:`~forgetting.studies.decay.simulation` as numpy arrays.

The event engines (:mod:`~forgetting.decay.engines`) stay the readable reference and the
online API; this module computes the same decisions for a whole batch of generated sessions
(arrays of shape sessions x facts x recalls) without replaying events one by one.

Why a closed form is exact here. In a generated session (:mod:`~forgetting.studies.decay.sessions`)
no id is registered twice and only the foundational facts are recalled, each at strictly
increasing turns. An item's fate therefore depends on nothing but its registration turn, its
own recall turns and the policy's **eviction delay after k recalls** ``d_k``:

* decay: ``d_k = decay_eviction_delay(stability_after_recalls(k, S0), theta)`` -- the engine
  reaches that stability by the very same multiplications, so the delay is the same integer;
* window: ``d_k = W + 1`` for every ``k`` (recall count is ignored).

With last touch ``l`` after ``k`` recalls the item is due at ``e = l + d_k``. A recall at turn
``r`` finds it iff ``r <= e`` (a turn's events come before its ``step``); then ``l = r`` and
``k += 1``. Otherwise it was evicted at ``e`` and, turns increasing, every later recall fails
too. An item is present at the end of turn ``t`` iff ``created <= t < e``, and evicted iff
``e <= L``. Noise items are never recalled: each is evicted ``d_0`` turns after it was
registered, identically in every session of a batch.

Everything is integer; the per-session metrics are then computed by the formulas of
:mod:`~forgetting.studies.decay.metrics` in the same float operations, so each session's summary
equals :func:`~forgetting.studies.decay.metrics.session_summary` of its event trace exactly and does
not depend on which other sessions share the batch.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import int_problem, raise_problems, require_int
from ...decay.curves import decay_eviction_delay, stability_after_recalls, window_eviction_delay
from ..progress import progress
from .sessions import SessionConfig, recall_schedules

__all__ = [
    "IntArray",
    "FACT_REGISTRATION_TURN",
    "decay_delays",
    "window_delays",
    "recall_turn_array",
    "BATCH_CELLS",
    "block_size",
    "seed_batches",
    "BatchReplay",
    "replay_batch",
    "SessionMetrics",
    "session_metrics",
    "session_summaries",
    "recall_outcome_rows",
]

IntArray = npt.NDArray[np.int64]
"""An int64 numpy array."""
FACT_REGISTRATION_TURN = 1
"""Every foundational fact is registered at turn 1 (the session generator's rule)."""


def decay_delays(
    eviction_threshold: float, baseline_stability: float, max_recalls: int
) -> tuple[int | None, ...]:
    """``d_k`` for ``k = 0 .. max_recalls``: the decay engine's delay after ``k`` recalls (``None``: never)."""
    return tuple(
        decay_eviction_delay(stability_after_recalls(k, baseline_stability), eviction_threshold)
        for k in range(max_recalls + 1)
    )


def window_delays(window_size: int, max_recalls: int) -> tuple[int, ...]:
    """``d_k = W + 1`` for ``k = 0 .. max_recalls``: the window ignores recalls."""
    return (window_eviction_delay(window_size),) * (max_recalls + 1)


def recall_turn_array(config: SessionConfig, seeds: Iterable[int]) -> IntArray:
    """Recall turns of every fact of the session of each seed, shape (sessions, facts, recalls).

    Row ``s`` holds :func:`~forgetting.studies.decay.sessions.recall_schedules` of
    ``config.replace(seed=seeds[s])`` (the session generator's own draws), padded with 0
    (no recall) to ``recalls_per_foundational`` columns.
    """
    width = config.recalls_per_foundational
    rows = [
        [turns + [0] * (width - len(turns)) for turns in recall_schedules(config.replace(seed=seed))]
        for seed in seeds
    ]
    return np.array(rows, dtype=np.int64).reshape(len(rows), config.num_foundational, width)


@dataclass(frozen=True)
class BatchReplay:
    """What the event replay of each session would record, as arrays.

    Attributes
    ----------
    config : SessionConfig
        The sessions' parameters (its ``seed`` is not used: see ``seeds``).
    seeds : tuple of int
        One session per seed, in this order.
    recall_turns : int64 array, shape (sessions, facts, recalls)
        Scheduled recall turns, 0 where a fact has no further recall.
    recall_found : bool array, same shape
        Whether the engine found the fact at that recall (``False`` where none is scheduled).
    fact_evicted_turn : int64 array, shape (sessions, facts)
        Turn each foundational fact was evicted, 0 if present at the end.
    noise_created_turn, noise_evicted_turn : int64 arrays, shape (noise items,)
        Registration and eviction turn (0: present at the end) of the noise items, the same in
        every session.
    """

    config: SessionConfig
    seeds: tuple[int, ...]
    recall_turns: IntArray
    recall_found: npt.NDArray[np.bool_]
    fact_evicted_turn: IntArray
    noise_created_turn: IntArray
    noise_evicted_turn: IntArray

    @property
    def items_created(self) -> int:
        """Items registered in each session: facts plus noise."""
        return self.config.num_foundational + self.noise_created_turn.size

    def resident_item_turns(self) -> IntArray:
        """``sum_t |working set after step(t)|`` per session: each item's turns present, added up."""
        end = self.config.session_length + 1
        facts = np.where(self.fact_evicted_turn > 0, self.fact_evicted_turn, end) - FACT_REGISTRATION_TURN
        noise_end = np.where(self.noise_evicted_turn > 0, self.noise_evicted_turn, end)
        noise = int((noise_end - self.noise_created_turn).sum())
        total: IntArray = facts.sum(axis=1) + noise
        return total

    def working_set_sizes(self) -> IntArray:
        """Items present after each turn's step, shape (sessions, L): the trace's ``working_set_sizes``."""
        length = self.config.session_length
        change = np.zeros((len(self.seeds), length + 2), dtype=np.int64)
        change[:, FACT_REGISTRATION_TURN] += self.config.num_foundational
        np.subtract.at(change, (np.arange(len(self.seeds))[:, None], self.fact_evicted_turn), 1)
        noise = np.bincount(self.noise_created_turn, minlength=length + 2)
        noise -= np.bincount(self.noise_evicted_turn, minlength=length + 2)
        change += noise
        change[:, 0] = 0  # column 0 collected the "never evicted" marks
        sizes: IntArray = np.cumsum(change, axis=1)[:, 1 : length + 1]
        return sizes


BATCH_CELLS = 1 << 20
"""Recall slots (sessions x facts x recalls) simulated per batch: bounds memory, not results."""


def block_size(config: SessionConfig) -> int:
    """Sessions per block so that a block holds at most :data:`BATCH_CELLS` recall slots."""
    return max(1, BATCH_CELLS // max(1, config.num_foundational * config.recalls_per_foundational))


def seed_batches(config: SessionConfig, n_seeds: int, label: str) -> Iterator[tuple[list[int], IntArray]]:
    """Seeds ``0..n_seeds-1`` in blocks of :func:`block_size` sessions, with their sessions' recall
    turns (:func:`~forgetting.decay.recall_turn_array`); a progress bar labelled ``label`` counts
    the seeds."""
    require_int("n_seeds", n_seeds, minimum=1)
    size = block_size(config)
    seeds = iter(progress(range(n_seeds), label))
    while block := list(itertools.islice(seeds, size)):
        yield block, recall_turn_array(config, block)


def replay_batch(
    delays: Sequence[int | None],
    config: SessionConfig,
    recall_turns: IntArray,
    seeds: Sequence[int] | None = None,
) -> BatchReplay:
    """Replay the sessions whose recall turns are ``recall_turns`` under a policy given by its delays.

    Parameters
    ----------
    delays : sequence of int or None
        ``d_k``, the eviction delay after ``k`` recalls, for ``k = 0 .. recalls`` (``None``:
        never evicted), e.g. :func:`decay_delays` or :func:`window_delays`.
    config : SessionConfig
        Session length, facts and noise per turn of every session.
    recall_turns : int64 array, shape (sessions, facts, recalls)
        From :func:`recall_turn_array`.
    seeds : sequence of int, optional
        The seed of each session, kept for the summaries (default ``0 .. sessions - 1``).

    Returns
    -------
    BatchReplay
        Use :func:`session_summaries` for the per-session metrics.
    """
    shape = recall_turns.shape
    n_recalls = shape[2] if len(shape) == 3 else -1
    problems = [int_problem("len(delays)", len(delays), minimum=n_recalls + 1, maximum=n_recalls + 1)]
    if len(shape) != 3 or shape[1] != config.num_foundational:
        problems.append(
            f"recall_turns must have shape (sessions, {config.num_foundational}, recalls), got {shape}"
        )
    elif seeds is not None and len(seeds) != shape[0]:
        problems.append(f"seeds must have one entry per session ({shape[0]}), got {len(seeds)}")
    raise_problems([p for p in problems if p])
    length = config.session_length
    beyond = length + 1  # a due turn past the session is as good as never
    delay = np.array([beyond if d is None else min(d, beyond) for d in delays], dtype=np.int64)
    recalls_done = np.zeros(shape[:2], dtype=np.int64)
    due = np.full(shape[:2], FACT_REGISTRATION_TURN + delay[0], dtype=np.int64)
    found = np.zeros(shape, dtype=np.bool_)
    for column in range(shape[2]):
        turn = recall_turns[:, :, column]
        hit = (turn > 0) & (turn <= due)  # a recall on the due turn itself still finds the fact
        found[:, :, column] = hit
        recalls_done += hit
        due = np.where(hit, turn + delay[np.minimum(recalls_done, shape[2])], due)
    noise_created = np.repeat(np.arange(1, length + 1, dtype=np.int64), config.noise_per_turn)
    noise_due = noise_created + delay[0]
    return BatchReplay(
        config,
        tuple(range(shape[0])) if seeds is None else tuple(seeds),
        recall_turns,
        found,
        np.where(due <= length, due, 0),
        noise_created,
        np.where(noise_due <= length, noise_due, 0),
    )


@dataclass(frozen=True)
class SessionMetrics:
    """Per-session metrics of a batch, as arrays (see :func:`session_metrics`)."""

    terminal_frr: npt.NDArray[np.float64]
    foundational_evicted: IntArray
    survival_time_sum: IntArray
    footprint_reduction: npt.NDArray[np.float64]


def session_metrics(replay: BatchReplay) -> SessionMetrics:
    """Terminal FRR, facts evicted, their summed survival time and footprint reduction per session.

    Same formulas, same float operations as :mod:`~forgetting.studies.decay.metrics`:
    ``present / facts`` (1.0 without facts; both ints are exact in float64, so the quotient is
    the correctly rounded one Python's ``int / int`` gives) and ``1 - (resident item-turns /
    L) / items created`` (``fmean`` of integer sizes is their exact sum over ``L``).
    """
    facts = replay.config.num_foundational
    evicted = replay.fact_evicted_turn > 0
    gone = evicted.sum(axis=1)
    survival = np.where(evicted, replay.fact_evicted_turn - FACT_REGISTRATION_TURN, 0).sum(axis=1)
    frr = (facts - gone) / facts if facts else np.ones(len(replay.seeds))
    items = replay.items_created
    length = replay.config.session_length
    footprint = 1.0 - replay.resident_item_turns() / length / items if items else np.zeros(len(replay.seeds))
    return SessionMetrics(frr, gone, survival, footprint)


def session_summaries(replay: BatchReplay) -> list[dict[str, Any]]:
    """Per session, ``{"seed": ..., **metrics.session_summary(trace)}`` with identical values.

    From :func:`session_metrics`; the mean survival time is ``fsum(times) / n``, and the sum of
    integer survival times is exact.
    """
    facts = replay.config.num_foundational
    metrics = session_metrics(replay)
    rows = []
    for seed, frr, gone, survival, footprint in zip(
        replay.seeds,
        metrics.terminal_frr.tolist(),
        metrics.foundational_evicted.tolist(),
        metrics.survival_time_sum.tolist(),
        metrics.footprint_reduction.tolist(),
        strict=True,
    ):
        rows.append(
            {
                "seed": seed,
                "terminal_frr": frr,
                "terminal_survival_rate": frr if facts else 0.0,
                "foundational_evicted": gone,
                "mean_survival_time": survival / gone if gone else None,
                "footprint_reduction": footprint,
            }
        )
    return rows


def recall_outcome_rows(replay: BatchReplay) -> list[dict[str, int]]:
    """Where facts are lost, by recall index, over the batch (see :func:`study.recall_outcomes`).

    Row ``k``: facts with a ``k``-th recall, found then, and whose first miss it is (a miss at
    ``k`` is a first miss iff recall ``k - 1`` was found: once lost, a fact stays lost). Last
    row (``recall = 0``): facts that passed every recall, and those of them gone by the end.
    """
    scheduled = replay.recall_turns > 0
    found = replay.recall_found
    previous_found = np.concatenate([np.ones_like(found[:, :, :1]), found[:, :, :-1]], axis=2)
    first_lost = scheduled & ~found & previous_found
    rows = [
        {
            "recall": k + 1,
            "scheduled": int(scheduled[:, :, k].sum()),
            "found": int(found[:, :, k].sum()),
            "first_lost": int(first_lost[:, :, k].sum()),
        }
        for k in range(found.shape[2])
        if scheduled[:, :, k].any()
    ]
    passed = ~(scheduled & ~found).any(axis=2)
    lost_after = passed & (replay.fact_evicted_turn > 0)
    after = {"recall": 0, "scheduled": int(passed.sum()), "found": 0, "first_lost": int(lost_after.sum())}
    after["found"] = after["scheduled"] - after["first_lost"]
    return [*rows, after]
