"""Experiment 5: Memory Worth with real sentences and all-MiniLM-L6-v2 retrieval.

The world
---------
The memories, task types and queries come from :mod:`forgetting.corpus`
(``data/exp5/corpus.yaml``). Sentences are embedded once with the numpy all-MiniLM-L6-v2
encoder of :mod:`forgetting.embedding` and kept in an on-disk cache, so the episodes run on
cached vectors (:func:`embed_corpus`).

One episode, in phase ``before`` (episodes ``0 .. shift - 1``) or ``after`` (the rest):

1. draw a task type with the phase's weights, then one of its queries uniformly;
2. **retrieve** the ``k`` memories with the highest cosine similarity to the query among
   the memories in the store in that phase, cosines rounded to :data:`COSINE_DECIMALS`
   decimal places (equal rounded cosines: the memory whose id sorts first wins);
3. draw the **outcome** (:class:`OutcomeModel`): with ``f`` the fraction of the memories the
   task needs in this phase that were retrieved,
   ``Pr[success] = p_none + (p_all - p_none) * f``, unless the agent is *misled*, in which
   case ``Pr[success] = p_stale``. By default (``stale_misleads_any_task=True``) the agent is
   misled whenever a retrieved memory is wrong in the current phase. The alternative rule
   (``False``) is narrower: the agent acts on the highest-ranked retrieved memory that bears
   on the task (one the task needs in some phase) and is misled only if that one is wrong now;
4. update Memory Worth of every retrieved memory with the outcome (uniform weights).

Retrieval is a deterministic function of the query and the phase, so all randomness is in
steps 1 and 3: one ``numpy.random.default_rng(seed)`` draws an ``(episodes, 3)`` block of
uniforms (type, query, outcome), which makes a run a pure function of ``(corpus, vectors,
world)`` and lets variants of a world share the same draws.

Machine independence
---------------------
The encoder's float32 matrix products run in OpenBLAS, which picks a kernel per CPU; the same
two sentences get cosines that differ in the 7th significant digit from one machine to
another (about 3e-7 measured between kernels). Nothing this module decides or publishes may
depend on such digits, so retrieval ranks on cosines rounded to :data:`COSINE_DECIMALS`
places, ties are broken by memory id, and every published cosine (:func:`hitchhiker_table`,
:func:`memory_similarity`) is rounded the same way. Rounding alone is not a guarantee (a
cosine next to a rounding boundary can still round either way), so the margin is checked:
:func:`cosine_change_bound` bounds, pair by pair, how far a relative change of
:data:`RELATIVE_PERTURBATION` in every vector component can move a cosine (never more than
:data:`COSINE_TOLERANCE`), and :func:`robustness` counts the retrieval decisions and published
cosines that a change of that size could alter (``Retrieval.fragile`` per query). For the
shipped corpus the count is zero at 3 decimals for k = 2, 3, 4 in both phases and for every
memory-pair cosine (the nearest is 2.3 times its bound from a rounding boundary); at 4
decimals nine memory-pair cosines, one of them in the hitchhiker table, are within their
bound of a boundary, which is why 3 decimals was chosen. Rounding to 3 decimals changes no
decision the unrounded cosines made (the closest two ranks that decide a top-k are 4.6e-4
apart).

Memory Worth after every episode is kept (cumulative counters, one row per episode), so the
trajectory of every memory is available; the final counters equal those of
:class:`forgetting.worth.WorthArrays` fed the same episodes (checked on every run).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields, replace
from typing import Any, Sequence

import numpy as np
from scipy.signal import lfilter

from .corpus import AFTER, BEFORE, PHASES, ROLES, Corpus
from .embedding import (MODEL_FILES_SHA256, EmbeddingCache, MiniLMEncoder,
                        locate_model_dir, verify_model_dir)
from .worth import (DEFAULT_HIGH_THRESHOLD, DEFAULT_LOW_THRESHOLD, DEFAULT_MIN_EVIDENCE,
                    UNCERTAIN, WORTH_CLASSES, WorthArrays, memory_worth, worth_class)

__all__ = [
    "OutcomeModel", "RealTextWorld", "CorpusEmbeddings", "Retrieval", "RealTextRun",
    "COSINE_DECIMALS", "RELATIVE_PERTURBATION", "FLOAT32_ROUNDING", "COSINE_TOLERANCE",
    "embed_corpus", "cosine_matrix", "rounded_cosines", "cosine_change_bound", "rank_candidates", "fragile_ranking",
    "fragile_rounding", "robustness", "retrieve", "run_episodes", "summarise",
    "taxonomy_table", "taxonomy_counts", "evidence_by_query", "hitchhiker_table",
    "memory_similarity", "role_order", "discounted_worth", "seed_summaries", "seed_summary",
    "query_probabilities", "exact_p_plus", "expected_worth",
]


# --- precision ------------------------------------------------------------------------------------

#: Decimal places of every cosine that decides a retrieval or is published. Cosines from
#: different BLAS kernels differ by ~3e-7, so digits beyond the 6th are machine noise. Three
#: places, not four: at four, nine memory-pair cosines of this corpus (one in the hitchhiker
#: table) lie within their :func:`cosine_change_bound` of a rounding boundary; at three every
#: decision and published cosine is clear of it (checked on every run by :func:`robustness`).
COSINE_DECIMALS = 3
#: Relative change of every vector component that no decision or published value may notice.
RELATIVE_PERTURBATION = 1e-6
#: Relative rounding of a float32 component, added to the perturbation (the vectors are stored
#: in float32, so a perturbed vector is rounded once more).
FLOAT32_ROUNDING = 2.0 ** -24
#: The largest :func:`cosine_change_bound` of any pair, ``4 eps / (1 - eps)^2`` with
#: ``eps = RELATIVE_PERTURBATION + FLOAT32_ROUNDING`` (4.24e-6), rounded up.
COSINE_TOLERANCE = 5e-6


# --- settings ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OutcomeModel:
    """Success probability of one episode.

    ``p_all`` when every needed memory was retrieved, ``p_none`` when none was (linear in
    between), ``p_stale`` when the agent is misled by a memory that is wrong now. Misled means:
    any retrieved memory is wrong now (``stale_misleads_any_task=True``), or the
    highest-ranked retrieved memory that the task needs in some phase is wrong now (``False``).
    """

    p_all: float = 0.97
    p_none: float = 0.25
    p_stale: float = 0.05
    stale_misleads_any_task: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.stale_misleads_any_task, bool):
            raise ValueError(f"stale_misleads_any_task must be True or False, got "
                             f"{self.stale_misleads_any_task!r}")
        for f in fields(self):
            if f.name == "stale_misleads_any_task":
                continue
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or not 0 <= value <= 1:
                raise ValueError(f"{f.name} must be a probability in [0, 1], got {value!r}")

    def probability(self, fraction_needed: np.ndarray, misled: np.ndarray) -> np.ndarray:
        fraction = np.asarray(fraction_needed, dtype=np.float64)
        return np.where(misled, self.p_stale, self.p_none + (self.p_all - self.p_none) * fraction)


@dataclass(frozen=True)
class RealTextWorld:
    """Settings of one Experiment 5 run (the corpus and the vectors are passed separately).

    ``shift_episode`` is the number of episodes before the shift: episodes
    ``0 .. shift_episode - 1`` are in phase ``before``. ``type_weights_after`` overrides the
    corpus's task mix after the shift (one weight per task type, in corpus order); ``None``
    keeps the corpus's.
    """

    n_episodes: int = 3000
    shift_episode: int = 1500
    k: int = 3
    outcome: OutcomeModel = field(default_factory=OutcomeModel)
    seed: int = 0
    type_weights_after: tuple[float, ...] | None = None
    min_evidence: float = DEFAULT_MIN_EVIDENCE
    high_threshold: float = DEFAULT_HIGH_THRESHOLD
    low_threshold: float = DEFAULT_LOW_THRESHOLD

    def __post_init__(self) -> None:
        problems = []
        for name, low in (("n_episodes", 2), ("k", 1), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                problems.append(f"{name} must be an int >= {low}, got {value!r}")
        shift = self.shift_episode
        if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)) \
                or not (isinstance(self.n_episodes, (int, np.integer)) and 1 <= shift < self.n_episodes):
            problems.append(f"shift_episode must be an int in [1, n_episodes - 1], got {shift!r}")
        if self.type_weights_after is not None:
            weights = np.asarray(self.type_weights_after, dtype=np.float64)
            if weights.ndim != 1 or not np.all(np.isfinite(weights)) or np.any(weights < 0) \
                    or weights.sum() <= 0:
                problems.append(f"type_weights_after must be finite weights >= 0 with a positive "
                                f"sum, got {self.type_weights_after!r}")
        if problems:
            raise ValueError("; ".join(problems))

    def phase_of(self, episode: np.ndarray) -> np.ndarray:
        """``True`` for episodes after the shift."""
        return np.asarray(episode) >= self.shift_episode


# --- embeddings and retrieval ----------------------------------------------------------------------

@dataclass(frozen=True)
class CorpusEmbeddings:
    """Unit vectors of the memories and queries (float32, corpus order) and where they came from."""

    memories: np.ndarray
    queries: np.ndarray
    model_sha256: str
    cache_hits: int
    cache_misses: int


def embed_corpus(corpus: Corpus, cache_dir: str | os.PathLike[str], *,
                 encoder: MiniLMEncoder | None = None, verify_model: bool = True) -> CorpusEmbeddings:
    """Embed every memory and query through an :class:`EmbeddingCache` rooted at ``cache_dir``.

    Vectors already in the cache are read, not recomputed (entries failing their checksum are
    recomputed); the model is loaded only if some text is missing. With ``verify_model``
    (default) every model file the encoder reads is checked against
    :data:`~forgetting.embedding.MODEL_FILES_SHA256` even when everything is cached, so the
    digest reported is the one of the model actually installed (about 0.2 s).
    """
    cache = EmbeddingCache(cache_dir, encoder=encoder)
    if encoder is not None:
        digest = encoder.model_sha256
    elif verify_model:
        digest = verify_model_dir(locate_model_dir(), MODEL_FILES_SHA256)["model.safetensors"]
    else:
        digest = cache.model_sha256
    texts = [m.text for m in corpus.memories] + [q.text for q in corpus.queries]
    vectors = cache.encode(texts)
    n = len(corpus.memories)
    return CorpusEmbeddings(memories=vectors[:n], queries=vectors[n:], model_sha256=digest,
                            cache_hits=cache.hits, cache_misses=cache.misses)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b``, in float64, unrounded.

    Its last digits depend on the machine that computed the vectors; decide and publish with
    :func:`rounded_cosines`.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    return x @ y.T


def rounded_cosines(a: np.ndarray, b: np.ndarray, decimals: int = COSINE_DECIMALS) -> np.ndarray:
    """:func:`cosine_matrix` rounded to ``decimals`` places: what retrieval ranks and what is published."""
    return np.round(cosine_matrix(a, b), decimals)


def cosine_change_bound(a: np.ndarray, b: np.ndarray,
                        relative: float = RELATIVE_PERTURBATION) -> np.ndarray:
    """Largest change of each cosine of :func:`cosine_matrix` under a relative perturbation.

    Every component of every vector multiplied by a factor in ``[1 - eps, 1 + eps]``, with
    ``eps = relative + FLOAT32_ROUNDING``. For unit ``u``, ``v`` the dot product moves by at most
    ``(2 eps + eps^2) sum_i |u_i v_i|`` and each norm by a factor in ``[1 - eps, 1 + eps]``, so

        ``|cos' - cos| <= ((2 eps + eps^2) sum_i |u_i v_i| + (2 eps - eps^2) |cos|) / (1 - eps)^2``,

    which never exceeds ``4 eps / (1 - eps)^2`` (:data:`COSINE_TOLERANCE`) because
    ``sum_i |u_i v_i| <= 1``. Different CPUs change the cosines of this corpus by ~3e-7, well
    inside the bound for ``relative = 1e-6``.
    """
    eps = float(relative) + FLOAT32_ROUNDING
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    absolute = np.abs(x) @ np.abs(y).T
    return ((2 * eps + eps ** 2) * absolute + (2 * eps - eps ** 2) * np.abs(x @ y.T)) / (1 - eps) ** 2


def _rounding_bounds(values: np.ndarray, decimals: int,
                     tolerance: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest rounded value (in units of ``10**-decimals``) within ``tolerance``."""
    scale = 10.0 ** decimals
    values = np.asarray(values, dtype=np.float64)
    return np.rint((values - tolerance) * scale), np.rint((values + tolerance) * scale)


