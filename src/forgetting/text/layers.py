"""BERT's layers on one sentence at a time, laid out so that nothing else can change its bits.

Why a batch changed a sentence's vector: the last bits OpenBLAS gives a row of a matrix
product depend on the product's shape, i.e. on where the row falls in the blocks and edge
micro-kernels it is computed with and in the split between threads. In a ``(tokens of all
sentences, features) @ weight`` product a sentence's rows move when other sentences (or
padding) come with them: "delta" alone and in ``["delta", "epsilon"]`` (3 tokens each, no
padding) differed in 373 of 384 components on one thread.

What this module does instead:

* every array belongs to one sentence and has a shape fixed by its token count ``L``;
  activations are *feature-major*, ``(features, L)``, and every product with a weight is
  ``weight (out, in) @ x (in, L)`` (torch's own ``(out, in)`` layout on the left). Measured:
  in this orientation OpenBLAS (Haswell and Prescott kernels, float32 and float64, 1 to 16
  threads) gives the same bits whatever its thread count, the other one,
  ``x (L, in) @ weight (in, out)``, does not; ``tests/test_encoder.py`` checks 1 and 2 threads;
* the attention products (``L x L`` per head) run on OpenBLAS only while it keeps them on one
  thread (:data:`BLAS_ONE_THREAD_WORK`); longer sentences use numpy's own loops
  (:func:`numpy.einsum`), which no thread count reaches;
* every buffer starts on a 64-byte boundary (:data:`ALIGNMENT`), so even alignment is the
  same for a sentence alone and in company.

LayerNorm and GELU treat each token (column) on its own, attention each head. The bits still
depend on the BLAS kernel (chosen by CPU, or ``OPENBLAS_CORETYPE``): see
:mod:`forgetting.text.similarity`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import erf  # type: ignore[import-untyped, unused-ignore]

__all__ = [
    "ALIGNMENT",
    "BLAS_ONE_THREAD_WORK",
    "LayerWeights",
    "Scratch",
    "aligned_empty",
    "encoder_layers_",
    "gelu_erf_",
    "layer_norm_",
    "linear_",
    "self_attention_",
    "sentence_arrays",
]

#: Byte boundary every work buffer starts on (a cache line; an AVX-512 register).
ALIGNMENT = 64

#: Multiply-adds below which OpenBLAS computes a matrix product on one thread: it runs one of
#: ``m n k`` multiply-adds on at most ``floor(m n k / 2**18)`` threads (its default
#: ``GEMM_MULTITHREAD_THRESHOLD``), and an attention product it splits gets other last bits
#: than on one thread (measured from ``L = 128`` on). An attention product, ``L * L * head_dim``
#: multiply-adds, goes to BLAS only below this (``L <= 127`` for 32-feature heads); a longer
#: sentence's use :func:`numpy.einsum` (numpy's own loops: no BLAS, no threads).
BLAS_ONE_THREAD_WORK = 2**19

#: One BERT layer's weights as :class:`~forgetting.text.encoder.MiniLMEncoder` keeps them:
#: ``(weight (out, in), bias (out, 1))`` for ``qkv``, ``attn_out``, ``ffn_in``, ``ffn_out``,
#: ``(weight (n, 1), bias (n, 1))`` for the LayerNorms ``attn_ln``, ``ffn_ln``.
LayerWeights = Mapping[str, tuple[np.ndarray, np.ndarray]]


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray:
    """Uninitialised C-contiguous array whose data starts on an :data:`ALIGNMENT`-byte boundary.

    Parameters
    ----------
    shape : tuple of int
        Shape of the array.
    dtype : numpy.dtype
        A dtype whose item size divides :data:`ALIGNMENT`.

    Returns
    -------
    numpy.ndarray
        A view into a slightly larger allocation.
    """
    size = math.prod(shape)
    raw = np.empty(size + ALIGNMENT // dtype.itemsize, dtype)
    skip = (-raw.ctypes.data % ALIGNMENT) // dtype.itemsize
    return raw[skip : skip + size].reshape(shape)


def sentence_arrays(lengths: Sequence[int], width: int, dtype: np.dtype[Any]) -> list[np.ndarray]:
    """One C-contiguous ``(width, length)`` array per sentence, each on an aligned boundary.

    The arrays are consecutive blocks of one allocation, each block rounded up to a multiple of
    :data:`ALIGNMENT` bytes, so an array is laid out the same wherever its sentence comes.
    """
    per_line = ALIGNMENT // dtype.itemsize
    sizes = [-(-width * n // per_line) * per_line for n in lengths]
    bounds = np.cumsum([0, *sizes]).tolist()
    flat = aligned_empty((bounds[-1],), dtype)
    return [flat[a : a + width * n].reshape(width, n) for a, n in zip(bounds, lengths)]


class Scratch:
    """Named work buffers, reused from one sentence to the next.

    :meth:`get` returns a C-contiguous view, starting on an :data:`ALIGNMENT`-byte boundary, of
    the first ``prod(shape)`` elements of the named buffer (grown when too small). Its contents
    are whatever the previous user left; every kernel overwrites a view in full before reading it.

    Parameters
    ----------
    dtype : numpy.dtype
        Dtype of every buffer.
    """

    def __init__(self, dtype: np.dtype[Any]) -> None:
        self.dtype = dtype
        self._flat: dict[str, np.ndarray] = {}

    def get(self, name: str, *shape: int) -> np.ndarray:
        """A ``shape`` view of buffer ``name`` (uninitialised)."""
        size = math.prod(shape)
        flat = self._flat.get(name)
        if flat is None or flat.size < size:
            flat = self._flat[name] = aligned_empty((size,), self.dtype)
        return flat[:size].reshape(shape)


def linear_(weight: np.ndarray, bias: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out = weight @ x + bias``: a dense layer on feature-major ``x (in, L)``, into ``out (out, L)``.

    ``weight`` is torch's ``(out, in)``, ``bias`` a column ``(out, 1)``; one BLAS gemm.
    """
    np.matmul(weight, x, out=out)
    out += bias
    return out


