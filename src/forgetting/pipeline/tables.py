"""Tables as the book shows them: numbered, captioned, formatted, with a link to their CSV.

A chapter's table is published twice: as ``results/<chapter>-<name>.csv`` (every float at
:data:`~forgetting.pipeline.values.PUBLISHED_DIGITS` significant digits, the file a reader
downloads and a test compares) and on the page, where :func:`myst_table` renders it as a MyST
``list-table``. Sphinx numbers that table ("Table 2") and anchors it at ``#table-<chapter>-<name>``,
so a reader can cite it; its caption ends with the CSV's address in the site, ``results/...``.

On the page each cell is formatted by its own type, never by its column's: an ``int`` (or a
numpy integer) as an integer, a ``float`` at the table's precision (``digits`` overrides it per
column), a missing value (``None``, NaN) as :data:`MISSING`, a ``bool`` as yes or no, text
as it is (escaped, so that no character reads as Markdown). Headers are the column names with
``_`` read as a space, :data:`WORDS` spelled as the book spells them, and the first letter
capitalized; ``headers`` renames a column outright (units belong there).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

MISSING = "—"
"""What a missing value shows (an em dash), never ``nan`` or ``None``."""
WORDS = {
    "frr": "FRR",
    "mw": "MW",
    "sd": "sd",
    "se": "se",
    "ci": "CI",
    "id": "id",
    "aic": "AIC",
    "aicc": "AICc",
    "bic": "BIC",
    "rmse": "RMSE",
    "loo": "LOO",
    "ci95": "95 % CI",
    "rho": "ρ",
    "epsilon": "ε",
    "p": "p",
    "k": "k",
    "n": "n",
}
"""Words of a column name that keep their own spelling in a header (acronyms, symbols)."""
PHRASES = {"p_plus": "p⁺"}
"""Runs of words read as one symbol before the words are spelled."""
TABLE_CLASS = "forgetting-table"
"""The HTML class of every table (``book/_static/forgetting.css`` fits it to the page)."""
_MARKDOWN = re.compile(r"([!-/:-@\[-`{-~])")  # ASCII punctuation: CommonMark escapes any of it


def header_text(name: str) -> str:
    """``"frr_mean"`` -> ``"FRR mean"``, ``"S_se"`` -> ``"S se"``; a name with a space is kept."""
    if " " in name:
        return name
    for phrase, symbol in PHRASES.items():
        name = name.replace(phrase, symbol)
    words = [WORDS.get(word, word) for word in name.split("_") if word]
    text = " ".join(words)
    symbols = {*WORDS.values(), *PHRASES.values()}
    keep = words[0] in symbols or words[0] != words[0].lower() if words else True
    return text if keep else text[:1].upper() + text[1:]


def cell_text(value: Any, precision: int | str, missing: str = MISSING) -> str:
    """One cell as the page shows it (module docstring), unescaped; ``precision`` is a float's
    number of decimals, or a format spec for it (``".1e"``)."""
    import pandas as pd

    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalar -> its Python type
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "∞" if value > 0 else "−∞"
        return format(value, precision) if isinstance(precision, str) else f"{value:.{precision}f}"
    return str(value)


def _check_spec(label: str, column: str, spec: Any) -> None:
    """A float's decimals (an int >= 0) or a format spec that formats a float."""
    if isinstance(spec, bool) or not isinstance(spec, (int, str)) or (isinstance(spec, int) and spec < 0):
        raise ValueError(
            f"table {label!r}: {column}={spec!r}; allowed: an integer >= 0 or a format spec such as '.1e'"
        )
    if isinstance(spec, str):
        try:
            format(0.5, spec)
        except ValueError:
            raise ValueError(f"table {label!r}: {column}={spec!r} is no format spec for a float") from None


def escape(text: str) -> str:
    """``text`` on one line, every ASCII punctuation mark backslash-escaped: read as Markdown in a
    table cell, it is itself."""
    return _MARKDOWN.sub(r"\\\1", " ".join(text.splitlines()))


