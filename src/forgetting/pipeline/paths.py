"""Every folder of the project, named once.

Published (committed, replaced only by a complete run at published parameters):
``data/results/`` (one JSON record, CSV tables and a figure manifest per chapter) and
``figures/`` (the figure files, git-ignored, checked against the manifests).

Build products (git-ignored): ``_executed/`` holds what the site renders (the book's pages,
executed notebooks and their figures) and the private folder of each run in progress;
``_build/`` holds the site and the outputs of custom-parameter runs.
The site's pages are rendered from ``_executed/site/`` (see :func:`site_source_dir`).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable through which the pipeline tells a chapter kernel where to write.
RUN_DIR_ENV = "FORGETTING_RUN_DIR"


def repo_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: cwd) that holds ``_config.yml``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_config.yml").is_file() and (folder / "book").is_dir():
            return folder
    raise FileNotFoundError(
        f"no forgetting repository (a folder with _config.yml and book/) at or above {here}"
    )


def book_dir(root: Path) -> Path:
    return root / "book"


def results_dir(root: Path) -> Path:
    """Published results: ``<chapter>.json``, ``<chapter>-<table>.csv``, ``<chapter>-figures.json``."""
    return root / "data" / "results"


def figures_dir(root: Path) -> Path:
    """Published figure files ``<chapter>-<name>.{png,pdf,svg}``."""
    return root / "figures"


def site_input_dir(root: Path) -> Path:
    """Build products of the pipeline: the site's source folder and the runs in progress."""
    return root / "_executed"


def site_source_dir(root: Path) -> Path:
    """The folder Jupyter Book renders: the pages of ``book/``, each chapter's executed notebook
    ``<chapter>.ipynb`` and ``figures/``, all at its top, so a chapter's address is
    ``<site>/<chapter>.html`` with no build folder in it."""
    return root / "_executed" / "site"


#: Where the site serves the result files of the runs it renders, relative to its top:
#: ``<site>/results/<chapter>-<name>.csv`` (an address that changes only with the name).
SITE_RESULTS = "results"


def site_results_dir(root: Path) -> Path:
    """The result files of the runs the site renders, which the build copies to ``<site>/results``."""
    return site_source_dir(root) / SITE_RESULTS


def site_output_dir(root: Path, builder: str = "html") -> Path:
    return root / "_build" / builder


def runs_dir(root: Path) -> Path:
    """Private folders of runs in progress (one per run, removed when it ends)."""
    return root / "_executed" / "runs"


def default_output_dir(root: Path, chapter: str) -> Path:
    """Where a custom-parameter run writes when the user names no folder."""
    return root / "_build" / "runs" / chapter


def chapter_run_dir(root: Path, chapter: str) -> Path:
    """The folder a chapter kernel writes to: the pipeline's choice, else the default output."""
    given = os.environ.get(RUN_DIR_ENV)
    return Path(given) if given else default_output_dir(root, chapter)


def run_results(run_dir: Path) -> Path:
    return run_dir / "results"


def run_figures(run_dir: Path) -> Path:
    return run_dir / "figures"
