"""The two in-place BERT layer kernels the encoder applies: LayerNorm and the exact GELU."""

from __future__ import annotations

import numpy as np
from scipy.special import erf  # type: ignore[import-untyped, unused-ignore]

__all__ = ["layer_norm_", "gelu_erf_"]


def layer_norm_(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float, scratch: np.ndarray
) -> np.ndarray:
    """LayerNorm over the last axis, in place in ``x`` (``scratch``: same shape, clobbered)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.square(x, out=scratch).mean(axis=-1, keepdims=True)
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
