"""Embeddings kept on disk, keyed by the model digest and the SHA-256 of each text.

Every entry carries a SHA-256 of its text key, dtype and vector bytes; an entry that fails
the check (overwritten, truncated, another dtype, another format) is recomputed and
rewritten, never returned.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .._validate import raise_problems, require_int, shown
from ..safeio import atomic_write_bytes
from .encoder import DTypeLike, MiniLMEncoder, get_encoder
from .model_files import EMBEDDING_DIM, MODEL_SHA256, ModelDigestError

__all__ = ["EmbeddingCache", "encode_cached", "text_sha256"]


def text_sha256(text: str) -> str:
    """SHA-256 hex digest of the UTF-8 encoding of ``text`` (the cache key of one text)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


SHA256_HEX = re.compile(r"[0-9a-f]{64}")
"""A model digest as the cache keys its folders by: 64 lowercase hex characters."""
CACHE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""The dtypes an entry may hold (those :class:`~forgetting.text.encoder.MiniLMEncoder` computes in)."""


class EmbeddingCache:
    """Embeddings on disk: ``<directory>/<model_sha256[:16]>-<dtype>/<ab>/<text_sha256>.emb``.

    One file per distinct text, keyed by the model digest (and dtype) and the SHA-256 of the
    text's UTF-8 bytes. A file is one header line and the vector's little-endian bytes::

        forgetting-embedding 2 <dtype> <dimension> <text_sha256> <checksum>\\n<vector bytes>

    where ``checksum`` is the SHA-256 of ``"<text_sha256> <dtype> <dimension>\\n"`` followed by
    the vector bytes. An entry is returned only if the header names this text, dtype and
    dimension, the checksum matches, and the vector is finite with unit norm; anything else
    (bit rot, a file overwritten with zeros, a truncated file, another dtype or version, the
    old ``.npy`` format) counts as a miss: the vector is recomputed and the entry rewritten. Each file is
    written to a temporary file in the same folder and moved into place with
    :func:`os.replace` (:func:`forgetting.safeio.atomic_write_bytes`), so readers never see a
    partial file and concurrent writers are safe.
    A cached vector is returned bit for bit as first computed, and one recomputed on the same
    machine has the same bits: the encoder's vector for a text depends only on the text, not
    on the texts missing with it (:meth:`~forgetting.text.encoder.MiniLMEncoder.encode`).

    Parameters
    ----------
    directory : path
        Root folder of the cache (created when needed).
    encoder : MiniLMEncoder, optional
        Encoder for missing texts; default :func:`~forgetting.text.encoder.get_encoder`
        (built lazily, so a fully cached call never loads the model).
    model_sha256 : str, optional
        Key when no encoder is given: 64 lowercase hex characters; default
        :data:`~forgetting.text.model_files.MODEL_SHA256`.
    dtype : numpy float dtype, optional
        Dtype when no encoder is given: float32 (default) or float64.

    Raises
    ------
    ValueError
        ``model_sha256`` is not a SHA-256 hex digest (so no key can name a folder outside
        ``directory``) or ``dtype`` is not float32/float64, both at once.

    Attributes
    ----------
    hits, misses : int
        Texts read from the cache, and texts (re)computed, since construction.
    """

    MAGIC = "forgetting-embedding"
    #: 2 since the float64 encoder computes every text's tokens as columns of one matrix product
    #: (:func:`~forgetting.text.layers.encoder_columns_`), which changed the last bits of a few
    #: vectors: an entry of version 1 is a miss, recomputed, so a cache never mixes the two.
    VERSION = 2
    SUFFIX = ".emb"
    #: a valid entry is a unit vector; this only rejects garbage, it never tests accuracy
    NORM_TOLERANCE = 1e-3

    def __init__(
        self,
        directory: str | os.PathLike[str],
        encoder: MiniLMEncoder | None = None,
        *,
        model_sha256: str | None = None,
        dtype: DTypeLike | None = None,
    ) -> None:
        root = Path(directory)
        if encoder is not None:
            digest, kind = encoder.model_sha256, encoder.dtype
        else:
            digest = MODEL_SHA256 if model_sha256 is None else model_sha256
            try:
                kind = np.dtype(np.float32 if dtype is None else dtype)
            except TypeError:
                kind = None
        problems = [
            None
            if isinstance(digest, str) and SHA256_HEX.fullmatch(digest)
            else f"model_sha256 must be 64 lowercase hex characters (a SHA-256 digest), got {shown(digest)}",
            None
            if kind is not None and kind in CACHE_DTYPES
            else f"dtype must be float32 or float64, got {shown(dtype if encoder is None else kind)}",
        ]
        raise_problems(problems)
        assert kind is not None
        name = f"{digest[:16]}-{kind.name}"
        if Path(name).name != name or Path(name).is_absolute():  # pragma: no cover - hex cannot be a path
            raise ValueError(f"the cache folder must be one folder inside {root}, got {shown(name)}")
        self.root = root
        self._encoder = encoder
        self.model_sha256 = digest
        self.dtype = kind
        self.directory = root / name
        self.hits = 0
        self.misses = 0

    @property
    def encoder(self) -> MiniLMEncoder:
        """The encoder for missing texts (the shared one, built on first use, if none was given).

        Raises
        ------
        ModelDigestError
            The shared encoder's model digest is not the one this cache is keyed by.
        """
        if self._encoder is None:
            self._encoder = get_encoder(self.dtype)
            if self._encoder.model_sha256 != self.model_sha256:
                raise ModelDigestError("cache keyed by a different model digest than the encoder")
        return self._encoder

    def path_for(self, text: str) -> Path:
        """File of ``text``'s entry: ``<directory>/<key[:2]>/<key>.emb``, ``key = text_sha256(text)``."""
        key = text_sha256(text)
        return self.directory / key[:2] / f"{key}{self.SUFFIX}"

    def _checksum(self, key: str, payload: bytes) -> str:
        digest = hashlib.sha256(f"{key} {self.dtype.name} {EMBEDDING_DIM}\n".encode("ascii"))
        digest.update(payload)
        return digest.hexdigest()

    def _encode_entry(self, key: str, vector: np.ndarray) -> bytes:
        values = np.asarray(vector, dtype=self.dtype)
        if values.shape != (EMBEDDING_DIM,):
            raise ValueError(f"expected a vector of shape ({EMBEDDING_DIM},), got {values.shape}")
        payload = values.astype(self.dtype.newbyteorder("<"), copy=False).tobytes()
        header = (
            f"{self.MAGIC} {self.VERSION} {self.dtype.name} {EMBEDDING_DIM} {key} "
            f"{self._checksum(key, payload)}\n"
        )
        return header.encode("ascii") + payload

    def _decode_entry(self, key: str, data: bytes) -> np.ndarray | None:
        """The vector stored in ``data`` for text key ``key``, or ``None`` if it fails any check."""
        head, newline, payload = data.partition(b"\n")
        if not newline:
            return None
        try:
            fields = head.decode("ascii").split(" ")
        except UnicodeDecodeError:
            return None
        expected = [self.MAGIC, str(self.VERSION), self.dtype.name, str(EMBEDDING_DIM), key]
        if len(fields) != 6 or fields[:5] != expected:
            return None
        if len(payload) != EMBEDDING_DIM * self.dtype.itemsize:
            return None
        if fields[5] != self._checksum(key, payload):
            return None
        vector = np.frombuffer(payload, dtype=self.dtype.newbyteorder("<")).astype(self.dtype)
        if (
            not np.all(np.isfinite(vector))
            or abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) > self.NORM_TOLERANCE
        ):
            return None
        return vector

    def get(self, text: str) -> np.ndarray | None:
        """Cached vector of ``text``, or ``None`` if absent or if the entry fails its checks."""
        path = self.path_for(text)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        return self._decode_entry(path.stem, data)

    def put(self, text: str, vector: np.ndarray) -> None:
        """Store ``vector`` for ``text`` atomically, with its checksum."""
        path = self.path_for(text)
        data = self._encode_entry(path.stem, vector)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, data)

    def encode(self, texts: str | Iterable[str], batch_size: int = 32) -> np.ndarray:
        """Embeddings of ``texts`` (``(n, 384)``), computing and storing only the missing ones.

        Every text is checked (``TypeError`` unless a ``str``, as the encoder) and
        ``batch_size`` too (``ValueError`` unless an int >= 1) before anything is read or
        counted.
        """
        if isinstance(texts, str):
            texts = [texts]
        items = list(texts)
        for text in items:
            if not isinstance(text, str):
                raise TypeError(f"expected str, got {type(text).__name__}")
        require_int("batch_size", batch_size, minimum=1, allow_numpy=True)
        out = np.empty((len(items), EMBEDDING_DIM), dtype=self.dtype)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(items):
            if text in missing:
                missing[text].append(i)
                continue
            vector = self.get(text)
            if vector is None:
                missing[text] = [i]
            else:
                out[i] = vector
                self.hits += 1
        if missing:
            todo = list(missing)
            vectors = self.encoder.encode(todo, batch_size=batch_size)
            for text, vector in zip(todo, vectors):
                self.put(text, vector)
                out[missing[text]] = vector
            self.misses += len(todo)
        return out


def encode_cached(
    texts: str | Iterable[str],
    cache_dir: str | os.PathLike[str],
    *,
    encoder: MiniLMEncoder | None = None,
    batch_size: int = 32,
) -> np.ndarray:
    """Embed ``texts`` through an :class:`EmbeddingCache` rooted at ``cache_dir``.

    Same as ``EmbeddingCache(cache_dir, encoder=encoder).encode(texts, batch_size)``.
    """
    return EmbeddingCache(cache_dir, encoder=encoder).encode(texts, batch_size=batch_size)
