"""Experiment 5: Memory Worth with real sentences and all-MiniLM-L6-v2 retrieval.

One episode, in phase ``before`` (episodes ``0 .. shift - 1``) or ``after`` (the rest):

1. draw a task type with the phase's weights, then one of its queries uniformly;
2. **retrieve** the ``k`` memories of the phase's store nearest to the query
   (:func:`~forgetting.studies.text.retrieval.retrieve`: rounded cosines, ties by id);
3. draw the **outcome** with the probability of
   :class:`~forgetting.studies.text.outcome.OutcomeModel`;
4. update Memory Worth of every retrieved memory with the outcome (uniform weights):
   ``h+ += 1`` on success, ``h- += 1`` on failure, ``MW = h+ / (h+ + h-)``.

Retrieval is a deterministic function of the query and the phase, so all randomness is in
steps 1 and 3: one ``numpy.random.default_rng(seed)`` draws an ``(episodes, 3)`` block of
uniforms (type, query, outcome), which makes a run a pure function of ``(corpus, vectors,
world)`` and lets variants of a world share the same draws.

Memory Worth after every episode is kept (cumulative counters, one row per episode), so the
trajectory of every memory is available; the final counters equal those of
:class:`forgetting.worth.WorthArrays` fed the same episodes (checked on every run). Within a
phase the episodes are i.i.d., so MW converges to the exact ``p+`` of
:func:`exact_p_plus`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..._validate import int_problem, raise_problems, shown
from ...worth import (
    DEFAULT_HIGH_THRESHOLD,
    DEFAULT_LOW_THRESHOLD,
    DEFAULT_MIN_EVIDENCE,
    DEFAULT_PRIOR,
    WorthArrays,
    discounted_counter_paths,
    memory_worth,
    worth_class,
)
from ...worth.taxonomy import taxonomy_problems
from .corpus import AFTER, BEFORE, PHASES, Corpus
from .outcome import OutcomeModel
from .retrieval import CorpusEmbeddings, Retrieval, retrieval_problems, retrieve

__all__ = [
    "RealTextWorld",
    "RealTextRun",
    "run_episodes",
    "discounted_worth",
    "evidence_ratio_needed",
    "rerun_matches",
    "query_probabilities",
    "exact_p_plus",
    "expected_worth",
]


@dataclass(frozen=True)
class RealTextWorld:
    """Settings of one Experiment 5 run (the corpus and the vectors are passed separately).

    Parameters
    ----------
    n_episodes : int, default 3000
        Episodes in the run (>= 2).
    shift_episode : int, default 647
        Episodes before the shift: episodes ``0 .. shift_episode - 1`` are in phase
        ``before`` (``1 <= shift_episode < n_episodes``). The paper gives none; the default is
        the one its published pair implies in this world
        (:func:`forgetting.studies.text.shift.inferred_shift_episode`, checked by the chapter).
    k : int, default 3
        Memories retrieved per episode.
    outcome : OutcomeModel
        Success probability of an episode.
    seed : int, default 0
        Seed of the episode draws (>= 0).
    type_weights_after : tuple of float, optional
        Overrides the corpus's task mix after the shift (one weight >= 0 per task type, in
        corpus order, positive sum); ``None`` keeps the corpus's.
    min_evidence, high_threshold, low_threshold : float
        Taxonomy thresholds (:func:`forgetting.worth.worth_class`), checked as
        :func:`forgetting.worth.taxonomy.taxonomy_problems` states.

    Raises
    ------
    ValueError
        Every bad setting at once, each named.
    """

    n_episodes: int = 3000
    shift_episode: int = 647
    k: int = 3
    outcome: OutcomeModel = field(default_factory=OutcomeModel)
    seed: int = 0
    type_weights_after: tuple[float, ...] | None = None
    min_evidence: float = DEFAULT_MIN_EVIDENCE
    high_threshold: float = DEFAULT_HIGH_THRESHOLD
    low_threshold: float = DEFAULT_LOW_THRESHOLD

    def __post_init__(self) -> None:
        problems = [
            int_problem(name, getattr(self, name), low, allow_numpy=True)
            for name, low in (("n_episodes", 2), ("k", 1), ("seed", 0))
        ]
        shift = self.shift_episode
        if (
            isinstance(shift, bool)
            or not isinstance(shift, (int, np.integer))
            or not (isinstance(self.n_episodes, (int, np.integer)) and 1 <= shift < self.n_episodes)
        ):
            problems.append(f"shift_episode must be an int in [1, n_episodes - 1], got {shift!r}")
        if self.type_weights_after is not None:
            weights = np.asarray(self.type_weights_after, dtype=np.float64)
            if (
                weights.ndim != 1
                or not np.all(np.isfinite(weights))
                or np.any(weights < 0)
                or weights.sum() <= 0
            ):
                problems.append(
                    f"type_weights_after must be finite weights >= 0 with a positive "
                    f"sum, got {self.type_weights_after!r}"
                )
        if not isinstance(self.outcome, OutcomeModel):
            problems.append(f"outcome must be an OutcomeModel, got {shown(self.outcome)}")
        problems += taxonomy_problems(
            DEFAULT_PRIOR, self.min_evidence, self.high_threshold, self.low_threshold
        )
        raise_problems(problems)

    def phase_of(self, episode: np.ndarray) -> np.ndarray:
        """``True`` for episodes after the shift."""
        return np.asarray(episode) >= self.shift_episode


@dataclass(frozen=True)
class RealTextRun:
    """One run: the episodes and Memory Worth of every memory after every episode.

    Attributes
    ----------
    world : RealTextWorld
    corpus : Corpus
    retrieval : dict of str to Retrieval
        What every query retrieves, by phase.
    type_weights : dict of str to numpy.ndarray
        Task mix of each phase (sums to 1).
    after : numpy.ndarray
        ``(episodes,)`` bool: the episode is after the shift.
    task_type, query : numpy.ndarray
        ``(episodes,)`` indices into ``corpus.types`` and ``corpus.queries``.
    retrieved : numpy.ndarray
        ``(episodes, k)`` memory indices.
    p_success : numpy.ndarray
        ``(episodes,)`` success probability of each episode.
    success : numpy.ndarray
        ``(episodes,)`` bool outcomes.
    successes, failures : numpy.ndarray
        ``(episodes, memories)`` cumulative ``h+`` and ``h-`` after each episode.
    """

    world: RealTextWorld
    corpus: Corpus
    retrieval: dict[str, Retrieval]
    type_weights: dict[str, np.ndarray]
    after: np.ndarray
    task_type: np.ndarray
    query: np.ndarray
    retrieved: np.ndarray
    p_success: np.ndarray
    success: np.ndarray
    successes: np.ndarray
    failures: np.ndarray

    @property
    def n_episodes(self) -> int:
        """Number of episodes run."""
        return int(self.success.size)

    def worth(self, episode: int | None = None) -> np.ndarray:
        """MW of every memory after ``episode`` (0-based; default: the last episode).

        Use :attr:`trajectory` for the values after every episode.
        """
        row = self.n_episodes - 1 if episode is None else episode
        return np.asarray(memory_worth(self.successes[row], self.failures[row]))

    def evidence(self, episode: int | None = None) -> np.ndarray:
        """Evidence ``V = h+ + h-`` of every memory after ``episode`` (default: the last)."""
        row = self.n_episodes - 1 if episode is None else episode
        return np.asarray(self.successes[row] + self.failures[row])

    def classes(self, episode: int | None = None) -> np.ndarray:
        """Worth class of every memory after ``episode`` (default: the last), by the world's thresholds."""
        w = self.world
        return np.asarray(
            worth_class(
                self.worth(episode), self.evidence(episode), w.min_evidence, w.high_threshold, w.low_threshold
            )
        )

    @property
    def trajectory(self) -> np.ndarray:
        """MW of every memory after every episode, shape (episodes, memories)."""
        return np.asarray(memory_worth(self.successes, self.failures))

    @property
    def last_before(self) -> int:
        """Index of the last episode before the shift."""
        return self.world.shift_episode - 1


