"""95 % confidence intervals for what the governance chapter reports over independent sessions.

Each session is one seed, so sessions are independent draws of the same world:

* a **share of sessions** (the true fact survives, the stale fact is removed, ...) is a
  binomial proportion ``k / n``; its interval is Wilson's score interval
  (:func:`wilson_interval`), which stays inside ``[0, 1]`` and is not degenerate at
  ``k = 0`` or ``k = n``;
* a **mean over sessions** (a success rate, a delay, a working-set size) gets a percentile
  bootstrap over sessions (:func:`bootstrap_interval`) with a fixed resampling seed.

Nothing published hinges on float noise: Wilson's interval is a closed form of correctly
rounded operations, and every bootstrap mean is rounded to :data:`BOOTSTRAP_DECIMALS`
decimals before the order statistics are read (the summation order of a mean may differ
between CPUs in the last bit; the rounding removes it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..._validate import is_real, raise_problems, real_problem, require_int, shown

__all__ = [
    "Z_95",
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "BOOTSTRAP_DECIMALS",
    "Estimate",
    "NO_SESSION",
    "wilson_interval",
    "bootstrap_interval",
    "share_estimate",
    "mean_estimate",
]

Z_95 = 1.959963984540054
"""The standard normal quantile of 0.975 (two-sided 95 %)."""
BOOTSTRAP_RESAMPLES = 2000
"""Resamples of every bootstrap interval."""
BOOTSTRAP_SEED = 0
"""Seed of the resampling (``numpy.random.default_rng``): the same intervals on every rerun."""
BOOTSTRAP_DECIMALS = 12
"""Decimals every bootstrap mean is rounded to before its order statistics are read."""


@dataclass(frozen=True)
class Estimate:
    """A value over ``n`` sessions with its 95 % interval ``[low, high]`` (all NaN when ``n == 0``)."""

    value: float
    low: float
    high: float
    n: int

    def text(self, digits: int = 3) -> str:
        """``"0.654 (95 % CI 0.624–0.683)"``, or ``"nan (no session)"`` when ``n == 0``."""
        if self.n == 0:
            return "nan (no session)"
        return f"{self.value:.{digits}f} (95 % CI {self.low:.{digits}f}–{self.high:.{digits}f})"


NO_SESSION = Estimate(math.nan, math.nan, math.nan, 0)
"""The estimate over no session: NaN value and interval, ``n = 0`` (``text()``: ``"nan (no session)"``)."""


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``k / n``::

        centre = (k + z²/2) / (n + z²),   half = z √(k (n − k) / n + z²/4) / (n + z²)

    and ``(centre - half, centre + half)``, clipped to ``[0, 1]``, with the ends exactly 0 at
    ``k = 0`` and 1 at ``k = n``; ``(nan, nan)`` for ``n == 0``.

    Raises ``ValueError`` unless ``0 <= successes <= n`` are ints and ``z > 0``.

    >>> wilson_interval(0, 10)[0], round(wilson_interval(0, 10)[1], 4)
    (0.0, 0.2775)
    """
    require_int("n", n, 0, allow_numpy=True)
    require_int("successes", successes, 0, int(n), allow_numpy=True)
    raise_problems([real_problem("z", z, 0.0, low_open=True)])
    if n == 0:
        return math.nan, math.nan
    k, total, z2 = int(successes), int(n), z * z
    centre = (k + z2 / 2) / (total + z2)
    half = z * math.sqrt(k * (total - k) / total + z2 / 4) / (total + z2)
    # The formula gives exactly 0 at k = 0 and 1 at k = n, up to rounding: state them exactly.
    return 0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == total else min(1.0, centre + half)


