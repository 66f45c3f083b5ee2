"""The real-conversation chapter's data, prepared once: the chosen conversations, loaded and
embedded, with their turns' token counts (:func:`prepare`). Every section of the chapter reads
this one :class:`Prepared` (:mod:`.study`, :mod:`.question_study`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...conversations.locomo import load_locomo
from ...conversations.records import Conversation
from ...conversations.source import LOCOMO_MEMBERS
from ...conversations.user_file import choose, load_user_file
from ...text.encoder import get_encoder
from ..executor import Executor
from .embeddings import DTYPE, ConversationVectors, embed_conversations, token_counts

__all__ = ["Prepared", "prepare"]


@dataclass(frozen=True)
class Prepared:
    """The chosen conversations, their vectors and their turns' token counts."""

    conversations: list[Conversation]
    vectors: list[ConversationVectors]
    tokens: list[np.ndarray]
    model_sha256: str


def prepare(
    zip_path: str | os.PathLike[str],
    positions: Sequence[int] | None,
    cache_dir: str | os.PathLike[str],
    executor: Executor,
    *,
    own: bool = False,
) -> Prepared:
    """Load the conversations at ``positions`` of
    :data:`~forgetting.conversations.source.LOCOMO_MEMBERS` (``None``: all) and embed them.

    ``own``: ``zip_path`` is a file of the reader's own instead
    (:func:`~forgetting.conversations.user_file.load_user_file`: checked against the format, never
    against the pinned zip's digest), ``positions`` are positions in it, ``None`` for every
    conversation of it."""
    if own:
        conversations = choose(load_user_file(zip_path), positions)
    else:
        members = list(LOCOMO_MEMBERS) if positions is None else [LOCOMO_MEMBERS[p] for p in positions]
        conversations = load_locomo(Path(zip_path), members=members)
    vectors = embed_conversations(conversations, cache_dir, executor)
    encoder = get_encoder(DTYPE)
    return Prepared(
        conversations, vectors, [token_counts(c, encoder) for c in conversations], encoder.model_sha256
    )
