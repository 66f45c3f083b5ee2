"""Values as the book publishes them: every float at :data:`PUBLISHED_DIGITS` significant digits,
in the record (glued values), in the CSV tables and so in the prose."""

from __future__ import annotations

import io
import math
from typing import Any

#: Significant digits of every float a chapter publishes: glued values (and so the JSON record and
#: the prose) and table cells. float64 carries 15-17; two CPUs that run other SIMD code for
#: ``exp``/``log`` or sum in another order differ in the last one to three of them (a few ulp,
#: or about ``n * 1e-16`` relative for a sum of ``n`` terms). Ten digits keep five or more below
#: the published ones, so such noise changes a published value only when it lies within that
#: noise of a rounding boundary. See the reproducibility page.
PUBLISHED_DIGITS = 10


def publishable(frame: Any) -> Any:
    """``frame`` with the floats of its text columns at :data:`PUBLISHED_DIGITS` (a float column is
    rounded when written, by :func:`csv_text`)."""
    return frame.apply(lambda column: column.map(published_value) if column.dtype == object else column)


def csv_text(frame: Any) -> str:
    """A table's CSV as the book publishes it: floats at :data:`PUBLISHED_DIGITS`, ``\\n`` ends, no index."""
    buffer = io.StringIO()
    publishable(frame).to_csv(buffer, index=False, lineterminator="\n", float_format=f"%.{PUBLISHED_DIGITS}g")
    return buffer.getvalue()


def published_value(value: Any) -> Any:
    """A float as the book publishes it: rounded to :data:`PUBLISHED_DIGITS` significant digits
    (``nan`` and infinities as they are); anything else unchanged."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{PUBLISHED_DIGITS}g}")
    return value


def glue_value(value: Any) -> Any:
    """A glued value as the record keeps it: a bool, an int, a string, or a float at :data:`PUBLISHED_DIGITS`."""
    if isinstance(value, bool):
        return value
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, (int, float, str)):
        return published_value(value)
    raise TypeError(f"glue only plain numbers or strings, got {value!r}")
