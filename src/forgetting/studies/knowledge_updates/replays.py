"""One question's history replayed through one policy with recall by retrieval, and scored.

Recall by retrieval is the LoCoMo chapter's (:func:`~forgetting.studies.conversations.benchmark.ranked_history`):
before each memory is stored, the earlier memories are ranked by rounded cosine to it (equal
cosines: the earlier first), and the first ``recall_k`` of them the store still holds are recalled.
The question is asked after the last session. :class:`Score` holds integers, so questions pool by
summing.

For a knowledge update with evidence in both answer sessions (:attr:`~.histories.History.conflict`)
the held memories are ranked by rounded cosine to the question (equal cosines: the earlier first):

* ``current_first`` -- the best-ranked held evidence turn is a current one (the update is found
  before any stale value);
* ``stale_only`` -- among the ``question_k`` best-ranked held memories there is a stale turn and no
  current one (retrieval returns only the old value);
* ``current_top`` -- among them there is a current turn.

``*_all`` are the same measures over every memory (keeping everything), and ``first_gained`` and
``first_lost`` pair the two on each question: the update is ranked first here and not over every
memory, or the reverse.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from ..._validate import int_problem, raise_problems
from ...conversations.longmemeval import question_events
from ...conversations.policies import CheckedEvents, Policy, check_events, replay
from ..conversations.benchmark import ranked_history
from .histories import History

__all__ = ["Score", "held_mask", "recall_stream", "score_held", "score_policy"]


@dataclass(frozen=True)
class Score:
    """Counts of one or more questions (sums pool): ``questions`` counts those with user evidence
    (the hits' denominator), ``conflicts`` the knowledge updates scored on old against new."""

    questions: int = 0
    evidence: int = 0
    evidence_held: int = 0
    hits_held: int = 0
    hits_all: int = 0
    turns: int = 0
    turns_held: int = 0
    conflicts: int = 0
    current: int = 0
    current_held: int = 0
    stale: int = 0
    stale_held: int = 0
    current_first: int = 0
    stale_only: int = 0
    current_top: int = 0
    current_first_all: int = 0
    stale_only_all: int = 0
    first_gained: int = 0
    first_lost: int = 0

    def __add__(self, other: Score) -> Score:
        return Score(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def recall_stream(history: History, min_similarity: float) -> CheckedEvents:
    """The history's events (its user turns, :func:`~forgetting.conversations.longmemeval.question_events`),
    each recalling the earlier memories ranked by cosine to it, checked once for many replays."""
    ranked = ranked_history(history.turn_cosines, min_similarity)
    recalled = [[history.ids[j] for j in row] for row in ranked]
    return check_events(question_events(history.question, recalled, roles=("user",)))


def held_mask(history: History, held: Sequence[Hashable]) -> np.ndarray:
    """A boolean mask over the memories: those in ``held``."""
    wanted = set(held)
    return np.array([mem_id in wanted for mem_id in history.ids], dtype=bool)


def _ranked(history: History, held: np.ndarray) -> np.ndarray:
    """The held memories' indices, best cosine to the question first (equal: the earlier first)."""
    cos = history.question_cosines
    order = np.lexsort((np.arange(cos.size), -cos))
    ranked: np.ndarray = order[held[order]]
    return ranked


def _update_counts(history: History, held: np.ndarray, question_k: int) -> tuple[int, int, int]:
    ranked = _ranked(history, held)
    current, stale = set(history.current.tolist()), set(history.stale.tolist())
    first = next((i for i in ranked.tolist() if i in current or i in stale), None)
    top = set(ranked[:question_k].tolist())
    return int(first in current), int(bool(top & stale) and not top & current), int(bool(top & current))


def score_held(history: History, held: np.ndarray, question_k: int) -> Score:
    """The :class:`Score` of holding the memories ``held`` (a mask) when the question is asked."""
    raise_problems([int_problem("question_k", question_k, minimum=1)])
    everything = np.ones_like(held)
    evidence = set(history.evidence.tolist())

    def hit(mask: np.ndarray) -> int:
        return int(bool(set(_ranked(history, mask)[:question_k].tolist()) & evidence))

    scored = bool(history.evidence.size)  # a question without user evidence scores evidence only
    counts = dict(
        questions=int(scored),
        evidence=int(history.evidence.size),
        evidence_held=int(held[history.evidence].sum()),
        hits_held=hit(held) if scored else 0,
        hits_all=hit(everything) if scored else 0,
        turns=int(held.size),
        turns_held=int(held.sum()),
    )
    if history.conflict:
        first, stale_only, top = _update_counts(history, held, question_k)
        first_all, stale_all, _ = _update_counts(history, everything, question_k)
        counts.update(
            conflicts=1,
            current=int(history.current.size),
            current_held=int(held[history.current].sum()),
            stale=int(history.stale.size),
            stale_held=int(held[history.stale].sum()),
            current_first=first,
            stale_only=stale_only,
            current_top=top,
            current_first_all=first_all,
            stale_only_all=stale_all,
            first_gained=int(first and not first_all),
            first_lost=int(first_all and not first),
        )
    return Score(**counts)


def score_policy(
    history: History, policy: Policy, events: CheckedEvents, recall_k: int, question_k: int
) -> Score:
    """Replay ``policy`` over ``events`` recalling ``recall_k`` held memories, then score."""
    result = replay(policy, events, k=recall_k)
    return score_held(history, held_mask(history, result.held), question_k)
