"""Publish a run: replace a chapter's published set as a whole, under a lock shared by every process.

Every new file is first written beside its target (a full disk fails here and changes nothing),
then, with interrupts deferred, all are renamed into place and the chapter's other files are
removed. Only a run at published parameters may replace ``data/results/`` and ``figures/``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..safeio import check_inside, exclusive_lock, write_temp
from .comparison import published_files, strays
from .paths import figures_dir, results_dir, site_input_dir, site_source_dir

if TYPE_CHECKING:
    from .run import ChapterRun


def _lock_path(root: Path) -> Path:
    return site_input_dir(root) / ".publish.lock"


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Defer SIGINT/SIGTERM while a set of renames completes (main thread only)."""
    signals = {signal.SIGINT, signal.SIGTERM}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _writer(data: bytes) -> Callable[[BinaryIO], object]:
    return lambda handle: handle.write(data)


def replace_set(root: Path, folder: Path, name: str, sources: list[Path]) -> None:
    """Make ``folder``'s files of chapter ``name`` exactly ``sources`` (by name).

    Every new file is first written to an exclusive temp file (a full disk fails here,
    leaving the old set); then, with interrupts deferred, the temps are renamed into place
    and the chapter's other files are removed.
    """
    folder.mkdir(parents=True, exist_ok=True)
    check_inside(folder, root)
    temps: list[tuple[Path, Path]] = []
    try:
        for source in sources:
            target = folder / source.name
            temps.append((write_temp(target, _writer(source.read_bytes())), target))
        with _no_interrupts():
            for tmp, target in temps:
                os.replace(tmp, target)
            keep = {s.name for s in sources}
            for old in published_files(folder, name):
                if old.name not in keep:
                    old.unlink()
    finally:
        for tmp, _ in temps:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def promote(root: Path, run: ChapterRun) -> None:
    """Replace the chapter's published results and figures with this run's, as a whole."""
    if not run.published:
        raise ValueError(
            f"chapter {run.name} did not run at its published parameters; "
            "its results cannot replace data/results"
        )
    with exclusive_lock(_lock_path(root)):
        replace_set(root, results_dir(root), run.name, run.results)
        replace_set(root, figures_dir(root), run.name, run.figures)
        for path in strays(root):
            path.unlink()


def show_in_site(root: Path, run: ChapterRun) -> None:
    """Make this run the one the site renders (``_executed/site/<chapter>.ipynb`` and its figures)."""
    site = site_source_dir(root)
    with exclusive_lock(_lock_path(root)):
        replace_set(root, site / "figures", run.name, run.figures)
        replace_set(root, site, run.name, [run.notebook])


def export(run: ChapterRun, output: Path) -> Path:
    """Move a run's notebook, results and figures to ``output`` (replacing a previous run there)."""
    output = output.resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    incoming = output.with_name(f".{output.name}.{secrets.token_hex(6)}.incoming")
    shutil.move(str(run.folder), incoming)
    run.folder = incoming
    with _no_interrupts():
        retired = None
        if output.exists():
            retired = output.with_name(f".{output.name}.{secrets.token_hex(6)}.old")
            os.replace(output, retired)
        os.replace(incoming, output)
        run.folder = output
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
    return output
