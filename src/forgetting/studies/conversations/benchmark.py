"""The real-conversation benchmark: replay a policy with retrieval, then ask the questions.

One conversation, one retrieval setting ``(recall_k, min_similarity)``, one policy:

1. **recall by retrieval** -- before turn ``i`` is stored, the agent ranks every earlier turn by
   rounded cosine to turn ``i`` (higher first, equal cosines: the earlier turn first), keeps
   those at or above ``min_similarity``, and recalls the first ``recall_k`` of them that the
   store still holds (:func:`~.policies.replay` with ``k``);
2. **questions at the end** -- after the last turn, each question (categories 1-4; category 5,
   the adversarial one, is kept apart) is scored on what is held: the share of its evidence
   turns still held, and three retrieval measures over what is held and over the whole
   history (the same ranking, nothing forgotten), of the ``question_k`` held turns nearest the
   question: *hit@k*, some evidence turn among them; *recall@k*, the share of the question's
   evidence turns among them, averaged over questions (LoCoMo's own retrieval measure:
   snap-research/locomo, ``task_eval/evaluation.py``, ``eval_question_answering``, its
   ``recall_acc``, the share of a question's evidence ids found in the retrieved context);
   *all-evidence@k*, every evidence turn among them;
3. **footprint** -- the share of the conversation's turns held at the end, and the share of
   its tokens (the model's tokenizer, :func:`~.embeddings.token_counts`).

A question counts only through its evidence turns that name a turn, malformed references
repaired (:func:`~.records.resolve_evidence` with ``repair=True``); a question none of whose
evidence names a turn is counted apart and scored on nothing. (LoCoMo's ``recall_acc`` divides
by the ids as written, repeats and malformed ids included; here by the distinct turns named.)
Everything here is integers and rounded cosines: no decision reads a float that a CPU could
change.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..._validate import int_problem, raise_problems, real_problem
from ...conversations.policies import CheckedEvents, Event, Policy, check_events, conversation_events, replay
from ...conversations.records import Conversation, resolve_evidence
from .question_retrieval import retrieve

__all__ = [
    "ADVERSARIAL",
    "QuestionIndex",
    "QuestionRanking",
    "Score",
    "Scorer",
    "question_index",
    "ranked_history",
    "recall_events",
    "score",
    "top_k",
]

#: The adversarial category, reported apart.
ADVERSARIAL = 5


def top_k(scores: np.ndarray, k: int, allowed: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``k`` best ``scores`` (higher first, equal scores: lower index first).

    ``allowed`` (a boolean mask) limits the candidates; fewer than ``k`` candidates: all of them.
    The retrieval rule of :func:`~.question_retrieval.retrieve`, which this calls.
    """
    return retrieve(scores, k, None if allowed is None else ~np.asarray(allowed, dtype=bool))


def ranked_history(turn_cosines: np.ndarray, min_similarity: float) -> list[np.ndarray]:
    """For each turn ``i``: the earlier turns with cosine ``>= min_similarity``, best first.

    Equal rounded cosines: the earlier turn first. ``turn_cosines`` are rounded cosines.
    """
    raise_problems([real_problem("min_similarity", min_similarity, -1.0, 1.0)])
    out = []
    for i in range(turn_cosines.shape[0]):
        row = turn_cosines[i, :i]
        earlier = np.flatnonzero(row >= min_similarity)
        out.append(earlier[np.lexsort((earlier, -row[earlier]))])
    return out


def recall_events(conversation: Conversation, ranked: Sequence[np.ndarray]) -> CheckedEvents:
    """:func:`~.policies.conversation_events` whose ``recalled`` is each turn's ranking of ids,
    checked once (:func:`~.policies.check_events`) for the many policies replayed over them."""
    ids = [turn.dia_id for turn in conversation.turns]
    return check_events(conversation_events(conversation, [[ids[j] for j in row] for row in ranked]))


@dataclass(frozen=True)
class QuestionIndex:
    """A conversation's questions as indices: evidence turns and category per scored question.

    Attributes
    ----------
    rows : numpy.ndarray
        Row of each scored question in the conversation's question list (and cosine matrix).
    evidence : tuple of numpy.ndarray
        The distinct turn indices each scored question's evidence names, ascending.
    category : numpy.ndarray
        Its category (1-5).
    unresolved : int
        Questions with evidence ids none of which names a turn (not scored).
    no_evidence : int
        Questions with an empty evidence list (not scored).
    """

    rows: np.ndarray
    evidence: tuple[np.ndarray, ...]
    category: np.ndarray
    unresolved: int
    no_evidence: int

    @functools.cached_property
    def pooled_evidence(self) -> tuple[np.ndarray, np.ndarray]:
        """The evidence turns of the main questions, then of the adversarial ones, each list
        joined (a turn once per question naming it): ``held[joined].sum()`` is the sum over those
        questions of their evidence turns held."""
        main = (self.category != ADVERSARIAL).tolist()

        def joined(wanted: bool) -> np.ndarray:
            lists = [ev for ev, m in zip(self.evidence, main) if m is wanted]
            return np.concatenate([np.zeros(0, dtype=np.intp), *lists])

        return joined(True), joined(False)


