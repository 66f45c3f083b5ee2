"""The four classes of Memory Worth, from rate and evidence volume, with their thresholds.

The thresholds are stored here and nowhere else; estimators and experiments take them as
arguments defaulting to these values. The classes are the members of :class:`WorthClass`, a
``StrEnum``: each is the ``str`` it always was (``WorthClass.LOW_VALUE == "low-value"``), so
tables, CSV and JSON write the same text.
"""

from __future__ import annotations

import enum
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .._validate import raise_problems, real_problem, shown
from .formulas import NOT_NUMBERS

__all__ = [
    "DEFAULT_MIN_EVIDENCE",
    "DEFAULT_HIGH_THRESHOLD",
    "DEFAULT_LOW_THRESHOLD",
    "WorthClass",
    "HIGH_VALUE",
    "UNCERTAIN",
    "MIXED",
    "LOW_VALUE",
    "WORTH_CLASSES",
    "worth_class",
    "class_counts",
    "taxonomy_problems",
]

DEFAULT_MIN_EVIDENCE = 5.0
"""Evidence volume below which a memory is *uncertain* (five unit-weight retrievals)."""
DEFAULT_HIGH_THRESHOLD = 0.7
"""Worth at or above which a memory with enough evidence is *high-value*."""
DEFAULT_LOW_THRESHOLD = 0.3
"""Worth at or below which a memory with enough evidence is *low-value*."""


class WorthClass(enum.StrEnum):
    """The class of a memory from its rate ``MW`` and evidence ``h+ + h-`` (:func:`worth_class`).

    A ``str`` subclass: every member equals, prints, formats and serialises (``json.dumps``,
    ``DataFrame.to_csv``) as its value, the label the tables show. Members in table order.
    """

    HIGH_VALUE = "high-value"
    """High rate, enough evidence."""
    UNCERTAIN = "uncertain"
    """Too little evidence: never deprecate on it."""
    MIXED = "mixed"
    """Ambiguous rate, enough evidence."""
    LOW_VALUE = "low-value"
    """Low rate, enough evidence: candidate for suppression."""


HIGH_VALUE = WorthClass.HIGH_VALUE
"""High rate, enough evidence (:attr:`WorthClass.HIGH_VALUE`)."""
UNCERTAIN = WorthClass.UNCERTAIN
"""Too little evidence: never deprecate on it (:attr:`WorthClass.UNCERTAIN`)."""
MIXED = WorthClass.MIXED
"""Ambiguous rate, enough evidence (:attr:`WorthClass.MIXED`)."""
LOW_VALUE = WorthClass.LOW_VALUE
"""Low rate, enough evidence: candidate for suppression (:attr:`WorthClass.LOW_VALUE`)."""
WORTH_CLASSES = tuple(WorthClass)
"""The four classes, in the order tables and counts use."""


def worth_class(
    worth: npt.ArrayLike,
    evidence: npt.ArrayLike,
    min_evidence: float = DEFAULT_MIN_EVIDENCE,
    high_threshold: float = DEFAULT_HIGH_THRESHOLD,
    low_threshold: float = DEFAULT_LOW_THRESHOLD,
) -> Any:
    """The taxonomy from rate and volume, checked in this order.

    1. ``uncertain``  if ``evidence < min_evidence`` (never deprecate on it);
    2. ``high-value`` if ``worth >= high_threshold``;
    3. ``low-value``  if ``worth <= low_threshold`` (candidate for suppression);
    4. ``mixed``      otherwise (ambiguous rate with enough evidence).

    Works element-wise on arrays (returns an array of the labels, numpy strings); returns a
    :class:`WorthClass` for scalar input. ``worth`` must be real numbers in [0, 1] and ``evidence`` finite real
    numbers ``>= 0`` (never NaN, ``inf`` or bools, which no comparison above could sort), with
    broadcastable shapes; the thresholds as :func:`taxonomy_problems` states. ``ValueError``
    lists every problem.

    >>> worth_class(0.7, 5.0)
    <WorthClass.HIGH_VALUE: 'high-value'>
    >>> worth_class(0.9, 4.0) == "uncertain"
    True
    """
    rate = _real_array(worth)
    volume = _real_array(evidence)
    problems = threshold_problems(min_evidence, high_threshold, low_threshold)
    if rate is None or not np.all((rate >= 0) & (rate <= 1)):
        problems.append(f"worth must be real numbers in [0, 1] (not NaN), got {shown(worth)}")
    if volume is None or not np.all(np.isfinite(volume) & (volume >= 0)):
        problems.append(f"evidence must be finite real numbers >= 0, got {shown(evidence)}")
    if rate is not None and volume is not None:
        try:
            np.broadcast_shapes(rate.shape, volume.shape)
        except ValueError:
            problems.append(
                f"worth and evidence must have broadcastable shapes, got {rate.shape} and {volume.shape}"
            )
    raise_problems(problems)
    assert rate is not None and volume is not None
    labels = np.select(
        [volume < min_evidence, rate >= high_threshold, rate <= low_threshold],
        [UNCERTAIN.value, HIGH_VALUE.value, LOW_VALUE.value],
        default=MIXED.value,
    )
    return WorthClass(str(labels)) if labels.ndim == 0 else labels


def _real_array(value: Any) -> npt.NDArray[np.float64] | None:
    """``value`` as a float64 array, or ``None`` if it is not real numbers (bools and strings are not)."""
    try:
        raw = np.asarray(value)
        return None if raw.dtype.kind in NOT_NUMBERS else np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return None


def class_counts(
    worth: npt.ArrayLike,
    evidence: npt.ArrayLike,
    min_evidence: float = DEFAULT_MIN_EVIDENCE,
    high_threshold: float = DEFAULT_HIGH_THRESHOLD,
    low_threshold: float = DEFAULT_LOW_THRESHOLD,
) -> npt.NDArray[np.int_]:
    """How many memories fall in each class, in :data:`WORTH_CLASSES` order (sums to the count).

    >>> class_counts([0.9, 0.5, 0.1, 0.9], [10, 10, 10, 1]).tolist()
    [1, 1, 1, 1]
    """
    labels = worth_class(worth, evidence, min_evidence, high_threshold, low_threshold)
    return np.array([np.count_nonzero(labels == name) for name in WORTH_CLASSES])


def taxonomy_problems(
    prior: float, min_evidence: float, high_threshold: float, low_threshold: float
) -> list[str]:
    """One sentence per bad hyperparameter (empty when all are good).

    ``prior``, ``high_threshold`` and ``low_threshold`` are real numbers in [0, 1],
    ``min_evidence`` a finite real number >= 0, and ``low_threshold < high_threshold``.
    """
    prior_problem = real_problem("prior", prior, 0.0, 1.0)
    return ([prior_problem] if prior_problem else []) + threshold_problems(
        min_evidence, high_threshold, low_threshold
    )


def threshold_problems(min_evidence: float, high_threshold: float, low_threshold: float) -> list[str]:
    """One sentence per bad taxonomy threshold: ``min_evidence`` a finite real number >= 0,
    both thresholds real numbers in [0, 1], and ``low_threshold < high_threshold``."""
    problems = [
        p
        for p in (
            real_problem("min_evidence", min_evidence, 0.0, math.inf),
            real_problem("high_threshold", high_threshold, 0.0, 1.0),
            real_problem("low_threshold", low_threshold, 0.0, 1.0),
        )
        if p
    ]
    if not problems and not low_threshold < high_threshold:
        problems.append(
            f"low_threshold must be < high_threshold, got low_threshold={shown(low_threshold)} "
            f"and high_threshold={shown(high_threshold)}"
        )
    return problems
