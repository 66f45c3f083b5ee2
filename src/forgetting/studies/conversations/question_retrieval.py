"""A LoCoMo conversation's questions as retrieval episodes over its whole store of turns.

An *episode* is one question. Its retrieval ranks every turn of the conversation by the
question's rounded cosine (:mod:`forgetting.text.similarity`), higher first and equal scores by
the lower turn index, and returns the first ``k`` candidates; a suppressed turn is no candidate.
The episode succeeds (a hit at ``k``) when one of the question's evidence turns is among those
retrieved. The scores come precomputed (:class:`QuestionSet`); this module never encodes text.

:func:`turn_roles` says what each turn did in a set of episodes, which names the *hitchhikers*
(never evidence, retrieved beside evidence) and *distractors* (never evidence, retrieved mostly
in failed episodes). Every decision is on rounded scores or integer counts, never on float noise.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import int_problem, is_int, raise_problems, real_problem, shown
from ...text.similarity import COSINE_DECIMALS

__all__ = [
    "DEFAULT_MIN_RETRIEVALS",
    "DEFAULT_CO_SHARE",
    "QuestionSet",
    "retrieve",
    "hits",
    "check_k",
    "episode_counts",
    "question_indices_of",
    "role_problems",
    "TurnRoles",
    "turn_roles",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Retrievals a turn needs before it can be called a hitchhiker or a distractor (the five
#: unit-weight retrievals of the taxonomy's ``DEFAULT_MIN_EVIDENCE``).
DEFAULT_MIN_RETRIEVALS = 5
#: Share of its retrievals a hitchhiker spends beside an evidence turn.
DEFAULT_CO_SHARE = 0.5


@dataclass(frozen=True, eq=False)
class QuestionSet:
    """One conversation's questions as retrieval sees them.

    Attributes
    ----------
    name : str
        The conversation's name.
    scores : numpy.ndarray
        ``(n_questions, n_turns)`` cosines in [-1, 1] rounded to ``COSINE_DECIMALS`` places
        (:func:`~forgetting.text.similarity.rounded_cosines`); stored as a read-only float64 copy.
    evidence : tuple of frozenset of int
        Per question, the indices of its evidence turns: non-empty, each in ``[0, n_turns)``
        (the caller drops questions whose evidence names no turn).
    """

    name: str
    scores: FloatArray
    evidence: tuple[frozenset[int], ...]

    def __post_init__(self) -> None:
        problems = (
            []
            if isinstance(self.name, str) and self.name
            else [f"name must be a non-empty str, got {shown(self.name)}"]
        )
        raw = self.scores
        shape_ok = isinstance(raw, np.ndarray) and raw.dtype.kind in "iuf" and raw.ndim == 2 and raw.size > 0
        if not shape_ok:
            problems.append(
                "scores must be a non-empty 2-d numpy array of real numbers (n_questions, n_turns), got "
                f"{getattr(raw, 'dtype', type(raw).__name__)} shape {getattr(raw, 'shape', None)}"
            )
            raise_problems(problems)
        values = np.array(raw, dtype=np.float64)
        if not np.all(np.isfinite(values) & (np.abs(values) <= 1)):
            problems.append(f"scores must be finite cosines in [-1, 1], got {shown(values)}")
        elif not np.array_equal(values, np.round(values, COSINE_DECIMALS)):
            problems.append(
                f"scores must be rounded to {COSINE_DECIMALS} decimals (rounded_cosines), got {shown(values)}"
            )
        n_questions, n_turns = values.shape
        evidence = self.evidence
        if not isinstance(evidence, tuple) or len(evidence) != n_questions:
            problems.append(
                f"evidence must be a tuple of {n_questions} frozensets (one per question), got {shown(evidence)}"
            )
        else:
            bad = [
                i
                for i, turns in enumerate(evidence)
                if not isinstance(turns, frozenset)
                or not turns
                or not all(is_int(t, allow_numpy=True) and 0 <= t < n_turns for t in turns)
            ]
            if bad:
                problems.append(
                    f"evidence must hold a non-empty frozenset of turn indices in [0, {n_turns}) per question, "
                    f"got {len(bad)} bad (questions {shown(bad)}), e.g. {shown(evidence[bad[0]])}"
                )
        raise_problems(problems)
        values.setflags(write=False)
        object.__setattr__(self, "scores", values)
        object.__setattr__(self, "evidence", tuple(frozenset(int(t) for t in turns) for turns in evidence))

    @property
    def n_questions(self) -> int:
        """Number of questions (rows of :attr:`scores`)."""
        return int(self.scores.shape[0])

    @property
    def n_turns(self) -> int:
        """Number of turns in the store (columns of :attr:`scores`)."""
        return int(self.scores.shape[1])

    @functools.cached_property
    def evidence_matrix(self) -> BoolArray:
        """``(n_questions, n_turns)``: ``True`` where the turn is evidence of the question."""
        matrix = np.zeros(self.scores.shape, dtype=bool)
        for i, turns in enumerate(self.evidence):
            matrix[i, sorted(turns)] = True
        matrix.setflags(write=False)
        return matrix

    @functools.cached_property
    def ranking(self) -> IntArray:
        """Per question, every turn best first: ``argsort`` on ``(-score, turn index)``."""
        order = np.argsort(-self.scores, axis=1, kind="stable").astype(np.int64)
        order.setflags(write=False)
        return order

    @functools.cached_property
    def _evidence_ranked(self) -> BoolArray:
        """:attr:`evidence_matrix` in the order of :attr:`ranking`, row by row."""
        return np.take_along_axis(self.evidence_matrix, self.ranking, axis=1)


def _suppression_mask(suppressed: Any, n_turns: int) -> BoolArray:
    """``suppressed`` as a boolean mask over the turns, or ``ValueError``."""
    if suppressed is None:
        return np.zeros(n_turns, dtype=bool)
    if isinstance(suppressed, np.ndarray) and suppressed.dtype == bool:
        if suppressed.shape != (n_turns,):
            raise ValueError(
                f"suppressed as a boolean mask must have shape ({n_turns},), got {suppressed.shape}"
            )
        return suppressed.copy()
    try:
        turns = list(suppressed)
    except TypeError:
        turns = None
    if (
        turns is None
        or isinstance(suppressed, (str, bytes))
        or not all(is_int(t, allow_numpy=True) and 0 <= t < n_turns for t in turns)
    ):
        raise ValueError(
            f"suppressed must be None, a boolean mask of shape ({n_turns},) or turn indices in [0, {n_turns}), "
            f"got {shown(suppressed)}"
        )
    mask = np.zeros(n_turns, dtype=bool)
    mask[[int(t) for t in turns]] = True
    return mask


def retrieve(scores_row: npt.ArrayLike, k: int, suppressed: Any = None) -> IntArray:
    """The ``k`` best candidates of one question: turn indices, best first.

    Candidates are the turns not ``suppressed`` (``None``, turn indices, or a boolean mask over
    the turns), ranked on ``(-score, turn index)``; fewer than ``k`` candidates: all of them.

    >>> retrieve([0.2, 0.5, 0.2, 0.9], 3).tolist()
    [3, 1, 0]
    >>> retrieve([0.2, 0.5, 0.2, 0.9], 3, suppressed=[1]).tolist()
    [3, 0, 2]
    """
    row = np.asarray(scores_row)
    if row.ndim != 1 or row.dtype.kind not in "iuf" or not np.all(np.isfinite(row)):
        raise ValueError(f"scores_row must be a 1-d sequence of finite real numbers, got {shown(scores_row)}")
    raise_problems([int_problem("k", k, minimum=1, allow_numpy=True)])
    candidates = np.flatnonzero(~_suppression_mask(suppressed, row.size))
    order = candidates[np.argsort(-row[candidates].astype(np.float64), kind="stable")]
    return order[: int(k)].astype(np.int64)


def _top_k(ranking: IntArray, mask: BoolArray, k: int) -> BoolArray:
    """The first ranks of ``ranking``, ``True`` where retrieved at ``k``: not suppressed and among the
    first ``k`` such. Only ``k + (suppressed turns)`` ranks can hold one, so only those are returned."""
    keep = ~mask[ranking[:, : k + int(mask.sum())]]
    return keep & (np.cumsum(keep, axis=1, dtype=np.int32) <= k)


def check_k(k: Any) -> int:
    """``k`` as an int if it is one ``>= 1`` (numpy ints too), else ``ValueError``."""
    raise_problems([int_problem("k", k, minimum=1, allow_numpy=True)])
    return int(k)


def hits(qs: QuestionSet, k: int, suppressed: Any = None) -> BoolArray:
    """Per question of ``qs``: is one of its evidence turns among its :func:`retrieve` at ``k``?

    ``suppressed`` (``None``, turn indices or a boolean mask) removes turns from every question's
    candidates; a question whose candidates are all suppressed retrieves nothing and misses.
    """
    k = check_k(k)
    mask = _suppression_mask(suppressed, qs.n_turns)
    top = _top_k(qs.ranking, mask, k)
    return np.asarray(np.any(top & qs._evidence_ranked[:, : top.shape[1]], axis=1))


def question_indices_of(qs: QuestionSet, question_indices: Any) -> IntArray:
    """Distinct question indices of ``qs`` as an int array, or ``ValueError``.

    A 1-d numpy array of ints is checked as a whole (the test below, made item by item).
    """
    n, array = qs.n_questions, question_indices
    whole = isinstance(array, np.ndarray) and array.ndim == 1 and array.dtype.kind in "iu"
    if whole and (
        not array.size or (array.min() >= 0 and array.max() < n and np.unique(array).size == array.size)
    ):
        return np.array(array, dtype=np.int64)
    try:
        values = list(question_indices)
    except TypeError:
        values = None
    if (
        values is None
        or not all(is_int(i, allow_numpy=True) and 0 <= i < n for i in values)
        or len(set(values)) != len(values)
    ):
        raise ValueError(
            f"question_indices must be distinct question indices in [0, {n}), got {shown(question_indices)}"
        )
    return np.array(values, dtype=np.int64)


def episode_counts(qs: QuestionSet, index: IntArray, k: int) -> tuple[IntArray, IntArray, IntArray]:
    """Per turn over the questions ``index`` (no suppression): successes, failures, co-retrievals."""
    top = qs.ranking[index, :k]
    evidence = qs._evidence_ranked[index, :k]
    success = np.any(evidence, axis=1)
    n = qs.n_turns
    return (
        np.bincount(top[success].ravel(), minlength=n),
        np.bincount(top[~success].ravel(), minlength=n),
        np.bincount(top[success[:, None] & ~evidence], minlength=n),
    )


def role_problems(min_retrievals: Any, co_share: Any = DEFAULT_CO_SHARE) -> list[str | None]:
    """Why ``min_retrievals`` (an int ``>= 1``) or ``co_share`` (in [0, 1]) is bad, one entry each."""
    return [
        int_problem("min_retrievals", min_retrievals, minimum=1, allow_numpy=True),
        real_problem("co_share", co_share, 0.0, 1.0),
    ]


@dataclass(frozen=True)
class TurnRoles:
    """What each turn did in a set of episodes (no suppression).

    Attributes
    ----------
    retrieved : numpy.ndarray of int
        Episodes that retrieved the turn.
    co_retrieved : numpy.ndarray of int
        Of those, episodes that also retrieved an evidence turn of their question while the turn
        itself is not evidence of it (each such episode is a success).
    failures : numpy.ndarray of int
        Of those, failed episodes (``h-``).
    evidence : numpy.ndarray of bool
        The turn is evidence of some question of the whole set, not only of these episodes.
    """

    retrieved: IntArray
    co_retrieved: IntArray
    failures: IntArray
    evidence: BoolArray

    def hitchhikers(
        self, min_retrievals: int = DEFAULT_MIN_RETRIEVALS, co_share: float = DEFAULT_CO_SHARE
    ) -> BoolArray:
        """Never evidence, ``retrieved >= min_retrievals`` and ``co_retrieved >= co_share * retrieved``."""
        raise_problems(role_problems(min_retrievals, co_share))
        return (
            ~self.evidence
            & (self.retrieved >= min_retrievals)
            & (self.co_retrieved >= co_share * self.retrieved)
        )

    def distractors(self, min_retrievals: int = DEFAULT_MIN_RETRIEVALS) -> BoolArray:
        """Never evidence, ``retrieved >= min_retrievals`` and ``2 * failures > retrieved`` (mostly failures)."""
        raise_problems(role_problems(min_retrievals))
        return ~self.evidence & (self.retrieved >= min_retrievals) & (2 * self.failures > self.retrieved)


def turn_roles(qs: QuestionSet, question_indices: Sequence[int] | IntArray, k: int) -> TurnRoles:
    """Per turn of ``qs``: retrievals, co-retrievals beside evidence, failures over ``question_indices``.

    For a turn that is evidence of no question, ``co_retrieved`` equals its ``h+`` over the same
    episodes (a success retrieved evidence, which is not the turn), so on the episodes that
    trained Memory Worth a hitchhiker would have ``MW >= co_share`` by definition.
    """
    k = check_k(k)
    index = question_indices_of(qs, question_indices)
    plus, minus, co = episode_counts(qs, index, k)
    return TurnRoles(plus + minus, co, minus, np.any(qs.evidence_matrix, axis=0))
