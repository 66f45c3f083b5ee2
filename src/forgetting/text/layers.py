"""BERT's layers on many sentences at once, laid out so that no sentence changes another's bits.

Why a batch changed a sentence's vector: the last bits OpenBLAS gives a row of a matrix
product depend on the product's shape, i.e. on where the row falls in the blocks and edge
micro-kernels it is computed with and in the split between threads. In a ``(tokens of all
sentences, features) @ weight`` product a sentence's rows move when other sentences (or
padding) come with them: "delta" alone and in ``["delta", "epsilon"]`` (3 tokens each, no
padding) differed in 373 of 384 components on one thread.

What this module does instead. Every product with a weight is in the other orientation,
``weight (out, in) @ x (in, tokens)``: a token is a *column*. Two layouts use it.

* **Columns** (:func:`encoder_columns_`, the float64 encoder): the tokens of every sentence
  are the columns of one matrix ``(features, W)``, ``W`` padded with zero columns to a
  multiple of :data:`COLUMN_UNIT` (at least one unit: :func:`padded_width`), and each dense
  layer is one gemm over all of them. In float64, with ``W`` so padded, OpenBLAS computes a
  column with the same operations whatever the other columns and however many there are:
  measured for the model's four weight shapes with the Haswell, SkylakeX, Zen, Sandybridge
  and Prescott kernels on 1 and 2 threads (1,792 sentences of 1 to 256 tokens, alone against
  concatenated, all equal), and checked by ``tests/test_encoder.py``
  (``test_a_column_of_a_padded_product_does_not_depend_on_the_others``). Without the padding
  some columns change: 89 of 586 such sentences with the SkylakeX kernel and 2 with the others
  (on SkylakeX, in the products tested of 260 to 500 columns whose width is 4 more than a
  multiple of 8, the last 4 columns; in those of 100 to 132 such columns, none). One large product instead
  of one per sentence is what makes this layout faster (``benchmarks/bench_encoder.py``;
  CONTRIBUTING.md has the numbers).
* **Stacks** (:func:`encoder_layers_`, the float32 encoder): sentences go through the model
  in *groups* of equal token count ``L``, as one C-contiguous stack ``(B, features, L)``:
  sentence ``b`` is the block ``[b]``, exactly the array it would have alone, and
  ``numpy.matmul(weight, x (B, in, L))`` calls one gemm per sentence, of the shape it has
  alone. In float32 the Haswell and Zen kernels give a column other bits in products of other
  widths, padded or not (the same test shows it), so float32 keeps one product per sentence.

In both layouts:

* in this orientation OpenBLAS gives the same bits whatever its thread count (measured with the
  Haswell and Prescott kernels, float32 and float64, 1 to 16 threads; the other orientation,
  ``x (L, in) @ weight (in, out)``, does not); ``tests/test_encoder.py`` checks 1 and 2 threads;
* every other operation (LayerNorm, GELU, softmax, the bias additions) works on each token
  (column) or each head of each sentence on its own, with the same reductions in the same
  order whatever comes with it (a LayerNorm sums over the feature axis one feature after
  another; a softmax sums along a contiguous row); ``tests/test_encoder_batching.py`` checks
  the bits alone, in any group and in any order;
* the attention of the sentences of one length runs on a stack ``(B, features, L)`` (the
  columns layout copies each run of equal-length sentences out and back). Its products (``L x
  L`` per head) run on OpenBLAS only while it keeps them on one thread
  (:data:`BLAS_ONE_THREAD_WORK`), one gemm per sentence and head; longer sentences use numpy's
  own loops (:func:`numpy.einsum`, one sentence at a time), which no thread count reaches;
* every buffer starts on a 64-byte boundary (:data:`ALIGNMENT`) and every sentence's block of a
  stack is a multiple of 64 bytes long (each width, 384, 1152 and 1536 features, is a multiple
  of 16), so even alignment is the same for a sentence alone and in company.

The bits still depend on the BLAS kernel (chosen by CPU, or ``OPENBLAS_CORETYPE``): see
:mod:`forgetting.text.similarity`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import erf  # type: ignore[import-untyped, unused-ignore]

__all__ = [
    "ALIGNMENT",
    "BLAS_ONE_THREAD_WORK",
    "COLUMN_UNIT",
    "LayerWeights",
    "Scratch",
    "aligned_empty",
    "encoder_columns_",
    "encoder_layers_",
    "gelu_erf_",
    "layer_norm_",
    "linear_",
    "padded_width",
    "self_attention_",
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


class Scratch:
    """Named work buffers, reused from one group of sentences to the next.

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
    """``out = weight @ x + bias``: a dense layer on feature-major ``x (..., in, L)``, into ``out (..., out, L)``.

    ``weight`` is torch's ``(out, in)``, ``bias`` a column ``(out, 1)``; one BLAS gemm per
    sentence of the stack, each of the shape the sentence has alone.
    """
    np.matmul(weight, x, out=out)
    out += bias
    return out