def question_index(conversation: Conversation) -> QuestionIndex:
    """The questions of ``conversation`` that can be scored, as turn indices (malformed evidence
    references repaired, :func:`~forgetting.conversations.records.repaired_reference`)."""
    rows, evidence, category = [], [], []
    unresolved = no_evidence = 0
    for row, question in enumerate(conversation.questions):
        turns = resolve_evidence(conversation, question, repair=True).turns
        if not question.evidence:
            no_evidence += 1
        elif not turns:
            unresolved += 1
        else:
            rows.append(row)
            evidence.append(np.array(sorted({t.index for t in turns}), dtype=np.intp))
            category.append(question.category)
    return QuestionIndex(
        np.array(rows, dtype=np.intp), tuple(evidence), np.array(category), unresolved, no_evidence
    )


@dataclass(frozen=True)
class Score:
    """What one replay scores at the end of its conversation (sums, so conversations pool).

    For the main questions (categories 1-4) and, apart, the adversarial ones (``adv_``):
    ``evidence`` turns in all, ``evidence_held``, ``questions``, ``hits_held`` and
    ``hits_all`` (hit@k over held / over all turns). For the main questions also
    ``recall_held``, ``recall_all`` (the sum over questions of the share of their evidence turns
    in the top k, an exact :class:`~fractions.Fraction`, so pooled shares do not depend on the
    order or grouping of the sums) and ``every_held``, ``every_all`` (questions with every evidence turn in the top
    k). ``turns``, ``turns_held``, ``tokens``, ``tokens_held``: the footprint.
    ``missed_recalls``: recalls the forgetting cost the retriever.
    """

    evidence: int
    evidence_held: int
    questions: int
    hits_held: int
    hits_all: int
    recall_held: Fraction
    recall_all: Fraction
    every_held: int
    every_all: int
    adv_evidence: int
    adv_evidence_held: int
    adv_questions: int
    adv_hits_held: int
    adv_hits_all: int
    turns: int
    turns_held: int
    tokens: int
    tokens_held: int
    missed_recalls: int

    def as_dict(self) -> dict[str, int | Fraction]:
        """The fields by name."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class QuestionRanking:
    """Each scored question's turns ranked once (higher cosine first, equal: lower index first),
    and which of them are its evidence, so hit@k over any held set is one array expression."""

    order: np.ndarray  # (n_scored, n_turns) turn indices, best first
    evidence: np.ndarray  # (n_scored, n_turns) bool: order[q, j] is an evidence turn of q

    @classmethod
    def of(cls, cosines: np.ndarray, index: QuestionIndex) -> QuestionRanking:
        """The ranking of every question in ``index`` by its row of ``cosines``."""
        n_turns = cosines.shape[1]
        order = np.empty((index.rows.size, n_turns), dtype=np.intp)
        evidence = np.zeros((index.rows.size, n_turns), dtype=bool)
        for q, (row, ev) in enumerate(zip(index.rows, index.evidence)):
            order[q] = np.lexsort((np.arange(n_turns), -cosines[row]))
            evidence[q] = np.isin(order[q], ev)
        return cls(order, evidence)

    @functools.cached_property
    def by_turn(self) -> tuple[np.ndarray, np.ndarray]:
        """``place[q, t]``, where turn ``t`` stands in ``order[q]``, and ``evidence`` by turn
        (``[q, t]``: ``t`` is an evidence turn of ``q``)."""
        rows = np.arange(self.order.shape[0])[:, None]
        place = np.empty_like(self.order)
        place[rows, self.order] = np.arange(self.order.shape[1])
        evidence = np.zeros_like(self.evidence)
        evidence[rows, self.order] = self.evidence
        return place, evidence

    @functools.cached_property
    def n_evidence(self) -> np.ndarray:
        """Each question's number of (distinct) evidence turns."""
        return np.asarray(self.evidence.sum(axis=1))

    def found(self, k: int, held: np.ndarray | None = None) -> np.ndarray:
        """How many evidence turns of each question are among its top ``k`` over the ``held``
        turns (a mask; ``None``: every turn): the evidence turns in ``top_k(cosines[row], k, held)``."""
        if held is None:
            return np.asarray(self.evidence[:, :k].sum(axis=1))
        turns = np.flatnonzero(held)
        if 3 * turns.size < held.size:  # few held: the same top k from the held turns' places alone
            place, evidence = self.by_turn
            places = place[:, turns]
            first_k = places <= np.partition(places, k - 1, axis=1)[:, k - 1 : k] if turns.size > k else True
            return np.asarray((evidence[:, turns] & first_k).sum(axis=1))
        present = held[self.order]
        first_k = present & (np.cumsum(present, axis=1) <= k)
        return np.asarray((first_k & self.evidence).sum(axis=1))

    def hits(self, k: int, held: np.ndarray | None = None) -> np.ndarray:
        """hit@``k`` of each question over the ``held`` turns (a mask; ``None``: every turn).

        The same as ``top_k(cosines[row], k, held)`` containing an evidence turn.
        """
        return np.asarray(self.found(k, held) > 0)


