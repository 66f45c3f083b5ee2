"""Argument checks shared by the science modules: one place, one wording.

Each ``*_problem`` function returns ``None`` for a good value or one sentence naming the
argument, the value and what is allowed; :func:`raise_problems` turns the collected
sentences into a single ``ValueError``, so a caller can report every bad value at once
and change nothing before it is sure. The ``require_*`` functions raise straight away.
``bool`` is never a number here: ``True`` is not a count, a weight or a threshold.

Memory ids follow one rule in every class (:func:`id_problem`): any hashable value but a
``bool`` or a value not equal to itself, numpy scalars read as the Python values they equal
(:func:`plain_id`).

The last part holds the conventions of every ``to_dict``/``from_dict``: JSON-safe data headed by
``"format"`` and ``"version"`` (:func:`json_header`, :func:`check_header`), ``str`` and ``int`` ids
only (:func:`json_id`), and every flaw of the data read back as one ``ValueError``
(:func:`reading`, :func:`json_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, cast

import numpy as np

__all__ = [
    "is_int",
    "is_real",
    "is_hashable",
    "int_problem",
    "real_problem",
    "raise_problems",
    "require_int",
    "require_real",
    "shown",
    "SHOWN_CHARS",
    "is_bool",
    "bool_problem",
    "seed_problem",
    "plain_id",
    "is_mergeable_id",
    "id_problem",
    "json_header",
    "check_header",
    "json_id",
    "json_rows",
    "reading",
]

#: The longest quotation of a bad value in a message: an error never costs more than its input.
SHOWN_CHARS = 80


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters (``...`` and the full length mark a cut).

    A value whose ``repr`` itself fails (or is huge) never makes the message fail or grow.
    """
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    if len(text) <= limit:
        return text
    return f"{text[: max(limit - 3, 1)]}... ({len(text)} characters)"


def is_int(value: object, allow_numpy: bool = False) -> bool:
    """``value`` is an ``int`` (a numpy integer too if ``allow_numpy``), not a ``bool``."""
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (int, np.integer)) if allow_numpy else isinstance(value, int)


def is_real(value: object) -> bool:
    """``value`` is a finite real number: int, float or numpy number, not a ``bool``.

    An int too large for a float is not finite.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def is_hashable(value: object) -> bool:
    """``hash(value)`` succeeds."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def int_problem(
    name: str,
    value: object,
    minimum: int | None = None,
    maximum: int | None = None,
    allow_numpy: bool = False,
) -> str | None:
    """``None`` if ``value`` is an int in ``[minimum, maximum]``, else the sentence saying why not."""
    if is_int(value, allow_numpy):
        number = int(cast(int, value))
        if (minimum is None or number >= minimum) and (maximum is None or number <= maximum):
            return None
    bounds = " and ".join(
        part
        for part in (
            f">= {minimum}" if minimum is not None else "",
            f"<= {maximum}" if maximum is not None else "",
        )
        if part
    )
    return f"{name} must be an int{' ' + bounds if bounds else ''}, got {shown(value)}"


