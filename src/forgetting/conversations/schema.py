"""The LoCoMo file format, checked field by field, into :class:`~.records.Conversation` records.

One JSON file holds one conversation, a JSON object with these fields (``N`` = 1, 2, ...):

* ``speaker_a``, ``speaker_b`` -- two different non-empty names;
* ``session_N`` -- a non-empty list of turns, each an object with ``speaker`` (one of the two),
  ``dia_id`` (``D<N>:<n>``, unique in the file) and ``text`` (a string), and for a turn that
  shares an image ``blip_caption`` (a non-empty string), optionally with ``img_url`` (a list of
  strings: a non-empty one is :attr:`~.records.Turn.image`; locomo10 has captions without it),
  ``query`` (a string) and ``re-download`` (a bool), which are checked and not kept;
* ``session_N_date_time`` -- e.g. ``"1:56 pm on 8 May, 2023"`` (:func:`parse_session_time`);
  every session has one and session times never decrease; a date without a session is allowed
  (locomo10 has some) and not kept;
* ``events_session_N``, ``session_N_observation``, ``session_N_summary`` -- generated
  annotations, allowed and not read;
* ``qa`` -- a list of objects with ``question`` (a non-empty string), ``category`` (an int 1-5),
  ``evidence`` (a list of strings, possibly empty, not required to name turns), and the answer:
  ``answer`` (a string or an int) for categories 1-4; ``adversarial_answer`` for category 5
  (which may also have an ``answer``), and only there.

Any other field, and a key given twice in one object, is a problem. :func:`parse_conversation`
returns every problem of a file at once, each naming the file and the field, e.g.
``.../26.json: session_3[4].speaker must be 'Caroline' or 'Melanie', got 'Carol'`` or
``.../26.json: session_3[2]: 'dia_id' missing``.

LoCoMo's public ``data/locomo10.json`` holds the same conversations in one file: a JSON list of
*samples*, each an object with ``conversation`` (the fields above but ``qa``), ``qa`` beside it,
and optionally ``sample_id`` (a non-empty string, unique in the file: the conversation's name),
``event_summary``, ``observation`` and ``session_summary`` (generated annotations, not read).
:func:`parse_sample` checks one sample the same way, its problems located as
``sample 0, conversation: session_3[2]: 'dia_id' missing`` or ``sample 0: qa[1].category ...``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from .._validate import is_int, shown
from .records import CATEGORIES, MONTHS, Conversation, Question, Turn

__all__ = [
    "MONTHS",
    "SAMPLE_KEYS",
    "parse_conversation",
    "parse_document",
    "parse_sample",
    "parse_session_time",
]

_TIME = re.compile(rf"(\d{{1,2}}):(\d\d) (am|pm) on (\d{{1,2}}) ({'|'.join(MONTHS)}), (\d{{4}})")
_SESSION = re.compile(r"session_([1-9]\d*)")
_DATE = re.compile(r"session_([1-9]\d*)_date_time")
_ANNOTATION = re.compile(r"events_session_[1-9]\d*|session_[1-9]\d*_(?:observation|summary)")
_TURN_KEYS = {"speaker", "dia_id", "text", "blip_caption", "img_url", "query", "re-download"}
_QA_KEYS = {"question", "answer", "adversarial_answer", "evidence", "category"}
#: The fields of one sample of a file laid out as LoCoMo's ``data/locomo10.json``.
SAMPLE_KEYS = ("sample_id", "conversation", "qa", "event_summary", "observation", "session_summary")


def parse_session_time(text: str) -> datetime:
    """The datetime of a LoCoMo session date such as ``"1:56 pm on 8 May, 2023"``.

    The format is exactly ``H:MM am|pm on D Month, YYYY`` with an English month name, read with
    a regular expression, not ``strptime`` (whose ``%B`` and ``%p`` follow the locale); 12 am is
    midnight, 12 pm is noon. The result is naive: the files name no time zone.

    >>> parse_session_time("1:56 pm on 8 May, 2023")
    datetime.datetime(2023, 5, 8, 13, 56)
    >>> parse_session_time("12:28 am on 8 November, 2023")
    datetime.datetime(2023, 11, 8, 0, 28)

    Raises
    ------
    ValueError
        ``text`` is not a date in that format, or names no real date (``"30 February"``).
    """
    match = _TIME.fullmatch(text) if isinstance(text, str) else None
    hour = int(match.group(1)) if match else 0
    if match is None or not 1 <= hour <= 12:
        raise ValueError(f"a session date must look like '1:56 pm on 8 May, 2023', got {shown(text)}")
    hour = hour % 12 + (12 if match.group(3) == "pm" else 0)
    month = MONTHS.index(match.group(5)) + 1
    try:
        return datetime(int(match.group(6)), month, int(match.group(4)), hour, int(match.group(2)))
    except ValueError as error:
        raise ValueError(f"a session date must name a real date, got {shown(text)} ({error})") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {key!r} given twice in one object")
        result[key] = value
    return result


def parse_conversation(member: str, data: bytes) -> tuple[Conversation | None, list[str]]:
    """Check one LoCoMo JSON file (``member``, its name inside the zip) and build its record.

    Returns
    -------
    (Conversation or None, list of str)
        The conversation and ``[]`` if the file is well formed; else ``None`` and every problem
        found, each a sentence starting with ``member``.
    """
    document, problems = parse_document(member, data)
    if problems:
        return None, problems
    if not isinstance(document, dict):
        return None, [f"{member}: must hold a JSON object, got a {type(document).__name__}"]
    parser = _Parser(member, PurePosixPath(member).stem, document)
    conversation = parser.conversation()
    return (conversation if not parser.problems else None), parser.problems


def parse_document(where: str, data: bytes) -> tuple[Any, list[str]]:
    """``data`` read as UTF-8 JSON in which no object gives a key twice: ``(document, [])``, or
    ``(None, [one problem starting with where])``."""
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_unique_keys), []
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return None, [f"{where}: not UTF-8 JSON ({' '.join(str(error).split())})"]


def parse_sample(
    position: int, sample: object, name: str | None = None
) -> tuple[Conversation | None, list[str]]:
    """Check sample ``position`` of a file laid out as LoCoMo's ``data/locomo10.json`` (an object
    with :data:`SAMPLE_KEYS`) and build its record, named ``name`` (default: its ``sample_id``,
    else ``"sample <position>"``).

    Returns
    -------
    (Conversation or None, list of str)
        As :func:`parse_conversation`; each problem starts with ``sample <position>`` (and
        ``, conversation`` for the fields inside the conversation).
    """
    where = f"sample {position}"
    if not isinstance(sample, dict):
        return None, [f"{where} must be an object with conversation and qa, got {shown(sample)}"]
    problems = [f"{where}: unknown field {shown(key)}" for key in sample if key not in SAMPLE_KEYS]
    for key in ("conversation", "qa"):
        if key not in sample:
            problems.append(f"{where}: {key!r} missing")
    conversation = sample.get("conversation", {})
    usable = isinstance(conversation, dict) and "conversation" in sample
    if not isinstance(conversation, dict):
        problems.append(f"{where}: conversation must be an object, got {shown(conversation)}")
        conversation = {}
    if "qa" in conversation:
        problems.append(
            f"{where}, conversation: unknown field 'qa' (a sample's qa goes beside its conversation)"
        )
    sample_id = sample.get("sample_id")
    if "sample_id" in sample and not (isinstance(sample_id, str) and sample_id.strip()):
        problems.append(f"{where}: sample_id must be a non-empty string, got {shown(sample_id)}")
    if name is None:
        name = sample_id if isinstance(sample_id, str) and sample_id.strip() else where
    document = {**{k: v for k, v in conversation.items() if k != "qa"}, "qa": sample.get("qa", [])}
    parser = _Parser(f"{where}, conversation", name, document, qa_member=where)
    record = parser.conversation(required=usable)
    problems += parser.problems
    return (record if not problems else None), problems


class _Parser:
    """The checks of one file; ``problems`` collects one sentence per problem."""

    def __init__(
        self, member: str, name: str, document: dict[str, Any], qa_member: str | None = None
    ) -> None:
        self.member, self.name, self.document = member, name, document
        self.qa_member = member if qa_member is None else qa_member  # where the qa list is
        self.problems: list[str] = []

    def missing(self, where: str, key: str) -> None:
        self.problems.append(f"{self.member}: {where + ': ' if where else ''}{key!r} missing")

    def required(self, where: str, item: dict[str, Any], key: str, non_empty: bool = False) -> str:
        """``item[key]`` checked as a string; a missing key is named as missing."""
        if key not in item:
            self.missing(where, key)
            return ""
        return self.string(f"{where}.{key}" if where else key, item[key], non_empty)

    def problem(self, field: str, allowed: str, value: object) -> None:
        self.problems.append(f"{self.member}: {field} must be {allowed}, got {shown(value)}")

    def string(self, field: str, value: object, non_empty: bool = False) -> str:
        if isinstance(value, str) and (value.strip() or not non_empty):
            return value
        self.problem(field, "a non-empty string" if non_empty else "a string", value)
        return ""

    def conversation(self, required: bool = True) -> Conversation:
        """The record; ``required=False`` names no missing field (a sample whose conversation is
        missing or not an object, which is said once already)."""
        doc = self.document
        sessions: dict[int, list[Any]] = {}
        dates: dict[int, datetime] = {}
        for key in doc:
            if match := _SESSION.fullmatch(key):
                sessions[int(match.group(1))] = doc[key]
            elif match := _DATE.fullmatch(key):
                try:
                    dates[int(match.group(1))] = parse_session_time(doc[key])
                except ValueError as error:
                    self.problems.append(f"{self.member}: {key}: {error}")
            elif key not in ("speaker_a", "speaker_b", "qa") and not _ANNOTATION.fullmatch(key):
                self.problems.append(f"{self.member}: unknown field {shown(key)}")
        speakers = (
            self.required("", doc, "speaker_a", non_empty=True) if required else "",
            self.required("", doc, "speaker_b", non_empty=True) if required else "",
        )
        if speakers[0] and speakers[0] == speakers[1]:
            self.problem("speaker_b", "different from speaker_a", speakers[1])
        if not sessions and required:
            self.problems.append(f"{self.member}: no session_N field (a conversation needs a session)")
        times = self.session_times(sorted(sessions), dates)
        turns: list[Turn] = []
        ids: set[str] = set()
        for number in sorted(sessions):
            self.session(number, sessions[number], speakers, times.get(number), turns, ids)
        if "qa" in doc:
            qa = _Parser(self.qa_member, self.name, doc)  # its problems say where the qa list is
            questions = qa.questions(doc["qa"])
            self.problems += qa.problems
        else:
            self.missing("", "qa")
            questions = []
        return Conversation(
            name=self.name,
            speakers=speakers,
            turns=tuple(turns),
            questions=tuple(questions),
            sessions=tuple((n, times[n]) for n in sorted(sessions) if n in times),
        )

    def session_times(self, numbers: list[int], dates: dict[int, datetime]) -> dict[int, datetime]:
        times: dict[int, datetime] = {}
        for number in numbers:
            if number not in dates:
                if f"session_{number}_date_time" not in self.document:
                    self.problems.append(f"{self.member}: session_{number} has no session_{number}_date_time")
                continue
            later = [n for n in times if times[n] > dates[number]]
            if later:
                self.problems.append(
                    f"{self.member}: session_{number}_date_time ({dates[number]:%Y-%m-%d %H:%M}) is before "
                    f"session_{later[-1]}'s ({times[later[-1]]:%Y-%m-%d %H:%M}); session times must not decrease"
                )
            times[number] = dates[number]
        return times

    def session(
        self,
        number: int,
        items: object,
        speakers: tuple[str, str],
        time: datetime | None,
        turns: list[Turn],
        ids: set[str],
    ) -> None:
        field = f"session_{number}"
        if not isinstance(items, list) or not items:
            self.problem(field, "a non-empty list of turns", items)
            return
        for position, item in enumerate(items):
            where = f"{field}[{position}]"
            if not isinstance(item, dict):
                self.problem(where, "an object with speaker, dia_id and text", item)
                continue
            for key in sorted(set(item) - _TURN_KEYS):
                self.problems.append(f"{self.member}: {where} has unknown field {shown(key)}")
            speaker = self.required(where, item, "speaker")
            if speaker and speaker not in speakers:
                self.problem(f"{where}.speaker", f"{speakers[0]!r} or {speakers[1]!r}", speaker)
            dia_id = self.required(where, item, "dia_id")
            if dia_id and not re.fullmatch(rf"D{number}:[1-9]\d*", dia_id):
                self.problem(f"{where}.dia_id", f"'D{number}:<n>' (n = 1, 2, ...)", dia_id)
            elif dia_id in ids:
                self.problem(f"{where}.dia_id", "unique in the conversation", dia_id)
            ids.add(dia_id)
            text = self.required(where, item, "text")
            caption = None
            if "blip_caption" in item:
                caption = self.string(f"{where}.blip_caption", item["blip_caption"], non_empty=True)
            self.image_fields(where, item)
            if time is not None:
                image = bool(item.get("img_url"))
                turns.append(Turn(self.name, number, len(turns), dia_id, speaker, text, caption, time, image))

    def image_fields(self, where: str, item: dict[str, Any]) -> None:
        urls = item.get("img_url", [])
        if not isinstance(urls, list) or not all(isinstance(url, str) for url in urls):
            self.problem(f"{where}.img_url", "a list of strings", urls)
        if "query" in item:
            self.string(f"{where}.query", item["query"])
        if not isinstance(item.get("re-download", False), bool):
            self.problem(f"{where}.re-download", "a bool", item["re-download"])

    def answer(self, field: str, value: object) -> str:
        if is_int(value):
            return str(value)
        return self.string(field, value)

    def questions(self, items: object) -> list[Question]:
        if not isinstance(items, list):
            self.problem("qa", "a list of questions", items)
            return []
        questions = []
        for position, item in enumerate(items):
            where = f"qa[{position}]"
            if not isinstance(item, dict):
                self.problem(where, "an object with question, answer, evidence and category", item)
                continue
            for key in sorted(set(item) - _QA_KEYS):
                self.problems.append(f"{self.member}: {where} has unknown field {shown(key)}")
            text = self.required(where, item, "question", non_empty=True)
            category = item.get("category")
            if "category" not in item:
                self.missing(where, "category")
                category = 0
            elif not is_int(category) or category not in CATEGORIES:
                self.problem(f"{where}.category", "an int from 1 to 5", category)
                category = 0
            if category == 5 and "adversarial_answer" not in item:
                self.problems.append(f"{self.member}: {where} (category 5) has no adversarial_answer")
            if category in (1, 2, 3, 4):
                if "answer" not in item:
                    self.problems.append(f"{self.member}: {where} (category {category}) has no answer")
                if "adversarial_answer" in item:
                    self.problems.append(
                        f"{self.member}: {where} (category {category}) has an adversarial_answer "
                        "(only category 5 may)"
                    )
            answer = self.answer(f"{where}.answer", item["answer"]) if "answer" in item else None
            adversarial = None
            if "adversarial_answer" in item:
                adversarial = self.answer(f"{where}.adversarial_answer", item["adversarial_answer"])
            evidence = item.get("evidence")
            if "evidence" not in item:
                self.missing(where, "evidence")
                evidence = []
            elif not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
                self.problem(f"{where}.evidence", "a list of dia_id strings", evidence)
                evidence = []
            questions.append(Question(self.name, text, answer, int(category), tuple(evidence), adversarial))
        return questions
