"""Human forgetting data shipped in ``data/curves/``: read, checked, and returned as plain tuples.

A savings file is a CSV with exactly the columns ``delay_hours``, ``savings_percent`` and
``probable_error_percent``: the delay between learning and relearning (hours, strictly
increasing, > 0), the savings (percent of the original learning time saved on relearning, in
[0, 100]) and the probable error of that mean as printed by the source (percent, >= 0). An
optional fourth column ``formula_t_minutes`` holds the exact times a source gives beside the
nominal delays: Ebbinghaus's ``t``, minutes counted from one minute before the end of learning
(strictly increasing, >= 1, and within 10 % of the nominal delay once his minute is taken off,
so that a shifted row is caught). Where each number comes from is in ``data/curves/README.md``.

A file that breaks a rule raises ``ValueError`` naming the file, the line, the field, the value
and what is allowed; nothing is returned half-read.
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SAVINGS_COLUMNS",
    "CORRECTED_COLUMN",
    "SAVINGS_FILES",
    "BENCHMARK_COLUMNS",
    "BENCHMARK_FILE",
    "SavingsCurve",
    "load_savings",
    "parse_savings",
    "savings_table",
    "load_curve_benchmark",
]

SAVINGS_COLUMNS = ("delay_hours", "savings_percent", "probable_error_percent")
"""The header every savings file must have, in this order."""
CORRECTED_COLUMN = "formula_t_minutes"
"""Optional fourth column: the source's exact time ``t`` in minutes from one minute before the end of learning."""
_CORRECTED_TOLERANCE = 0.10  # |(t - 1) - 60 h| <= 10 % of 60 h: the exact time is the nominal one, corrected
SAVINGS_FILES = {"ebbinghaus1885": Path("data") / "curves" / "ebbinghaus1885.csv"}
"""Data set name -> file, relative to the repository root (only numbers verified at their source)."""
_MIN_ROWS = 3  # fewer points than a two-parameter curve plus one cannot be compared


@dataclass(frozen=True)
class SavingsCurve:
    """One forgetting curve measured by the method of savings.

    Attributes
    ----------
    name : str
        Data set name (e.g. ``ebbinghaus1885``).
    delay_hours : tuple of float
        Delays since learning, strictly increasing, in hours.
    savings : tuple of float
        Savings as proportions in [0, 1] (the file's percent / 100).
    probable_error : tuple of float
        The source's probable error of each mean, as a proportion.
    formula_t_minutes : tuple of float or None
        The source's exact times, if it gives them: Ebbinghaus's ``t``, minutes counted from one
        minute before the end of learning (``None`` when the file has no such column).
    """

    name: str
    delay_hours: tuple[float, ...]
    savings: tuple[float, ...]
    probable_error: tuple[float, ...]
    formula_t_minutes: tuple[float, ...] | None = None

    @property
    def delay_days(self) -> tuple[float, ...]:
        """Delays in days (hours / 24)."""
        return tuple(h / 24.0 for h in self.delay_hours)

    @property
    def corrected_delay_hours(self) -> tuple[float, ...]:
        """Delays since the end of learning from the exact times: ``(t - 1) / 60`` hours.

        Ebbinghaus counts ``t`` from one minute before the end of learning, so the delay after
        it is ``t - 1`` minutes. Without a ``formula_t_minutes`` column, the nominal delays.

        >>> SavingsCurve("x", (0.33, 1.0), (0.5, 0.4), (0.01, 0.01), (20.0, 64.0)).corrected_delay_hours
        (0.31666666666666665, 1.05)
        """
        if self.formula_t_minutes is None:
            return self.delay_hours
        return tuple((t - 1.0) / 60.0 for t in self.formula_t_minutes)


