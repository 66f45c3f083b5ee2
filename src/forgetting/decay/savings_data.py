"""Human forgetting data shipped in ``data/curves/``: read, checked, and returned as plain tuples.

A savings file is a CSV with exactly the columns ``delay_hours``, ``savings_percent`` and
``probable_error_percent``: the delay between learning and relearning (hours, strictly
increasing, > 0), the savings (percent of the original learning time saved on relearning, in
[0, 100]) and the probable error of that mean as printed by the source (percent, >= 0). Where
each number comes from is in ``data/curves/README.md``.

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
    "SAVINGS_FILES",
    "BENCHMARK_COLUMNS",
    "BENCHMARK_FILE",
    "SavingsCurve",
    "load_savings",
    "parse_savings",
    "load_curve_benchmark",
]

SAVINGS_COLUMNS = ("delay_hours", "savings_percent", "probable_error_percent")
"""The header every savings file must have, in this order."""
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
    """

    name: str
    delay_hours: tuple[float, ...]
    savings: tuple[float, ...]
    probable_error: tuple[float, ...]

    @property
    def delay_days(self) -> tuple[float, ...]:
        """Delays in days (hours / 24)."""
        return tuple(h / 24.0 for h in self.delay_hours)


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
    if not rows or tuple(cell.strip() for cell in rows[0]) != SAVINGS_COLUMNS:
        header = rows[0] if rows else []
        raise ValueError(
            f"{source}: the header must be {','.join(SAVINGS_COLUMNS)}, got {','.join(header)!r}"
        )
    delays: list[float] = []
    savings: list[float] = []
    errors: list[float] = []
    for line, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(SAVINGS_COLUMNS):
            raise ValueError(f"{source}, line {line}: expected {len(SAVINGS_COLUMNS)} fields, got {len(row)}")
        delay, saving, error = (
            _number(source, line, column, cell) for column, cell in zip(SAVINGS_COLUMNS, row)
        )
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
    return SavingsCurve(name, tuple(delays), tuple(savings), tuple(errors))


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