def real_problem(
    name: str,
    value: object,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> str | None:
    """``None`` if ``value`` is a finite real number in the interval, else the sentence saying why not.

    The interval is ``[low, high]``; ``low_open``/``high_open`` exclude an end.
    """
    if is_real(value):
        number = float(cast(float, value))
        above = number > low if low_open else number >= low
        below = number < high if high_open else number <= high
        if above and below:
            return None
    if math.isinf(low) and math.isinf(high):
        allowed = "a finite real number"
    elif math.isinf(high):
        allowed = f"a finite real number {'>' if low_open else '>='} {low:g}"
    elif math.isinf(low):
        allowed = f"a finite real number {'<' if high_open else '<='} {high:g}"
    else:
        allowed = f"a real number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    return f"{name} must be {allowed}, got {shown(value)}"


def raise_problems(problems: Iterable[str | None], prefix: str = "") -> None:
    """Raise one ``ValueError`` listing every problem (``None`` entries are skipped); else return."""
    found = [p for p in problems if p]
    if found:
        raise ValueError(prefix + "; ".join(found))


def require_int(
    name: str,
    value: object,
    minimum: int | None = None,
    maximum: int | None = None,
    allow_numpy: bool = False,
) -> int:
    """``value`` as an int, or ``ValueError`` from :func:`int_problem`."""
    raise_problems([int_problem(name, value, minimum, maximum, allow_numpy)])
    return int(cast(int, value))


def require_real(
    name: str,
    value: object,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a float, or ``ValueError`` from :func:`real_problem`."""
    raise_problems([real_problem(name, value, low, high, low_open=low_open, high_open=high_open)])
    return float(cast(float, value))


def is_bool(value: object) -> bool:
    """``value`` is a ``bool`` or a ``numpy.bool_`` (``0``, ``1``, ``"no"`` and ``None`` are not)."""
    return isinstance(value, (bool, np.bool_))


def bool_problem(name: str, value: object) -> str | None:
    """``None`` if ``value`` is a ``bool`` (or ``numpy.bool_``), else the sentence saying why not.

    A flag is never read by truthiness: ``"no"`` and ``-1`` are truthy, so coercing them would
    store the opposite of what was meant.
    """
    if is_bool(value):
        return None
    return f"{name} must be a bool (True or False), got {shown(value)}"


def seed_problem(name: str, value: object) -> str | None:
    """``None`` if ``value`` is an int ``>= 0`` (numpy ints too), else the sentence saying why not.

    Negative seeds are refused because the generators do not keep them apart:
    ``random.Random(-s)`` is ``random.Random(s)``, and ``numpy.random.SeedSequence`` raises on them.
    """
    return int_problem(name, value, minimum=0, allow_numpy=True)


# --- memory ids ---------------------------------------------------------------------------------


def plain_id(mem_id: Any) -> Any:
    """``mem_id`` as a Python value: numpy scalars hash and compare like Python numbers."""
    return mem_id.item() if isinstance(mem_id, np.generic) else mem_id


def is_mergeable_id(key: Any) -> bool:
    """``key`` (a hashable plain value) would merge with another id or never be found again:
    a ``bool`` (``True == 1``, same hash) or a value not equal to itself (NaN)."""
    if isinstance(key, (bool, np.bool_)):
        return True
    try:
        return bool(key != key)
    except Exception:  # a comparison that fails cannot find the key again either
        return True


def id_problem(name: str, mem_id: Any) -> str | None:
    """``None`` if ``mem_id`` can be a memory id (hashable, not a ``bool``, equal to itself), else
    the sentence saying why not; pass it through :func:`plain_id` first."""
    if not is_hashable(mem_id):
        return f"{name} must be hashable, got {shown(mem_id)}"
    if is_mergeable_id(mem_id):
        return (
            f"{name} must not be a bool or a value that is not equal to itself (True would be the id 1, "
            f"a NaN is never found again), got {shown(mem_id)}"
        )
    return None


# --- to_dict / from_dict ------------------------------------------------------------------------


def json_header(format_name: str, version: int) -> dict[str, Any]:
    """``{"format": format_name, "version": version}``, the head of every ``to_dict``."""
    return {"format": format_name, "version": version}


def check_header(data: object, format_name: str, version: int) -> dict[str, Any]:
    """``data`` if it is a dict of format ``format_name`` and version ``version``, else a ``ValueError``
    saying what it got and what this library reads."""
    if not isinstance(data, dict):
        raise ValueError(f"data must be a dict with format {format_name!r}, got {shown(data)}")
    if data.get("format") != format_name:
        got = f"format {shown(data['format'])}" if "format" in data else f"no format in {shown(data)}"
        raise ValueError(f"data must be a dict with format {format_name!r}, got {got}")
    found = data.get("version")
    if type(found) is not int or found != version:
        raise ValueError(f"data has version {shown(found)}; this library reads version {version}")
    return data


def json_id(mem_id: Any, what: str = "id") -> Any:
    """``mem_id`` if JSON reads it back as the same id (a ``str`` or an ``int``), else a ``ValueError``
    naming it: a JSON key or value is never a tuple, a float id would come back as another number."""
    if type(mem_id) is str or type(mem_id) is int:
        return mem_id
    raise ValueError(
        f"to_dict writes str and int ids only (JSON reads nothing else back as the same id), "
        f"got the {what} {shown(mem_id)} ({type(mem_id).__name__})"
    )


def json_rows(data: dict[str, Any], key: str, width: int) -> list[list[Any]]:
    """``data[key]``, a list of lists of ``width`` entries each, or a ``ValueError`` showing it."""
    rows = data[key]
    if not isinstance(rows, list) or not all(isinstance(row, list) and len(row) == width for row in rows):
        raise ValueError(f"data[{key!r}] must be a list of lists of {width} entries, got {shown(rows)}")
    return rows


@contextmanager
def reading(what: str) -> Iterator[None]:
    """Turn the ``KeyError``, ``TypeError``, ``IndexError`` or ``AttributeError`` of reading damaged
    data into a ``ValueError`` naming ``what`` the data should have been."""
    try:
        yield
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        article = "an" if what[:1] in tuple("AEIOU") else "a"
        raise ValueError(
            f"data is not {article} {what}'s to_dict ({type(error).__name__}: {error})"
        ) from None