def load_savings(path: str | os.PathLike[str], name: str | None = None) -> SavingsCurve:
    """Read and check a savings CSV (see the module docstring); ``name`` defaults to the file stem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"savings file {str(path)!r} cannot be read: {error.strerror}") from None
    return parse_savings(text, name or path.stem, str(path))


def parse_savings(text: str, name: str, source: str = "<savings>") -> SavingsCurve:
    """Parse the text of a savings CSV; ``source`` names it in error messages."""
    rows = list(csv.reader(io.StringIO(text)))
    header = tuple(cell.strip() for cell in rows[0]) if rows else ()
    if header not in (SAVINGS_COLUMNS, (*SAVINGS_COLUMNS, CORRECTED_COLUMN)):
        raise ValueError(
            f"{source}: the header must be {','.join(SAVINGS_COLUMNS)}[,{CORRECTED_COLUMN}], got {','.join(header)!r}"
        )
    delays: list[float] = []
    savings: list[float] = []
    errors: list[float] = []
    exact: list[float] = []
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise ValueError(f"{source}, line {line}: expected {len(header)} fields, got {len(row)}")
        numbers = [_number(source, line, column, cell) for column, cell in zip(header, row)]
        delay, saving, error = numbers[:3]
        if len(numbers) == 4:
            exact.append(_exact_time(source, line, numbers[3], delay, exact[-1] if exact else None))
        if not delay > 0:
            raise ValueError(f"{source}, line {line}: delay_hours must be > 0 (hours), got {delay!r}")
        if delays and not delay > delays[-1]:
            raise ValueError(
                f"{source}, line {line}: delay_hours must increase strictly, got {delay!r} after {delays[-1]!r}"
            )
        if not 0.0 <= saving <= 100.0:
            raise ValueError(
                f"{source}, line {line}: savings_percent must be in [0, 100] (percent), got {saving!r}"
            )
        if not error >= 0.0:
            raise ValueError(f"{source}, line {line}: probable_error_percent must be >= 0, got {error!r}")
        delays.append(delay)
        savings.append(saving / 100.0)
        errors.append(error / 100.0)
    if len(delays) < _MIN_ROWS:
        raise ValueError(f"{source}: needs at least {_MIN_ROWS} data rows, got {len(delays)}")
    return SavingsCurve(name, tuple(delays), tuple(savings), tuple(errors), tuple(exact) if exact else None)


def savings_table(curve: SavingsCurve) -> list[dict[str, float | None]]:
    """One row per delay: the nominal delay (hours), the exact ``t`` (minutes, ``None`` if absent),
    the delay since the end of learning the fits use (:attr:`SavingsCurve.corrected_delay_hours`,
    rounded to 6 decimals), the savings and the probable error (proportions)."""
    exact = curve.formula_t_minutes or (None,) * len(curve.delay_hours)
    return [
        {"delay_hours": h, "formula_t_minutes": t, "fit_delay_hours": round(c, 6), "savings": s, "probable_error": e}
        for h, t, c, s, e in zip(curve.delay_hours, exact, curve.corrected_delay_hours, curve.savings,
                                 curve.probable_error)
    ]  # fmt: skip


def _exact_time(source: str, line: int, minutes: float, delay_hours: float, previous: float | None) -> float:
    """Check one ``formula_t_minutes`` cell against its row's nominal delay and the row before."""
    if not minutes >= 1.0:
        raise ValueError(f"{source}, line {line}: {CORRECTED_COLUMN} must be >= 1 (minutes), got {minutes!r}")
    if previous is not None and not minutes > previous:
        raise ValueError(
            f"{source}, line {line}: {CORRECTED_COLUMN} must increase strictly, got {minutes!r} after {previous!r}"
        )
    nominal = 60.0 * delay_hours
    if abs((minutes - 1.0) - nominal) > _CORRECTED_TOLERANCE * nominal:
        raise ValueError(
            f"{source}, line {line}: {CORRECTED_COLUMN} - 1 must be within "
            f"{_CORRECTED_TOLERANCE:.0%} of 60 * delay_hours = {nominal:g} minutes, got {minutes!r}"
        )
    return minutes


def _number(source: str, line: int, column: str, cell: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise ValueError(f"{source}, line {line}: {column} must be a number, got {cell!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{source}, line {line}: {column} must be finite, got {cell!r}")
    return value


BENCHMARK_COLUMNS = ("algorithm", "curve", "decay", "weighting", "log_loss", "rmse_bins", "users")
"""The header of ``data/curves/srs-benchmark.csv`` (figures quoted from the FSRS benchmark)."""
BENCHMARK_FILE = Path("data") / "curves" / "srs-benchmark.csv"


def load_curve_benchmark(path: str | os.PathLike[str]) -> list[dict[str, str | float]]:
    """Read the quoted spaced-repetition benchmark rows, checking the header and every number.

    ``decay`` must be > 0, ``log_loss`` and ``rmse_bins`` in [0, 1] (errors of a recall
    probability) and ``users`` >= 1; rows come back in file order with those fields as floats.
    """
    path = Path(path)
    source = str(path)
    try:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    except OSError as error:
        raise ValueError(f"benchmark file {source!r} cannot be read: {error.strerror}") from None
    if not rows or tuple(rows[0]) != BENCHMARK_COLUMNS:
        raise ValueError(
            f"{source}: the header must be {','.join(BENCHMARK_COLUMNS)}, got {rows[0] if rows else []!r}"
        )
    ranges = {"decay": (0.0, math.inf, "> 0"), "log_loss": (0.0, 1.0, "in [0, 1]"),
              "rmse_bins": (0.0, 1.0, "in [0, 1]"), "users": (1.0, math.inf, ">= 1")}  # fmt: skip
    out: list[dict[str, str | float]] = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(BENCHMARK_COLUMNS):
            raise ValueError(
                f"{source}, line {line}: expected {len(BENCHMARK_COLUMNS)} fields, got {len(row)}"
            )
        entry: dict[str, str | float] = {}
        for column, cell in zip(BENCHMARK_COLUMNS, row):
            if column not in ranges:
                entry[column] = cell
                continue
            value = _number(source, line, column, cell)
            low, high, allowed = ranges[column]
            if not (value > low if column == "decay" else low <= value <= high):
                raise ValueError(f"{source}, line {line}: {column} must be {allowed}, got {value!r}")
            entry[column] = value
        out.append(entry)
    return out
