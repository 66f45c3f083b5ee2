"""LoCoMo turns and questions embedded once, cached, and compared by rounded cosine.

Every text (a turn's :attr:`~.records.Turn.retrieval_text`, a question as written) is embedded
with the genuine all-MiniLM-L6-v2 (:class:`~forgetting.text.encoder.MiniLMEncoder`) in **float64**,
through the checksummed :class:`~forgetting.text.cache.EmbeddingCache`. Experiment 5 ranks on
float32 vectors; here the same encoder runs in float64 because a conversation has hundreds of
thousands of cosines that decide retrievals, and a float32 vector's last digits depend on the
CPU's BLAS kernel (about 1e-7 relative): an estimated share of about 2e-4 of the cosines lie
that close to a boundary of three decimals. In float64 two kernels were measured to differ by at
most 3.1e-16 in any component (Haswell against Prescott, two conversations), and
:func:`fragile_pairs` counts the cosines a relative change of :data:`RELATIVE_CHANGE` could
move across a rounding boundary (the chapter publishes the count).

Missing texts are encoded in parallel, in chunks of similar token length (so that the encoder
stacks equal-length texts), by the given executor, or, when that is :class:`~..executor.InProcess`,
by one worker process per core (:func:`~..executor.on_every_core`; why: :func:`encode_missing`).
A text's vector depends only on the text (:meth:`~forgetting.text.encoder.MiniLMEncoder.encode`),
so the result does not depend on the executor, the thread count or how the texts are chunked.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...conversations.records import Conversation
from ...text.cache import EmbeddingCache
from ...text.encoder import MiniLMEncoder, get_encoder
from ...text.similarity import COSINE_DECIMALS, fragile_rounding, rounded_cosines
from ..executor import Executor, on_every_core

__all__ = [
    "DTYPE",
    "RELATIVE_CHANGE",
    "ConversationVectors",
    "embed_conversations",
    "encode_missing",
    "fragile_pairs",
    "token_counts",
]

#: The dtype every LoCoMo vector is computed and cached in.
DTYPE = np.dtype(np.float64)
#: Relative change of every float64 vector component that no rounded cosine may notice: far above
#: what two BLAS kernels were seen to differ by (3.1e-16 at most, absolute, in a unit vector).
RELATIVE_CHANGE = 1e-12
#: Texts per task handed to the executor (small enough to balance two workers, large enough
#: that the encoder stacks many texts of each length).
CHUNK_TEXTS = 200


@dataclass(frozen=True)
class ConversationVectors:
    """One conversation's vectors and the rounded cosines retrieval ranks on.

    Attributes
    ----------
    name : str
    turns : numpy.ndarray
        ``(n_turns, 384)`` float64 unit rows, in turn order.
    questions : numpy.ndarray
        ``(n_questions, 384)``, in the file's question order.
    turn_cosines : numpy.ndarray
        ``(n_turns, n_turns)`` cosines rounded to ``COSINE_DECIMALS`` places.
    question_cosines : numpy.ndarray
        ``(n_questions, n_turns)``, rounded the same way.
    """

    name: str
    turns: np.ndarray
    questions: np.ndarray
    turn_cosines: np.ndarray
    question_cosines: np.ndarray


def _encode_chunk(cache_dir: str, texts: Sequence[str]) -> int:
    """Encode ``texts`` into the cache at ``cache_dir`` (runs in a worker); how many were new."""
    cache = EmbeddingCache(cache_dir, dtype=DTYPE)
    cache.encode(list(texts))
    return cache.misses


def _length_chunks(texts: Sequence[str], encoder: MiniLMEncoder, size: int) -> list[list[str]]:
    """``texts`` by token count, longest first, cut into chunks of ``size``: the long chunks start
    first and the short ones fill in at the end, and each chunk holds texts of a few lengths, which
    the encoder stacks (:meth:`~forgetting.text.encoder.MiniLMEncoder.encode`)."""
    counts = [len(ids) for ids in encoder.token_ids(texts)]
    ordered = [text for _, text in sorted(zip(counts, texts), key=lambda pair: (-pair[0], pair[1]))]
    return [ordered[start : start + size] for start in range(0, len(ordered), size)]


def encode_missing(
    texts: Sequence[str], cache_dir: str | os.PathLike[str], executor: Executor | None = None
) -> EmbeddingCache:
    """Encode the ``texts`` missing from the float64 cache at ``cache_dir``, in chunks of similar
    token counts (:func:`_length_chunks`); return the cache, which then holds every one of them.

    The chunks go to :func:`~..executor.on_every_core` of ``executor``: in-process (``None`` or
    :class:`~..executor.InProcess`) with more than one chunk, a
    :class:`~..executor.ProcessPool` of one worker per core (at most one per chunk). On
    OpenBLAS's own threads (in-process, all cores by default) the encoder lost most of its speed
    when other jobs shared the cores, as when the book's chapters run side by side (measured
    with 2 threads on 2 busy cores, an earlier encoder: 6.2 LoCoMo texts per CPU-second against
    27 on one thread). A pool worker runs its BLAS on one thread (joblib's loky sets
    ``OPENBLAS_NUM_THREADS`` to cores // workers), and the workers encode different texts side
    by side. A single chunk stays in this process: a worker would first load the model. The
    thread count changes no bit of a vector."""
    root = str(Path(cache_dir))
    cache = EmbeddingCache(root, dtype=DTYPE)
    missing = [text for text in dict.fromkeys(texts) if cache.get(text) is None]
    if missing:
        chunks = _length_chunks(missing, get_encoder(DTYPE), CHUNK_TEXTS)
        on_every_core(executor, len(chunks)).map(functools.partial(_encode_chunk, root), chunks)
    return cache


def embed_conversations(
    conversations: Sequence[Conversation],
    cache_dir: str | os.PathLike[str],
    executor: Executor | None = None,
) -> list[ConversationVectors]:
    """Vectors and rounded cosines of every turn and question, computed once and cached.

    Parameters
    ----------
    conversations : sequence of Conversation
    cache_dir : path
        Root of the embedding cache (git-ignored: vectors of LoCoMo text are never committed).
    executor : Executor, optional
        What encodes the missing texts (default: this process).

    Returns
    -------
    list of ConversationVectors
        In the order of ``conversations``.
    """
    texts = {t.retrieval_text: None for c in conversations for t in c.turns}
    texts.update({q.question: None for c in conversations for q in c.questions})
    cache = encode_missing(list(texts), cache_dir, executor)
    out = []
    for conversation in conversations:
        turns = cache.encode([t.retrieval_text for t in conversation.turns])
        questions = cache.encode([q.question for q in conversation.questions])
        out.append(
            ConversationVectors(
                name=conversation.name,
                turns=turns,
                questions=questions,
                turn_cosines=rounded_cosines(turns, turns),
                question_cosines=rounded_cosines(questions, turns),
            )
        )
    if cache.misses:
        raise RuntimeError(f"{cache.misses} texts were still missing from the cache after encoding")
    return out


def fragile_pairs(vectors: ConversationVectors, relative: float = RELATIVE_CHANGE) -> tuple[int, int]:
    """How many turn-turn (distinct, unordered) and question-turn cosines a relative change of
    ``relative`` in every component could move to another rounded value.

    For unit ``u``, ``v`` with every component changed by a factor within ``1 +- eps`` a cosine
    moves by at most ``4 eps / (1 - eps)^2`` (:func:`~forgetting.text.similarity.cosine_change_bound`
    with its float32 term dropped: these vectors are float64).
    """
    eps = float(relative)
    tolerance = 4 * eps / (1 - eps) ** 2
    raw_tt = vectors.turns @ vectors.turns.T
    upper = np.triu_indices(raw_tt.shape[0], k=1)
    turn_pairs = int(fragile_rounding(raw_tt[upper], tolerance, COSINE_DECIMALS).sum())
    question_pairs = int(
        fragile_rounding(vectors.questions @ vectors.turns.T, tolerance, COSINE_DECIMALS).sum()
    )
    return turn_pairs, question_pairs


def token_counts(conversation: Conversation, encoder: MiniLMEncoder) -> np.ndarray:
    """Tokens of each turn's retrieval text (what the store keeps), [CLS] and [SEP] not counted.

    Counted by the model's own tokenizer (:meth:`~forgetting.text.encoder.MiniLMEncoder.token_ids`).

    Raises ``ValueError`` if a text reaches the encoder's truncation length (its count would be
    the truncated one); no LoCoMo turn does.
    """
    lengths = np.array(
        [len(ids) for ids in encoder.token_ids([t.retrieval_text for t in conversation.turns])]
    )
    if lengths.size and lengths.max() >= encoder.max_seq_length:
        raise ValueError(
            f"a turn of conversation {conversation.name} reaches {encoder.max_seq_length} tokens"
        )
    return (lengths - 2).astype(np.int64)
