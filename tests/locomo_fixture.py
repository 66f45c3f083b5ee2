"""A tiny LoCoMo-format zip, written for the tests (invented; nothing is taken from the data).

Two conversations in the folder the real zip uses:

* ``1`` -- Ines and Tomas, sessions 1-3 (session 2 has an image turn), and a date for a
  session 4 that is not there (locomo10 has such dates too); five questions, one per category,
  an int answer, a category-5 question with an ``adversarial_answer``, and an evidence id that
  names no turn (``D9:9``).
* ``2`` -- Aiko and Bram, sessions 1, 2 and 10 (given out of order in the file, to check the
  numeric order), no annotations, one question with empty evidence.

:func:`write_fixture` writes the zip (deterministically: fixed member dates and order) and
returns its path, digest and members; ``edit`` changes the documents first.
"""

from __future__ import annotations

import copy
import hashlib
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FOLDER = "data/multimodal_dialog/locomo10_v2/"
MEMBERS = (f"{FOLDER}1.json", f"{FOLDER}2.json")

_ONE: dict[str, Any] = {
    "speaker_a": "Ines",
    "speaker_b": "Tomas",
    "session_1_date_time": "9:05 am on 3 March, 2021",
    "session_1": [
        {"speaker": "Ines", "dia_id": "D1:1", "text": "I started growing tomatoes on the balcony."},
        {"speaker": "Tomas", "dia_id": "D1:2", "text": "Nice! Which variety?"},
        {"speaker": "Ines", "dia_id": "D1:3", "text": "Cherry ones, from my aunt's seeds."},
    ],
    "session_2_date_time": "12:40 am on 17 March, 2021",
    "session_2": [
        {
            "speaker": "Tomas",
            "dia_id": "D2:1",
            "text": "Look what I built this weekend.",
            "img_url": ["https://example.invalid/shelf.jpg"],
            "blip_caption": "a photo of a wooden shelf with plants",
            "query": "wooden plant shelf",
            "re-download": True,
        },
        {"speaker": "Ines", "dia_id": "D2:2", "text": "That would fit my tomatoes!"},
    ],
    "session_3_date_time": "6:15 pm on 2 April, 2021",
    "session_3": [
        {"speaker": "Ines", "dia_id": "D3:1", "text": "The first tomato is red."},
        {"speaker": "Tomas", "dia_id": "D3:2", "text": "Two years of trying, finally."},
    ],
    "session_4_date_time": "10:00 am on 20 April, 2021",
    "events_session_1": {"Ines": ["Ines plants tomatoes."], "Tomas": [], "date": "3 March, 2021"},
    "session_1_observation": {"Ines": [["Ines grows cherry tomatoes.", "D1:3"]]},
    "session_1_summary": "Ines and Tomas talked about tomatoes.",
    "qa": [
        {
            "question": "What does Ines grow?",
            "answer": "Cherry tomatoes",
            "evidence": ["D1:1", "D1:3"],
            "category": 1,
        },
        {
            "question": "When did Tomas build a shelf?",
            "answer": "March 2021",
            "evidence": ["D2:1"],
            "category": 2,
        },
        {"question": "How many years did it take?", "answer": 2, "evidence": ["D3:2", "D9:9"], "category": 3},
        {"question": "What is on the shelf?", "answer": "Plants", "evidence": ["D2:1"], "category": 4},
        {
            "question": "What does Tomas grow on the balcony?",
            "adversarial_answer": "Cherry tomatoes",
            "evidence": ["D1:1"],
            "category": 5,
        },
    ],
}

_TWO: dict[str, Any] = {
    "speaker_a": "Aiko",
    "speaker_b": "Bram",
    "session_10_date_time": "3:30 pm on 1 June, 2022",
    "session_10": [{"speaker": "Bram", "dia_id": "D10:1", "text": "The race is tomorrow."}],
    "session_2_date_time": "11:59 pm on 28 February, 2022",
    "session_2": [
        {"speaker": "Aiko", "dia_id": "D2:1", "text": "Did you run today?"},
        {"speaker": "Bram", "dia_id": "D2:2", "text": "Ten kilometres."},
    ],
    "session_1_date_time": "12:00 pm on 1 January, 2022",
    "session_1": [{"speaker": "Bram", "dia_id": "D1:1", "text": "New year, new running shoes."}],
    "qa": [{"question": "What do the two talk about?", "answer": "Running", "evidence": [], "category": 4}],
}


def documents() -> dict[str, dict[str, Any]]:
    """A fresh copy of the fixture's documents, by member name."""
    return {MEMBERS[0]: copy.deepcopy(_ONE), MEMBERS[1]: copy.deepcopy(_TWO)}


@dataclass(frozen=True)
class FixtureZip:
    path: Path
    sha256: str
    members: tuple[str, ...]


def write_zip(path: Path, files: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> FixtureZip:
    """Write ``files`` (name -> bytes) as a zip at ``path``, deterministically; return it with its digest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(FOLDER, date_time=(2024, 1, 1, 0, 0, 0)), b"")
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data, compression)
    return FixtureZip(path, hashlib.sha256(path.read_bytes()).hexdigest(), MEMBERS)


def write_fixture(path: Path, edit: Callable[[dict[str, dict[str, Any]]], None] | None = None) -> FixtureZip:
    """Write the fixture zip at ``path`` (after ``edit(documents)`` if given)."""
    docs = documents()
    if edit is not None:
        edit(docs)
    return write_zip(path, {name: json.dumps(doc, indent=1).encode() for name, doc in docs.items()})
