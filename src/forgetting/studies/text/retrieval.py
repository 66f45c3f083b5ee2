"""Experiment 5's retrieval: corpus vectors, the top-k of every query, and how safe it is.

:func:`embed_corpus` embeds every memory and query once through the on-disk cache.
:func:`retrieve` ranks the memories in the store by cosine rounded to
:data:`~forgetting.text.similarity.COSINE_DECIMALS` places, equal ones by id, and turns
each query's top ``k`` into a success probability (:class:`~forgetting.studies.text.outcome.OutcomeModel`).
Retrieval is a deterministic function of the query and the phase. :func:`robustness` counts
the decisions and published cosines that machine noise could change.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..._validate import bool_problem, int_problem, raise_problems, shown
from ...text.cache import EmbeddingCache
from ...text.encoder import MiniLMEncoder
from ...text.model_files import MODEL_FILES_SHA256, WEIGHTS_FILE, locate_model_dir, verify_model_dir
from ...text.similarity import (
    COSINE_DECIMALS,
    COSINE_TOLERANCE,
    RELATIVE_PERTURBATION,
    cosine_change_bound,
    cosine_matrix,
    fragile_ranking,
    fragile_rounding,
    rank_candidates,
)
from .corpus import PHASES, Corpus
from .outcome import OutcomeModel

__all__ = [
    "CorpusEmbeddings",
    "Retrieval",
    "embed_corpus",
    "retrieval_problems",
    "retrieve",
    "robustness",
    "robustness_depths",
    "robustness_values",
    "set_outcome",
]


@dataclass(frozen=True)
class CorpusEmbeddings:
    """Unit vectors of the memories and queries (float32, corpus order) and where they came from.

    Attributes
    ----------
    memories, queries : numpy.ndarray
        ``(n_memories, 384)`` and ``(n_queries, 384)``, rows in corpus order.
    model_sha256 : str
        Digest of the weights of the model that made (or verified) them.
    cache_hits, cache_misses : int
        Texts read from the cache and texts computed by this call.
    """

    memories: np.ndarray
    queries: np.ndarray
    model_sha256: str
    cache_hits: int
    cache_misses: int


def embed_corpus(
    corpus: Corpus,
    cache_dir: str | os.PathLike[str],
    *,
    encoder: MiniLMEncoder | None = None,
    verify_model: bool = True,
) -> CorpusEmbeddings:
    """Embed every memory and query through an :class:`~forgetting.text.cache.EmbeddingCache`.

    Parameters
    ----------
    corpus : Corpus
        Its memory texts, then its query texts, are embedded in one call.
    cache_dir : path
        Root of the cache. Vectors already there are read, not recomputed (entries failing
        their checksum are recomputed); the model is loaded only if some text is missing.
    encoder : MiniLMEncoder, optional
        Encoder for missing texts; default the shared one.
    verify_model : bool, default True
        Check every model file the encoder reads against
        :data:`~forgetting.text.model_files.MODEL_FILES_SHA256` even when everything is
        cached, so the digest reported is the one of the model actually installed.

    Returns
    -------
    CorpusEmbeddings
    """
    raise_problems([bool_problem("verify_model", verify_model)])
    cache = EmbeddingCache(cache_dir, encoder=encoder)
    if encoder is not None:
        digest = encoder.model_sha256
    elif verify_model:
        digest = verify_model_dir(locate_model_dir(), MODEL_FILES_SHA256)[WEIGHTS_FILE]
    else:
        digest = cache.model_sha256
    texts = [m.text for m in corpus.memories] + [q.text for q in corpus.queries]
    vectors = cache.encode(texts)
    n = len(corpus.memories)
    return CorpusEmbeddings(
        memories=vectors[:n],
        queries=vectors[n:],
        model_sha256=digest,
        cache_hits=cache.hits,
        cache_misses=cache.misses,
    )


@dataclass(frozen=True)
class Retrieval:
    """What every query retrieves in one phase, and what that does to the outcome.

    Attributes
    ----------
    phase : str
        ``before`` or ``after``.
    top : numpy.ndarray
        ``(n_queries, k)`` memory indices, best first.
    scores : numpy.ndarray
        ``(n_queries, k)`` cosine similarities, rounded as ranked.
    fraction_needed : numpy.ndarray
        ``(n_queries,)`` share of the memories the query needs in this phase that were retrieved.
    misled : numpy.ndarray
        ``(n_queries,)`` bool, by the outcome model's misleading rule.
    p_success : numpy.ndarray
        ``(n_queries,)`` success probability of an episode with this query.
    fragile : numpy.ndarray
        ``(n_queries,)`` bool: a cosine change within its bound could alter the ordered top k.
    """

    phase: str
    top: np.ndarray
    scores: np.ndarray
    fraction_needed: np.ndarray
    misled: np.ndarray
    p_success: np.ndarray
    fragile: np.ndarray


#: The outcome model of the published chapter (frozen, so one shared default is safe).
DEFAULT_OUTCOME = OutcomeModel()


def retrieval_problems(
    corpus: Corpus, phase: object, k: object, outcome: object = DEFAULT_OUTCOME, decimals: object = None
) -> list[str | None]:
    """Why :func:`retrieve` would refuse these arguments (``None`` entries: fine).

    ``k`` is an int (numpy ints too) in ``[1, n]`` with ``n`` the memories in the store of
    ``phase``: ``k = 0`` retrieves nothing, and a ``k`` beyond the store cannot be filled.
    """
    problems: list[str | None] = []
    if phase in PHASES:
        store = int(corpus.available(str(phase)).sum())
        problems.append(
            None
            if int_problem("k", k, minimum=1, maximum=store, allow_numpy=True) is None
            else f"k must be an int >= 1 and <= {store} (the memories in the store in phase "
            f"{phase!r}), got {shown(k)}"
        )
    else:
        problems.append(f"phase must be one of {PHASES}, got {shown(phase)}")
        problems.append(int_problem("k", k, minimum=1, allow_numpy=True))
    if not isinstance(outcome, OutcomeModel):
        problems.append(f"outcome must be an OutcomeModel, got {shown(outcome)}")
    if decimals is not None:
        problems.append(int_problem("decimals", decimals, minimum=0, allow_numpy=True))
    return problems


def retrieve(
    corpus: Corpus,
    vectors: CorpusEmbeddings,
    phase: str,
    k: int,
    outcome: OutcomeModel = DEFAULT_OUTCOME,
    decimals: int | None = COSINE_DECIMALS,
    tolerance: float | np.ndarray | None = None,
) -> Retrieval:
    """Top-``k`` retrieval of every query in ``phase`` and the resulting success probabilities.

    Raises ``ValueError`` for an unknown phase, a ``k`` that is not an int in
    ``[1, memories in the store of the phase]``, an ``outcome`` that is not an
    :class:`~forgetting.studies.text.outcome.OutcomeModel` or ``decimals`` neither ``None`` nor an
    int ``>= 0`` (:func:`retrieval_problems`, all at once).

    Ranks on cosines rounded to ``decimals`` places, equal ones by memory id
    (:func:`rank_candidates`). ``decimals=None`` ranks on the raw cosines, whose last digits
    depend on the machine: for comparison only, never for published results.
    ``Retrieval.fragile`` flags the queries whose ordered top ``k`` a change of up to
    ``tolerance`` in any cosine could alter (:func:`fragile_ranking`); ``None`` (default): each
    cosine's own :func:`cosine_change_bound`.
    """
    raise_problems(retrieval_problems(corpus, phase, k, outcome, decimals))
    available = corpus.available(phase)
    raw = cosine_matrix(vectors.queries, vectors.memories)
    similarity = raw if decimals is None else np.round(raw, decimals)
    bound = np.broadcast_to(
        cosine_change_bound(vectors.queries, vectors.memories)
        if tolerance is None
        else np.asarray(tolerance, dtype=np.float64),
        raw.shape,
    )
    candidates = np.flatnonzero(available)
    candidate_ids = [corpus.memory_ids[i] for i in candidates]
    top = np.empty((len(corpus.queries), k), dtype=np.intp)
    fragile = np.zeros(len(corpus.queries), dtype=bool)
    for row in range(len(corpus.queries)):
        top[row] = candidates[rank_candidates(similarity[row, candidates], candidate_ids)[:k]]
        if decimals is not None:
            fragile[row] = fragile_ranking(
                raw[row, candidates], candidate_ids, k, bound[row, candidates], decimals
            )
        else:
            fragile[row] = True  # unrounded: any change of the last digits may reorder
    scores = np.take_along_axis(similarity, top, axis=1)
    fraction = np.empty(len(corpus.queries))
    misled = np.zeros(len(corpus.queries), dtype=bool)
    for row in range(len(corpus.queries)):
        fraction[row], misled[row] = set_outcome(corpus, phase, row, top[row].tolist(), outcome)
    return Retrieval(phase, top, scores, fraction, misled, outcome.probability(fraction, misled), fragile)


def set_outcome(
    corpus: Corpus, phase: str, query: int, memories: list[int], outcome: OutcomeModel = DEFAULT_OUTCOME
) -> tuple[float, bool]:
    """``(fraction_needed, misled)`` of query ``query`` in ``phase`` when the agent uses
    ``memories`` (indices, best first), by the outcome model's misleading rule: the share of the
    memories the query needs now that are among them, and whether a memory wrong now misleads
    (any of them, or the first that bears on the task; none misleads an empty list)."""
    index = {m: i for i, m in enumerate(corpus.memory_ids)}
    task = corpus.queries[query]
    needed = {index[m] for m in task.needs[phase]}
    fraction = len(needed & set(memories)) / len(needed)
    wrong = [not corpus.memories[m].true_in(phase) for m in memories]
    if outcome.stale_misleads_any_task:
        return fraction, any(wrong)
    relevant = {index[m] for m in task.needed_ever()}
    for memory, bad in zip(memories, wrong):  # rank order: the first memory that bears on the task decides
        if memory in relevant:
            return fraction, bad
    return fraction, False


def robustness(
    corpus: Corpus,
    vectors: CorpusEmbeddings,
    ks: Sequence[int],
    tolerance: float | None = None,
    decimals: int = COSINE_DECIMALS,
) -> dict[str, int]:
    """How safe the chapter's decisions and published cosines are from machine noise.

    Counts, over both phases, every query and every ``k`` in ``ks``: the retrieval
    ``decisions`` (ordered top-k lists), the ``fragile_decisions`` that a change of up to
    ``tolerance`` in any cosine could alter (default: each cosine's
    :func:`~forgetting.text.similarity.cosine_change_bound`), and the decisions
    ``changed_by_rounding`` (rounded top-k differs from the unrounded one). Also the
    ``published_cosines``: every memory-pair cosine (``i <= j``;
    :func:`~forgetting.studies.text.tables.memory_similarity` shows them all,
    :func:`~forgetting.studies.text.tables.hitchhiker_table` some), and the ``fragile_cosines`` among
    them whose rounded value such a change could alter. ``decimals`` other than
    :data:`~forgetting.text.similarity.COSINE_DECIMALS` answers "what if the chapter rounded
    differently". The counts are integers; they do not depend on the machine as long as no
    cosine sits within machine noise of ``tolerance`` from a rounding boundary.
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
    bound = cosine_change_bound(vectors.memories, vectors.memories)[upper] if tolerance is None else tolerance
    out["published_cosines"] = int(raw.size)
    out["fragile_cosines"] = int(fragile_rounding(raw, bound, decimals).sum())
    return out


