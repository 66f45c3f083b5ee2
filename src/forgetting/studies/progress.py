"""Progress bars for long seed loops, drawn on the user's terminal even from inside a kernel."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

#: Environment variable naming the terminal a chapter kernel may draw progress bars on (set by
#: the pipeline, which runs chapters in kernels whose own stderr Jupyter captures).
PROGRESS_ENV = "FORGETTING_PROGRESS_TTY"


def progress(iterable: Iterable[Any], label: str, total: int | None = None) -> Iterable[Any]:
    """A tqdm bar (seeds done / total, rate, ETA) on the user's terminal, else the plain iterable.

    A chapter kernel's own stderr is captured by Jupyter, so the pipeline names the user's
    terminal in ``FORGETTING_PROGRESS_TTY`` when it runs in one; outside the pipeline the bar
    goes to stderr when that is a terminal. ``total`` is the number of items when the iterable
    has no ``len`` (a generator of results arriving from workers). Progress never changes results.
    """
    terminal = os.environ.get(PROGRESS_ENV)
    if not terminal and not sys.stderr.isatty():
        return iterable
    try:
        stream = open(terminal, "w", encoding="utf-8") if terminal else sys.stderr  # noqa: SIM115
    except OSError:
        return iterable
    return _drawn(iterable, label, total, stream, close=bool(terminal))


def _drawn(
    iterable: Iterable[Any], label: str, total: int | None, stream: TextIO, close: bool
) -> Iterator[Any]:
    """The items of ``iterable`` with the bar drawn on ``stream``, closed (if ours) when done."""
    from tqdm import tqdm

    try:
        with tqdm(iterable, desc=label, total=total, leave=False, file=stream, mininterval=0.5) as bar:
            yield from bar
    finally:
        if close:
            stream.close()