def layer_norm_(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float, scratch: np.ndarray
) -> np.ndarray:
    """LayerNorm of each token (column) of feature-major ``x (..., n, L)``, in place.

    ``weight``, ``bias``: columns ``(n, 1)``; ``scratch``: same shape as ``x``, clobbered. The
    sums run over the strided feature axis, one feature after another, for each token: the same
    order whatever comes before the feature axis.
    """
    x -= x.mean(axis=-2, keepdims=True)
    var = np.square(x, out=scratch).mean(axis=-2, keepdims=True)
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


def _softmax_rows_(scores: np.ndarray, scale: float) -> None:
    """Scaled softmax along the last (contiguous) axis, in place, subnormals flushed to zero."""
    dt = scores.dtype
    scores *= dt.type(scale)
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    # Subnormal probabilities (< 1.2e-38 in float32) would make the next gemm ~100x slower on
    # x86; they change nothing at float precision, so flush them to zero.
    scores[scores < np.finfo(dt).tiny] = 0.0


def self_attention_(qkv: np.ndarray, num_heads: int, out: np.ndarray, scratch: Scratch) -> np.ndarray:
    """Multi-head scaled dot-product self-attention of equal-length sentences, each token
    attending to every token of its own sentence.

    Parameters
    ----------
    qkv : numpy.ndarray
        Feature-major ``(B, 3 * hidden, L)``, C-contiguous: each sentence's query, key and value
        projections (bias included) stacked, each ``num_heads`` heads of ``hidden / num_heads``
        features. Left unchanged.
    num_heads : int
        Number of attention heads.
    out : numpy.ndarray
        Feature-major ``(B, hidden, L)``, C-contiguous: receives the heads' outputs stacked (the
        input of BERT's attention output projection).
    scratch : Scratch
        Work buffer ``scores`` (taken at this group's shape).

    Returns
    -------
    numpy.ndarray
        ``out``.
    """
    group, width, length = qkv.shape
    head_dim = width // (3 * num_heads)
    scale = 1.0 / np.sqrt(head_dim)
    if length * length * head_dim < BLAS_ONE_THREAD_WORK:
        # views (B, heads, head_dim, L); one gemm per sentence and head, as alone
        q, k, v = qkv.reshape(group, 3, num_heads, head_dim, length).transpose(1, 0, 2, 3, 4)
        scores = scratch.get("scores", group, num_heads, length, length)  # (B, heads, query, key)
        np.matmul(q.swapaxes(-1, -2), k, out=scores)
        _softmax_rows_(scores, scale)
        np.matmul(v, scores.swapaxes(-1, -2), out=out.reshape(group, num_heads, head_dim, length))
        return out
    for one, context in zip(qkv, out):  # long sentences: numpy's loops, one sentence at a time
        q, k, v = one.reshape(3, num_heads, head_dim, length)
        scores = scratch.get("scores", num_heads, length, length)
        np.einsum("hdq,hdk->hqk", q, k, out=scores)
        _softmax_rows_(scores, scale)
        np.einsum("hdk,hqk->hdq", v, scores, out=context.reshape(num_heads, head_dim, length))
    return out


def _layers_(
    hidden: np.ndarray,
    layers: Sequence[LayerWeights],
    eps: float,
    scratch: Scratch,
    attend: Callable[[np.ndarray, np.ndarray], object],
) -> np.ndarray:
    """BERT's encoder layers in place in ``hidden`` (features on axis -2, tokens on axis -1, in a
    stack or as columns), ``attend(qkv, ctx)`` writing the self-attention of ``qkv`` into ``ctx``."""
    if not layers:
        return hidden

    def buffer(name: str, features: int) -> np.ndarray:  # ``hidden``'s layout, ``features`` rows
        return scratch.get(name, *hidden.shape[:-2], features, hidden.shape[-1])

    width = hidden.shape[-2]
    h, other, ctx, work = hidden, buffer("other", width), buffer("context", width), buffer("h", width)
    qkv = buffer("qkv", layers[0]["qkv"][0].shape[0])
    inner = buffer("inner", layers[0]["ffn_in"][0].shape[0])
    for layer in layers:
        linear_(*layer["qkv"], h, qkv)
        attend(qkv, ctx)
        linear_(*layer["attn_out"], ctx, other)
        other += h
        layer_norm_(other, *layer["attn_ln"], eps, work)
        h, other = other, h
        linear_(*layer["ffn_in"], h, inner)
        gelu_erf_(inner, scratch.get("gelu", *inner.shape))
        linear_(*layer["ffn_out"], inner, other)
        other += h
        layer_norm_(other, *layer["ffn_ln"], eps, work)
        h, other = other, h  # two swaps a layer: the state is back in `hidden`
    return hidden


