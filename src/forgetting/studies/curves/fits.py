"""Least-squares fits of the forgetting-curve families to a savings curve, compared honestly.

Each family is fitted to savings ``y`` (proportions) against the delay ``t`` since the end of
learning (hours) by :func:`scipy.optimize.least_squares` from a fixed grid of starting points
(the best end point is kept). Savings measured at the first delay are already far below 1, so
every family but Ebbinghaus's carries a free scale (the savings just after learning, which the
data do not pin):

* ``exponential``      ``a exp(-t / S)``                                      (2 parameters)
* ``power``            ``a (1 + F t / S)^(-d)``, ``F = 0.9^(-1/d) - 1`` (FSRS) (3 parameters)
* ``two_exponential``  ``a1 exp(-t / tau1) + a2 exp(-t / tau2)``               (4 parameters)
* ``ebbinghaus_log``   ``k / ((log10 (60 t + 1))^c + k)`` (Ebbinghaus 1885)      (2 parameters)

Ebbinghaus's own formula reads ``t`` in minutes counted from one minute before the end of
learning, so it is evaluated at ``60 t + 1`` minutes and gives 1 at ``t = 0`` by construction.
Wickelgren's ``lambda (1 + beta t)^(-psi)`` is the ``power`` family reparameterized
(``beta = F / S``), so its fit is the same curve and is not listed twice.

Comparison accounts for the number of parameters ``k``: with ``n`` points and residual sum of
squares ``RSS``, ``AIC = n ln(sigma^2) + 2 (k + 1)`` and ``BIC = n ln(sigma^2) + (k + 1) ln n``
with the maximum-likelihood residual variance ``sigma^2 = max(RSS / n, sigma_min^2)`` (the
``+ 1`` counts it as a parameter), the small-sample ``AICc = AIC + 2 K (K + 1) / (n - K - 1)``
with the same count ``K = k + 1`` (:func:`aicc`; undefined, NaN, when ``n - K - 1 <= 0``), and the
leave-one-out RMSE refits without each point in turn and predicts it. Parameter standard errors
are ``sqrt(diag(s^2 (J^T J)^-1))``, ``s^2 = max(RSS / (n - k), sigma_min^2)``, kept to
:data:`STANDARD_ERROR_DIGITS` significant digits. Published values are rounded to
:data:`PUBLISHED_DECIMALS` decimals, so that no reported digit depends on the last
bits of a LAPACK kernel; :func:`rankings` orders the families by each measure.

A perfect fit is a result: :func:`residual_variance_floor` gives
``sigma_min^2 = (eps * max|y|)^2`` (``eps`` the float64 machine epsilon), the variance of
residuals of one unit in the last place of the data. Residuals below it are rounding, not
misfit: the solver fits a noise-free curve of its own family to ``RSS = 0`` exactly or to
``RSS / n ~ 1e-34``, depending on the CPU's floating-point kernels, and ``ln(RSS / n)`` would be
a math domain error or a number of rounding noise. Flooring the variance there (instead of
reporting ``ln 0 = -inf``) keeps every statistic finite and machine-independent, ranks a perfect
fit above every imperfect one, and between two perfect fits lets the parameter penalty decide
(the smaller family wins), where ``-inf`` would tie them. On Ebbinghaus's savings every
family's ``RSS / n`` is more than 28 orders of magnitude above the floor, so it moves no
published value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from ...curves.families import FSRS_TARGET_RETENTION

__all__ = [
    "PUBLISHED_DECIMALS",
    "STANDARD_ERROR_DIGITS",
    "Family",
    "FAMILIES",
    "FitResult",
    "residual_variance_floor",
    "information_criteria",
    "aicc",
    "MEASURES",
    "MEASURE_LABELS",
    "rankings",
    "rankings_differing",
    "fit_glue_values",
    "fit_family",
    "fit_all",
    "predict",
    "log10_exact",
    "log_grid",
    "fit_residuals",
    "symmetric_limit",
]

PUBLISHED_DECIMALS = 6
"""Fit statistics (RMSE, AIC, BIC, residuals) are rounded to this many decimals before anyone sees them."""
PARAMETER_DIGITS = 6
"""Parameters and their standard errors are kept to this many significant digits: the solver
stops within its tolerance of the optimum, and BLAS kernels that differ between CPUs move the
digits beyond it (a time scale of about 800 hours moved in its eighth digit)."""
STANDARD_ERROR_DIGITS = 3
"""Standard errors are kept to this many significant digits. They come from ``(J^T J)^-1`` with
the solver's finite-difference Jacobian, which divides rounding in the model's values by a step
of about ``1e-8``; on the two-exponential fit ``cond(J^T J)`` is about ``2e9``, and an exp or
log that rounds four ulp differently (``tests/test_other_cpu.py``) moved a standard error by a
relative ``2.6e-7``, across a rounding boundary of its sixth digit. A standard error over eight
points is itself uncertain by tens of percent, so three digits say all it can."""
SOLVER_TOLERANCE = 1e-15
"""``ftol``, ``xtol`` and ``gtol`` of the least-squares solver: as tight as float64 allows."""

Model = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _exponential(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.asarray(p[0] * np.exp(-t / p[1]))


def _power(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    scale, stability, decay = p
    factor = FSRS_TARGET_RETENTION ** (-1.0 / decay) - 1.0
    return np.asarray(scale * (1.0 + factor * t / stability) ** (-decay))


def _two_exponential(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.asarray(p[0] * np.exp(-t / p[1]) + p[2] * np.exp(-t / p[3]))


def _ebbinghaus_log(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    k, c = p  # his t: minutes from one minute before the end of learning
    return np.asarray(k / (np.log10(60.0 * np.maximum(t, 0.0) + 1.0) ** c + k))


@dataclass(frozen=True)
class Family:
    """A curve family: its model ``y(t; p)``, parameter names, bounds and starting grid."""

    name: str
    formula: str
    parameters: tuple[str, ...]
    model: Model
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    starts: tuple[tuple[float, ...], ...]


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family("exponential", "a exp(-t/S)", ("a", "S"), _exponential, (0.0, 1e-3), (1.0, 1e6),
               ((0.5, 10.0), (0.5, 100.0), (0.5, 1000.0))),
        Family("power", "a (1 + F t/S)^(-d)", ("a", "S", "d"), _power, (0.0, 1e-9, 1e-3), (1.0, 1e6, 10.0),
               ((0.5, 1.0, 0.1), (0.5, 0.01, 0.2), (0.7, 0.001, 0.5), (0.5, 1.0, 1.0))),
        Family("two_exponential", "a1 exp(-t/tau1) + a2 exp(-t/tau2)", ("a1", "tau1", "a2", "tau2"),
               _two_exponential, (0.0, 1e-3, 0.0, 1e-3), (1.0, 1e6, 1.0, 1e6),
               ((0.3, 0.5, 0.3, 1000.0), (0.4, 2.0, 0.3, 5000.0), (0.2, 0.2, 0.4, 500.0))),
        Family("ebbinghaus_log", "k / ((log10 (60t + 1))^c + k)", ("k", "c"), _ebbinghaus_log, (1e-3, 1e-3),
               (100.0, 10.0), ((1.84, 1.25), (1.0, 1.0), (3.0, 2.0))),
    )
}  # fmt: skip
"""Every fitted family, by name, in the order tables list them."""


@dataclass(frozen=True)
class FitResult:
    """One family fitted to one data set (all numbers rounded to :data:`PUBLISHED_DECIMALS`)."""

    family: str
    dataset: str
    parameters: dict[str, float]
    standard_errors: dict[str, float]
    rmse: float
    aic: float
    aicc: float
    bic: float
    loo_rmse: float
    residuals: tuple[float, ...]

    def row(self) -> dict[str, Any]:
        """A flat table row: family, data set, statistics, then each parameter with its SE."""
        row: dict[str, Any] = {
            "dataset": self.dataset,
            "family": self.family,
            "n_params": len(self.parameters),
        }
        row |= {
            "rmse": self.rmse,
            "aic": self.aic,
            "aicc": self.aicc,
            "bic": self.bic,
            "loo_rmse": self.loo_rmse,
        }
        for name, value in self.parameters.items():
            row[name] = value
            row[f"{name}_se"] = self.standard_errors[name]
        return row


def _rounded(value: float) -> float:
    return round(float(value), PUBLISHED_DECIMALS) if math.isfinite(value) else float("nan")


def _significant(value: float, digits: int = PARAMETER_DIGITS) -> float:
    """``value`` at ``digits`` significant digits (NaN stays NaN)."""
    return float(f"{float(value):.{digits}g}") if math.isfinite(value) else float("nan")


def _best_fit(family: Family, t: np.ndarray, y: np.ndarray) -> Any:
    best = None
    for start in family.starts:
        result = least_squares(
            lambda p: family.model(t, p) - y,
            np.array(start, dtype=float),
            bounds=(np.array(family.lower), np.array(family.upper)),
            method="trf",
            x_scale="jac",
            max_nfev=20_000,
            ftol=SOLVER_TOLERANCE,
            xtol=SOLVER_TOLERANCE,
            gtol=SOLVER_TOLERANCE,
        )
        if best is None or result.cost < best.cost:
            best = result
    return best


def predict(family: str, parameters: Sequence[float], delay_hours: Sequence[float]) -> list[float]:
    """The fitted curve of ``family`` at ``delay_hours`` (for plots)."""
    values = FAMILIES[family].model(np.asarray(delay_hours, dtype=float), np.asarray(parameters, dtype=float))
    return [float(v) for v in values]


def residual_variance_floor(savings: Sequence[float] | np.ndarray) -> float:
    """``sigma_min^2 = (eps * max|y|)^2``: the smallest residual variance a fit to ``y`` reports.

    ``eps`` is the float64 machine epsilon, so ``sigma_min`` is one unit in the last place of
    the largest value: residuals below it are rounding in the model's evaluation, not misfit.
    A curve with ``max|y| = 0`` has no scale of its own and gets the unit scale ``max|y| = 1``.
    Always ``> 0``, so ``ln(max(RSS / n, sigma_min^2))`` is finite for every fit.

    >>> residual_variance_floor([0.5, 0.25]) == (2.0**-52 * 0.5) ** 2  # eps = 2^-52
    True
    """
    values = np.abs(np.asarray(savings, dtype=float))
    scale = float(values.max()) if values.size and values.max() > 0 else 1.0
    return float((np.finfo(float).eps * scale) ** 2)


def information_criteria(rss: float, n: int, k: int, variance_floor: float) -> tuple[float, float]:
    """``(AIC, BIC)`` of a least-squares fit with Gaussian residuals of variance ``sigma^2``.

    ``sigma^2 = max(RSS / n, variance_floor)`` (the maximum-likelihood variance, floored:
    :func:`residual_variance_floor`), ``AIC = n ln(sigma^2) + 2 (k + 1)`` and
    ``BIC = n ln(sigma^2) + (k + 1) ln n``, the ``+ 1`` counting ``sigma^2`` itself. Finite for
    every ``RSS >= 0`` when ``variance_floor > 0``; ``RSS = 0`` gives the smallest value a fit
    with ``k`` parameters can have, so a perfect fit ranks first and, among perfect fits, the one
    with fewer parameters.

    >>> information_criteria(0.0, 7, 2, 1e-32) == information_criteria(1e-40, 7, 2, 1e-32)
    True
    """
    if not variance_floor > 0:
        raise ValueError(f"variance_floor must be > 0, got {variance_floor!r}")
    log_term = n * math.log(max(rss / n, variance_floor))
    return log_term + 2 * (k + 1), log_term + (k + 1) * math.log(n)


def aicc(aic: float, n: int, k: int) -> float:
    """Small-sample AIC: ``AIC + 2 K (K + 1) / (n - K - 1)`` with ``K = k + 1`` (the variance counted).

    ``k`` is the number of curve parameters, as in :func:`information_criteria`, and ``n`` the
    number of points. Undefined when ``n - K - 1 <= 0`` (``n <= k + 2``): then ``NaN``.

    >>> aicc(-20.0, 7, 2), aicc(-20.0, 7, 4), aicc(-20.0, 6, 4)
    (-12.0, 40.0, nan)
    """
    for name, value, low in (("n", n, 1), ("k", k, 0)):
        if type(value) is not int or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    big_k = k + 1
    if n - big_k - 1 <= 0:
        return float("nan")
    return aic + 2.0 * big_k * (big_k + 1) / (n - big_k - 1)


def fit_family(
    family_name: str, dataset: str, delay_hours: Sequence[float], savings: Sequence[float]
) -> FitResult:
    """Fit one family; return parameters with standard errors, RMSE, AIC, BIC and leave-one-out RMSE.

    With ``n`` points, ``k`` parameters and ``sigma^2 = max(RSS / n, sigma_min^2)``
    (:func:`residual_variance_floor`): ``AIC = n ln(sigma^2) + 2 (k + 1)``, ``AICc`` (:func:`aicc`),
    ``BIC = n ln(sigma^2) + (k + 1) ln n`` (:func:`information_criteria`),
    ``RMSE = sqrt(RSS / n)`` (not floored: ``0.0`` for a perfect fit) and standard errors
    ``sqrt(diag(s^2 (J^T J)^-1))`` with ``s^2 = max(RSS / (n - k), sigma_min^2)``. A perfect fit
    (``RSS = 0``, or below the floor) therefore has finite statistics and the lowest AIC and BIC
    any fit of its family can have.

    Raises ``ValueError`` for an unknown family or fewer points than parameters + 2 (no residual
    variance left to estimate).
    """
    if family_name not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {family_name!r}")
    family = FAMILIES[family_name]
    t, y = np.asarray(delay_hours, dtype=float), np.asarray(savings, dtype=float)
    n, k = len(t), len(family.parameters)
    if len(y) != n or n < k + 2:
        raise ValueError(
            f"delay_hours and savings must have the same length >= {k + 2} for {family_name}, got {n} and {len(y)}"
        )
    fit = _best_fit(family, t, y)
    residuals = family.model(t, fit.x) - y
    rss = math.fsum(float(r) ** 2 for r in residuals)
    floor = residual_variance_floor(y)
    jacobian = np.asarray(fit.jac, dtype=float)
    try:
        covariance = np.linalg.inv(jacobian.T @ jacobian) * max(rss / (n - k), floor)
        errors = [math.sqrt(v) if v >= 0 else float("nan") for v in np.diag(covariance)]
    except np.linalg.LinAlgError:  # a parameter the data cannot pin
        errors = [float("nan")] * k
    loo = []
    for left_out in range(n):
        keep = np.arange(n) != left_out
        refit = _best_fit(family, t[keep], y[keep])
        loo.append(float(family.model(t[left_out : left_out + 1], refit.x)[0] - y[left_out]))
    aic, bic = information_criteria(rss, n, k, floor)
    return FitResult(
        family=family_name,
        dataset=dataset,
        parameters={name: _significant(v) for name, v in zip(family.parameters, fit.x)},
        standard_errors={
            name: _significant(e, STANDARD_ERROR_DIGITS) for name, e in zip(family.parameters, errors)
        },
        rmse=_rounded(math.sqrt(rss / n)),
        aic=_rounded(aic),
        aicc=_rounded(aicc(aic, n, k)),
        bic=_rounded(bic),
        loo_rmse=_rounded(math.sqrt(math.fsum(r * r for r in loo) / n)),
        residuals=tuple(_rounded(float(r)) for r in residuals),
    )


def fit_all(
    dataset: str,
    delay_hours: Sequence[float],
    savings: Sequence[float],
    families: Sequence[str] = tuple(FAMILIES),
) -> list[FitResult]:
    """:func:`fit_family` for each of ``families`` (default: all, in :data:`FAMILIES` order)."""
    return [fit_family(name, dataset, delay_hours, savings) for name in families]


MEASURES = ("rmse", "aic", "aicc", "bic", "loo_rmse")
"""The comparison measures of a :class:`FitResult`, each lower-is-better, in table order."""
MEASURE_LABELS = {
    "rmse": "RMSE",
    "aic": "AIC",
    "aicc": "AICc",
    "bic": "BIC",
    "loo_rmse": "leave-one-out RMSE",
}
"""How prose names each of :data:`MEASURES`."""


def rankings(fits: Sequence[FitResult], measures: Sequence[str] = MEASURES) -> dict[str, list[str]]:
    """Measure -> families ordered best (lowest) to worst; families with a NaN measure are left out.

    Ties keep the order of ``fits`` (``sorted`` is stable), so no order depends on float noise
    below the published precision. ``ValueError`` for a measure that is not in :data:`MEASURES`.
    """
    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise ValueError(f"measures must be among {MEASURES}, got {unknown!r}")
    out: dict[str, list[str]] = {}
    for measure in measures:
        defined = [fit for fit in fits if math.isfinite(getattr(fit, measure))]
        out[measure] = [fit.family for fit in sorted(defined, key=lambda fit: float(getattr(fit, measure)))]
    return out


def rankings_differing(first: Sequence[FitResult], second: Sequence[FitResult]) -> int:
    """How many of :data:`MEASURES` order the families differently in two sets of fits (:func:`rankings`)."""
    a, b = rankings(first), rankings(second)
    return sum(a[measure] != b[measure] for measure in MEASURES)


def fit_glue_values(fits: Sequence[FitResult]) -> dict[str, float | str]:
    """The values a chapter publishes of ``fits``: every measure per family, and the rankings.

    Keys: ``{measure}_{family}_{dataset}`` for each of :data:`MEASURES` (``loo`` for
    ``loo_rmse``); ``ranking_{measure}_{dataset}``, the families best to worst joined by ``" < "``;
    ``best_by_{family}_{dataset}`` and ``worst_by_{family}_{dataset}``, the measures (as
    :data:`MEASURE_LABELS` names, comma-separated; ``"none"``) by which ``family`` ranks first or last.
    """
    out: dict[str, float | str] = {}
    datasets = {fit.dataset for fit in fits}
    if len(datasets) != 1:
        raise ValueError(f"fits must all be of one data set, got {sorted(datasets)!r}")
    (dataset,) = datasets
    for fit in fits:
        for measure in MEASURES:
            out[f"{'loo' if measure == 'loo_rmse' else measure}_{fit.family}_{dataset}"] = getattr(
                fit, measure
            )
    ranked = rankings(fits)
    for measure, order in ranked.items():
        out[f"ranking_{measure}_{dataset}"] = " < ".join(order)
    for fit in fits:
        for side, index in (("best", 0), ("worst", -1)):
            labels = [
                MEASURE_LABELS[m] for m, order in ranked.items() if order and order[index] == fit.family
            ]
            out[f"{side}_by_{fit.family}_{dataset}"] = ", ".join(labels) if labels else "none"
    return out


# --- what the fits figure plots ----------------------------------------------------------------
# A log axis would put numpy's or the platform's log into the figure's vector files, whose bytes
# are published; so the figure plots exact log10 positions on a linear axis instead.


def log10_exact(values: Iterable[float]) -> list[float]:
    """``log10`` of each value, computed in :mod:`decimal` (correctly rounded) and then made a float.

    The same on every CPU, unlike ``math.log10``/``np.log10``, whose last bit may differ: the
    positions of points on a figure's log-time axis. ``ValueError`` for a value that is not > 0.
    """
    out = []
    for value in values:
        number = float(value)
        if not number > 0 or not math.isfinite(number):
            raise ValueError(f"values must be finite and > 0 to take log10, got {number!r}")
        out.append(float(Decimal(repr(number)).log10()))
    return out


def log_grid(first: float, last: float, points: int) -> tuple[np.ndarray, np.ndarray]:
    """``points`` positions evenly spaced in ``log10`` from ``first`` to ``last`` (hours), and the
    hours at them: ``(positions, hours)``, both computed exactly (:func:`log10_exact`; the hours as
    ``10 ** position`` in :mod:`decimal`). Where the fitted curves are drawn on both time axes.
    """
    if isinstance(points, bool) or not isinstance(points, int) or points < 2:
        raise ValueError(f"points must be an int >= 2, got {points!r}")
    low, high = log10_exact([first, last])
    if not low < high:
        raise ValueError(f"first must be below last, got first={first!r}, last={last!r}")
    positions = np.linspace(low, high, points)
    hours = np.array([float(Decimal(10) ** Decimal(repr(float(x)))) for x in positions])
    return positions, hours


def fit_residuals(
    fits: Sequence[FitResult], delay_hours: Sequence[float], savings: Sequence[float]
) -> list[np.ndarray]:
    """Fitted minus observed savings at each delay, per fit, from the published (rounded) parameters.

    Not :attr:`FitResult.residuals` (rounded to :data:`PUBLISHED_DECIMALS`): a residual rounded at
    a boundary would move the figure's vector files with the optimizer's last digits.
    """
    if len(delay_hours) != len(savings):
        raise ValueError(
            f"delay_hours and savings must have one length, got {len(delay_hours)} and {len(savings)}"
        )
    observed = np.asarray(savings, dtype=float)
    return [
        np.array(predict(fit.family, list(fit.parameters.values()), delay_hours), dtype=float) - observed
        for fit in fits
    ]


def symmetric_limit(residuals: Sequence[np.ndarray], steps_per_unit: int = 20) -> float:
    """The largest absolute residual rounded up to a multiple of ``1 / steps_per_unit`` (0.05 by
    default): the residual panel's y-axis runs from ``-limit`` to ``limit``. ``ValueError`` for no
    residuals or ``steps_per_unit < 1``."""
    if not residuals or not any(len(r) for r in residuals):
        raise ValueError("residuals must hold at least one value, got none")
    if isinstance(steps_per_unit, bool) or not isinstance(steps_per_unit, int) or steps_per_unit < 1:
        raise ValueError(f"steps_per_unit must be an int >= 1, got {steps_per_unit!r}")
    limit = max(float(np.abs(r).max()) for r in residuals if len(r))
    return float(np.ceil(limit * steps_per_unit) / steps_per_unit)
