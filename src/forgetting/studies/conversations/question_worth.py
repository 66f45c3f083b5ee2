"""Memory Worth learned on some LoCoMo questions of a conversation, used on its other questions.

Episodes are the questions of :mod:`.question_retrieval` (top-``k`` turns by rounded cosine,
success when an evidence turn is retrieved). Memory Worth (:mod:`forgetting.worth`) keeps per
turn ``h+`` (retrievals by successful episodes) and ``h-`` (by failed ones),
``MW = h+ / (h+ + h-)``. :func:`held_out` learns the counters on a random part of each
conversation's questions, flags the turns the library's taxonomy calls *low-value*
(:func:`flag_low_value`) and compares hit@k on the other questions without and with the flagged
turns suppressed. :func:`flag_report` asks what the flagged turns are: evidence of a held-out
question, hitchhikers or distractors (:func:`~.question_retrieval.turn_roles`).

Nothing decided here hinges on float noise: retrieval ranks rounded scores, counters are integer
counts, and the taxonomy compares ``MW`` as a correctly rounded quotient of integers, the same
on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import int_problem, raise_problems, real_problem, seed_problem, shown
from ...worth import (
    DEFAULT_HIGH_THRESHOLD,
    DEFAULT_LOW_THRESHOLD,
    DEFAULT_MIN_EVIDENCE,
    LOW_VALUE,
    memory_worth,
    worth_class,
)
from ...worth.taxonomy import threshold_problems
from .question_retrieval import (
    DEFAULT_CO_SHARE,
    DEFAULT_MIN_RETRIEVALS,
    QuestionSet,
    check_k,
    episode_counts,
    hits,
    question_indices_of,
    role_problems,
    turn_roles,
)

__all__ = [
    "DEFAULT_TRAIN_SHARE",
    "learn_worth",
    "flag_low_value",
    "question_split",
    "HeldOut",
    "HeldOutRun",
    "held_out",
    "held_out_runs",
    "FlagReport",
    "flag_report",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Share of a conversation's questions Memory Worth is learned on (the rest are held out).
DEFAULT_TRAIN_SHARE = 0.5


def learn_worth(
    qs: QuestionSet, question_indices: Sequence[int] | IntArray, k: int
) -> tuple[FloatArray, FloatArray]:
    """Memory Worth's counters after the episodes ``question_indices`` of ``qs`` (no suppression).

    ``h+[t]`` counts the episodes that retrieved turn ``t`` and succeeded, ``h-[t]`` those that
    retrieved it and failed (unit weights, exact integer counts as float64); the order of the
    episodes does not matter. Each index is one episode and may appear once.
    """
    k = check_k(k)
    index = question_indices_of(qs, question_indices)
    plus, minus, _ = episode_counts(qs, index, k)
    return plus.astype(np.float64), minus.astype(np.float64)


def flag_low_value(
    h_plus: npt.ArrayLike,
    h_minus: npt.ArrayLike,
    min_evidence: float = DEFAULT_MIN_EVIDENCE,
    low_threshold: float = DEFAULT_LOW_THRESHOLD,
    *,
    high_threshold: float = DEFAULT_HIGH_THRESHOLD,
) -> BoolArray:
    """``True`` where the taxonomy calls a turn *low-value*: ``h+ + h- >= min_evidence`` and ``MW <= low_threshold``.

    The label is :func:`~forgetting.worth.worth_class` of :func:`~forgetting.worth.memory_worth`
    (prior 0.5 for a turn never retrieved), so the definition is the library's; ``high_threshold``
    only has to be above ``low_threshold``, as the taxonomy requires. Counters are equal-length
    1-d arrays of finite numbers ``>= 0``.

    >>> flag_low_value([3, 4, 1], [7, 6, 3]).tolist()
    [True, False, False]
    """
    plus, minus = (np.asarray(h) for h in (h_plus, h_minus))
    problems = [
        f"{name} must be a 1-d array of finite counts >= 0, got {shown(value)}"
        for name, value, array in (("h_plus", h_plus, plus), ("h_minus", h_minus, minus))
        if array.ndim != 1 or array.dtype.kind not in "iuf" or not np.all(np.isfinite(array) & (array >= 0))
    ]
    if not problems and plus.shape != minus.shape:
        problems.append(f"h_plus and h_minus must have the same length, got {plus.size} and {minus.size}")
    raise_problems(problems + threshold_problems(min_evidence, high_threshold, low_threshold))
    plus, minus = plus.astype(np.float64), minus.astype(np.float64)
    labels = worth_class(memory_worth(plus, minus), plus + minus, min_evidence, high_threshold, low_threshold)
    return np.asarray(labels == LOW_VALUE)


def question_split(
    n_questions: int, train_share: float, seed: int, split: int, conversation: int
) -> tuple[IntArray, IntArray]:
    """Train and test question indices (each sorted) of one conversation in one split.

    ``n_train = min(max(round(train_share * n), 1), n - 1)`` (``round`` halves to even), the
    first ``n_train`` of ``rng.permutation(n)`` with ``rng = default_rng(SeedSequence([seed,
    split, conversation]))``: a split depends on these five numbers alone.
    """
    raise_problems(
        [
            int_problem("n_questions", n_questions, minimum=2, allow_numpy=True),
            real_problem("train_share", train_share, 0.0, 1.0, low_open=True, high_open=True),
            seed_problem("seed", seed),
            seed_problem("split", split),
            seed_problem("conversation", conversation),
        ]
    )
    n = int(n_questions)
    n_train = min(max(round(float(train_share) * n), 1), n - 1)
    order = np.random.default_rng(
        np.random.SeedSequence([int(seed), int(split), int(conversation)])
    ).permutation(n)
    return np.sort(order[:n_train]).astype(np.int64), np.sort(order[n_train:]).astype(np.int64)


@dataclass(frozen=True)
class HeldOutRun:
    """One split of one conversation: its train and test questions, the counters learned on the
    train questions and the turns they flag (:func:`flag_low_value`)."""

    split: int
    conversation: int
    qs: QuestionSet
    train: IntArray
    test: IntArray
    h_plus: FloatArray
    h_minus: FloatArray
    flagged: BoolArray


def held_out_runs(
    question_sets: Any,
    k: Any,
    train_share: Any,
    n_splits: Any,
    seed: Any,
    thresholds: tuple[Any, Any, Any],
    extra: Sequence[str | None] = (),
) -> Iterator[HeldOutRun]:
    """Check every argument of :func:`held_out` and ``extra`` problems at once; then the runs, split
    by split and, within a split, conversation by conversation (the splits :func:`held_out` uses)."""
    sets = list(question_sets) if isinstance(question_sets, (list, tuple)) else None
    problems = [
        int_problem("k", k, minimum=1, allow_numpy=True),
        real_problem("train_share", train_share, 0.0, 1.0, low_open=True, high_open=True),
        int_problem("n_splits", n_splits, minimum=1, allow_numpy=True),
        seed_problem("seed", seed),
        *threshold_problems(*thresholds),
        *extra,
    ]
    if not sets or not all(isinstance(qs, QuestionSet) and qs.n_questions >= 2 for qs in sets):
        problems.append(
            "question_sets must be a non-empty list or tuple of QuestionSets with >= 2 questions each, "
            f"got {shown(question_sets)}"
        )
    raise_problems(problems)
    assert sets is not None
    return _each_run(sets, int(k), float(train_share), int(n_splits), int(seed), thresholds)


def _each_run(
    sets: list[QuestionSet],
    k: int,
    train_share: float,
    n_splits: int,
    seed: int,
    thresholds: tuple[Any, Any, Any],
) -> Iterator[HeldOutRun]:
    min_evidence, high_threshold, low_threshold = thresholds
    for split in range(n_splits):
        for c, qs in enumerate(sets):
            train, test = question_split(qs.n_questions, train_share, seed, split, c)
            plus, minus = learn_worth(qs, train, k)
            flagged = flag_low_value(plus, minus, min_evidence, low_threshold, high_threshold=high_threshold)
            yield HeldOutRun(split, c, qs, train, test, plus, minus, flagged)


@dataclass(frozen=True)
class HeldOut:
    """hit@k on held-out questions without and with the turns Memory Worth flagged suppressed.

    One entry per split, pooled over the conversations (a rate is hits / ``n_test``).

    Attributes
    ----------
    n_test, plain_hits, suppressed_hits : numpy.ndarray of int
        Test questions; those hit with nothing suppressed; those hit with the flagged turns suppressed.
    n_flagged : numpy.ndarray of int
        Turns flagged (summed over conversations).
    gained, lost : numpy.ndarray of int
        Test questions that miss plain and hit suppressed; that hit plain and miss suppressed.
    """

    n_test: IntArray
    plain_hits: IntArray
    suppressed_hits: IntArray
    n_flagged: IntArray
    gained: IntArray
    lost: IntArray

    @property
    def plain(self) -> FloatArray:
        """Pooled test hit rate with nothing suppressed, per split."""
        return self.plain_hits / self.n_test

    @property
    def suppressed(self) -> FloatArray:
        """Pooled test hit rate with the flagged turns suppressed, per split."""
        return self.suppressed_hits / self.n_test

    @property
    def difference(self) -> FloatArray:
        """``suppressed - plain`` per split, ``(gained - lost) / n_test`` (exactly 0 when equal)."""
        return (self.gained - self.lost) / self.n_test

    def summary(self) -> dict[str, float]:
        """Mean difference over splits, its 2.5 and 97.5 percentiles, shares of splits > 0, < 0, = 0.

        The splits reuse the same questions (each is another partition of them), so they are not
        independent samples: the percentile interval is the spread of the split-to-split variation,
        not a confidence interval for the effect of suppression.
        """
        diff = self.difference
        low, high = np.percentile(diff, [2.5, 97.5])
        return {
            "n_splits": float(diff.size),
            "mean_difference": math.fsum(diff.tolist()) / diff.size,
            "low": float(low),
            "high": float(high),
            "share_better": float(np.mean(diff > 0)),
            "share_worse": float(np.mean(diff < 0)),
            "share_same": float(np.mean(diff == 0)),
        }


def held_out(
    question_sets: Sequence[QuestionSet],
    k: int,
    train_share: float = DEFAULT_TRAIN_SHARE,
    n_splits: int = 100,
    seed: int = 0,
    min_evidence: float = DEFAULT_MIN_EVIDENCE,
    low_threshold: float = DEFAULT_LOW_THRESHOLD,
    *,
    high_threshold: float = DEFAULT_HIGH_THRESHOLD,
) -> HeldOut:
    """Learn Memory Worth on part of each conversation's questions, suppress its low-value turns on the rest.

    For each split ``s`` and conversation ``c`` (its position in ``question_sets``):
    :func:`question_split` draws train and test questions from ``SeedSequence([seed, s, c])``,
    :func:`learn_worth` counts the train episodes at ``k``, :func:`flag_low_value` flags turns,
    and :func:`hits` scores the test questions with nothing and with the flagged turns suppressed.

    Split ``s`` of conversation ``c`` is the same whatever ``n_splits`` is, and whatever the
    other conversations are: it depends on ``seed``, ``s``, ``c`` and the conversation's number
    of questions only. It does depend on the position ``c``: passing ``question_sets[2:]`` gives
    the third conversation the draws of the first, so compare runs over the same list (or a
    prefix of it). The splits overlap, hence :meth:`HeldOut.summary`'s interval is a spread.
    """
    runs = held_out_runs(
        question_sets, k, train_share, n_splits, seed, (min_evidence, high_threshold, low_threshold)
    )
    table = np.zeros((int(n_splits), 6), dtype=np.int64)
    plain_all: dict[int, BoolArray] = {}  # nothing suppressed: the same in every split
    for run in runs:
        if run.conversation not in plain_all:
            plain_all[run.conversation] = hits(run.qs, k)
        plain = plain_all[run.conversation][run.test]
        cut = hits(run.qs, k, run.flagged)[run.test]
        table[run.split] += [
            run.test.size,
            plain.sum(),
            cut.sum(),
            run.flagged.sum(),
            (cut & ~plain).sum(),
            (plain & ~cut).sum(),
        ]
    return HeldOut(*(table[:, j].copy() for j in range(6)))


@dataclass(frozen=True)
class FlagReport:
    """What the flagged turns are, pooled over splits and conversations (a turn once per split).

    Roles are measured on each split's *test* questions, the worth on its train questions, so
    neither is implied by the other (:func:`turn_roles`).

    Attributes
    ----------
    n_flagged : int
        Flagged turns.
    evidence_of_test, hitchhikers, distractors : int
        Of the flagged turns: evidence of some test question (suppressing them can cost a hit);
        hitchhikers and distractors on the test questions.
    n_worth : dict of str to int
        Turns with train evidence ``h+ + h- >= min_evidence`` (those the taxonomy judges) per group:
        ``"hitchhiker"``, ``"evidence"`` (of some question of the set), ``"other"``.
    mean_worth : dict of str to float
        Their mean train Memory Worth per group (``nan`` for an empty group).
    """

    n_flagged: int
    evidence_of_test: int
    hitchhikers: int
    distractors: int
    n_worth: dict[str, int]
    mean_worth: dict[str, float]


def flag_report(
    question_sets: Sequence[QuestionSet],
    k: int,
    train_share: float = DEFAULT_TRAIN_SHARE,
    n_splits: int = 100,
    seed: int = 0,
    min_evidence: float = DEFAULT_MIN_EVIDENCE,
    low_threshold: float = DEFAULT_LOW_THRESHOLD,
    *,
    high_threshold: float = DEFAULT_HIGH_THRESHOLD,
    min_retrievals: int = DEFAULT_MIN_RETRIEVALS,
    co_share: float = DEFAULT_CO_SHARE,
) -> FlagReport:
    """The splits and flags of :func:`held_out` (same arguments, same draws), and who was flagged.

    Means of worth are exact sums (``math.fsum``) divided by the count.
    """
    runs = held_out_runs(
        question_sets,
        k,
        train_share,
        n_splits,
        seed,
        (min_evidence, high_threshold, low_threshold),
        role_problems(min_retrievals, co_share),
    )
    counts = np.zeros(4, dtype=np.int64)
    worth: dict[str, list[float]] = {"hitchhiker": [], "evidence": [], "other": []}
    for run in runs:
        roles = turn_roles(run.qs, run.test, k)
        hitch, distract = roles.hitchhikers(min_retrievals, co_share), roles.distractors(min_retrievals)
        test_evidence = np.any(run.qs.evidence_matrix[run.test], axis=0)
        f = run.flagged
        counts += [f.sum(), (f & test_evidence).sum(), (f & hitch).sum(), (f & distract).sum()]
        judged = run.h_plus + run.h_minus >= min_evidence
        mw = memory_worth(run.h_plus, run.h_minus)
        for group, members in (
            ("hitchhiker", hitch),
            ("evidence", roles.evidence),
            ("other", ~hitch & ~roles.evidence),
        ):
            worth[group].extend(mw[members & judged].tolist())
    n_flagged, evidence_of_test, hitchhikers, distractors = (int(n) for n in counts)
    return FlagReport(
        n_flagged,
        evidence_of_test,
        hitchhikers,
        distractors,
        n_worth={g: len(v) for g, v in worth.items()},
        mean_worth={g: math.fsum(v) / len(v) if v else math.nan for g, v in worth.items()},
    )
