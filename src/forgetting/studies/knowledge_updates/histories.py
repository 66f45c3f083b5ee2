"""LongMemEval's questions as histories of memories: what is stored, what is embedded, what scores.

A question's history is replayed in date order (:class:`~forgetting.conversations.longmemeval.LmeQuestion`
sorts its sessions), every session to its end, even where a session is dated after the question
(43 oracle questions: their evidence is in those sessions, so cutting the history at the question's
date would remove what the question asks about). The **memories are the user's turns**: a user
turn's text is embedded (the encoder reads at most 256 tokens of a text; the user's turns are short,
the assistant's long: the chapter glues both medians), an assistant turn is not embedded at all. That halves what is
embedded and costs one question type: single-session-assistant, whose evidence is the assistant's
(51 of the oracle's 54 assistant evidence turns), is not scored. Evidence turns are the file's
``has_answer`` turns that are the user's.

A knowledge-update question has two answer sessions: the older states the old value, the newer the
update. Its **current** turns are its evidence turns in the newer answer session, its **stale**
turns those in the older one; a question with no evidence in one of them is not scored on the
trade-off between them (:attr:`History.conflict`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...conversations.longmemeval import LmeQuestion, QuestionType, Role
from ...text.similarity import rounded_cosines
from ..conversations.embeddings import ConversationVectors, encode_missing, fragile_pairs
from ..executor import Executor

__all__ = ["OLD_TYPES", "History", "embed_histories", "fragile_cosines", "history_of", "texts_to_embed"]

#: The question types whose answer is old information, kept as it was said (scored by evidence kept).
OLD_TYPES = (
    QuestionType.SINGLE_SESSION_USER.value,
    QuestionType.SINGLE_SESSION_PREFERENCE.value,
    QuestionType.MULTI_SESSION.value,
    QuestionType.TEMPORAL_REASONING.value,
)


@dataclass(frozen=True, eq=False)
class History:
    """One question's memories (its user turns, in order) and what scores them.

    Attributes
    ----------
    question : LmeQuestion
    ids : tuple of str
        Each memory's turn id (``S<session>:<position>``), in store order.
    turn_cosines : numpy.ndarray
        ``(n, n)`` rounded cosines between the memories.
    question_cosines : numpy.ndarray
        ``(n,)`` rounded cosines of the question to each memory.
    evidence : numpy.ndarray
        Memory indices of the user's evidence turns, ascending.
    current, stale : numpy.ndarray
        Knowledge updates: the evidence in the newer answer session, and in the older ones
        (empty for the other types).
    vectors, asked : numpy.ndarray
        The memories' unit vectors ``(n, 384)`` and the question's ``(384,)``, as embedded.
    """

    question: LmeQuestion
    ids: tuple[str, ...]
    turn_cosines: np.ndarray
    question_cosines: np.ndarray
    evidence: np.ndarray
    current: np.ndarray
    stale: np.ndarray
    vectors: np.ndarray
    asked: np.ndarray

    @property
    def kind(self) -> str:
        return self.question.question_type.value

    @property
    def conflict(self) -> bool:
        """A knowledge update with evidence in both its old and its new answer session."""
        return bool(self.current.size and self.stale.size)


def _memories(question: LmeQuestion) -> list:  # type: ignore[type-arg]
    return [turn for turn in question.turns if turn.role == Role.USER]


def texts_to_embed(questions: Sequence[LmeQuestion]) -> list[str]:
    """Every distinct text the study embeds: each question's user turns, then its question."""
    texts = {turn.content: None for q in questions for turn in _memories(q)}
    texts.update({q.question: None for q in questions})
    return list(texts)


def history_of(question: LmeQuestion, turns: np.ndarray, asked: np.ndarray) -> History:
    """The :class:`History` of ``question`` from its user turns' vectors ``turns`` (in order) and
    the question's vector ``asked``."""
    memories = _memories(question)
    if len(memories) != turns.shape[0]:
        raise ValueError(f"turns must hold one vector per user turn ({len(memories)}), got {turns.shape[0]}")
    evidence = [i for i, turn in enumerate(memories) if turn.has_answer]
    current: list[int] = []
    stale: list[int] = []
    answer = [s.number for s in question.answer_sessions]
    if question.question_type == QuestionType.KNOWLEDGE_UPDATE and answer:
        newest = max(answer)
        current = [i for i in evidence if memories[i].session == newest]
        stale = [i for i in evidence if memories[i].session != newest]
    index = functools.partial(np.array, dtype=np.intp)
    return History(
        question=question,
        ids=tuple(turn.turn_id for turn in memories),
        turn_cosines=rounded_cosines(turns, turns),
        question_cosines=rounded_cosines(asked.reshape(1, -1), turns)[0],
        evidence=index(evidence),
        current=index(current),
        stale=index(stale),
        vectors=turns,
        asked=asked.reshape(-1),
    )


def embed_histories(
    questions: Sequence[LmeQuestion], cache_dir: str | os.PathLike[str], executor: Executor | None = None
) -> list[History]:
    """Each question's :class:`History`, its texts embedded once (float64, the checksummed cache
    of the LoCoMo chapter, :mod:`~forgetting.studies.conversations.embeddings`)."""
    cache = encode_missing(texts_to_embed(questions), cache_dir, executor)
    out = []
    for question in questions:
        turns = cache.encode([turn.content for turn in _memories(question)])
        asked = cache.encode([question.question])[0]
        out.append(history_of(question, turns, asked))
    if cache.misses:
        raise RuntimeError(f"{cache.misses} texts were still missing from the cache after encoding")
    return out


def fragile_cosines(history: History) -> int:
    """How many of the history's memory-memory (distinct pairs) and question-memory cosines a
    relative change of :data:`~forgetting.studies.conversations.embeddings.RELATIVE_CHANGE` in every
    vector component could move to another rounded value (the LoCoMo chapter's
    :func:`~forgetting.studies.conversations.embeddings.fragile_pairs`)."""
    vectors = ConversationVectors(
        history.question.name,
        history.vectors,
        history.asked.reshape(1, -1),
        history.turn_cosines,
        history.question_cosines.reshape(1, -1),
    )
    return sum(fragile_pairs(vectors))
