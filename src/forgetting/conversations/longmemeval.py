"""LongMemEval's questions, checked field by field, as typed records and as replay events.

One file holds one question of the official format, a JSON object with exactly these fields:

* ``question_id`` -- a non-empty string; ending ``_abs`` marks an abstention question (the
  history does not hold the answer);
* ``question_type`` -- one of :class:`QuestionType`;
* ``question`` -- a non-empty string; ``answer`` -- a string or an int (kept as its decimal text);
* ``question_date`` and every entry of ``haystack_dates`` -- e.g. ``"2023/04/11 (Tue) 08:03"``
  (:func:`parse_lme_date`: the weekday must be the date's);
* ``haystack_session_ids``, ``haystack_dates``, ``haystack_sessions`` -- three lists of one length
  (at least 1): each session's id (a non-empty string), date and turns (a non-empty list of
  objects with ``role`` ``"user"`` or ``"assistant"``, ``content`` a string, and optionally
  ``has_answer`` a bool, absent meaning ``false``, as in most turns of the S setting);
* ``answer_session_ids`` -- a list of distinct session ids, each one of ``haystack_session_ids``.

:func:`parse_question` returns every problem of a file at once, each with its path, e.g.
``3_0a1b2c3d.json: haystack_sessions[1][4].role must be 'user' or 'assistant', got 'bot'``.

The files give the sessions in no particular order (in the S setting never in date order); a
:class:`LmeQuestion` holds them sorted by date (ties keep the file's order) and numbered 1, 2, ...
in that order. A session id may appear twice in one history (two S-setting files have one
session at two dates); each appearance is its own :class:`LmeSession`, and a turn's
:attr:`LmeTurn.turn_id` (``S<session number>:<position>``) is unique where the session id is not.

:func:`question_events` turns one question's history into the :class:`~.policies.Event`
stream every policy replays (as :func:`~.policies.conversation_events` does for LoCoMo), and
:func:`load_longmemeval` reads a checked copy (:func:`~.longmemeval_source.longmemeval_copy`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from .._validate import is_int, raise_problems, shown
from .longmemeval_source import ManifestEntry, Setting, read_copy, read_manifest
from .policies import Event, stream_events

__all__ = [
    "LmeCounts",
    "LmeQuestion",
    "LmeSession",
    "LmeTurn",
    "QuestionType",
    "Role",
    "lme_counts",
    "load_longmemeval",
    "parse_lme_date",
    "parse_question",
    "question_events",
]

#: The most problems one error lists (then how many more there are).
MAX_PROBLEMS = 20

_DATE = re.compile(r"(\d{4})/(\d\d)/(\d\d) \((Mon|Tue|Wed|Thu|Fri|Sat|Sun)\) (\d\d):(\d\d)")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_KEYS = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
)
_TURN_KEYS = {"role", "content", "has_answer"}


class QuestionType(StrEnum):
    """LongMemEval's six question types, as the files spell them."""

    SINGLE_SESSION_USER = "single-session-user"
    SINGLE_SESSION_ASSISTANT = "single-session-assistant"
    SINGLE_SESSION_PREFERENCE = "single-session-preference"
    MULTI_SESSION = "multi-session"
    KNOWLEDGE_UPDATE = "knowledge-update"
    TEMPORAL_REASONING = "temporal-reasoning"


class Role(StrEnum):
    """Who wrote a turn."""

    USER = "user"
    ASSISTANT = "assistant"