def robustness_depths(k: int, depths: Sequence[int]) -> list[int]:
    """The depths whose decisions the chapter checks: ``k - 1`` (at least 1), ``k`` and ``k + 1``
    (the world and its variants) and every depth of the sweep over ``k``, sorted, each once."""
    return sorted({max(1, k - 1), k, k + 1, *depths})


def robustness_values(
    corpus: Corpus, vectors: CorpusEmbeddings, ks: Sequence[int]
) -> dict[str, int | float | str]:
    """The numbers and words the chapter states about :func:`robustness` at the depths ``ks``.

    The rounding (decimals, relative perturbation, cosine tolerance), ``ks`` as a set in words,
    the counts of :func:`robustness` at :data:`~forgetting.text.similarity.COSINE_DECIMALS`
    (``robust_decisions`` for its ``decisions``), and what one more decimal place would do
    (``finer_decimals``, ``finer_verdict``).
    """
    robust = robustness(corpus, vectors, ks)
    finer = robustness(corpus, vectors, ks, decimals=COSINE_DECIMALS + 1)
    return {
        "cosine_decimals": COSINE_DECIMALS,
        "relative_perturbation": RELATIVE_PERTURBATION,
        "cosine_tolerance": COSINE_TOLERANCE,
        "robust_ks": "{" + ", ".join(str(value) for value in ks) + "}",
        "robust_decisions": robust["decisions"],
        **{
            key: robust[key]
            for key in ("fragile_decisions", "fragile_cosines", "published_cosines", "changed_by_rounding")
        },
        "finer_decimals": COSINE_DECIMALS + 1,
        "finer_verdict": "some of these would sit within their bound of a rounding boundary"
        if finer["fragile_decisions"] or finer["fragile_cosines"]
        else "these would all still be clear of the rounding boundaries",
    }