def _draw_types(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    cumulative = np.cumsum(weights)
    cumulative /= cumulative[-1]
    chosen = np.searchsorted(cumulative, u, side="right")
    # never pick a type of weight 0 through rounding at the top end
    return np.asarray(np.minimum(chosen, np.flatnonzero(weights > 0)[-1]))


def run_episodes(
    corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld = RealTextWorld()
) -> RealTextRun:
    """Run the episodes of ``world`` on cached vectors (see the module docstring).

    Raises ``ValueError``, before any retrieval, if ``world.k`` exceeds the store of either
    phase (a world can be built before its corpus is known, so this is checked here) or
    ``world.type_weights_after`` does not give one weight per task type of ``corpus``.
    """
    if not isinstance(world, RealTextWorld):
        raise ValueError(f"world must be a RealTextWorld, got {shown(world)}")
    custom = (
        None if world.type_weights_after is None else np.asarray(world.type_weights_after, dtype=np.float64)
    )
    raise_problems(
        [
            *(p for phase in PHASES for p in retrieval_problems(corpus, phase, world.k)),
            None
            if custom is None or custom.size == len(corpus.types)
            else f"type_weights_after has {custom.size} weights for {len(corpus.types)} task types",
        ]
    )
    n, k = world.n_episodes, world.k
    retrieval = {phase: retrieve(corpus, vectors, phase, k, world.outcome) for phase in PHASES}
    weights = {BEFORE: corpus.type_weights(BEFORE), AFTER: corpus.type_weights(AFTER)}
    if custom is not None:
        weights[AFTER] = custom / custom.sum()

    draws = np.random.default_rng(world.seed).random((n, 3))
    after = world.phase_of(np.arange(n))
    task_type = np.where(
        after, _draw_types(weights[AFTER], draws[:, 0]), _draw_types(weights[BEFORE], draws[:, 0])
    )
    members = [np.asarray(corpus.queries_of(t.id)) for t in corpus.types]
    counts = np.array([m.size for m in members])
    pick = np.minimum((draws[:, 1] * counts[task_type]).astype(np.intp), counts[task_type] - 1)
    query = np.array([members[t][j] for t, j in zip(task_type, pick)], dtype=np.intp)
    retrieved = np.where(after[:, None], retrieval[AFTER].top[query], retrieval[BEFORE].top[query])
    p_success = np.where(after, retrieval[AFTER].p_success[query], retrieval[BEFORE].p_success[query])
    success = draws[:, 2] < p_success

    n_memories = len(corpus.memories)
    hits = np.zeros((n, n_memories))
    misses = np.zeros((n, n_memories))
    rows = np.repeat(np.arange(n), k)
    columns = retrieved.ravel()
    outcome = np.repeat(success, k)
    hits[rows[outcome], columns[outcome]] = 1.0
    misses[rows[~outcome], columns[~outcome]] = 1.0
    successes = np.cumsum(hits, axis=0)
    failures = np.cumsum(misses, axis=0)

    check = WorthArrays(n_memories).update_batch(retrieved, success)
    if not (
        np.array_equal(check.successes_, successes[-1]) and np.array_equal(check.failures_, failures[-1])
    ):
        raise AssertionError("cumulative counters differ from WorthArrays")  # pragma: no cover
    return RealTextRun(
        world,
        corpus,
        retrieval,
        weights,
        after,
        task_type,
        query,
        retrieved,
        p_success,
        success,
        successes,
        failures,
    )


def discounted_worth(run: RealTextRun, discount: float) -> np.ndarray:
    """MW trajectories with counters that decay by ``discount`` per episode (all memories).

    Same definition as :class:`forgetting.worth.DiscountedMemoryWorth`: every episode first
    multiplies every counter by ``discount``, then adds the episode's evidence
    (:func:`forgetting.worth.discounted_counter_paths`): ``h_t = discount * h_{t-1} + e_t`` for
    each counter, then ``MW = h+ / (h+ + h-)``.
    Raises ``ValueError`` unless ``0 < discount <= 1``.
    """
    hits = np.diff(run.successes, axis=0, prepend=0.0)
    misses = np.diff(run.failures, axis=0, prepend=0.0)
    return np.asarray(
        memory_worth(discounted_counter_paths(hits, discount), discounted_counter_paths(misses, discount))
    )


def _exact_column_sums(matrix: np.ndarray) -> np.ndarray:
    """Column sums, each correctly rounded (:func:`math.fsum`): the same bits on every machine."""
    return np.array([math.fsum(column) for column in np.asarray(matrix, dtype=np.float64).T])


def query_probabilities(corpus: Corpus, type_weights: np.ndarray) -> np.ndarray:
    """Probability of each query in one episode: its type's weight shared by the type's queries."""
    prob = np.zeros(len(corpus.queries))
    for task, weight in zip(corpus.types, type_weights):
        members = corpus.queries_of(task.id)
        prob[members] = weight / len(members)
    return prob


def exact_p_plus(
    corpus: Corpus, retrieval: Retrieval, type_weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``p+(m) = Pr[success | m retrieved]`` in one phase, and ``Pr[m retrieved]`` per episode.

    Both follow from the world without sampling: retrieval is deterministic per query, so
    ``Pr[m retrieved] = sum_q Pr[q] 1[m in top(q)]`` and
    ``p+(m) = sum_q Pr[q] 1[m in top(q)] p_q / Pr[m retrieved]`` (``nan`` if never retrieved).
    Within a phase the episodes are i.i.d., so this is the limit of Memory Worth there.
    """
    prob = query_probabilities(corpus, type_weights)
    member = np.zeros((len(corpus.queries), len(corpus.memories)))
    np.put_along_axis(member, retrieval.top, 1.0, axis=1)
    # Correctly rounded sums (math.fsum), not a BLAS product: BLAS kernels sum in different
    # orders on different CPUs and this value is published (seen: last-digit differences).
    rate = _exact_column_sums(prob[:, None] * member)
    mass = _exact_column_sums((prob * retrieval.p_success)[:, None] * member)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_plus = np.where(rate > 0, mass / np.where(rate > 0, rate, 1.0), np.nan)
    return p_plus, rate


def expected_worth(run: RealTextRun, episode: int | None = None) -> np.ndarray:
    """Ratio of the expected counters after ``episode``: the value MW concentrates around.

    ``(n_b r_b p_b + n_a r_a p_a) / (n_b r_b + n_a r_a)`` with ``n`` the episodes of each phase
    so far, ``r`` the retrieval probability and ``p`` the exact ``p+`` of the phase
    (:func:`exact_p_plus`); the prior where a memory is never retrieved.
    """
    row = run.n_episodes - 1 if episode is None else episode
    n_before = min(row + 1, run.world.shift_episode)
    n_after = row + 1 - n_before
    hits = np.zeros(len(run.corpus.memories))
    total = np.zeros(len(run.corpus.memories))
    for phase, count in ((BEFORE, n_before), (AFTER, n_after)):
        p_plus, rate = exact_p_plus(run.corpus, run.retrieval[phase], run.type_weights[phase])
        hits += count * rate * np.nan_to_num(p_plus)
        total += count * rate
    return np.asarray(memory_worth(hits, total - hits))


def evidence_ratio_needed(start: float, target: float, rate_after: float) -> float:
    """Post-shift to pre-shift evidence ratio a cumulative MW needs to fall from ``start`` to ``target``.

    With ``n_b`` episodes of evidence at worth ``start`` and ``n_a`` more at success rate
    ``rate_after``, ``MW = (n_b start + n_a rate_after) / (n_b + n_a)``; solving
    ``MW = target`` gives ``n_a / n_b = (start - target) / (target - rate_after)``. ``inf``
    when ``rate_after >= target`` (no amount of evidence gets there).
    """
    if rate_after < target:
        return (start - target) / (target - rate_after)
    return float("inf")


def rerun_matches(run: RealTextRun, vectors: CorpusEmbeddings) -> bool:
    """Run ``run.world`` on ``run.corpus`` and ``vectors`` again: are trajectory and outcomes identical?"""
    again = run_episodes(run.corpus, vectors, run.world)
    return bool(
        np.array_equal(again.trajectory, run.trajectory) and np.array_equal(again.success, run.success)
    )
