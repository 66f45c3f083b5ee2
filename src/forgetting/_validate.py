"""Argument checks shared by the science modules: one place, one wording.

Each ``*_problem`` function returns ``None`` for a good value or one sentence naming the
argument, the value and what is allowed; :func:`raise_problems` turns the collected
sentences into a single ``ValueError``, so a caller can report every bad value at once
and change nothing before it is sure. The ``require_*`` functions raise straight away.
``bool`` is never a number here: ``True`` is not a count, a weight or a threshold.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import cast

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