def rows_of(table: Sequence[Mapping[str, Any]] | Any) -> tuple[list[str], list[list[Any]]]:
    """The columns and the cells of a list of mappings or a DataFrame, each cell with its own type
    (a DataFrame's integer column gives ints, and an index other than 0, 1, ... is its first
    columns; the rows of a list are taken as they are)."""
    if hasattr(table, "columns") and hasattr(table, "itertuples"):
        import pandas as pd

        frame: Any = table
        if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 or frame.index.step != 1:
            frame = frame.reset_index()
        columns = [str(c) for c in frame.columns]
        return columns, [list(row) for row in frame.astype(object).itertuples(index=False, name=None)]
    rows = list(table)
    columns = []
    for row in rows:
        columns += [str(c) for c in row if str(c) not in columns]
    return columns, [[row.get(c) for c in columns] for row in rows]


def myst_table(
    table: Sequence[Mapping[str, Any]] | Any,
    *,
    label: str,
    caption: str,
    csv: str | None = None,
    precision: int | str = 3,
    digits: Mapping[str, int | str] | None = None,
    headers: Mapping[str, str] | None = None,
    missing: str = MISSING,
    columns: Sequence[str] | None = None,
) -> str:
    """A MyST ``list-table`` of ``table`` with ``caption`` (MyST text, not escaped), anchored as
    ``label``; ``csv`` is the address of the CSV behind it, named at the caption's end;
    ``digits`` gives a column its own decimals or format spec (``".1e"``); ``missing`` is what
    a missing value shows where a dash would say too little ("not given"); ``columns`` names
    the columns shown, in order, where all would not fit the page (the CSV keeps every one)."""
    if not caption.strip():
        raise ValueError(f"table {label!r}: caption is empty; every table has one")
    digits = dict(digits or {})
    for column, spec in [("precision", precision), *digits.items()]:
        _check_spec(label, column, spec)
    every, rows = rows_of(table)
    if not every:
        raise ValueError(f"table {label!r} has no columns")
    columns = list(every if columns is None else columns)
    absent = [c for c in columns if c not in every]
    if absent or not columns or len(set(columns)) < len(columns):
        raise ValueError(f"table {label!r}: columns={columns}; allowed: distinct names among {every}")
    rows = [[row[every.index(c)] for c in columns] for row in rows]
    headers = dict(headers or {})
    unknown = sorted((set(digits) | set(headers)) - set(columns))
    if unknown:
        raise ValueError(f"table {label!r}: no column {unknown} (columns: {columns})")
    title = caption.strip()
    if csv is not None:
        title += f' Data: <a class="reference download" href="{csv}">{csv}</a>.'

    def item(first: bool, text: str) -> str:
        return f"{'* -' if first else '  -'} {text}" if text else ("* -" if first else "  -")

    lines = [f"```{{list-table}} {title}", ":header-rows: 1", f":name: {label}", f":class: {TABLE_CLASS}", ""]
    header_row = [escape(headers.get(c, header_text(c))) for c in columns]
    for row in [header_row] + [
        [escape(cell_text(v, digits.get(c, precision), missing)) for c, v in zip(columns, cells)]
        for cells in rows
    ]:
        lines += [item(i == 0, text) for i, text in enumerate(row)]
    return "\n".join(lines + ["```", ""])


def raw_tables(notebook: Mapping[str, Any]) -> list[int]:
    """The indices of the code cells of an executed ``notebook`` (its JSON) that show an HTML
    table: a DataFrame or a Styler left as a cell's result, instead of a :func:`myst_table`."""
    return [
        index
        for index, cell in enumerate(notebook.get("cells", []))
        if cell.get("cell_type") == "code"
        and any(
            "<table" in "".join(output.get("data", {}).get("text/html", ""))
            for output in cell.get("outputs", [])
        )
    ]
