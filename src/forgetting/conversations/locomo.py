"""Loading LoCoMo (Maharana et al., ACL 2024): the zip, checked, read in memory, into records.

:func:`load_locomo` reads the zip's bytes once (a regular file of at most
:data:`~.source.MAX_BYTES`: a FIFO or a device is refused before it is read), checks their
SHA-256, opens the zip from those same bytes (nothing can change between the check and the
read, and nothing is extracted to disk), and parses every member with
:func:`~.schema.parse_conversation`. Where the zip comes from is :func:`~.source.locomo_zip`'s business::

    conversations = load_locomo(locomo_zip())
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Sequence
from pathlib import Path

from .._validate import raise_problems, shown
from .records import Conversation
from .schema import parse_conversation
from .source import (
    LOCOMO_MEMBERS,
    LOCOMO_SHA256,
    MAX_BYTES,
    digest_message,
    expected_problems,
    open_regular,
    open_zip,
)

__all__ = ["MAX_PROBLEMS", "load_locomo", "raise_format_problems"]

#: The most problems one error lists (then how many more there are): a wholly different file
#: gives a readable message, not thousands of lines of it.
MAX_PROBLEMS = 20


def load_locomo(
    path: Path, sha256: str = LOCOMO_SHA256, members: Sequence[str] = LOCOMO_MEMBERS
) -> list[Conversation]:
    """The conversations of the LoCoMo zip at ``path``, one per member, in the order of ``members``.

    Parameters
    ----------
    path : path
        The zip (e.g. from :func:`~.source.locomo_zip`).
    sha256 : str
        The digest the zip must have (default: the pinned locomo10.zip).
    members : sequence of str
        The JSON files inside the zip to read; each becomes one conversation named after it.

    Raises
    ------
    ValueError
        A bad argument (``path`` not a path, ``sha256`` not 64 hex digits, ``members`` empty).
    FileNotFoundError
        No file at ``path``.
    ValueError
        ``path`` not a regular file (a FIFO, a device such as ``/dev/zero``, a folder) or over
        :data:`~.source.MAX_BYTES` bytes (refused before it is read); a wrong digest, an
        unreadable zip, a missing member (one line naming ``path``); or schema problems, all of
        them (up to :data:`MAX_PROBLEMS`) in one message naming ``path``, each with the member
        and the field.
    """
    arguments = expected_problems(sha256, members)
    if not isinstance(path, (str, os.PathLike)):
        arguments.insert(0, f"path must be a path, got {shown(path)}")
    raise_problems(arguments)
    path = Path(path)
    with open_regular(path) as handle:
        data = handle.read(MAX_BYTES + 1)  # at most the limit, even if the file grew since it was opened
    if len(data) > MAX_BYTES:
        raise ValueError(f"{path}: more than {MAX_BYTES} bytes; refusing it")
    found = hashlib.sha256(data).hexdigest()
    if found != sha256:
        raise ValueError(digest_message(path, found, sha256))
    conversations: list[Conversation] = []
    problems: list[str] = []
    with open_zip(io.BytesIO(data), path, members) as archive:
        for member in members:
            conversation, found_problems = parse_conversation(member, archive.read(member))
            problems += found_problems
            if conversation is not None:
                conversations.append(conversation)
    raise_format_problems(path, problems)
    return conversations


def raise_format_problems(path: object, problems: Sequence[str]) -> None:
    """Raise one ``ValueError`` naming ``path`` and ``problems`` (the first :data:`MAX_PROBLEMS`,
    then how many more), on one line; nothing if there are none."""
    if problems:
        more = f"; and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
        raise ValueError(
            f"{path}: not in the LoCoMo format ({len(problems)} problem(s)): "
            + "; ".join(problems[:MAX_PROBLEMS])
            + more
        )