def parse_lme_date(text: str) -> datetime:
    """The naive datetime of a LongMemEval date ``YYYY/MM/DD (Ddd) HH:MM``; the weekday must match.

    Read with a regular expression, not ``strptime`` (whose ``%a`` follows the locale).

    >>> parse_lme_date("2023/04/11 (Tue) 08:03")
    datetime.datetime(2023, 4, 11, 8, 3)

    Raises
    ------
    ValueError
        Not in that format, not a real date or time, or a weekday that is not the date's.
    """
    match = _DATE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"a date must look like '2023/04/11 (Tue) 08:03', got {shown(text)}")
    year, month, day, weekday, hour, minute = match.groups()
    try:
        time = datetime(int(year), int(month), int(day), int(hour), int(minute))
    except ValueError as error:
        raise ValueError(f"a date must name a real date and time, got {shown(text)} ({error})") from None
    if _WEEKDAYS[time.weekday()] != weekday:
        raise ValueError(f"a date's weekday must be its own ({_WEEKDAYS[time.weekday()]}), got {shown(text)}")
    return time


@dataclass(frozen=True)
class LmeTurn:
    """One turn of a question's history.

    Attributes
    ----------
    session : int
        Its session's number (1, 2, ... in date order; :attr:`LmeSession.number`).
    position : int
        Its place in the session: 1, 2, ... in the file's order.
    index : int
        The turn counter of the history: 0 for the first turn of session 1, then +1 per turn
        in session order then position, no gaps.
    role : Role
    content : str
        The text, unchanged (the S setting has three empty ones).
    has_answer : bool
        The file's ``has_answer`` (an evidence turn); ``False`` where the file omits it.
    time : datetime.datetime
        The session's date (every turn of a session has it; the files give no time per turn).
    """

    session: int
    position: int
    index: int
    role: Role
    content: str
    has_answer: bool
    time: datetime

    @property
    def turn_id(self) -> str:
        """``S<session>:<position>``, unique in the history (the id a replay stores).

        >>> LmeTurn(3, 2, 7, Role.USER, "hi", False, datetime(2023, 4, 11)).turn_id
        'S3:2'
        """
        return f"S{self.session}:{self.position}"


@dataclass(frozen=True)
class LmeSession:
    """One session of a question's history.

    Attributes
    ----------
    number : int
        1, 2, ... in date order (ties in the file's order).
    session_id : str
        The file's id (not always unique in a history; see the module docstring).
    time : datetime.datetime
    turns : tuple of LmeTurn
    is_answer : bool
        ``session_id`` is one of the question's ``answer_session_ids``.
    file_position : int
        Where the session stands in the file's lists (0, 1, ...).
    """

    number: int
    session_id: str
    time: datetime
    turns: tuple[LmeTurn, ...]
    is_answer: bool
    file_position: int


@dataclass(frozen=True)
class LmeQuestion:
    """One LongMemEval question and its history.

    Invariants (the parser makes them hold): ``sessions[i].number == i + 1``; session times never
    decrease; turn indices run 0, 1, ... over the sessions in order; every id of
    ``answer_session_ids`` is a session's id.

    Attributes
    ----------
    name : str
        The file's name without ``.json`` (``<number of sessions>_<question_id>``).
    question_id : str
    question_type : QuestionType
    question : str
    answer : str
        The file's answer; an int answer (34 of the oracle's) as its decimal text.
    question_date : datetime.datetime
        When the question is asked (in 43 oracle and 16 S files it is before the last session's
        date: kept as written).
    abstention : bool
        ``question_id`` ends ``_abs``.
    sessions : tuple of LmeSession
        In date order.
    answer_session_ids : tuple of str
        The file's list, in the file's order.
    """

    name: str
    question_id: str
    question_type: QuestionType
    question: str
    answer: str
    question_date: datetime
    abstention: bool
    sessions: tuple[LmeSession, ...]
    answer_session_ids: tuple[str, ...]

    @property
    def turns(self) -> tuple[LmeTurn, ...]:
        """Every turn, in session order then position (``turns[i].index == i``)."""
        return tuple(turn for session in self.sessions for turn in session.turns)

    @property
    def evidence(self) -> tuple[LmeTurn, ...]:
        """The turns with ``has_answer``, in order."""
        return tuple(turn for turn in self.turns if turn.has_answer)

    @property
    def answer_sessions(self) -> tuple[LmeSession, ...]:
        """The sessions whose id is an answer session id, in date order."""
        return tuple(session for session in self.sessions if session.is_answer)