@dataclass(frozen=True)
class Scorer:
    """Scores the held set a replay leaves on one conversation (what :func:`score` does after its
    replay); what no policy changes (turn positions, hit@k over every turn) is computed once."""

    index: QuestionIndex
    ranking: QuestionRanking
    tokens: np.ndarray
    question_k: int
    position: Mapping[Hashable, int]  # dia_id -> turn index
    found_all: np.ndarray  # evidence turns in the top k over every turn, per question

    @classmethod
    def of(
        cls,
        conversation: Conversation,
        index: QuestionIndex,
        ranking: QuestionRanking,
        tokens: np.ndarray,
        question_k: int,
    ) -> Scorer:
        """The scorer of ``conversation`` (``question_k >= 1``)."""
        raise_problems([int_problem("question_k", question_k, minimum=1)])
        position: dict[Hashable, int] = {turn.dia_id: turn.index for turn in conversation.turns}
        return cls(index, ranking, tokens, question_k, position, ranking.found(question_k))

    def __call__(self, held_ids: Sequence[Hashable], missed_recalls: int) -> Score:
        """The :class:`Score` of holding the turns ``held_ids`` at the end."""
        held = np.zeros(len(self.position), dtype=bool)
        held[[self.position[mem_id] for mem_id in held_ids]] = True
        tokens, index, n_evidence = self.tokens, self.index, self.ranking.n_evidence
        found_held = self.ranking.found(self.question_k, held)
        hits_all, hits_held = self.found_all > 0, found_held > 0
        main = index.category != ADVERSARIAL
        main_evidence, adv_evidence = index.pooled_evidence
        return Score(
            evidence=main_evidence.size,
            evidence_held=int(held[main_evidence].sum()),
            questions=int(main.sum()),
            hits_held=int(hits_held[main].sum()),
            hits_all=int(hits_all[main].sum()),
            recall_held=_shares(found_held[main], n_evidence[main]),
            recall_all=_shares(self.found_all[main], n_evidence[main]),
            every_held=int((found_held == n_evidence)[main].sum()),
            every_all=int((self.found_all == n_evidence)[main].sum()),
            adv_evidence=adv_evidence.size,
            adv_evidence_held=int(held[adv_evidence].sum()),
            adv_questions=int((~main).sum()),
            adv_hits_held=int(hits_held[~main].sum()),
            adv_hits_all=int(hits_all[~main].sum()),
            turns=int(held.size),
            turns_held=int(held.sum()),
            tokens=int(tokens.sum()),
            tokens_held=int(tokens[held].sum()),
            missed_recalls=missed_recalls,
        )


def _shares(found: np.ndarray, n: np.ndarray) -> Fraction:
    """``sum(found[i] / n[i])`` exactly: integers over the least common multiple of ``n``."""
    if not n.size:
        return Fraction(0)
    common = math.lcm(*n.tolist())
    return Fraction(sum(f * (common // d) for f, d in zip(found.tolist(), n.tolist())), common)


def score(
    conversation: Conversation,
    index: QuestionIndex,
    ranking: QuestionRanking,
    tokens: np.ndarray,
    policy: Policy,
    events: Sequence[Event],
    recall_k: int,
    question_k: int,
) -> Score:
    """Replay ``policy`` over ``events`` recalling ``recall_k`` held turns, then score the questions."""
    scorer = Scorer.of(conversation, index, ranking, tokens, question_k)
    result = replay(policy, events, k=recall_k)
    return scorer(result.held, result.missed_recalls)


def pooled(scores: Sequence[Score]) -> dict[str, float]:
    """Shares over several conversations' scores, pooled (sums of numerators over sums of denominators).

    ``evidence_kept``, ``hit_held``, ``hit_all``, ``recall_held``, ``recall_all``
    (LoCoMo's recall@k, the mean over questions of the share of evidence in the top k),
    ``every_held``, ``every_all`` (all-evidence@k), ``turns_share``, ``tokens_share`` and the
    adversarial ``adv_evidence_kept``, ``adv_hit_held``; a share with a zero denominator is NaN.
    """
    total: Mapping[str, int | Fraction] = {
        key: sum((getattr(s, key) for s in scores), start=0) for key in Score.__dataclass_fields__
    }

    def share(numerator: str, denominator: str) -> float:
        return float(Fraction(total[numerator]) / total[denominator]) if total[denominator] else float("nan")

    return {
        "evidence_kept": share("evidence_held", "evidence"),
        "hit_held": share("hits_held", "questions"),
        "hit_all": share("hits_all", "questions"),
        "recall_held": share("recall_held", "questions"),
        "recall_all": share("recall_all", "questions"),
        "every_held": share("every_held", "questions"),
        "every_all": share("every_all", "questions"),
        "turns_share": share("turns_held", "turns"),
        "tokens_share": share("tokens_held", "tokens"),
        "adv_evidence_kept": share("adv_evidence_held", "adv_evidence"),
        "adv_hit_held": share("adv_hits_held", "adv_questions"),
        "adv_hit_all": share("adv_hits_all", "adv_questions"),
        "missed_recalls": float(total["missed_recalls"]),
    }
