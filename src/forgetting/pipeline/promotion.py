"""Publish a run: switch a chapter's whole set of files in one step that a kill cannot split.

A chapter's set is its published results (``data/results/<chapter>*``), its figures
(``figures/<chapter>-*``) and the site's copies (``_executed/site/<chapter>.ipynb`` and
``_executed/site/figures/<chapter>-*``). :func:`publish_run` changes any of them as one
transaction, under an exclusive lock shared by every process:

1. **check** every folder (inside the project, a folder, no folder where a file must go, no
   stray folder in ``data/results``) -- a problem here changes nothing;
2. **stage** every new file as a hidden temp file beside its target, on the target's own
   filesystem -- a full disk or a read-only folder fails here, the temps are removed and
   nothing changed;
3. **commit**: write the journal ``_executed/.publish-journal.json`` (atomically), the list of
   renames and removals that make the new set;
4. **apply** the journal (renames, removals), then delete it.

Ctrl-C, SIGTERM and SIGHUP during steps 1-2 remove the temps (the old set stays); from the
journal's write to its deletion they wait (:func:`forgetting.safeio.no_interrupts`, whichever of
the command's threads receives them) and act once the new set is complete.

A process killed before step 3 leaves only temp files; one killed after it leaves a journal.
:func:`recover`, which every ``forgetting`` command and every publication runs first, finishes
a journal it finds (so a set is either wholly old or wholly new) and removes every temp file
left in the published and site folders. Only a run at published parameters may replace
``data/results/`` and ``figures/``, and only one that was rerun (not one that showed the
published results because its data was unavailable).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from ..safeio import atomic_write_bytes, check_inside, exclusive_lock, no_interrupts, write_temp
from .chapter_run import ChapterRun
from .comparison import owner, published_files, strays
from .paths import figures_dir, results_dir, site_input_dir, site_results_dir, site_source_dir

#: Hidden temp files of :func:`forgetting.safeio.temp_path`: ``.<name>.<16 hex>.tmp``.
TEMP_FILE = re.compile(r"^\..+\.[0-9a-f]{16}\.tmp$")


class PublishIncomplete(RuntimeError):
    """A publication stopped after its journal was written; the next command completes it."""


def _lock_path(root: Path) -> Path:
    return site_input_dir(root) / ".publish.lock"


def journal_path(root: Path) -> Path:
    """The journal of a publication in progress (absent when none is)."""
    return site_input_dir(root) / ".publish-journal.json"


def published_folders(root: Path) -> tuple[Path, ...]:
    """Every folder a publication writes to (where temp files may be left)."""
    site = site_source_dir(root)
    return (results_dir(root), figures_dir(root), site, site / "figures", site_results_dir(root))


def _writer(data: bytes) -> Callable[[BinaryIO], object]:
    return lambda handle: handle.write(data)


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _inside_published(root: Path, text: object) -> Path:
    """A journal entry as a path, refused unless it is a file of a published folder."""
    if not isinstance(text, str):
        raise ValueError(f"entry {text!r} is not a path")
    path = root / text
    if path.parent not in published_folders(root) or path.name in ("", ".", ".."):
        raise ValueError(f"entry {text!r} is not a file of a published folder")
    return path


def _apply(root: Path, renames: Sequence[tuple[Path, Path]], removals: Sequence[Path]) -> None:
    """Carry out a journal; every step can be repeated (a rename whose temp is gone was done)."""
    with no_interrupts():
        for tmp, target in renames:
            with contextlib.suppress(FileNotFoundError):
                os.replace(tmp, target)
        for old in removals:
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
        journal_path(root).unlink(missing_ok=True)


def recover(root: Path) -> list[str]:
    """Finish an interrupted publication and remove left temp files; return what was done.

    Takes the publishing lock. A journal is always completed (it is written only once every
    new file is staged), never rolled back; temp files without a journal belong to a
    publication that never committed and are removed. Raises ``ValueError`` for a journal
    that is not one this module wrote (naming the file), before touching anything.
    """
    root = Path(root).resolve()
    with exclusive_lock(_lock_path(root)):
        return _recover_locked(root)


def _recover_locked(root: Path) -> list[str]:
    done = []
    journal = journal_path(root)
    if journal.exists():
        try:
            entries = json.loads(journal.read_bytes())
            renames = [
                (_inside_published(root, tmp), _inside_published(root, target))
                for tmp, target in entries["renames"]
            ]
            removals = [_inside_published(root, path) for path in entries["removals"]]
            chapter = str(entries["chapter"])
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"{journal} is not a publication journal ({str(error)[:120]}); "
                "remove it, then run `forgetting verify --update`"
            ) from None
        _apply(root, renames, removals)
        done.append(f"completed the interrupted publication of {chapter}")
    for folder in published_folders(root) + (site_input_dir(root),):
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            if TEMP_FILE.match(path.name) and not path.is_dir():
                path.unlink(missing_ok=True)
                done.append(f"removed the temp file {_relative(root, path)}")
    return done


def _plan_problems(root: Path, name: str, plan: Sequence[tuple[Path, Sequence[Path]]]) -> list[str]:
    problems = []
    for folder, sources in plan:
        check_inside(folder, root)
        if folder.exists() and not folder.is_dir():
            problems.append(f"{_relative(root, folder)} is not a folder")
            continue
        for source in sources:
            target = folder / source.name
            if target.is_dir() and not target.is_symlink():
                problems.append(f"{_relative(root, target)} is a folder where a file must go")
            if owner(source.name) != name:
                problems.append(f"{source.name} does not belong to chapter {name}")
    for path in strays(root):
        if path.is_dir() and not path.is_symlink():
            problems.append(f"{_relative(root, path)} is a folder that belongs to no chapter")
    return problems


def switch_sets(root: Path, name: str, plan: Sequence[tuple[Path, Sequence[Path]]], strays_too: bool) -> None:
    """Make each ``folder``'s files of chapter ``name`` exactly its ``sources`` (by name), for
    every ``(folder, sources)`` of ``plan``, all in one transaction (see the module's steps).

    With ``strays_too``, files of ``data/results/`` that belong to no chapter are removed as
    part of the same transaction. Raises ``ValueError`` (a check failed) or ``OSError``
    (staging failed) with every published file as it was, or :class:`PublishIncomplete`.
    """
    root = Path(root).resolve()
    with exclusive_lock(_lock_path(root)):
        _recover_locked(root)
        problems = _plan_problems(root, name, plan)
        if problems:
            raise ValueError(
                f"cannot publish {name}: "
                + "; ".join(problems[:3])
                + "; published files were left as they were"
            )
        renames: list[tuple[Path, Path]] = []
        committed = False
        # a stop (Ctrl-C, SIGTERM, SIGHUP) while staging removes the temps: the old set stays;
        # from the journal's write to the last rename it waits (see safeio.no_interrupts)
        try:
            for folder, sources in plan:
                folder.mkdir(parents=True, exist_ok=True)
                for source in sources:
                    data = source.read_bytes()
                    target = folder / source.name
                    renames.append((write_temp(target, _writer(data)), target))
            keep = {target for _, target in renames}
            removals = [old for folder, _ in plan for old in published_files(folder, name) if old not in keep]
            if strays_too:
                removals += strays(root)
            entries = {
                "chapter": name,
                "renames": [[_relative(root, tmp), _relative(root, target)] for tmp, target in renames],
                "removals": [_relative(root, path) for path in removals],
            }
            with no_interrupts():
                atomic_write_bytes(journal_path(root), json.dumps(entries, indent=1).encode())
                committed = True
                _apply(root, renames, removals)
        except OSError as error:
            if not committed:
                _remove_temps(renames)
                raise
            raise PublishIncomplete(
                f"publishing {name} stopped half-way ({error.strerror or error}); "
                "the next forgetting command completes it from its journal"
            ) from None
        except BaseException:
            if not committed:
                _remove_temps(renames)
            raise


def _remove_temps(renames: Sequence[tuple[Path, Path]]) -> None:
    for tmp, _ in renames:
        tmp.unlink(missing_ok=True)


def publish_run(root: Path, run: ChapterRun, results: bool = True, site: bool = True) -> None:
    """Switch this run's files in: the published set (``results``; only for a run at published
    parameters that was rerun, never one that showed the published results for want of data) and
    what the site renders (``site``), in one transaction."""
    if results and run.not_rerun is not None:
        raise ValueError(
            f"chapter {run.name} was not rerun ({run.not_rerun}); its results cannot replace data/results"
        )
    if results and not run.published:
        raise ValueError(
            f"chapter {run.name} did not run at its published parameters; "
            "its results cannot replace data/results"
        )
    root = Path(root).resolve()
    plan: list[tuple[Path, Sequence[Path]]] = []
    if results:
        plan += [(results_dir(root), run.results), (figures_dir(root), run.figures)]
    if site:
        plan += [
            (site_source_dir(root) / "figures", run.figures),
            (site_results_dir(root), run.results),
            (site_source_dir(root), [run.notebook]),
        ]
    switch_sets(root, run.name, plan, strays_too=results)


def promote(root: Path, run: ChapterRun) -> None:
    """Replace the chapter's published results and figures with this run's, as a whole."""
    publish_run(root, run, results=True, site=False)


def show_in_site(root: Path, run: ChapterRun) -> None:
    """Make this run the one the site renders (``_executed/site/<chapter>.ipynb`` and its figures)."""
    publish_run(root, run, results=False, site=True)
