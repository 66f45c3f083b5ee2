"""The book's plumbing, kept apart from the science: chapters, runs, publishing, the site.

* :mod:`~forgetting.pipeline.chapters` -- the registry: each chapter's parameters, ranges and rules.
* :mod:`~forgetting.pipeline.chapter` -- what a chapter notebook calls: ``open_chapter``, glue, figures.
* :mod:`~forgetting.pipeline.run` -- execute a chapter with papermill into a private run folder.
* :mod:`~forgetting.pipeline.comparison` -- a run against the published files, file by file.
* :mod:`~forgetting.pipeline.promotion` -- replace a chapter's published set as a whole, under a lock.
* :mod:`~forgetting.pipeline.site` -- render the book with Jupyter Book (``-W -n``).
* :mod:`~forgetting.pipeline.publish`, :mod:`~forgetting.pipeline.pdf` -- push the site, print the book.
* :mod:`~forgetting.pipeline.paths` -- every folder, named once; :mod:`~forgetting.pipeline.cli` -- the command.

No science module imports this package, and this package imports no experiment.
"""

from .comparison import IDENTICAL, compare, file_report, first_difference, owner, published_files, strays
from .promotion import export, promote, replace_set, show_in_site
from .run import ChapterFailed, ChapterRun, remove_orphans, run_all, run_chapter, timing_table
from .site import BuildFailed, build_site, prepare_site

__all__ = [
    "IDENTICAL",
    "BuildFailed",
    "ChapterFailed",
    "ChapterRun",
    "build_site",
    "compare",
    "export",
    "file_report",
    "first_difference",
    "owner",
    "prepare_site",
    "promote",
    "published_files",
    "remove_orphans",
    "replace_set",
    "run_all",
    "run_chapter",
    "show_in_site",
    "strays",
    "timing_table",
]
