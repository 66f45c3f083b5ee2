"""Memory Worth's formulas, each stated once, and the per-retrieval weights.

For a memory ``m`` with weighted counters ``h+(m)`` (retrieved, episode succeeded) and
``h-(m)`` (retrieved, episode failed)::

    MW(m) = h+(m) / (h+(m) + h-(m))        (the prior, 0.5 by default, while h+ + h- == 0)
    V(m)  = h+(m) + h-(m)                  (evidence volume)

Worth is read from the counters, never stored.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .._validate import bool_problem, raise_problems, real_problem, require_int, shown

__all__ = [
    "DEFAULT_PRIOR",
    "memory_worth",
    "evidence_volume",
    "decayed",
    "uniform_weights",
    "score_weights",
    "oracle_weights",
]

DEFAULT_PRIOR = 0.5
"""Worth reported before any evidence: the memory is as likely to help as to hurt."""


NOT_NUMBERS = "bcSUVmM"
"""numpy dtype kinds that are never counts, weights or rates: bool, complex, bytes, str, void,
timedelta, datetime (numpy would turn ``"3"`` into ``3.0`` and ``True`` into ``1.0``)."""


def _counter(value: Any) -> npt.NDArray[np.float64] | None:
    """``value`` as float64 if it is finite, real (not bool, not str) and ``>= 0`` everywhere, else ``None``."""
    try:
        raw = np.asarray(value)
        if raw.dtype.kind in NOT_NUMBERS:
            return None
        array = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        return None
    return array


def _counters(successes: Any, failures: Any) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Both counters as float64 arrays; ``ValueError`` unless every value is finite and ``>= 0``."""
    pos, neg = _counter(successes), _counter(failures)
    problems = [
        f"{name} must be finite real numbers >= 0 (weighted counts), got {shown(value)}"
        for name, value, array in (("successes", successes, pos), ("failures", failures, neg))
        if array is None
    ]
    if pos is not None and neg is not None:
        try:
            np.broadcast_shapes(pos.shape, neg.shape)
        except ValueError:
            problems.append(
                f"successes and failures must have broadcastable shapes, got {pos.shape} and {neg.shape}"
            )
    raise_problems(problems)
    assert pos is not None and neg is not None
    return pos, neg


def ratio_or_prior(positive: npt.NDArray[np.float64], total: npt.NDArray[np.float64], prior: float) -> Any:
    """``positive / total``, and ``prior`` where ``total == 0``: the division :func:`memory_worth`
    makes after its checks (unchecked: arrays of ``h+`` and ``h+ + h-``, a ``prior`` in [0, 1])."""
    return np.divide(positive, total, out=np.full(total.shape, prior), where=total > 0)


def memory_worth(successes: Any, failures: Any, prior: float = DEFAULT_PRIOR) -> Any:
    """Memory Worth ``MW = h+ / (h+ + h-)``, and ``prior`` where ``h+ + h- == 0``.

    Works element-wise on arrays; returns a ``float`` for scalar input. Counters must be
    finite and ``>= 0`` and ``prior`` a real number in [0, 1] (``ValueError`` otherwise), so a
    zero total means no evidence at all and the result is always in [0, 1].

    Where ``h+ + h-`` overflows float64 (two finite counters near ``1.8e308``) the ratio is
    computed from the halved counters, ``(h+ / 2) / (h+ / 2 + h- / 2)``: halving is exact for
    such numbers, so this is the correctly rounded ratio; every other value is the direct
    formula, bit for bit.

    >>> memory_worth(3.0, 1.0)
    0.75
    >>> memory_worth(0.0, 0.0)
    0.5
    >>> memory_worth(1e308, 1e308)
    0.5
    """
    raise_problems([real_problem("prior", prior, 0.0, 1.0)])
    pos, neg = _counters(successes, failures)
    with np.errstate(over="ignore"):
        total = pos + neg
    rate = ratio_or_prior(pos, total, float(prior))
    overflow = np.isinf(total)
    if overflow.any():
        half_pos = np.broadcast_to(pos * 0.5, total.shape)
        rate = np.divide(half_pos, half_pos + neg * 0.5, out=rate, where=overflow)
    return float(rate) if rate.ndim == 0 else rate


