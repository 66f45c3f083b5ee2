"""A turn's effect on LoCoMo questions, measured by withholding it, next to Memory Worth.

Episodes are the questions of :mod:`.question_retrieval` (the ``k`` best turns by rounded cosine;
a hit when an evidence turn is among them). Withholding turn ``t`` from question ``q`` retrieves
the ``k`` best of the other turns, so the ``(k + 1)``-th candidate takes its place. The *exact
effect* of ``t`` on ``q`` (for ``t`` among ``q``'s ``k``) is

    delta[q, t] = hit(q) - hit(q without t)  in {-1, 0, +1}:

``+1`` when ``t`` is the only evidence retrieved and the replacement is not evidence, ``-1`` when
``q`` misses and the replacement is evidence (``t`` *crowds out* the evidence), ``0`` otherwise.
:func:`turn_effects` computes it for every question at once.

:func:`question_credit` runs *randomized omission* on the train questions of the splits of
:func:`~.question_worth.held_out` (the same splits, seed for seed): each train question, with
probability ``epsilon``, withholds one of its retrieved turns, chosen uniformly. A turn's
omission estimate (:func:`forgetting.worth.causal.omission_effects`) is the hit rate of the train
episodes that would retrieve it and withheld nothing minus that of the episodes that withheld
it; over the randomization it is unbiased for the turn's mean exact effect on the train
questions that retrieve it, given both arms are non-empty. Three rules flag turns, each fixed before
any run: Memory Worth's low-value class on the episodes as observed, an omission estimate below
0, and (an oracle of the train questions, not an estimator) a negative sum of exact train
effects. Each rule's flags are suppressed on the split's test questions, as in ``held_out``.

Draws: the uniforms of conversation ``c`` in split ``s`` are ``default_rng(SeedSequence([seed,
s, c, OMISSION_STREAM])).random((n_questions, 2))``, one row per question (a row is used when its
question is a train one), the same for every ``epsilon``: episode ``q`` withholds when
``u[q, 0] < epsilon``, and withholds its retrieved turn ``floor(u[q, 1] * m)`` (``m`` retrieved).
Counts are integers; rates are quotients of integers; nothing hinges on float noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._validate import shown
from ...worth import DEFAULT_HIGH_THRESHOLD, DEFAULT_LOW_THRESHOLD, DEFAULT_MIN_EVIDENCE
from ...worth.causal import EffectEstimate, omission_effects
from .question_retrieval import QuestionSet, check_k, hits, question_indices_of
from .question_worth import DEFAULT_TRAIN_SHARE, flag_low_value, held_out_runs

__all__ = [
    "OMISSION_STREAM",
    "RULES",
    "TurnEffects",
    "turn_effects",
    "effect_counts",
    "omission_draws",
    "OmittedEpisodes",
    "omitted_episodes",
    "CreditRow",
    "question_credit",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

#: Last entropy word of the omission draws (the splits themselves use ``[seed, s, c]``).
OMISSION_STREAM = 1
#: The flagging rules, in the order of :class:`CreditRow` rows within an ``epsilon``.
RULES = ("memory worth", "omission", "exact on train")


@dataclass(frozen=True)
class TurnEffects:
    """Each question's retrieved turns and what withholding each one does.

    Attributes
    ----------
    retrieved : numpy.ndarray of int
        ``(n_questions, m)`` with ``m = min(k, n_turns)``: the retrieved turns, best first.
    hit : numpy.ndarray of bool
        ``(n_questions,)``: the question is a hit with nothing withheld.
    without : numpy.ndarray of bool
        ``(n_questions, m)``: the question is a hit with ``retrieved[q, j]`` withheld.
    replacement : numpy.ndarray of int
        ``(n_questions,)``: the ``(k + 1)``-th candidate, or ``-1`` when the store has ``<= k`` turns.
    """

    retrieved: IntArray
    hit: BoolArray
    without: BoolArray
    replacement: IntArray

    @property
    def delta(self) -> IntArray:
        """``hit - without`` per question and retrieved turn: the exact effect, in {-1, 0, +1}."""
        return self.hit[:, None].astype(np.int64) - self.without.astype(np.int64)

    def counts(self, index: IntArray, n_turns: int) -> tuple[IntArray, IntArray, IntArray]:
        """Per turn of a store of ``n_turns``, over the questions ``index``: questions that retrieve
        it, of those the ones it helps (``delta = +1``) and the ones it crowds out (``delta = -1``)."""
        top, delta = self.retrieved[index], self.delta[index]
        return (
            np.bincount(top.ravel(), minlength=n_turns),
            np.bincount(top[delta > 0], minlength=n_turns),
            np.bincount(top[delta < 0], minlength=n_turns),
        )


def turn_effects(qs: QuestionSet, k: int) -> TurnEffects:
    """Every question's exact effects at ``k``: with ``depth = min(k + 1, n_turns)`` candidates
    ``c_0 .. c_depth-1`` in rank order, ``hit = any(evidence(c_i), i < m)`` and ``without[j] =
    any(evidence(c_i), i < depth, i != j)`` (the candidates left when ``c_j`` is withheld)."""
    k = check_k(k)
    m, depth = min(k, qs.n_turns), min(k + 1, qs.n_turns)
    top = qs.ranking[:, :depth]
    evidence = np.take_along_axis(qs.evidence_matrix, top, axis=1)
    others = evidence.sum(axis=1)[:, None] - evidence[:, :m]
    replacement = top[:, k] if depth > k else np.full(qs.n_questions, -1, dtype=np.int64)
    return TurnEffects(
        top[:, :m].copy(), np.asarray(evidence[:, :m].any(axis=1)), np.asarray(others > 0), replacement.copy()
    )


def effect_counts(
    qs: QuestionSet, k: int, question_indices: Sequence[int] | IntArray | None = None
) -> tuple[IntArray, IntArray, IntArray]:
    """Per turn, over the questions ``question_indices`` (``None``: all): questions that retrieve it,
    of those the ones it helps (``delta = +1``) and the ones it crowds out (``delta = -1``)."""
    index = (
        np.arange(qs.n_questions) if question_indices is None else question_indices_of(qs, question_indices)
    )
    return turn_effects(qs, k).counts(index, qs.n_turns)


def omission_draws(n_questions: int, seed: int, split: int, conversation: int) -> FloatArray:
    """The ``(n_questions, 2)`` uniforms of one conversation in one split (see the module)."""
    sequence = np.random.SeedSequence([int(seed), int(split), int(conversation), OMISSION_STREAM])
    return np.random.default_rng(sequence).random((int(n_questions), 2))


@dataclass(frozen=True)
class OmittedEpisodes:
    """The train episodes of one split and conversation as randomized omission observes them.

    Attributes
    ----------
    slot : numpy.ndarray of int
        Per train question, the column of its withheld turn in ``retrieved``, or ``-1``.
    hit : numpy.ndarray of bool
        Per train question, the observed outcome.
    effects : EffectEstimate
        :func:`~forgetting.worth.causal.omission_effects` of these episodes (per turn of the store).
    h_plus, h_minus : numpy.ndarray of float
        Memory Worth's counters on the episodes as observed (a withheld episode counts its
        replacement turn and not the withheld one).
    lost, gained : int
        Withheld episodes that miss where the full retrieval hits, and the reverse.
    """

    slot: IntArray
    hit: BoolArray
    effects: EffectEstimate
    h_plus: FloatArray
    h_minus: FloatArray
    lost: int
    gained: int


def omitted_episodes(
    effects: TurnEffects, train: IntArray, draws: FloatArray, epsilon: float, n_turns: int
) -> OmittedEpisodes:
    """Randomized omission at ``epsilon`` on the ``train`` questions (the module's draw rule)."""
    top, m = effects.retrieved[train], effects.retrieved.shape[1]
    u = draws[train]
    withholds = u[:, 0] < epsilon
    column = np.minimum((u[:, 1] * m).astype(np.int64), m - 1)
    rows = np.arange(train.size)
    full_hit = effects.hit[train]
    hit = np.where(withholds, effects.without[train][rows, column], full_hit)
    slot = np.where(withholds, column, -1)
    included = np.ones(top.shape, dtype=bool)
    included[rows[withholds], column[withholds]] = False
    replacement = effects.replacement[train]
    added = withholds & (replacement >= 0)
    turns = np.concatenate([top[included], replacement[added]])
    turn_hit = np.concatenate([np.broadcast_to(hit[:, None], top.shape)[included], hit[added]])
    return OmittedEpisodes(
        slot=slot,
        hit=hit,
        effects=omission_effects(top, slot, hit, n_turns),
        h_plus=np.bincount(turns[turn_hit], minlength=n_turns).astype(np.float64),
        h_minus=np.bincount(turns[~turn_hit], minlength=n_turns).astype(np.float64),
        lost=int((withholds & full_hit & ~hit).sum()),
        gained=int((withholds & ~full_hit & hit).sum()),
    )


@dataclass(frozen=True)
class CreditRow:
    """One rule at one ``epsilon``, pooled over conversations, one entry per split.

    Attributes
    ----------
    rule, epsilon : str, float
        The flagging rule (:data:`RULES`) and the omission rate of the train episodes.
    n_train, lost, gained : numpy.ndarray of int
        Train episodes; those omission turned from hit to miss, and from miss to hit.
    n_flagged, flagged_crowding, flagged_helping : numpy.ndarray of int
        Flagged turns; of those, turns that crowd out evidence of some test question and turns
        that help some test question (a turn can do both, for different questions). The summary
        gives the two as shares of the flagged turns pooled over splits (``nan``: none flagged).
    n_scored : numpy.ndarray of int
        Turns the rule could judge: with ``h+ + h- >= min_evidence`` (Memory Worth), with an
        omission estimate (omission), retrieved by a train question (exact on train).
    n_test, gained_test, lost_test : numpy.ndarray of int
        Test questions; those the flagged turns' suppression turns from miss to hit and the reverse.
    """

    rule: str
    epsilon: float
    n_train: IntArray
    lost: IntArray
    gained: IntArray
    n_flagged: IntArray
    flagged_crowding: IntArray
    flagged_helping: IntArray
    n_scored: IntArray
    n_test: IntArray
    gained_test: IntArray
    lost_test: IntArray

    @property
    def difference(self) -> FloatArray:
        """Per split, test hit rate with the flags suppressed minus without: ``(gained - lost) / n_test``."""
        return (self.gained_test - self.lost_test) / self.n_test

    def summary(self) -> dict[str, Any]:
        """Means over splits (exact sums divided by the count), the shares of splits whose difference
        is above and below 0, its 2.5 and 97.5 percentiles (a spread over overlapping splits, not a
        confidence interval), and the price: train hits lost and gained per train episode."""
        n = self.n_train.size
        low, high = np.percentile(self.difference, [2.5, 97.5])

        def mean(values: Any) -> float:
            return math.fsum(np.asarray(values, dtype=np.float64).tolist()) / n

        def share(of_flagged: IntArray) -> float:  # nan when nothing was flagged
            flagged = int(self.n_flagged.sum())
            return int(of_flagged.sum()) / flagged if flagged else math.nan

        return {
            "rule": self.rule,
            "epsilon": self.epsilon,
            "scored (mean)": mean(self.n_scored),
            "flagged (mean)": mean(self.n_flagged),
            "flagged crowding": share(self.flagged_crowding),
            "flagged helping": share(self.flagged_helping),
            "mean_difference": mean(self.difference),
            "share_better": float(np.mean(self.difference > 0)),
            "share_worse": float(np.mean(self.difference < 0)),
            "low": float(low),
            "high": float(high),
            "train hits lost": int(self.lost.sum()) / int(self.n_train.sum()),
            "train hits gained": int(self.gained.sum()) / int(self.n_train.sum()),
        }


def _epsilons(epsilons: Any) -> list[str | None]:
    values = list(epsilons) if isinstance(epsilons, (list, tuple)) else None
    if (
        not values
        or not all(isinstance(e, (int, float)) and not isinstance(e, bool) and 0 <= e <= 1 for e in values)
        or len(set(values)) != len(values)
    ):
        return [f"epsilons must be a non-empty list of distinct rates in [0, 1], got {shown(epsilons)}"]
    return []


def question_credit(
    question_sets: Sequence[QuestionSet],
    k: int,
    epsilons: Sequence[float],
    train_share: float = DEFAULT_TRAIN_SHARE,
    n_splits: int = 100,
    seed: int = 0,
    min_evidence: float = DEFAULT_MIN_EVIDENCE,
    low_threshold: float = DEFAULT_LOW_THRESHOLD,
    *,
    high_threshold: float = DEFAULT_HIGH_THRESHOLD,
) -> list[CreditRow]:
    """Every rule of :data:`RULES` at every ``epsilon`` on the splits of :func:`~.question_worth.held_out`.

    The rows come ``epsilon`` by ``epsilon`` in the given order, the rules in :data:`RULES` order
    within one; "exact on train" does not depend on ``epsilon`` and is repeated (its price is 0).
    """
    runs = held_out_runs(
        question_sets,
        k,
        train_share,
        n_splits,
        seed,
        (min_evidence, high_threshold, low_threshold),
        _epsilons(epsilons),
    )
    rates = [float(e) for e in epsilons]
    table = np.zeros((len(rates), len(RULES), int(n_splits), 10), dtype=np.int64)
    known: dict[int, tuple[TurnEffects, BoolArray]] = {}  # per conversation: the same in every split
    for run in runs:
        qs = run.qs
        if run.conversation not in known:
            known[run.conversation] = turn_effects(qs, k), hits(qs, k)
        effects, plain_all = known[run.conversation]
        plain = plain_all[run.test]
        _, helps, crowds = effects.counts(run.test, qs.n_turns)
        retrieved_train, helps_train, crowds_train = effects.counts(run.train, qs.n_turns)
        draws = omission_draws(qs.n_questions, seed, run.split, run.conversation)
        for e, epsilon in enumerate(rates):
            seen = omitted_episodes(effects, run.train, draws, epsilon, qs.n_turns)
            judged = seen.h_plus + seen.h_minus >= min_evidence
            flags = (
                (
                    flag_low_value(
                        seen.h_plus, seen.h_minus, min_evidence, low_threshold, high_threshold=high_threshold
                    ),
                    judged,
                ),
                (np.nan_to_num(seen.effects.effect, nan=0.0) < 0, ~np.isnan(seen.effects.effect)),
                (helps_train < crowds_train, retrieved_train > 0),
            )
            price = (seen.lost, seen.gained)
            for r, (flagged, scored) in enumerate(flags):
                cut = hits(qs, k, flagged)[run.test]
                table[e, r, run.split] += [
                    run.train.size,
                    *(price if r < 2 else (0, 0)),
                    flagged.sum(),
                    (flagged & (crowds > 0)).sum(),
                    (flagged & (helps > 0)).sum(),
                    scored.sum(),
                    run.test.size,
                    (cut & ~plain).sum(),
                    (plain & ~cut).sum(),
                ]
    return [
        CreditRow(rule, epsilon, *(table[e, r, :, j].copy() for j in range(10)))
        for e, epsilon in enumerate(rates)
        for r, rule in enumerate(RULES)
    ]
