"""Cosine similarity that no machine's last digits can change: rounding, tie rule, margins.

The encoder's float32 matrix products run in OpenBLAS, which picks a kernel per CPU; the same
two sentences get cosines that differ in the 7th significant digit from one machine to
another. Nothing Experiment 5 decides or publishes may depend on such digits, so retrieval
ranks on cosines rounded to :data:`COSINE_DECIMALS` places (:func:`rounded_cosines`), ties
are broken by memory id (:func:`rank_candidates`), and every published cosine is rounded the
same way. Rounding alone is not a guarantee (a cosine next to a rounding boundary can still
round either way), so the margin is checked: :func:`cosine_change_bound` bounds, pair by
pair, how far a relative change of :data:`RELATIVE_PERTURBATION` in every vector component can
move a cosine (never more than :data:`COSINE_TOLERANCE`), and :func:`fragile_rounding` /
:func:`fragile_ranking` say whether a change of that size could alter a rounded value or an
ordered top-k. :func:`forgetting.studies.text.retrieval.robustness` counts them for a corpus; the
chapter publishes the counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "COSINE_DECIMALS",
    "RELATIVE_PERTURBATION",
    "FLOAT32_ROUNDING",
    "COSINE_TOLERANCE",
    "cosine_matrix",
    "rounded_cosines",
    "cosine_change_bound",
    "fragile_rounding",
    "rank_candidates",
    "fragile_ranking",
]

#: Decimal places of every cosine that decides a retrieval or is published. Digits beyond the
#: 6th significant one are machine noise. Why three places and not four is measured by the
#: chapter (:func:`forgetting.studies.text.retrieval.robustness` at both precisions) and asserted by
#: the tests: at three, every decision and published cosine is clear of its rounding boundary.
COSINE_DECIMALS = 3
#: Relative change of every vector component that no decision or published value may notice.
RELATIVE_PERTURBATION = 1e-6
#: Relative rounding of a float32 component, added to the perturbation (the vectors are stored
#: in float32, so a perturbed vector is rounded once more).
FLOAT32_ROUNDING = 2.0**-24
#: The largest :func:`cosine_change_bound` of any pair, ``4 eps / (1 - eps)^2`` with
#: ``eps = RELATIVE_PERTURBATION + FLOAT32_ROUNDING``, rounded up.
COSINE_TOLERANCE = 5e-6


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b``, in float64, unrounded.

    Its last digits depend on the machine that computed the vectors; decide and publish with
    :func:`rounded_cosines`.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    return np.asarray(x @ y.T)


def rounded_cosines(a: np.ndarray, b: np.ndarray, decimals: int = COSINE_DECIMALS) -> np.ndarray:
    """:func:`cosine_matrix` rounded to ``decimals`` places: what retrieval ranks and what is published."""
    return np.round(cosine_matrix(a, b), decimals)


def cosine_change_bound(a: np.ndarray, b: np.ndarray, relative: float = RELATIVE_PERTURBATION) -> np.ndarray:
    """Largest change of each cosine of :func:`cosine_matrix` under a relative perturbation.

    Every component of every vector multiplied by a factor in ``[1 - eps, 1 + eps]``, with
    ``eps = relative + FLOAT32_ROUNDING``. For unit ``u``, ``v`` the dot product moves by at most
    ``(2 eps + eps^2) sum_i |u_i v_i|`` and each norm by a factor in ``[1 - eps, 1 + eps]``, so

        ``|cos' - cos| <= ((2 eps + eps^2) sum_i |u_i v_i| + (2 eps - eps^2) |cos|) / (1 - eps)^2``,

    which never exceeds ``4 eps / (1 - eps)^2`` (:data:`COSINE_TOLERANCE`) because
    ``sum_i |u_i v_i| <= 1``.
    """
    eps = float(relative) + FLOAT32_ROUNDING
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    absolute = np.abs(x) @ np.abs(y).T
    return np.asarray(((2 * eps + eps**2) * absolute + (2 * eps - eps**2) * np.abs(x @ y.T)) / (1 - eps) ** 2)


def _rounding_bounds(
    values: np.ndarray, decimals: int, tolerance: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest rounded value (in units of ``10**-decimals``) within ``tolerance``."""
    scale = 10.0**decimals
    values = np.asarray(values, dtype=np.float64)
    return np.rint((values - tolerance) * scale), np.rint((values + tolerance) * scale)


def fragile_rounding(
    values: np.ndarray, tolerance: float | np.ndarray = COSINE_TOLERANCE, decimals: int = COSINE_DECIMALS
) -> np.ndarray:
    """``True`` where a change of up to ``tolerance`` (scalar, or one per value) could change the
    value rounded to ``decimals``."""
    low, high = _rounding_bounds(values, decimals, tolerance)
    return np.asarray(low != high)


def rank_candidates(scores: np.ndarray, candidate_ids: Sequence[str] | np.ndarray) -> np.ndarray:
    """Positions of the candidates, best first: highest score, equal scores by id (string order).

    Breaking ties by id, not by position, makes the order independent of the file order of
    the corpus; with rounded scores, ties are real and this rule decides them.
    """
    id_rank = np.argsort(np.argsort(np.asarray(candidate_ids, dtype=str), kind="stable"), kind="stable")
    return np.lexsort((id_rank, -np.asarray(scores, dtype=np.float64)))


def fragile_ranking(
    raw_scores: np.ndarray,
    candidate_ids: Sequence[str],
    k: int,
    tolerance: float | np.ndarray = COSINE_TOLERANCE,
    decimals: int = COSINE_DECIMALS,
) -> bool:
    """Could changing each raw score by up to ``tolerance`` change the ordered rounded top ``k``?

    ``tolerance`` is a scalar or one bound per score (:func:`cosine_change_bound`).

    Each score's rounded value can only move within ``[round(s - tol), round(s + tol)]``. The
    ordered top ``k`` cannot change if every one of its members stays ahead of every candidate
    ranked after it: its lowest possible rounded value beats the other's highest, or both are
    pinned to the same rounded value and the id rule orders them as now.
    """
    raw = np.asarray(raw_scores, dtype=np.float64)
    ids = np.asarray(candidate_ids, dtype=str)
    order = rank_candidates(np.round(raw, decimals), ids)
    low, high = _rounding_bounds(raw, decimals, tolerance)
    for position in range(min(k, raw.size)):
        first = order[position]
        later = order[position + 1 :]
        safe = (low[first] > high[later]) | (
            (low[first] == high[first])
            & (low[later] == high[later])
            & (low[first] == low[later])
            & (ids[first] < ids[later])
        )
        if not safe.all():
            return True
    return False