def fragile_rounding(values: np.ndarray, tolerance: float | np.ndarray = COSINE_TOLERANCE,
                     decimals: int = COSINE_DECIMALS) -> np.ndarray:
    """``True`` where a change of up to ``tolerance`` (scalar, or one per value) could change the
    value rounded to ``decimals``."""
    low, high = _rounding_bounds(values, decimals, tolerance)
    return low != high


def rank_candidates(scores: np.ndarray, candidate_ids: Sequence[str]) -> np.ndarray:
    """Positions of the candidates, best first: highest score, equal scores by id (string order).

    Breaking ties by id, not by position, makes the order independent of the file order of
    the corpus; with rounded scores, ties are real and this rule decides them.
    """
    id_rank = np.argsort(np.argsort(np.asarray(candidate_ids, dtype=str), kind="stable"), kind="stable")
    return np.lexsort((id_rank, -np.asarray(scores, dtype=np.float64)))


def fragile_ranking(raw_scores: np.ndarray, candidate_ids: Sequence[str], k: int,
                    tolerance: float | np.ndarray = COSINE_TOLERANCE,
                    decimals: int = COSINE_DECIMALS) -> bool:
    """Could changing each raw score by up to ``tolerance`` change the ordered rounded top ``k``?

    ``tolerance`` is a scalar or one bound per score (:func:`cosine_change_bound`).

    Each score's rounded value can only move within ``[round(s - tol), round(s + tol)]``. The
    ordered top ``k`` cannot change if every one of its members stays ahead of every candidate
    ranked after it: its lowest possible rounded value beats the other's highest, or both are
    pinned to the same rounded value and the id rule orders them as now.
    """
    raw = np.asarray(raw_scores, dtype=np.float64)
    ids = np.asarray(candidate_ids, dtype=str)
    order = rank_candidates(np.round(raw, decimals), ids)
    low, high = _rounding_bounds(raw, decimals, tolerance)
    for position in range(min(k, raw.size)):
        first = order[position]
        later = order[position + 1:]
        safe = (low[first] > high[later]) | ((low[first] == high[first]) & (low[later] == high[later])
                                             & (low[first] == low[later]) & (ids[first] < ids[later]))
        if not safe.all():
            return True
    return False