def _answer(value: object) -> str | None:
    if is_int(value):
        return str(value)
    return value if isinstance(value, str) else None


class _Parser:
    """Collects every problem of one document (each with its path) while building the record."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[str] = []

    def problem(self, field: str, allowed: str, value: object) -> None:
        self.problems.append(f"{self.name}: {field} must be {allowed}, got {shown(value)}")

    def date(self, field: str, value: object) -> datetime | None:
        try:
            return parse_lme_date(value)  # type: ignore[arg-type]
        except ValueError as error:
            self.problems.append(f"{self.name}: {field}: {error}")
            return None

    def string(self, field: str, value: object, non_empty: bool = True) -> str:
        if not isinstance(value, str) or (non_empty and not value):
            self.problem(field, "a non-empty string" if non_empty else "a string", value)
            return ""
        return value

    def id_list(self, field: str, value: object) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.problem(field, "a list of non-empty strings", value)
            return []
        return value

    def turns(self, field: str, items: object) -> list[tuple[Role, str, bool]] | None:
        if not isinstance(items, list) or not items:
            self.problem(field, "a non-empty list of turns", items)
            return None
        turns = []
        for position, item in enumerate(items):
            where = f"{field}[{position}]"
            if not isinstance(item, dict):
                self.problem(where, "an object with role and content", item)
                continue
            for key in sorted(set(item) - _TURN_KEYS, key=str):
                self.problems.append(f"{self.name}: {where} has unknown field {shown(key)}")
            for key in ("role", "content"):
                if key not in item:
                    self.problems.append(f"{self.name}: {where}: {key!r} missing")
            role = item.get("role")
            if "role" in item and role not in set(Role):
                self.problem(f"{where}.role", "'user' or 'assistant'", role)
            content = (
                self.string(f"{where}.content", item["content"], non_empty=False) if "content" in item else ""
            )
            has_answer = item.get("has_answer", False)
            if not isinstance(has_answer, bool):
                self.problem(f"{where}.has_answer", "a bool", has_answer)
            if role in set(Role) and isinstance(has_answer, bool):
                turns.append((Role(role), content, has_answer))
        return turns

    def question(self, doc: object) -> LmeQuestion | None:
        if not isinstance(doc, dict):
            self.problem("the document", "a JSON object with the fields of a question", doc)
            return None
        for key in sorted(set(doc) - set(_KEYS), key=str):
            self.problems.append(f"{self.name}: unknown field {shown(key)}")
        missing = [key for key in _KEYS if key not in doc]
        for key in missing:
            self.problems.append(f"{self.name}: {key!r} missing")
        if missing:
            return None
        question_id = self.string("question_id", doc["question_id"])
        kind = doc["question_type"]
        if kind not in set(QuestionType):
            self.problem("question_type", f"one of {[t.value for t in QuestionType]}", kind)
        text = self.string("question", doc["question"])
        answer = _answer(doc["answer"])
        if answer is None:
            self.problem("answer", "a string or an int", doc["answer"])
        asked = self.date("question_date", doc["question_date"])
        ids = self.id_list("haystack_session_ids", doc["haystack_session_ids"])
        dates = doc["haystack_dates"]
        if not isinstance(dates, list):
            self.problem("haystack_dates", "a list of dates", dates)
            dates = []
        items = doc["haystack_sessions"]
        if not isinstance(items, list) or not items:
            self.problem("haystack_sessions", "a non-empty list of sessions", items)
            items = []
        if not (len(ids) == len(dates) == len(items)):
            self.problems.append(
                f"{self.name}: haystack_session_ids, haystack_dates and haystack_sessions must have one "
                f"length, got {len(ids)}, {len(dates)} and {len(items)}"
            )
        answers = self.id_list("answer_session_ids", doc["answer_session_ids"])
        if len(set(answers)) != len(answers):
            self.problem("answer_session_ids", "distinct ids", answers)
        for stray in (a for a in answers if ids and a not in ids):
            self.problems.append(
                f"{self.name}: answer_session_ids names {stray!r}, not a haystack session id"
            )
        parsed: list[tuple[datetime, int, str, list[tuple[Role, str, bool]]]] = []
        for position, (session_id, date, item) in enumerate(zip(ids, dates, items)):
            time = self.date(f"haystack_dates[{position}]", date)
            turns = self.turns(f"haystack_sessions[{position}]", item)
            if time is not None and turns is not None:
                parsed.append((time, position, session_id, turns))
        if self.problems:
            return None
        parsed.sort(key=lambda entry: (entry[0], entry[1]))  # by date; ties keep the file's order
        sessions = []
        index = 0
        for number, (time, position, session_id, turns) in enumerate(parsed, start=1):
            made = []
            for place, (role, content, has_answer) in enumerate(turns, start=1):
                made.append(LmeTurn(number, place, index, role, content, has_answer, time))
                index += 1
            sessions.append(
                LmeSession(number, session_id, time, tuple(made), session_id in answers, position)
            )
        return LmeQuestion(
            name=self.name,
            question_id=question_id,
            question_type=QuestionType(kind),
            question=text,
            answer=answer or "",
            question_date=asked,  # type: ignore[arg-type]
            abstention=question_id.endswith("_abs"),
            sessions=tuple(sessions),
            answer_session_ids=tuple(answers),
        )


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {key!r} is given twice in one object")
        result[key] = value
    return result


def parse_question(name: str, data: bytes) -> tuple[LmeQuestion | None, list[str]]:
    """The question in ``data`` (the bytes of file ``name``) and every problem found, each naming
    the file and the field's path; the question is ``None`` when there is any problem.

    ``name`` is the file's name (``.json`` dropped for :attr:`LmeQuestion.name`). Undecodable or
    truncated JSON is one problem naming where the text breaks; a key given twice in an object
    is a problem.
    """
    stem = name.removesuffix(".json")
    parser = _Parser(stem)
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=_unique_keys)
    except UnicodeDecodeError as error:
        return None, [f"{stem}: not UTF-8 ({error.reason} at byte {error.start})"]
    except json.JSONDecodeError as error:
        return None, [f"{stem}: not JSON ({error.msg} at line {error.lineno}, column {error.colno})"]
    except ValueError as error:
        return None, [f"{stem}: {error}"]
    question = parser.question(doc)
    if question is not None and not name.startswith(f"{len(question.sessions)}_"):
        parser.problems.append(
            f"{stem}: the name must start with its number of sessions ({len(question.sessions)}_)"
        )
    if question is not None and stem.split("_", 1)[-1] != question.question_id:
        parser.problems.append(f"{stem}: the name must end with its question_id ({question.question_id!r})")
    return (None if parser.problems else question), parser.problems


def load_longmemeval(
    path: Path,
    setting: Setting | str = Setting.ORACLE,
    manifest: Sequence[ManifestEntry] | None = None,
) -> list[LmeQuestion]:
    """The questions of ``setting`` in the copy at ``path`` (a zip or folder), in manifest order.

    Every file is checked against ``manifest`` (default: :func:`~.longmemeval_source.read_manifest`)
    as it is read: the bytes parsed are the bytes checked.

    Raises
    ------
    ValueError
        A bad ``setting``; a missing file or one of the wrong size or digest (one line naming
        the file); or schema problems, all of them (up to :data:`MAX_PROBLEMS`, then how many
        more) in one message naming ``path``, each with the file and the field's path.
    """
    if setting not in set(Setting):
        raise_problems([f"setting must be one of {[s.value for s in Setting]}, got {shown(setting)}"])
    entries = [e for e in (read_manifest() if manifest is None else manifest) if e.setting == setting]
    questions: list[LmeQuestion] = []
    problems: list[str] = []
    for entry, data in read_copy(Path(path), entries):
        question, found = parse_question(entry.file, data)
        problems += found
        if question is not None:
            questions.append(question)
    if problems:
        more = f"; and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
        raise ValueError(
            f"{path}: not in the LongMemEval format ({len(problems)} problem(s)): "
            + "; ".join(problems[:MAX_PROBLEMS])
            + more
        )
    return questions


def question_events(
    question: LmeQuestion,
    recalled: Sequence[Sequence[str]] | None = None,
    roles: Iterable[Role | str] = (Role.USER, Role.ASSISTANT),
) -> list[Event]:
    """One :class:`~.policies.Event` per turn of ``question``'s history whose role is in ``roles``.

    ``Event(turn.index, turn.time, turn.session, turn.turn_id, recalled[i])``: turn indices are
    the history's (with ``roles`` narrowed they skip the others' turns, so a turn-clock rule still
    counts every turn); ``recalled[i]`` (turn ids) is what a retriever named before the ``i``-th
    event's turn was stored, ``None``: no recalls. :func:`~.policies.replay` checks the ids.

    Raises
    ------
    ValueError
        A role not in :class:`Role`, or ``recalled`` not one sequence per event.
    """
    wanted = list(roles) if not isinstance(roles, str) else [roles]
    raise_problems(
        [
            f"roles must hold only {[r.value for r in Role]}, got {shown(r)}"
            for r in wanted
            if r not in set(Role)
        ]
    )
    rows = [
        (turn.index, turn.time, turn.session, turn.turn_id) for turn in question.turns if turn.role in wanted
    ]
    return stream_events(rows, recalled, "event")


@dataclass(frozen=True)
class LmeCounts:
    """What :func:`lme_counts` returns.

    ``sessions``, ``turns`` and ``user_turns`` count every question's history (a session shared
    by two questions counts twice); the ``distinct_`` counts take each session id once (its first
    appearance), the way LongMemEval's README counts.

    Attributes
    ----------
    questions : int
    types : Mapping of str to int
        Questions per :class:`QuestionType`, every type present (0 if none).
    abstention : int
    sessions, distinct_sessions, turns, distinct_turns, user_turns, distinct_user_turns : int
    evidence_turns, evidence_user_turns : int
        Turns with ``has_answer`` over every history, and those of them that are the user's.
    """

    questions: int
    types: Mapping[str, int]
    abstention: int
    sessions: int
    distinct_sessions: int
    turns: int
    distinct_turns: int
    user_turns: int
    distinct_user_turns: int
    evidence_turns: int
    evidence_user_turns: int


def lme_counts(questions: Iterable[LmeQuestion]) -> LmeCounts:
    """Count questions by type, abstentions, sessions, turns, user turns and evidence turns."""
    items = list(questions)
    types = dict.fromkeys((t.value for t in QuestionType), 0)
    seen: set[str] = set()
    distinct = [0, 0, 0]
    for question in items:
        types[question.question_type.value] += 1
        for session in sorted(question.sessions, key=lambda s: s.file_position):
            if session.session_id not in seen:
                seen.add(session.session_id)
                distinct[0] += 1
                distinct[1] += len(session.turns)
                distinct[2] += sum(turn.role == Role.USER for turn in session.turns)
    turns = [turn for question in items for turn in question.turns]
    return LmeCounts(
        questions=len(items),
        types=types,
        abstention=sum(q.abstention for q in items),
        sessions=sum(len(q.sessions) for q in items),
        distinct_sessions=distinct[0],
        turns=len(turns),
        distinct_turns=distinct[1],
        user_turns=sum(t.role == Role.USER for t in turns),
        distinct_user_turns=distinct[2],
        evidence_turns=sum(t.has_answer for t in turns),
        evidence_user_turns=sum(t.has_answer and t.role == Role.USER for t in turns),
    )
