"""The real-conversation benchmark: replay a policy with retrieval, then ask the questions.

One conversation, one retrieval setting ``(recall_k, min_similarity)``, one policy:

1. **recall by retrieval** -- before turn ``i`` is stored, the agent ranks every earlier turn by
   rounded cosine to turn ``i`` (higher first, equal cosines: the earlier turn first), keeps
   those at or above ``min_similarity``, and recalls the first ``recall_k`` of them that the
   store still holds (:func:`~.policies.replay` with ``k``);
2. **questions at the end** -- after the last turn, each question (categories 1-4; category 5,
   the adversarial one, is kept apart) is scored on what is held: the share of its evidence
   turns still held, and hit@k (an evidence turn among the ``question_k`` held turns nearest
   the question) against hit@k over the whole history (the same ranking, nothing forgotten);
3. **footprint** -- the share of the conversation's turns held at the end, and the share of
   its tokens (the model's tokenizer, :func:`~.embeddings.token_counts`).

A question counts only through its evidence turns that name a turn (:func:`~.records.resolve_evidence`);
a question none of whose evidence names a turn is counted apart and scored on nothing.
Everything here is integers and rounded cosines: no decision reads a float that a CPU could
change.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

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
    """The questions of ``conversation`` that can be scored, as turn indices."""
    rows, evidence, category = [], [], []
    unresolved = no_evidence = 0
    for row, question in enumerate(conversation.questions):
        turns = resolve_evidence(conversation, question).turns
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
    ``hits_all`` (hit@k over held / over all turns). ``turns``, ``turns_held``, ``tokens``,
    ``tokens_held``: the footprint. ``missed_recalls``: recalls the forgetting cost the
    retriever.
    """

    evidence: int
    evidence_held: int
    questions: int
    hits_held: int
    hits_all: int
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

    def as_dict(self) -> dict[str, int]:
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

    def hits(self, k: int, held: np.ndarray | None = None) -> np.ndarray:
        """hit@``k`` of each question over the ``held`` turns (a mask; ``None``: every turn).

        The same as ``top_k(cosines[row], k, held)`` containing an evidence turn.
        """
        if held is None:
            return np.asarray(self.evidence[:, :k].any(axis=1))
        turns = np.flatnonzero(held)
        if 3 * turns.size < held.size:  # few held: the same hits from the held turns' places alone
            place, evidence = self.by_turn
            places = place[:, turns]
            first_k = places <= np.partition(places, k - 1, axis=1)[:, k - 1 : k] if turns.size > k else True
            return np.asarray((evidence[:, turns] & first_k).any(axis=1))
        present = held[self.order]
        first_k = present & (np.cumsum(present, axis=1) <= k)
        return np.asarray((first_k & self.evidence).any(axis=1))


@dataclass(frozen=True)
class Scorer:
    """Scores the held set a replay leaves on one conversation (what :func:`score` does after its
    replay); what no policy changes (turn positions, hit@k over every turn) is computed once."""

    index: QuestionIndex
    ranking: QuestionRanking
    tokens: np.ndarray
    question_k: int
    position: Mapping[Hashable, int]  # dia_id -> turn index
    hits_all: np.ndarray

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
        return cls(index, ranking, tokens, question_k, position, ranking.hits(question_k))

    def __call__(self, held_ids: Sequence[Hashable], missed_recalls: int) -> Score:
        """The :class:`Score` of holding the turns ``held_ids`` at the end."""
        held = np.zeros(len(self.position), dtype=bool)
        held[[self.position[mem_id] for mem_id in held_ids]] = True
        hits_all, tokens, index = self.hits_all, self.tokens, self.index
        hits_held = self.ranking.hits(self.question_k, held)
        main = index.category != ADVERSARIAL
        main_evidence, adv_evidence = index.pooled_evidence
        return Score(
            evidence=main_evidence.size,
            evidence_held=int(held[main_evidence].sum()),
            questions=int(main.sum()),
            hits_held=int(hits_held[main].sum()),
            hits_all=int(hits_all[main].sum()),
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

    ``evidence_kept``, ``hit_held``, ``hit_all``, ``turns_share``, ``tokens_share`` and the
    adversarial ``adv_evidence_kept``, ``adv_hit_held``; a share with a zero denominator is NaN.
    """
    total: Mapping[str, int] = {
        key: sum(getattr(s, key) for s in scores) for key in Score.__dataclass_fields__
    }

    def share(numerator: str, denominator: str) -> float:
        return total[numerator] / total[denominator] if total[denominator] else float("nan")

    return {
        "evidence_kept": share("evidence_held", "evidence"),
        "hit_held": share("hits_held", "questions"),
        "hit_all": share("hits_all", "questions"),
        "turns_share": share("turns_held", "turns"),
        "tokens_share": share("tokens_held", "tokens"),
        "adv_evidence_kept": share("adv_evidence_held", "adv_evidence"),
        "adv_hit_held": share("adv_hits_held", "adv_questions"),
        "adv_hit_all": share("adv_hits_all", "adv_questions"),
        "missed_recalls": float(total["missed_recalls"]),
    }