@dataclass(frozen=True)
class Retrieval:
    """What every query retrieves in one phase, and what that does to the outcome."""

    phase: str
    top: np.ndarray              # (n_queries, k) memory indices, best first
    scores: np.ndarray           # (n_queries, k) cosine similarities, rounded as ranked
    fraction_needed: np.ndarray  # (n_queries,) share of the needed memories retrieved
    misled: np.ndarray           # (n_queries,) bool
    p_success: np.ndarray        # (n_queries,)
    fragile: np.ndarray          # (n_queries,) bool: a cosine change <= COSINE_TOLERANCE could alter top


def retrieve(corpus: Corpus, vectors: CorpusEmbeddings, phase: str, k: int,
             outcome: OutcomeModel = OutcomeModel(),
             decimals: int | None = COSINE_DECIMALS,
             tolerance: float | np.ndarray | None = None) -> Retrieval:
    """Top-``k`` retrieval of every query in ``phase`` and the resulting success probabilities.

    Ranks on cosines rounded to ``decimals`` places, equal ones by memory id
    (:func:`rank_candidates`). ``decimals=None`` ranks on the raw cosines, whose last digits
    depend on the machine: for comparison only, never for published results.
    ``Retrieval.fragile`` flags the queries whose ordered top ``k`` a change of up to
    ``tolerance`` in any cosine could alter (:func:`fragile_ranking`); ``None`` (default): each
    cosine's own :func:`cosine_change_bound`.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    available = corpus.available(phase)
    if k > int(available.sum()):
        raise ValueError(f"k={k} exceeds the {int(available.sum())} memories in the store in phase {phase!r}")
    raw = cosine_matrix(vectors.queries, vectors.memories)
    similarity = raw if decimals is None else np.round(raw, decimals)
    bound = np.broadcast_to(cosine_change_bound(vectors.queries, vectors.memories)
                            if tolerance is None else np.asarray(tolerance, dtype=np.float64), raw.shape)
    candidates = np.flatnonzero(available)
    candidate_ids = [corpus.memory_ids[i] for i in candidates]
    top = np.empty((len(corpus.queries), k), dtype=np.intp)
    fragile = np.zeros(len(corpus.queries), dtype=bool)
    for row in range(len(corpus.queries)):
        top[row] = candidates[rank_candidates(similarity[row, candidates], candidate_ids)[:k]]
        if decimals is not None:
            fragile[row] = fragile_ranking(raw[row, candidates], candidate_ids, k,
                                           bound[row, candidates], decimals)
        else:
            fragile[row] = True  # unrounded: any change of the last digits may reorder
    scores = np.take_along_axis(similarity, top, axis=1)
    index = {m: i for i, m in enumerate(corpus.memory_ids)}
    valid = np.array([m.true_in(phase) for m in corpus.memories])
    fraction = np.empty(len(corpus.queries))
    misled = np.zeros(len(corpus.queries), dtype=bool)
    for row, query in enumerate(corpus.queries):
        needed = {index[m] for m in query.needs[phase]}
        fraction[row] = len(needed & set(top[row].tolist())) / len(needed)
        if outcome.stale_misleads_any_task:
            misled[row] = not valid[top[row]].all()
            continue
        relevant = {index[m] for m in query.needed_ever()}
        for memory in top[row]:  # rank order: the first memory that bears on the task decides
            if memory in relevant:
                misled[row] = not valid[memory]
                break
    return Retrieval(phase, top, scores, fraction, misled, outcome.probability(fraction, misled),
                     fragile)


def robustness(corpus: Corpus, vectors: CorpusEmbeddings, ks: Sequence[int],
               tolerance: float | None = None, decimals: int = COSINE_DECIMALS) -> dict[str, int]:
    """How safe the chapter's decisions and published cosines are from machine noise.

    Counts, over both phases, every query and every ``k`` in ``ks``: the retrieval
    ``decisions`` (ordered top-k lists), the ``fragile_decisions`` that a change of up to
    ``tolerance`` in any cosine could alter (default: each cosine's
    :func:`cosine_change_bound`), and the decisions ``changed_by_rounding`` (rounded top-k
    differs from the unrounded one). Also the ``published_cosines``: every memory-pair cosine
    (``i <= j``; :func:`memory_similarity` shows them all, :func:`hitchhiker_table` some), and
    the ``fragile_cosines`` among them whose rounded value such a change could alter. ``decimals`` other than :data:`COSINE_DECIMALS` answers
    "what if the chapter rounded differently". The counts are integers; they do not depend on
    the machine as long as no cosine sits within machine noise of ``tolerance`` from a
    rounding boundary (for the shipped corpus the nearest is more than 1e-6 away from it).
    """
    out = {"decisions": 0, "fragile_decisions": 0, "changed_by_rounding": 0}
    for k in ks:
        for phase in PHASES:
            rounded = retrieve(corpus, vectors, phase, k, decimals=decimals, tolerance=tolerance)
            unrounded = retrieve(corpus, vectors, phase, k, decimals=None)
            out["decisions"] += len(corpus.queries)
            out["fragile_decisions"] += int(rounded.fragile.sum())
            out["changed_by_rounding"] += int(np.any(rounded.top != unrounded.top, axis=1).sum())
    upper = np.triu_indices(len(corpus.memories))
    raw = cosine_matrix(vectors.memories, vectors.memories)[upper]
    bound = (cosine_change_bound(vectors.memories, vectors.memories)[upper] if tolerance is None
             else tolerance)
    out["published_cosines"] = int(raw.size)
    out["fragile_cosines"] = int(fragile_rounding(raw, bound, decimals).sum())
    return out


# --- episodes ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RealTextRun:
    """One run: the episodes and Memory Worth of every memory after every episode."""

    world: RealTextWorld
    corpus: Corpus
    retrieval: dict[str, Retrieval]
    type_weights: dict[str, np.ndarray]  # task mix of each phase (sums to 1)
    after: np.ndarray       # (episodes,) bool: episode is after the shift
    task_type: np.ndarray   # (episodes,) index into corpus.types
    query: np.ndarray       # (episodes,) index into corpus.queries
    retrieved: np.ndarray   # (episodes, k) memory indices
    p_success: np.ndarray   # (episodes,)
    success: np.ndarray     # (episodes,) bool
    successes: np.ndarray   # (episodes, memories) h+ after each episode
    failures: np.ndarray    # (episodes, memories) h- after each episode

    @property
    def n_episodes(self) -> int:
        return int(self.success.size)

    def worth(self, episode: int | None = None) -> np.ndarray:
        """MW of every memory after ``episode`` (0-based; default: the last episode).

        Use :attr:`trajectory` for the values after every episode.
        """
        row = self.n_episodes - 1 if episode is None else episode
        return memory_worth(self.successes[row], self.failures[row])

    def evidence(self, episode: int | None = None) -> np.ndarray:
        row = self.n_episodes - 1 if episode is None else episode
        return self.successes[row] + self.failures[row]

    def classes(self, episode: int | None = None) -> np.ndarray:
        w = self.world
        return worth_class(self.worth(episode), self.evidence(episode), w.min_evidence,
                           w.high_threshold, w.low_threshold)

    @property
    def trajectory(self) -> np.ndarray:
        """MW of every memory after every episode, shape (episodes, memories)."""
        return memory_worth(self.successes, self.failures)

    @property
    def last_before(self) -> int:
        """Index of the last episode before the shift."""
        return self.world.shift_episode - 1


def _draw_types(weights: np.ndarray, u: np.ndarray) -> np.ndarray:
    cumulative = np.cumsum(weights)
    cumulative /= cumulative[-1]
    chosen = np.searchsorted(cumulative, u, side="right")
    # never pick a type of weight 0 through rounding at the top end
    return np.minimum(chosen, np.flatnonzero(weights > 0)[-1])


def run_episodes(corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld = RealTextWorld()) -> RealTextRun:
    """Run the episodes of ``world`` on cached vectors (see the module docstring)."""
    n, k = world.n_episodes, world.k
    retrieval = {phase: retrieve(corpus, vectors, phase, k, world.outcome) for phase in PHASES}
    weights = {BEFORE: corpus.type_weights(BEFORE), AFTER: corpus.type_weights(AFTER)}
    if world.type_weights_after is not None:
        custom = np.asarray(world.type_weights_after, dtype=np.float64)
        if custom.size != len(corpus.types):
            raise ValueError(f"type_weights_after has {custom.size} weights for {len(corpus.types)} task types")
        weights[AFTER] = custom / custom.sum()

    draws = np.random.default_rng(world.seed).random((n, 3))
    after = world.phase_of(np.arange(n))
    task_type = np.where(after, _draw_types(weights[AFTER], draws[:, 0]),
                         _draw_types(weights[BEFORE], draws[:, 0]))
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
    if not (np.array_equal(check.successes_, successes[-1]) and np.array_equal(check.failures_, failures[-1])):
        raise AssertionError("cumulative counters differ from WorthArrays")  # pragma: no cover
    return RealTextRun(world, corpus, retrieval, weights, after, task_type, query, retrieved,
                       p_success, success, successes, failures)


def discounted_worth(run: RealTextRun, discount: float) -> np.ndarray:
    """MW trajectories with counters that decay by ``discount`` per episode (all memories).

    Same definition as :class:`forgetting.worth.DiscountedMemoryWorth`: every episode first
    multiplies every counter by ``discount``, then adds the episode's evidence. Computed as a
    first-order recursive filter over the per-episode evidence.
    """
    if isinstance(discount, bool) or not isinstance(discount, (int, float)) or not 0 < discount <= 1:
        raise ValueError(f"discount must be in (0, 1], got {discount!r}")
    hits = np.diff(run.successes, axis=0, prepend=0.0)
    misses = np.diff(run.failures, axis=0, prepend=0.0)
    pos = lfilter([1.0], [1.0, -float(discount)], hits, axis=0)
    neg = lfilter([1.0], [1.0, -float(discount)], misses, axis=0)
    return memory_worth(pos, neg)


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


def exact_p_plus(corpus: Corpus, retrieval: Retrieval, type_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    return memory_worth(hits, total - hits)


# --- summaries -----------------------------------------------------------------------------------------

def _only(corpus: Corpus, role: str) -> int:
    ids = corpus.ids_with_role(role)
    if len(ids) != 1:
        raise ValueError(f"Experiment 5 needs exactly one memory with role {role!r}, corpus has {ids}")
    return corpus.index(ids[0])


def _mean_settled(worth: np.ndarray, classes: np.ndarray, mask: np.ndarray) -> tuple[float, int]:
    chosen = mask & (classes != UNCERTAIN)
    return (float(worth[chosen].mean()) if chosen.any() else float("nan")), int(chosen.sum())


def summarise(run: RealTextRun) -> dict[str, Any]:
    """The numbers of the chapter (plain Python values).

    Role means (``specialist_mw_mean`` ...) average the final MW over the memories of that
    role that have enough evidence (not ``uncertain``); ``n_<role>`` says how many.
    """
    corpus, world = run.corpus, run.world
    stale, corrected = _only(corpus, "stale"), _only(corpus, "corrected")
    roles = corpus.roles
    before, end = run.last_before, run.n_episodes - 1
    worth_before, worth_end = run.worth(before), run.worth(end)
    classes_before, classes_end = run.classes(before), run.classes(end)
    trajectory = run.trajectory[:, stale]
    stale_evidence = run.successes[:, stale] + run.failures[:, stale]
    low = np.flatnonzero((trajectory <= world.low_threshold) & (stale_evidence >= world.min_evidence)
                         & (np.arange(run.n_episodes) >= world.shift_episode))
    out: dict[str, Any] = {
        "episodes": run.n_episodes,
        "shift_episode": world.shift_episode,
        "stale_id": corpus.memory_ids[stale],
        "corrected_id": corpus.memory_ids[corrected],
        "stale_mw_before": float(worth_before[stale]),
        "stale_mw_after": float(worth_end[stale]),
        "stale_class_before": str(classes_before[stale]),
        "stale_class_after": str(classes_end[stale]),
        "stale_evidence_before": float(run.evidence(before)[stale]),
        "stale_evidence_after": float(run.evidence(end)[stale] - run.evidence(before)[stale]),
        "stale_low_value_episode": int(low[0]) + 1 if low.size else -1,
        "stale_p_plus_before": float(exact_p_plus(corpus, run.retrieval[BEFORE], run.type_weights[BEFORE])[0][stale]),
        "stale_p_plus_after": float(exact_p_plus(corpus, run.retrieval[AFTER], run.type_weights[AFTER])[0][stale]),
        "stale_expected_after": float(expected_worth(run)[stale]),
        "corrected_mw_after": float(worth_end[corrected]),
        "corrected_class_after": str(classes_end[corrected]),
        "success_rate_before": float(run.success[~run.after].mean()),
        "success_rate_after": float(run.success[run.after].mean()),
    }
    for role in ("specialist", "hitchhiker", "general"):
        mean, count = _mean_settled(worth_end, classes_end, roles == role)
        out[f"{role}_mw_mean"] = mean
        out[f"n_{role}"] = count
    return out


def seed_summaries(corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld,
                   n_seeds: int) -> list[dict[str, Any]]:
    """:func:`summarise` of ``world`` run with seeds ``0 .. n_seeds - 1``."""
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 1:
        raise ValueError(f"n_seeds must be an int >= 1, got {n_seeds!r}")
    return [summarise(run_episodes(corpus, vectors, replace(world, seed=seed))) for seed in range(n_seeds)]


def seed_summary(corpus: Corpus, vectors: CorpusEmbeddings, world: RealTextWorld,
                 n_seeds: int, keys: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Mean and sample sd of summary ``keys`` over seeds ``0 .. n_seeds - 1`` (``n_seeds >= 2``)."""
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, int) or n_seeds < 2:
        raise ValueError(f"n_seeds must be an int >= 2, got {n_seeds!r}")
    summaries = seed_summaries(corpus, vectors, world, n_seeds)
    return {key: (float(np.mean([s[key] for s in summaries])),
                  float(np.std([s[key] for s in summaries], ddof=1))) for key in keys}