def bootstrap_interval(
    values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float]:
    """Percentile bootstrap 95 % interval of the mean of ``values``.

    ``resamples`` samples of ``len(values)`` values drawn with replacement
    (``default_rng(seed).integers``); each mean rounded to :data:`BOOTSTRAP_DECIMALS`
    decimals; the interval is the pair of order statistics ``floor(0.025 B)`` and
    ``ceil(0.975 B) - 1`` (0-based) of the ``B`` sorted means, no interpolation.
    ``(nan, nan)`` for no values.

    Raises ``ValueError`` for a NaN or infinite value, ``resamples < 1`` or a bad seed.
    """
    require_int("resamples", resamples, 1, allow_numpy=True)
    require_int("seed", seed, 0, allow_numpy=True)
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or not np.all(np.isfinite(array)):
        raise ValueError(f"values must be a 1-d sequence of finite numbers, got {values!r}")
    if array.size == 0:
        return math.nan, math.nan
    return _bootstrap(array.tobytes(), int(resamples), int(seed))


@functools.lru_cache(maxsize=256)
def _bootstrap(values: bytes, resamples: int, seed: int) -> tuple[float, float]:
    """:func:`bootstrap_interval` of the float64 values whose bytes are ``values``: a function
    of their exact bits, so kept (summaries of the same sessions often average the same values)."""
    array = np.frombuffer(values, dtype=np.float64)
    draws = _resample_indices(seed, resamples, array.size)
    means = np.sort(np.round(array[draws].mean(axis=1), BOOTSTRAP_DECIMALS))
    low, high = math.floor(0.025 * resamples), math.ceil(0.975 * resamples) - 1
    return float(means[low]), float(means[max(low, high)])


@functools.lru_cache(maxsize=2)
def _resample_indices(seed: int, resamples: int, size: int) -> npt.NDArray[np.int64]:
    """``default_rng(seed).integers(0, size, size=(resamples, size))``, read-only: the same
    indices for every bootstrap over as many values, so kept for the commonest sizes."""
    draws = np.random.default_rng(seed).integers(0, size, size=(resamples, size))
    draws.flags.writeable = False
    return draws


def share_estimate(flags: Sequence[bool]) -> Estimate:
    """The share of ``True`` in ``flags`` with its :func:`wilson_interval`.

    Raises ``ValueError`` if ``flags`` is empty (a share of no session is :data:`NO_SESSION`)
    or a flag is not a bool.
    """
    items = list(flags) if isinstance(flags, Iterable) and not isinstance(flags, (str, bytes)) else None
    if not items:
        raise ValueError(
            f"flags must be a non-empty sequence of bools (a share of no session is NO_SESSION), "
            f"got {shown(flags)}"
        )
    if not all(isinstance(f, (bool, np.bool_)) for f in items):
        raise ValueError(f"flags must be bools, got {shown(items)}")
    k, n = sum(bool(f) for f in items), len(items)
    low, high = wilson_interval(k, n)
    return Estimate(k / n, low, high, n)


def mean_estimate(values: Sequence[float]) -> Estimate:
    """The mean of the non-NaN ``values`` (``math.fsum``, correctly rounded) with its
    :func:`bootstrap_interval`; ``n`` counts the values averaged.

    The interval is widened to contain the mean: when every resample has the same mean (all
    values equal), rounding could otherwise put an end a hair past it. A NaN is a session
    without the quantity: it is skipped, and all-NaN values give :data:`NO_SESSION`.

    Raises ``ValueError`` for no values at all (an empty list is a caller's slip, not a
    measurement: a summary over no session says so with :data:`NO_SESSION` itself) and for
    values that are not real numbers (bools, strings, ``inf``).
    """
    items = list(values) if isinstance(values, Iterable) and not isinstance(values, (str, bytes)) else None
    if not items:
        raise ValueError(
            f"values must be a non-empty sequence of numbers (a mean over no session is NO_SESSION), "
            f"got {shown(values)}"
        )
    bad = [v for v in items if not (is_real(v) or (isinstance(v, (float, np.floating)) and math.isnan(v)))]
    if bad:
        raise ValueError(
            f"values must be finite real numbers or NaN (a session without the quantity), got {shown(bad)}"
        )
    kept = [float(v) for v in items if not math.isnan(v)]
    if not kept:
        return NO_SESSION
    mean = math.fsum(kept) / len(kept)
    low, high = bootstrap_interval(kept)
    return Estimate(mean, min(low, mean), max(high, mean), len(kept))