def encoder_layers_(
    hidden: np.ndarray, layers: Sequence[LayerWeights], num_heads: int, eps: float, scratch: Scratch
) -> np.ndarray:
    """BERT's encoder layers applied to a group of equal-length sentences, in place in ``hidden``.

    Parameters
    ----------
    hidden : numpy.ndarray
        Feature-major ``(B, hidden, L)``, C-contiguous and aligned (:func:`aligned_empty`): each
        sentence's embeddings after LayerNorm; replaced by their last hidden states.
    layers : sequence of mapping
        The layers' weights, in order (:data:`LayerWeights`).
    num_heads : int
        Attention heads.
    eps : float
        LayerNorm epsilon.
    scratch : Scratch
        Work buffers, reused group after group.

    Returns
    -------
    numpy.ndarray
        ``hidden``.

    Notes
    -----
    Each numpy call takes the whole group (a weight is read once for all of it, and the call
    overhead is paid once), but computes each sentence exactly as alone: a sentence's result
    depends only on the sentence, and how many go together changes the speed and the memory,
    never a bit.
    """
    if hidden.shape[0] == 0:
        return hidden
    return _layers_(
        hidden, layers, eps, scratch, lambda qkv, ctx: self_attention_(qkv, num_heads, ctx, scratch)
    )


#: Columns every product's ``x`` is padded to a multiple of (at least this many): without the
#: padding some columns got other bits alone than in company (module docstring).
COLUMN_UNIT = 16


def padded_width(columns: int) -> int:
    """``columns`` rounded up to a multiple of :data:`COLUMN_UNIT`, at least one unit."""
    return max(COLUMN_UNIT, -(-columns // COLUMN_UNIT) * COLUMN_UNIT)


def _runs(block: np.ndarray, count: int, length: int) -> np.ndarray:
    """The view ``(features, count, length)`` of ``block (features, count * length)`` (never a copy)."""
    view = block.view()
    view.shape = (block.shape[0], count, length)  # refuses (AttributeError) where only a copy would do
    return view


def encoder_columns_(
    hidden: np.ndarray,
    layers: Sequence[LayerWeights],
    num_heads: int,
    eps: float,
    scratch: Scratch,
    groups: Sequence[tuple[int, int, int]],
) -> np.ndarray:
    """BERT's encoder layers applied to the tokens of several sentences, in place in ``hidden``.

    Parameters
    ----------
    hidden : numpy.ndarray
        ``(hidden, W)``, C-contiguous and aligned (:func:`aligned_empty`): one column per token,
        each sentence's tokens in adjacent columns, ``W`` a :func:`padded_width` (the columns
        after the last token are padding, finite, never read as a token); the embeddings after
        LayerNorm, replaced by the last hidden states.
    layers : sequence of mapping
        The layers' weights, in order (:data:`LayerWeights`).
    num_heads : int
        Attention heads.
    eps : float
        LayerNorm epsilon.
    scratch : Scratch
        Work buffers, reused batch after batch.
    groups : sequence of (start, count, length)
        Runs of ``count`` sentences of ``length`` tokens each, from column ``start``, that
        together cover every token column once.

    Returns
    -------
    numpy.ndarray
        ``hidden``.

    Notes
    -----
    Each dense layer is one matrix product over every column, and LayerNorm, GELU and the
    residual additions work column by column; the attention of each run goes through
    :func:`self_attention_` as a stack ``(count, features, length)``, copied out and back. A
    sentence's result depends only on the sentence: how many go together changes the speed and
    the memory, never a bit.
    """
    width = hidden.shape[0]
    tokens = sum(count * length for _, count, length in groups)

    def attend(qkv: np.ndarray, ctx: np.ndarray) -> None:
        for start, count, length in groups:
            stop = start + count * length
            stack = scratch.get("stack", count, qkv.shape[0], length)
            np.copyto(stack, _runs(qkv[:, start:stop], count, length).transpose(1, 0, 2))
            heads = scratch.get("heads", count, width, length)
            self_attention_(stack, num_heads, heads, scratch)
            np.copyto(_runs(ctx[:, start:stop], count, length), heads.transpose(1, 0, 2))
        ctx[:, tokens:] = 0.0  # the padding: finite, never a token

    return _layers_(hidden, layers, eps, scratch, attend)
