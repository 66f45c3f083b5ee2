"""A loaded conversation: its turns, its questions, and what can be counted over them.

The records are frozen and hold only what the files say, in a fixed order:

* :class:`Turn` -- one utterance, with its session's real time and, for an image turn, the
  image's caption. Its :attr:`Turn.memory_text` is what a memory store keeps.
* :class:`Question` -- one question of the ``qa`` list, with its category and the ``dia_id``
  strings of its evidence exactly as written (some name no turn).
* :class:`Conversation` -- the two speakers, every turn in session order then turn order, the
  questions in file order, and each session's time.

:func:`resolve_evidence` maps a question's evidence to turns and keeps the strings that name
none; :func:`counts` sums a list of conversations.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

__all__ = [
    "CATEGORIES",
    "Conversation",
    "Counts",
    "Evidence",
    "MONTHS",
    "Question",
    "Turn",
    "counts",
    "resolve_evidence",
    "session_time_text",
]

#: The question categories of LoCoMo. In the data, category 5 is the adversarial one (its
#: items carry an ``adversarial_answer``); the paper's names for 1-4 are not stored in the files.
CATEGORIES = (1, 2, 3, 4, 5)


#: English month names, in order, as LoCoMo's session dates spell them (read without the locale).
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def session_time_text(time: datetime) -> str:
    """A session date written back as LoCoMo writes it: the inverse of :func:`parse_session_time`
    for dates without leading zeros (every date of locomo10 is written so; a test checks it).

    >>> session_time_text(datetime(2023, 5, 8, 13, 56))
    '1:56 pm on 8 May, 2023'
    >>> session_time_text(datetime(2023, 11, 8, 0, 28))
    '12:28 am on 8 November, 2023'
    """
    hour = time.hour % 12 or 12
    half = "pm" if time.hour >= 12 else "am"
    return f"{hour}:{time.minute:02d} {half} on {time.day} {MONTHS[time.month - 1]}, {time.year}"


@dataclass(frozen=True)
class Turn:
    """One utterance of a conversation.

    Attributes
    ----------
    conversation : str
        The conversation's name (:attr:`Conversation.name`).
    session : int
        The session number ``N`` of the file's ``session_N`` (1, 2, ...).
    index : int
        The turn counter of the conversation: 0 for its first turn, then +1 per turn in session
        order then turn order, with no gaps (independent of the number inside ``dia_id``).
    dia_id : str
        The file's id of the turn, ``D<session>:<n>`` (unique within the conversation).
    speaker : str
        One of the conversation's two speakers.
    text : str
        What the speaker wrote, unchanged.
    caption : str or None
        For a turn that shares an image, the file's ``blip_caption`` (a generated description of
        the image, e.g. "a photo of a dog on a beach"); ``None`` for a turn without one.
    time : datetime.datetime
        The session's date and time (naive: the files give no time zone). Every turn of a
        session has the same time; the files give no time per turn.
    """

    conversation: str
    session: int
    index: int
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    time: datetime

    @property
    def memory_text(self) -> str:
        """The text a memory store keeps for this turn.

        ``text`` for a turn without an image; for an image turn, ``text + " and shared " +
        caption + "."``, the form LoCoMo's own evaluation code gives an image turn in its prompts
        (the image itself is not in the data). In locomo10 every image turn also has text.

        >>> from datetime import datetime
        >>> turn = Turn("c", 1, 0, "D1:1", "Ana", "Look!", "a photo of a cat", datetime(2023, 5, 8))
        >>> turn.memory_text
        'Look! and shared a photo of a cat.'
        """
        if self.caption is None:
            return self.text
        return f"{self.text} and shared {self.caption}."

    @property
    def retrieval_text(self) -> str:
        """The text a retriever embeds for this turn: the form LoCoMo's own retrieval evaluation
        gives it (snap-research/locomo, ``task_eval/dpr_qa.py``, ``get_context_embeddings``).

        ``(<session date>) <speaker> said, "<text>"`` and a newline, then, for an image turn,
        ``[shares <caption>]`` and a newline. (That code reads the fields ``compressed_text`` or
        ``clean_text`` of its own copy; locomo10 has ``text``.)

        >>> from datetime import datetime
        >>> turn = Turn("c", 1, 0, "D1:1", "Ana", "Look!", "a photo of a cat", datetime(2023, 5, 8, 13, 56))
        >>> turn.retrieval_text
        '(1:56 pm on 8 May, 2023) Ana said, "Look!"\\n[shares a photo of a cat]\\n'
        """
        said = f'({session_time_text(self.time)}) {self.speaker} said, "{self.text}"\n'
        return said if self.caption is None else f"{said}[shares {self.caption}]\n"


@dataclass(frozen=True)
class Question:
    """One item of a conversation's ``qa`` list.

    Attributes
    ----------
    conversation : str
        The conversation's name.
    question : str
        The question, unchanged.
    answer : str or None
        The file's ``answer``; a number in the file (a year, a count) is kept as its decimal
        text. ``None`` only for a category-5 item without one (most of them).
    category : int
        1 to 5 (:data:`CATEGORIES`).
    evidence : tuple of str
        The ``dia_id`` strings of the file's ``evidence`` list, in order, unchanged (possibly
        empty; some name no turn, see :func:`resolve_evidence`).
    adversarial_answer : str or None
        The file's ``adversarial_answer``: present exactly for category 5, ``None`` otherwise.
    """

    conversation: str
    question: str
    answer: str | None
    category: int
    evidence: tuple[str, ...]
    adversarial_answer: str | None = None


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation between two speakers over several sessions.

    Invariants (the loader checks them): ``turns[i].index == i``; turns are in session order,
    then in the file's order within a session; every turn's ``session`` is in ``sessions``;
    ``sessions`` is ``(N, time)`` for every ``session_N`` of the file, by ascending ``N``, with
    times that never decrease. Dates the file gives for sessions it does not contain are not
    kept.

    Attributes
    ----------
    name : str
        The file's name without ``.json`` (e.g. ``"26"`` for ``.../26.json``).
    speakers : tuple of (str, str)
        ``speaker_a`` and ``speaker_b``.
    turns : tuple of Turn
    questions : tuple of Question
        In the file's order.
    sessions : tuple of (int, datetime.datetime)
    """

    name: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    sessions: tuple[tuple[int, datetime], ...]

    @functools.cached_property
    def turn_by_id(self) -> Mapping[str, Turn]:
        """Every turn by its ``dia_id``."""
        return {turn.dia_id: turn for turn in self.turns}


