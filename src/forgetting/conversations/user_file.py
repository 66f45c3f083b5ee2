"""Conversations of the reader's own, in LoCoMo's layout, checked and loaded (:func:`load_user_file`).

``forgetting run real-conversations -p data PATH`` reruns the real-conversation chapter on such a
file instead of the pinned LoCoMo zip. The file is one of

* a ``.json`` file laid out as LoCoMo's public ``data/locomo10.json``: a non-empty JSON list of
  samples, each an object with ``conversation`` (``speaker_a``, ``speaker_b``, ``session_N``
  lists of turns with ``speaker``, ``dia_id`` such as ``D1:3`` and ``text``, and
  ``session_N_date_time`` such as ``"1:56 pm on 8 May, 2023"``), ``qa`` beside it (a list of
  ``question``, ``answer``, ``evidence`` as a list of ``dia_id`` strings and ``category`` 1-5) and
  optionally ``sample_id``, the conversation's name (:func:`~.schema.parse_sample` says what is
  allowed, field by field);
* a ``.zip`` file of conversation files as the pinned ``locomo10.zip`` stores them: every member
  whose name ends in ``.json`` is one conversation (:func:`~.schema.parse_conversation`), named
  after the member's name without ``.json`` and read in the natural order of the names
  (``2.json`` before ``10.json``), in whatever folder of the zip it is. Other members are not
  read: folder entries, and members with a path part that starts with ``.`` or is ``__MACOSX``.

The file must be a regular file of at most :data:`~.source.MAX_BYTES` bytes and a zip's
conversation files hold at most :data:`MAX_UNZIPPED` bytes together (refused before they are
read). Every problem of the file's content is reported at once, each with where it is (a
member's name, or ``sample N`` and the field), in one ``ValueError`` naming the file (the first
:data:`~.locomo.MAX_PROBLEMS`, then how many more). Nothing here compares the file with the
pinned LoCoMo (no digest, no list of members): the chapter computes on it and never publishes
the run, nor compares it with the published results.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from .._validate import raise_problems, shown
from .locomo import raise_format_problems
from .records import Conversation
from .schema import parse_conversation, parse_document, parse_sample
from .source import MAX_BYTES, open_regular

__all__ = ["MAX_UNZIPPED", "SUFFIXES", "choose", "load_user_file"]

#: The file endings a file of one's own may have.
SUFFIXES = (".json", ".zip")
#: The most bytes a zip's conversation files may hold together, unzipped (64 MiB, about 25 times
#: locomo10's 2.5 MB): a zip that would unpack to more is refused before a member is read.
MAX_UNZIPPED = 4 * MAX_BYTES

_FORMAT = (
    "a .json file laid out as LoCoMo's data/locomo10.json, or a .zip of conversation files as "
    "locomo10.zip stores them"
)


def load_user_file(path: str | os.PathLike[str]) -> list[Conversation]:
    """The conversations of the file at ``path``, in the file's order (see the module docstring).

    Raises
    ------
    FileNotFoundError
        Nothing at ``path``.
    ValueError
        ``path`` not a path, not ending in ``.json`` or ``.zip``, not a regular file (a FIFO, a
        device, a folder) or too large; a zip that cannot be read; the content not in the
        format, with every problem found; no conversation in the file; two with the same name.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise_problems([f"path must be a path, got {shown(path)}"])
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path}: must be {_FORMAT}; got a name ending in {shown(suffix or path.name)}")
    with open_regular(path, "data") as handle:
        data = handle.read(MAX_BYTES + 1)  # at most the limit, even if the file grew since it was opened
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: more than {MAX_BYTES} bytes; refusing it")
    conversations, problems = _from_zip(path, data) if suffix == ".zip" else _from_json(data)
    names: dict[str, str] = {}
    for where, conversation in conversations:
        if conversation.name in names:
            problems.append(
                f"{where}: its name {conversation.name!r} is the name of {names[conversation.name]} too "
                "(each conversation needs its own)"
            )
        names.setdefault(conversation.name, where)
    raise_format_problems(path, problems)
    if not conversations:
        raise ValueError(f"{path}: holds no conversation; it must be {_FORMAT}")
    return [conversation for _, conversation in conversations]


def _natural(name: str) -> list[str | int]:
    """A sort key that orders the digits in ``name`` by their value (``2`` before ``10``)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _read_here(name: str) -> bool:
    """A zip member that holds a conversation: a ``.json`` file outside hidden folders."""
    parts = PurePosixPath(name).parts
    return (
        not name.endswith("/")
        and name.lower().endswith(".json")
        and not any(part.startswith(".") or part == "__MACOSX" for part in parts)
    )


def _from_zip(path: Path, data: bytes) -> tuple[list[tuple[str, Conversation]], list[str]]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as error:
        raise ValueError(
            f"{path}: not a readable zip ({' '.join(str(error).split())}); refusing it"
        ) from None
    with archive:
        infos = sorted(
            (i for i in archive.infolist() if _read_here(i.filename)), key=lambda i: _natural(i.filename)
        )
        unzipped = sum(info.file_size for info in infos)
        if unzipped > MAX_UNZIPPED:
            raise ValueError(
                f"{path}: its conversation files hold {unzipped} bytes unzipped, over the limit of "
                f"{MAX_UNZIPPED}; refusing it"
            )
        if not infos:
            raise ValueError(f"{path}: holds no .json member; it must be {_FORMAT}")
        conversations, problems = [], []
        for info in infos:
            try:
                member = archive.read(info)  # checks the CRC; at most the size the zip declares
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as error:
                problems.append(f"{info.filename}: cannot be read ({' '.join(str(error).split())})")
                continue
            conversation, found = parse_conversation(info.filename, member)
            problems += found
            if conversation is not None:
                conversations.append((info.filename, conversation))
    return conversations, problems


def _from_json(data: bytes) -> tuple[list[tuple[str, Conversation]], list[str]]:
    document, problems = parse_document("the file", data)
    if problems:
        return [], problems
    if not isinstance(document, list):
        single = " (one sample? put it in a list: [ ... ])" if isinstance(document, dict) else ""
        kind = "an object" if isinstance(document, dict) else f"a {type(document).__name__}"
        return [], [
            f"the file must hold a JSON list of samples, as LoCoMo's data/locomo10.json, got {kind}{single}"
        ]
    conversations = []
    for position, sample in enumerate(document):
        conversation, found = parse_sample(position, sample)
        problems += found
        if conversation is not None:
            conversations.append((f"sample {position}", conversation))
    return conversations, problems


def choose(conversations: Sequence[Conversation], positions: Sequence[int] | None) -> list[Conversation]:
    """The conversations at ``positions`` (in that order), or all of them for ``None``.

    ``ValueError`` for a position that the file does not have (the message says how many it has).
    """
    if positions is None:
        return list(conversations)
    outside = [p for p in positions if not 0 <= p < len(conversations)]
    if outside:
        raise ValueError(
            f"conversations={list(positions)}: the file holds {len(conversations)} conversation(s), "
            f"positions 0 to {len(conversations) - 1}; {outside} name none"
        )
    return [conversations[p] for p in positions]