def evidence_volume(successes: Any, failures: Any) -> Any:
    """Evidence volume ``V = h+ + h-`` (element-wise on arrays; counters finite and ``>= 0``).

    Raises ``ValueError`` where the sum overflows float64: a volume is a number, never ``inf``.
    """
    pos, neg = _counters(successes, failures)
    with np.errstate(over="ignore"):
        total = np.add(pos, neg)
    if not np.all(np.isfinite(total)):
        raise ValueError(
            f"successes + failures must be finite (float64), got an overflowing sum for "
            f"successes={shown(successes)} and failures={shown(failures)}"
        )
    return float(total) if np.ndim(total) == 0 else total


def decayed(counter: float, discount: float, episodes: int = 1) -> float:
    """A counter after ``episodes`` discounted episodes without a retrieval: ``gamma**n * h``."""
    return counter * discount**episodes


def uniform_weights(n_retrieved: int) -> npt.NDArray[np.float64]:
    """Every retrieved memory gets weight 1.0 (the default of every ``update``)."""
    return np.ones(require_int("n_retrieved", n_retrieved, minimum=1, allow_numpy=True))


def score_weights(scores: npt.ArrayLike, normalize: bool = True) -> npt.NDArray[np.float64]:
    """Weights proportional to the retrieval scores: ``w_i = s_i / sum_j s_j``.

    With ``normalize=True`` (default) every episode hands out one unit of credit in total,
    so an episode that retrieves ten memories does not count ten times as much as one that
    retrieves a single memory. With ``normalize=False`` the raw scores are the weights.
    Scores must be finite and ``>= 0``: clip or shift cosine similarities first (a negative
    weight would subtract evidence). With ``normalize=True`` at least one score must be > 0.
    ``normalize`` is a ``bool`` (``ValueError`` otherwise: ``"no"`` is truthy).
    """
    values = np.asarray(scores, dtype=np.float64)
    flag_problem = bool_problem("normalize", normalize)
    problems = [flag_problem]
    if values.ndim != 1 or values.size == 0:
        problems.append(f"scores must be a non-empty 1-d sequence, got shape {values.shape}")
    elif not np.all(np.isfinite(values)) or np.any(values < 0):
        problems.append(f"scores must be finite and >= 0, got {shown(values.tolist())}")
    elif flag_problem is None and normalize and values.sum() == 0:
        problems.append("scores must not all be 0 when normalize=True (nothing to share credit by)")
    raise_problems(problems)
    return values / values.sum() if normalize else values.copy()


def oracle_weights(
    retrieved: npt.ArrayLike, utilities: npt.ArrayLike, normalize: bool = False
) -> npt.NDArray[np.float64]:
    """Weights equal to the known true utility of each retrieved memory (controlled worlds only).

    ``retrieved`` are integer indices into ``utilities``. Raw utilities by default (a memory
    with utility 0 collects no evidence at all); ``normalize=True`` rescales them to sum to 1
    as in :func:`score_weights` (``normalize`` a ``bool``).
    """
    utility = np.asarray(utilities, dtype=np.float64)
    index = np.asarray(retrieved)
    raise_problems(
        [
            bool_problem("normalize", normalize),
            None
            if utility.ndim == 1
            else f"utilities must be 1-d (one per memory; nothing is flattened), got shape {utility.shape}",
        ]
    )
    if index.ndim != 1 or not np.issubdtype(index.dtype, np.integer):
        raise ValueError(f"retrieved must be a 1-d sequence of int indices, got {shown(retrieved)}")
    if index.size and (index.min() < 0 or index.max() >= utility.size):
        raise ValueError(f"retrieved indices must be in [0, {utility.size}), got {shown(index.tolist())}")
    return score_weights(utility[index], normalize=normalize)