def taxonomy_table(run: RealTextRun) -> list[dict[str, Any]]:
    """One row per memory: MW, evidence and class just before the shift and at the end."""
    before, end = run.last_before, run.n_episodes - 1
    rows = []
    for i in role_order(run.corpus):
        memory = run.corpus.memories[i]
        rows.append({
            "memory": memory.id, "role": memory.role,
            "mw_before": float(run.worth(before)[i]), "evidence_before": float(run.evidence(before)[i]),
            "class_before": str(run.classes(before)[i]),
            "mw_after": float(run.worth(end)[i]), "evidence_after": float(run.evidence(end)[i]),
            "class_after": str(run.classes(end)[i]),
        })
    return rows


def taxonomy_counts(run: RealTextRun) -> list[dict[str, Any]]:
    """Number of memories in each class, just before the shift and at the end."""
    rows = []
    for label, episode in (("before the shift", run.last_before), ("end", run.n_episodes - 1)):
        classes = run.classes(episode)
        rows.append({"when": label, **{c: int((classes == c).sum()) for c in WORTH_CLASSES}})
    return rows


def evidence_by_query(run: RealTextRun, memory_id: str, after: bool = True) -> list[dict[str, Any]]:
    """Where one memory's evidence comes from: per query, in one phase (default: after the shift)."""
    corpus = run.corpus
    memory = corpus.index(memory_id)
    phase = AFTER if after else BEFORE
    retrieval = run.retrieval[phase]
    in_phase = run.after == after
    hit = np.any(run.retrieved == memory, axis=1) & in_phase
    rows = []
    for q, query in enumerate(corpus.queries):
        mask = hit & (run.query == q)
        if not mask.any():
            continue
        rank = int(np.flatnonzero(retrieval.top[q] == memory)[0]) + 1
        rows.append({"query": query.id, "type": query.type, "rank": rank,
                     "misled": bool(retrieval.misled[q]), "p_success": float(retrieval.p_success[q]),
                     "episodes": int(mask.sum()), "successes": int(run.success[mask].sum()),
                     "failures": int((~run.success[mask]).sum())})
    return rows


