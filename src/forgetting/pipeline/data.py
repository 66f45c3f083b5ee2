"""The external data sets a chapter may need, by name, and what a chapter shows without them.

A chapter declares the data it needs in :attr:`forgetting.pipeline.chapters.ChapterSpec.data`
and asks for each with :meth:`forgetting.pipeline.chapter.Chapter.require_data`. Each entry of
:data:`DATA_SETS` returns a verified path, or raises the data source's ``DataUnavailable`` (a
``FileNotFoundError`` whose one-line message says what was tried and how to get the data) when
no copy is configured and none can be had (no network, no local copy); any other error (a copy
with the wrong digest, a path the user named that does not exist or is not a regular file, a
bad argument) is raised as it is. The sources are imported on first use, never when the pipeline
loads (so ``forgetting`` starts fast), and the registry imports data sources only, never an
experiment.

Without its data a chapter is *not rerun*: it shows its committed results instead
(:func:`published_values`, :func:`published_table`) under :func:`not_rerun_notice`, and the
pipeline never publishes such a run (see :mod:`forgetting.pipeline.run`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .paths import results_dir


def _locomo() -> Path:
    from ..conversations.source import locomo_zip

    return locomo_zip()


def _longmemeval() -> Path:
    from ..conversations.longmemeval_source import longmemeval_copy

    return longmemeval_copy()


#: Each data set's name and the function that returns its verified path: ``locomo``, the LoCoMo
#: zip; ``longmemeval``, a zip or folder holding every LongMemEval file of the committed manifest
#: (read it with :func:`forgetting.conversations.longmemeval.load_longmemeval`).
DATA_SETS: dict[str, Callable[[], Path]] = {"locomo": _locomo, "longmemeval": _longmemeval}


def unavailable() -> type[FileNotFoundError]:
    """The exception a :data:`DATA_SETS` function raises when no copy can be had (and only then)."""
    from ..conversations.source import DataUnavailable

    return DataUnavailable


def locate(name: str) -> Path:
    """The verified path of data set ``name``: ``DATA_SETS[name]()``.

    Raises ``ValueError`` for a name not in :data:`DATA_SETS`, and whatever the data set's
    function raises (:func:`unavailable` when no copy can be had).
    """
    if not isinstance(name, str) or name not in DATA_SETS:
        raise ValueError(f"data set name={name!r} is unknown; allowed: {sorted(DATA_SETS)}")
    return DATA_SETS[name]()


# --- what a chapter shows when it cannot be rerun --------------------------------------------
_PUBLISH_HINT = "publish the chapter first where its data is available (`forgetting verify --update`)"


def not_rerun_notice(chapter: str, reason: str, published: bool) -> str:
    """The page's one notice (MyST) that ``chapter`` was not rerun: why and how to get the data
    (``reason``, shown verbatim), and that the page shows the published results."""
    what = "its published results" if published else "its published results (at the published parameters)"
    return (
        f":::{{admonition}} Not rerun: the data is not available\n:class: warning\n\n"
        f"This run could not compute the chapter again, so the page shows {what} and nothing of "
        f"this run is published. Why, and how to get the data:\n\n```text\n{reason}\n```\n\n"
        f"Then `forgetting run {chapter}` reruns it.\n:::\n"
    )


def published_values(root: Path, chapter: str) -> dict[str, Any]:
    """The ``values`` of the committed record ``data/results/<chapter>.json``."""
    path = results_dir(root) / f"{chapter}.json"
    if not path.is_file():
        raise FileNotFoundError(f"chapter {chapter}: no published record {path}; {_PUBLISH_HINT}")
    values = json.loads(path.read_text(encoding="utf-8")).get("values")
    if not isinstance(values, dict):
        raise ValueError(f"chapter {chapter}: {path} holds no 'values' mapping; {_PUBLISH_HINT}")
    return values


def published_table(root: Path, chapter: str, name: str) -> tuple[Any, str]:
    """The committed table ``data/results/<chapter>-<name>.csv``: a DataFrame and the file's text.

    Empty cells are read as missing and every other text as written (``"NA"`` stays a string).
    """
    import pandas as pd

    folder = results_dir(root)
    path = folder / f"{chapter}-{name}.csv" if isinstance(name, str) else folder
    if not isinstance(name, str) or not name or "/" in name or not path.is_file():
        record = folder / f"{chapter}.json"
        tables = sorted(json.loads(record.read_text()).get("tables", {})) if record.is_file() else []
        raise FileNotFoundError(
            f"chapter {chapter}: no published table name={name!r} in {folder}; published: {tables}"
        )
    text = path.read_text(encoding="utf-8")
    return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""]), text