class Evidence(NamedTuple):
    """A question's evidence resolved: the turns found and the strings that name no turn."""

    turns: tuple[Turn, ...]
    unknown: tuple[str, ...]


def resolve_evidence(conversation: Conversation, question: Question) -> Evidence:
    """The turns ``question.evidence`` names in ``conversation``, and the ids that name none.

    Both keep the order (and any repetition) of ``question.evidence``; every id lands in exactly
    one of them. An id is matched exactly as written: ``"D30:05"`` or ``"D8:6; D9:17"`` (both in
    locomo10) name no turn, and nothing is guessed.

    Raises
    ------
    ValueError
        ``question`` belongs to another conversation.
    """
    if question.conversation != conversation.name:
        raise ValueError(
            f"question must belong to conversation {conversation.name!r}, "
            f"got one of conversation {question.conversation!r}"
        )
    found = [conversation.turn_by_id.get(dia_id) for dia_id in question.evidence]
    return Evidence(
        turns=tuple(turn for turn in found if turn is not None),
        unknown=tuple(dia_id for dia_id, turn in zip(question.evidence, found) if turn is None),
    )


@dataclass(frozen=True)
class Counts:
    """What :func:`counts` returns.

    Attributes
    ----------
    conversations, sessions, turns : int
    images : int
        Turns with a caption.
    questions : Mapping of int to int
        Questions per category, every one of :data:`CATEGORIES` present (0 if none).
    evidence : int
        Evidence references: the entries of all evidence lists, repeats included.
    unresolved : int
        The references among them that name no turn (:func:`resolve_evidence`).
    """

    conversations: int
    sessions: int
    turns: int
    images: int
    questions: Mapping[int, int]
    evidence: int
    unresolved: int

    @property
    def total_questions(self) -> int:
        """All questions, every category."""
        return sum(self.questions.values())


def counts(conversations: Iterable[Conversation]) -> Counts:
    """Count conversations, sessions, turns, image turns, questions per category and evidence."""
    items = list(conversations)
    per_category = dict.fromkeys(CATEGORIES, 0)
    evidence = unresolved = 0
    for conversation in items:
        for question in conversation.questions:
            per_category[question.category] = per_category.get(question.category, 0) + 1
            evidence += len(question.evidence)
            unresolved += len(resolve_evidence(conversation, question).unknown)
    return Counts(
        conversations=len(items),
        sessions=sum(len(c.sessions) for c in items),
        turns=sum(len(c.turns) for c in items),
        images=sum(t.caption is not None for c in items for t in c.turns),
        questions=per_category,
        evidence=evidence,
        unresolved=unresolved,
    )
