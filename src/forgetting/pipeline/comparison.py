"""Compare a run with the published files: per file ``identical`` or where it first differs.

A published file belongs to the chapter whose name is the longest prefix of its stem
(``decay-headline-summary.csv`` -> ``decay-headline``); a file that belongs to none is a stray.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._validate import SHOWN_CHARS
from .chapter_run import ChapterRun
from .chapters import chapter_names
from .paths import results_dir

IDENTICAL = "identical"


def owner(file_name: str, names: Iterable[str] | None = None) -> str | None:
    """The chapter a published file belongs to: the longest chapter name it starts with."""
    stem = file_name.split(".", 1)[0]
    matches = [n for n in (names or chapter_names()) if stem == n or stem.startswith(n + "-")]
    return max(matches, key=len) if matches else None


def published_files(folder: Path, name: str) -> list[Path]:
    """The files of ``folder`` that belong to chapter ``name`` (hidden files excluded)."""
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.iterdir() if not p.name.startswith(".") and p.is_file() and owner(p.name) == name
    )


def strays(root: Path) -> list[Path]:
    """Files in ``data/results/`` that belong to no chapter (left by an older layout or tool).

    Hidden files are not strays, as they are not published files (:func:`published_files`): a
    publication stages its files there as hidden temp files under the publishing lock, so a
    reader without the lock (``forgetting verify``) could meet them; recovery removes any left.
    """
    folder = results_dir(root)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and owner(p.name) is None)


def first_difference(name: str, new: bytes, old: bytes) -> str:
    """Where two versions of a published file first differ, in the reader's terms.

    A JSON or CSV version that is not valid UTF-8 is said to be so, with the byte; one that does
    not parse is compared byte by byte. Values are quoted cut to a short prefix.
    """
    if name.endswith((".json", ".csv")):
        for version, data in (("new", new), ("published", old)):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as error:
                return f"the {version} file is not valid UTF-8 at byte {error.start}"
    if name.endswith(".json"):
        try:
            found = _json_difference(json.loads(new), json.loads(old), "")
        except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
            found = None
        if found:
            return found
    if name.endswith(".csv"):
        try:
            new_rows, old_rows = (list(csv.reader(io.StringIO(b.decode()))) for b in (new, old))
        except csv.Error:  # e.g. a field over csv.field_size_limit(): compared byte by byte below
            pass
        else:
            return _csv_difference(new_rows, old_rows)
    for offset, (byte, published) in enumerate(zip(new, old)):
        if byte != published:
            return f"first differing byte at offset {offset}"
    return f"{len(new)} bytes (published {len(old)})"


def _cut(text: str) -> str:
    """``text``, or its first characters and its length if it is longer than ``SHOWN_CHARS``."""
    return text if len(text) <= SHOWN_CHARS else f"{text[: SHOWN_CHARS - 3]}... ({len(text)} characters)"


def _csv_difference(new_rows: list[list[str]], old_rows: list[list[str]]) -> str:
    header = old_rows[0] if old_rows else []
    for index, (a, b) in enumerate(zip(new_rows, old_rows)):
        if a != b:
            for column, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    label = _cut(header[column]) if column < len(header) else column
                    return f"row {index}, column {label}: {_cut(x)} (published {_cut(y)}){_relative(x, y)}"
            return f"row {index}: {len(a)} fields (published {len(b)})"
    return f"{len(new_rows)} rows (published {len(old_rows)})"


#: Keys that only summarise other data (a record's digest, the digests of its tables, whose own
#: files name the cell that moved): named only when nothing else differs.
SUMMARY_KEYS = ("digest", "tables")


def _json_difference(new: Any, old: Any, where: str) -> str | None:
    """The first differing value, in sorted-key order, a summary key (the digest) last."""
    if isinstance(new, dict) and isinstance(old, dict):
        keys = sorted(set(new) | set(old))
        for key in [k for k in keys if k not in SUMMARY_KEYS] + [k for k in keys if k in SUMMARY_KEYS]:
            here = f"{where}.{key}" if where else key
            if key not in old:
                return f"{_cut(here)}: new, not published"
            if key not in new:
                return f"{_cut(here)}: published, not produced"
            found = _json_difference(new[key], old[key], here)
            if found:
                return found
        return None
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        for index, (a, b) in enumerate(zip(new, old)):
            found = _json_difference(a, b, f"{where}[{index}]")
            if found:
                return found
        return None
    if new != old or type(new) is not type(old):
        return (
            f"{_cut(where)}: {_cut(json.dumps(new))} (published {_cut(json.dumps(old))}){_relative(new, old)}"
        )
    return None


def _number(value: Any) -> float | None:
    """A finite number (a JSON number, or a CSV cell that reads as one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _relative(new: Any, old: Any) -> str:
    """For two numbers, their relative difference; and, when both are published at the stated
    precision and differ by one unit of their last digit, that this is float noise (another
    CPU's last bits pushed a value over a rounding boundary), not a changed result."""
    from .values import PUBLISHED_DIGITS, published_value

    a, b = _number(new), _number(old)
    if a is None or b is None or b == 0:
        return ""
    relative = abs(a - b) / abs(b)
    rounded = published_value(a) == a and published_value(b) == b
    unit = 10.0 ** (math.floor(math.log10(abs(b))) - PUBLISHED_DIGITS + 1)  # the last digit's unit
    if rounded and abs(a - b) <= unit * (1 + 1e-6):
        return (
            f"; relative difference {relative:.1e}, one unit of the last of the {PUBLISHED_DIGITS} "
            "published digits: a rounding boundary crossed by float noise (another CPU or library), "
            "not a changed result"
        )
    return f"; relative difference {relative:.1e}"


def file_report(root: Path, run: ChapterRun) -> list[tuple[str, str]]:
    """Each file of the run or of the published set, with ``identical`` or how it differs."""
    staged = {p.name: p for p in run.results}
    published = {p.name: p for p in published_files(results_dir(root), run.name)}
    report = []
    for file_name in sorted(set(staged) | set(published)):
        new, old = staged.get(file_name), published.get(file_name)
        if new is None:
            report.append((file_name, "published but not produced"))
        elif old is None:
            report.append((file_name, "produced but never published"))
        elif new.read_bytes() != old.read_bytes():
            report.append((file_name, first_difference(file_name, new.read_bytes(), old.read_bytes())))
        else:
            report.append((file_name, IDENTICAL))
    return report


def compare(root: Path, run: ChapterRun) -> list[str]:
    """Differences between a run and the chapter's published set (empty if identical)."""
    return [f"{name}: {status}" for name, status in file_report(root, run) if status != IDENTICAL]


class ResultsChanged(RuntimeError):
    """A build in CI rewrote committed published results (the message lists how many)."""


def committed_differences(root: Path) -> list[str] | None:
    """Published files of ``data/results/`` that differ from the committed ones, as ``git status``
    lines (``M data/results/x.json``), or None when ``root`` is not a git checkout."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all", "--", "data/results"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]
