"""The book's plumbing, kept apart from the science: chapters, runs, publishing, the site.

* :mod:`~forgetting.pipeline.chapters` -- the registry: each chapter's parameters, ranges and rules.
* :mod:`~forgetting.pipeline.chapter` -- what a chapter notebook calls: ``open_chapter``, glue, figures.
* :mod:`~forgetting.pipeline.data` -- the external data sets chapters declare, and what a chapter
  shows without them (its published results: a *not-rerun* run, never published).
* :mod:`~forgetting.pipeline.run` -- execute a chapter with papermill into a private run folder.
* :mod:`~forgetting.pipeline.comparison` -- a run against the published files, file by file.
* :mod:`~forgetting.pipeline.promotion` -- switch a chapter's published set in one journaled step, under a lock.
* :mod:`~forgetting.pipeline.output` -- the folder a user names with ``run -o``: only one a run owns.
* :mod:`~forgetting.pipeline.site` -- render the book with Jupyter Book (``-W -n``).
* :mod:`~forgetting.pipeline.publish`, :mod:`~forgetting.pipeline.pdf` -- push the site, print the book.
* :mod:`~forgetting.pipeline.paths` -- every folder, named once; :mod:`~forgetting.pipeline.cli` -- the command.

No science module imports this package, and this package imports no experiment. Its names are
loaded when first used, so ``forgetting`` starts (and answers Ctrl-C) before any heavy import.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (which takes a while)
if TYPE_CHECKING:  # the same names, for type checkers
    from typing import Any

    from .chapter_run import ChapterRun
    from .comparison import (
        IDENTICAL,
        ResultsChanged,
        committed_differences,
        compare,
        file_report,
        first_difference,
        owner,
        published_files,
        strays,
    )
    from .output import OutputBusy, OutputFailed, check_output, claim_output, export
    from .promotion import PublishIncomplete, promote, publish_run, recover, show_in_site, switch_sets
    from .run import (
        ChapterFailed,
        not_rerun_line,
        remove_orphans,
        run_all,
        run_chapter,
        timing_table,
    )
    from .site import BuildFailed, build_site, prepare_site

#: The package's modules, also imported on first use (``forgetting.pipeline.paths``).
_MODULES = (
    "chapter",
    "chapters",
    "cli",
    "comparison",
    "data",
    "kernel",
    "launch",
    "output",
    "paths",
    "pdf",
    "processes",
    "promotion",
    "publish",
    "run",
    "site",
)

#: Each public name and the module it comes from (imported on first use).
_NAMES = {
    "IDENTICAL": "comparison",
    "ResultsChanged": "comparison",
    "committed_differences": "comparison",
    "compare": "comparison",
    "file_report": "comparison",
    "first_difference": "comparison",
    "owner": "comparison",
    "published_files": "comparison",
    "strays": "comparison",
    "PublishIncomplete": "promotion",
    "promote": "promotion",
    "publish_run": "promotion",
    "recover": "promotion",
    "show_in_site": "promotion",
    "switch_sets": "promotion",
    "OutputBusy": "output",
    "OutputFailed": "output",
    "check_output": "output",
    "claim_output": "output",
    "export": "output",
    "ChapterFailed": "run",
    "ChapterRun": "chapter_run",
    "not_rerun_line": "run",
    "remove_orphans": "run",
    "run_all": "run",
    "run_chapter": "run",
    "timing_table": "run",
    "BuildFailed": "site",
    "build_site": "site",
    "prepare_site": "site",
}

__all__ = [
    "BuildFailed",
    "ChapterFailed",
    "ChapterRun",
    "IDENTICAL",
    "OutputBusy",
    "OutputFailed",
    "PublishIncomplete",
    "ResultsChanged",
    "build_site",
    "check_output",
    "claim_output",
    "committed_differences",
    "compare",
    "export",
    "file_report",
    "first_difference",
    "not_rerun_line",
    "owner",
    "prepare_site",
    "promote",
    "publish_run",
    "published_files",
    "recover",
    "remove_orphans",
    "run_all",
    "run_chapter",
    "show_in_site",
    "strays",
    "switch_sets",
    "timing_table",
]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_NAMES))