def role_order(corpus: Corpus) -> list[int]:
    """Memory indices grouped by role (in :data:`ROLES` order), file order within a role."""
    return sorted(range(len(corpus.memories)), key=lambda i: (ROLES.index(corpus.memories[i].role), i))


def memory_similarity(corpus: Corpus, vectors: CorpusEmbeddings) -> tuple[np.ndarray, list[str], list[str]]:
    """Memory-memory cosine similarity rounded to :data:`COSINE_DECIMALS`, rows and columns
    grouped by role; with ids and roles (every entry is checked by :func:`robustness`)."""
    order = role_order(corpus)
    matrix = rounded_cosines(vectors.memories[order], vectors.memories[order])
    return matrix, [corpus.memory_ids[i] for i in order], [corpus.memories[i].role for i in order]


def _hitchhiker_pairs(corpus: Corpus) -> list[tuple[int, int]]:
    """(hitchhiker, memory it resembles) index pairs, in file order."""
    return [(i, corpus.index(m.resembles)) for i, m in enumerate(corpus.memories)
            if m.role == "hitchhiker" and m.resembles is not None]


def hitchhiker_table(run: RealTextRun, vectors: CorpusEmbeddings) -> list[dict[str, Any]]:
    """Each hitchhiker next to the memory it resembles: similarity and final MW of both.

    The cosine is rounded to :data:`COSINE_DECIMALS` places (see the module docstring).
    """
    corpus = run.corpus
    worth, classes, evidence = run.worth(), run.classes(), run.evidence()
    similarity = rounded_cosines(vectors.memories, vectors.memories)
    rows = []
    for i, j in _hitchhiker_pairs(corpus):
        memory = corpus.memories[i]
        rows.append({"hitchhiker": memory.id, "resembles": memory.resembles,
                     "cosine": float(similarity[i, j]),
                     "mw_hitchhiker": float(worth[i]), "evidence_hitchhiker": float(evidence[i]),
                     "class_hitchhiker": str(classes[i]),
                     "mw_resembled": float(worth[j]), "class_resembled": str(classes[j])})
    return rows
