"""One finished run of a chapter: its private folder, its files, and whether it may be published.

Its own module, below everything that handles runs (:mod:`.run` makes them, :mod:`.comparison`
compares them, :mod:`.promotion` publishes them, :mod:`.output` exports them), so that the
pipeline's modules import one another in one direction, top to bottom.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from .paths import run_figures, run_results


@dataclass
class ChapterRun:
    """One finished run: where its files are and whether it may be published.

    ``not_rerun`` is the one-line reason a chapter could not be computed again (its data was
    unavailable, see :meth:`forgetting.pipeline.chapter.Chapter.require_data`); such a run shows
    the published results and is never ``published``, whatever its parameters.
    """

    name: str
    seconds: float
    folder: Path
    published: bool
    not_rerun: str | None = None

    @property
    def notebook(self) -> Path:
        return self.folder / f"{self.name}.ipynb"

    @property
    def results(self) -> list[Path]:
        """Record, tables and figure manifest, sorted by name."""
        return sorted(run_results(self.folder).glob("*"))

    @property
    def figures(self) -> list[Path]:
        return sorted(run_figures(self.folder).glob("*"))

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
