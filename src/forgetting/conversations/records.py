"""A loaded conversation: its turns, its questions, and what can be counted over them.

The records are frozen and hold only what the files say, in a fixed order:

* :class:`Turn` -- one utterance, with its session's real time, the caption of an image
  (``blip_caption``) and whether the turn carries the image itself (a non-empty ``img_url``).
  Its :attr:`Turn.memory_text` is what a memory store keeps, its :attr:`Turn.retrieval_text`
  what a retriever embeds.
* :class:`Question` -- one question of the ``qa`` list, with its category and the ``dia_id``
  strings of its evidence exactly as written (some name no turn).
* :class:`Conversation` -- the two speakers, every turn in session order then turn order, the
  questions in file order, and each session's time.

:func:`resolve_evidence` maps a question's evidence to turns and keeps the strings that name
none, optionally repairing the malformed ones (:func:`repaired_reference`, :func:`evidence_repairs`);
:func:`counts` sums a list of conversations.
"""

from __future__ import annotations

import functools
import re
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
    "Repair",
    "Turn",
    "counts",
    "evidence_repairs",
    "repaired_reference",
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
        The file's ``blip_caption`` (a generated description of an image, e.g. "a photo of a
        dog on a beach"); ``None`` for a turn without one. In locomo10 some turns have a caption
        but no ``img_url``: the caption of an image the file does not carry.
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
    image: bool = False

    @property
    def memory_text(self) -> str:
        """The text a memory store keeps for this turn.

        ``text``, and for a turn that carries an image (:attr:`image`) and its caption, ``text +
        " and shared " + caption + "."`` (the image itself is not in the data; in locomo10 every
        image turn also has text). A caption-only turn (a caption, no image) keeps its text
        alone, as in :attr:`retrieval_text`: LoCoMo's own question-answering prompts add a
        caption only for a turn with an image file (snap-research/locomo at ``9228632``,
        ``task_eval/evaluate_gpts.py``, ``get_input_context``, where it reads ``[shares
        <caption>]``; here it is one sentence with the text).

        >>> from datetime import datetime
        >>> turn = Turn("c", 1, 0, "D1:1", "Ana", "Look!", "a photo of a cat", datetime(2023, 5, 8), image=True)
        >>> turn.memory_text
        'Look! and shared a photo of a cat.'
        >>> Turn("c", 1, 0, "D1:1", "Ana", "Look!", "a photo of a cat", datetime(2023, 5, 8)).memory_text
        'Look!'
        """
        if self.caption is None or not self.image:
            return self.text
        return f"{self.text} and shared {self.caption}."

    @property
    def retrieval_text(self) -> str:
        """The text a retriever embeds for this turn: the form LoCoMo's own retrieval evaluation
        gives it (snap-research/locomo, ``task_eval/dpr_qa.py``, ``get_context_embeddings``).

        ``(<session date>) <speaker> said, "<text>"`` and a newline, then, for a turn that carries
        an image (:attr:`image`), ``[shares <caption>]`` and a newline. That code appends the
        caption only ``if "img_file" in dialog and len(dialog["img_file"]) > 0``, so a
        caption-only turn (a caption, no image) is embedded without its caption. (It reads the
        fields ``compressed_text`` or ``clean_text`` and ``img_file`` of its own copy; locomo10
        has ``text`` and ``img_url``.)

        >>> from datetime import datetime
        >>> when = datetime(2023, 5, 8, 13, 56)
        >>> Turn("c", 1, 0, "D1:1", "Ana", "Look!", "a photo of a cat", when, image=True).retrieval_text
        '(1:56 pm on 8 May, 2023) Ana said, "Look!"\\n[shares a photo of a cat]\\n'
        >>> Turn("c", 1, 0, "D1:1", "Ana", "Look!", "a photo of a cat", when).retrieval_text
        '(1:56 pm on 8 May, 2023) Ana said, "Look!"\\n'
        """
        said = f'({session_time_text(self.time)}) {self.speaker} said, "{self.text}"\n'
        return f"{said}[shares {self.caption}]\n" if self.image and self.caption is not None else said


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
    """A question's evidence resolved: the turns found, the strings that name no turn, and the
    malformed strings whose turns were read out of them (``repair=True`` only)."""

    turns: tuple[Turn, ...]
    unknown: tuple[str, ...]
    repaired: tuple[str, ...] = ()


#: A turn id as it appears inside a malformed reference: ``D``, an optional stray colon, the
#: session, a colon, the turn number with any leading zeros.
_REFERENCE = re.compile(r"D:?(\d+):0*([1-9]\d*)")