def layer_norm_(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float, scratch: np.ndarray
) -> np.ndarray:
    """LayerNorm of each token (column) of feature-major ``x (n, L)``, in place.

    ``weight``, ``bias``: columns ``(n, 1)``; ``scratch``: same shape as ``x``, clobbered.
    """
    x -= x.mean(axis=0)
    var = np.square(x, out=scratch).mean(axis=0)
    var += eps
    x /= np.sqrt(var)
    x *= weight
    x += bias
    return x


def gelu_erf_(x: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Exact GELU ``0.5 x (1 + erf(x / sqrt 2))`` (BERT's ``hidden_act = "gelu"``), in place."""
    t = np.multiply(x, x.dtype.type(1.0 / np.sqrt(2.0)), out=scratch)
    erf(t, out=t)
    t += 1.0
    x *= t
    x *= 0.5  # exact (power of two): same value as 0.5 * x * (1 + erf)
    return x


def self_attention_(qkv: np.ndarray, num_heads: int, out: np.ndarray, scratch: Scratch) -> np.ndarray:
    """Multi-head scaled dot-product self-attention of one sentence, every token attending to all.

    Parameters
    ----------
    qkv : numpy.ndarray
        Feature-major ``(3 * hidden, L)``: the query, key and value projections (bias
        included) stacked, each ``num_heads`` heads of ``hidden / num_heads`` features.
        Left unchanged.
    num_heads : int
        Number of attention heads.
    out : numpy.ndarray
        Feature-major ``(hidden, L)``, C-contiguous: receives the heads' outputs stacked (the
        input of BERT's attention output projection).
    scratch : Scratch
        Work buffer ``scores`` (taken at this sentence's shape).

    Returns
    -------
    numpy.ndarray
        ``out``.
    """
    width, length = qkv.shape
    head_dim = width // (3 * num_heads)
    dt = qkv.dtype
    q, k, v = qkv.reshape(3, num_heads, head_dim, length)  # views, each (heads, head_dim, L)
    scores = scratch.get("scores", num_heads, length, length)  # (heads, query, key)
    context = out.reshape(num_heads, head_dim, length)
    blas = length * length * head_dim < BLAS_ONE_THREAD_WORK
    if blas:
        np.matmul(q.transpose(0, 2, 1), k, out=scores)
    else:
        np.einsum("hdq,hdk->hqk", q, k, out=scores)
    scores *= dt.type(1.0 / np.sqrt(head_dim))
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    # Subnormal probabilities (< 1.2e-38 in float32) would make the next gemm ~100x slower on
    # x86; they change nothing at float precision, so flush them to zero.
    scores[scores < np.finfo(dt).tiny] = 0.0
    if blas:
        np.matmul(v, scores.transpose(0, 2, 1), out=context)
    else:
        np.einsum("hdk,hqk->hdq", v, scores, out=context)
    return out


def encoder_layers_(
    hidden: list[np.ndarray], layers: Sequence[LayerWeights], num_heads: int, eps: float, scratch: Scratch
) -> list[np.ndarray]:
    """BERT's encoder layers applied to several sentences, each alone, in place in ``hidden``.

    Parameters
    ----------
    hidden : list of numpy.ndarray
        One feature-major ``(hidden, L)`` C-contiguous array per sentence (its embeddings after
        LayerNorm, :func:`sentence_arrays`); replaced by its last hidden state.
    layers : sequence of mapping
        The layers' weights, in order (:data:`LayerWeights`).
    num_heads : int
        Attention heads.
    eps : float
        LayerNorm epsilon.
    scratch : Scratch
        Work buffers, reused sentence after sentence.

    Returns
    -------
    list of numpy.ndarray
        ``hidden``.

    Notes
    -----
    The sentences go side by side, one weight matrix at a time, so a weight is read from
    memory once for all of them rather than once per sentence. But every numpy and BLAS call
    gets one sentence's arrays, of shapes fixed by its own length and aligned the same way
    wherever it comes: a sentence's result depends only on the sentence, and how many go
    together changes the speed and the memory, never a bit.
    """
    if not hidden or not layers:
        return hidden
    dt = hidden[0].dtype
    lengths = [x.shape[1] for x in hidden]
    width = hidden[0].shape[0]
    h, other, ctx = hidden, sentence_arrays(lengths, width, dt), sentence_arrays(lengths, width, dt)
    qkv = sentence_arrays(lengths, layers[0]["qkv"][0].shape[0], dt)
    inner = sentence_arrays(lengths, layers[0]["ffn_in"][0].shape[0], dt)
    for layer in layers:
        for x, y in zip(h, qkv):
            linear_(*layer["qkv"], x, y)
        for y, c in zip(qkv, ctx):
            self_attention_(y, num_heads, c, scratch)
        for c, x, y in zip(ctx, h, other):
            linear_(*layer["attn_out"], c, y)
            y += x
            layer_norm_(y, *layer["attn_ln"], eps, scratch.get("h", *y.shape))
        h, other = other, h
        for x, y in zip(h, inner):
            linear_(*layer["ffn_in"], x, y)
            gelu_erf_(y, scratch.get("inner", *y.shape))
        for z, x, y in zip(inner, h, other):
            linear_(*layer["ffn_out"], z, y)
            y += x
            layer_norm_(y, *layer["ffn_ln"], eps, scratch.get("h", *y.shape))
        h, other = other, h  # two swaps a layer: the state is back in `hidden`
    return hidden