def repaired_reference(conversation: Conversation, dia_id: str) -> tuple[str, ...] | None:
    """The turn ids a malformed evidence reference names, or ``None`` when it is not repaired.

    The repair reads every ``D<s>:<n>`` out of ``dia_id`` (a stray colon after ``D`` and leading
    zeros of ``n`` dropped; whatever separates the ids, a space or a semicolon, ignored) and
    accepts the reading only when there is at least one id, every one names a turn of
    ``conversation``, and the ids read, joined by a space, are ``dia_id`` with nothing but
    separators, a stray colon and leading zeros changed. An id that already names a turn is
    not a repair (``None``); neither is one that names a turn the conversation lacks.

    >>> from datetime import datetime
    >>> turns = tuple(Turn("c", 1, i, f"D1:{i + 1}", "A", "hi", None, datetime(2023, 5, 8)) for i in range(3))
    >>> c = Conversation("c", ("A", "B"), turns, (), ((1, datetime(2023, 5, 8)),))
    >>> repaired_reference(c, "D1:02"), repaired_reference(c, "D:1:3"), repaired_reference(c, "D1:1; D1:3")
    (('D1:2',), ('D1:3',), ('D1:1', 'D1:3'))
    >>> repaired_reference(c, "D1:1"), repaired_reference(c, "D1:9"), repaired_reference(c, "D")
    (None, None, None)
    """
    if dia_id in conversation.turn_by_id:
        return None
    found = list(_REFERENCE.finditer(dia_id))
    read = tuple(f"D{m.group(1)}:{m.group(2)}" for m in found)
    rest = _REFERENCE.sub(" ", dia_id)
    if not read or rest.strip(" ;,") != "" or any(r not in conversation.turn_by_id for r in read):
        return None
    return read


class Repair(NamedTuple):
    """One repaired evidence reference: where it is, as written and as read."""

    conversation: str
    question: int  # the question's position in the conversation's qa list
    written: str
    read: tuple[str, ...]


def evidence_repairs(conversations: Iterable[Conversation]) -> list[Repair]:
    """Every repaired reference of every question (:func:`repaired_reference`), in conversation,
    question and evidence order."""
    return [
        Repair(conversation.name, position, dia_id, read)
        for conversation in conversations
        for position, question in enumerate(conversation.questions)
        for dia_id in question.evidence
        if (read := repaired_reference(conversation, dia_id)) is not None
    ]


def resolve_evidence(conversation: Conversation, question: Question, *, repair: bool = False) -> Evidence:
    """The turns ``question.evidence`` names in ``conversation``, and the ids that name none.

    Both keep the order (and any repetition) of ``question.evidence``. As written
    (``repair=False``), an id is matched exactly: ``"D30:05"`` or ``"D8:6; D9:17"`` (both in
    locomo10) name no turn, and every id lands in ``turns`` or ``unknown``. With ``repair=True``,
    a malformed id that :func:`repaired_reference` reads as turns that exist contributes those
    turns (in its place) and is listed in ``repaired``; only the rest are ``unknown``.

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
    turns: list[Turn] = []
    unknown: list[str] = []
    repaired: list[str] = []
    for dia_id in question.evidence:
        turn = conversation.turn_by_id.get(dia_id)
        read = None if turn is not None or not repair else repaired_reference(conversation, dia_id)
        if turn is not None:
            turns.append(turn)
        elif read is not None:
            turns += [conversation.turn_by_id[r] for r in read]
            repaired.append(dia_id)
        else:
            unknown.append(dia_id)
    return Evidence(tuple(turns), tuple(unknown), tuple(repaired))


@dataclass(frozen=True)
class Counts:
    """What :func:`counts` returns.

    Attributes
    ----------
    conversations, sessions, turns : int
    images : int
        Turns that carry an image (:attr:`Turn.image`).
    captions : int
        Turns with a caption (``blip_caption``), with or without an image.
    questions : Mapping of int to int
        Questions per category, every one of :data:`CATEGORIES` present (0 if none).
    evidence : int
        Evidence references: the entries of all evidence lists, repeats included.
    unresolved : int
        The references among them that name no turn as written (:func:`resolve_evidence`).
    repaired : int
        The references among those that a repair reads as turns that exist
        (:func:`repaired_reference`); ``unresolved - repaired`` name no turn however read.
    """

    conversations: int
    sessions: int
    turns: int
    images: int
    captions: int
    questions: Mapping[int, int]
    evidence: int
    unresolved: int
    repaired: int

    @property
    def total_questions(self) -> int:
        """All questions, every category."""
        return sum(self.questions.values())


def counts(conversations: Iterable[Conversation]) -> Counts:
    """Count conversations, sessions, turns, image and caption turns, questions per category,
    evidence references, those that name no turn as written and those repaired."""
    items = list(conversations)
    per_category = dict.fromkeys(CATEGORIES, 0)
    evidence = unresolved = repaired = 0
    for conversation in items:
        for question in conversation.questions:
            per_category[question.category] = per_category.get(question.category, 0) + 1
            evidence += len(question.evidence)
            resolved = resolve_evidence(conversation, question, repair=True)
            unresolved += len(resolved.unknown) + len(resolved.repaired)
            repaired += len(resolved.repaired)
    return Counts(
        conversations=len(items),
        sessions=sum(len(c.sessions) for c in items),
        turns=sum(len(c.turns) for c in items),
        images=sum(t.image for c in items for t in c.turns),
        captions=sum(t.caption is not None for c in items for t in c.turns),
        questions=per_category,
        evidence=evidence,
        unresolved=unresolved,
        repaired=repaired,
    )
