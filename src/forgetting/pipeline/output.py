"""The folder a user names with ``forgetting run -o``: created or reused only when a run owns it.

:func:`check_output` is called before any kernel starts and again before the run is moved
there. It refuses, with one sentence and nothing touched:

* the repository itself or any folder above it;
* a location inside the repository's own folders (:data:`PROTECTED`: the book, the data and
  published results, the sources, the tests, ``.git``, the build products, ...);
* a symlink, a mount point, an existing file, or a folder inside a file;
* a non-empty folder that no run wrote (a run leaves the marker :data:`MARKER` listing its
  files), or a run's folder holding files the run did not write.

:func:`export` copies the run beside the target, on the target's filesystem, writes the
marker, then swaps it in with two renames; only the previous run's own files are removed. A
folder inside the repository also gets a ``.gitignore`` of ``*``: git, and the linters that
follow it, never see a run's output.
A failure removes what it created and leaves the target as it was.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import shutil
from pathlib import Path

from .._validate import shown
from ..safeio import no_interrupts
from .chapter_run import ChapterRun

#: The file that marks a folder as written by a run: ``{"chapter": ..., "files": [...]}``.
MARKER = ".forgetting-run.json"

#: Top-level entries of the repository a run never writes into (the tracked folders and the
#: pipeline's own build products; tests check that every tracked folder is listed).
PROTECTED = (
    ".git",
    ".github",
    ".ci",
    ".venv",
    "benchmarks",
    "book",
    "data",
    "figures",
    "requirements",
    "src",
    "tests",
    "_executed",
)

#: Leftovers of an interrupted export beside its target: ``.<name>.<12 hex>.incoming|old``.
LEFTOVER = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{12}\.(incoming|old)$")


class OutputFailed(RuntimeError):
    """The run could not be written to the folder the user named; the folder is as it was."""


def _said(path: Path) -> str:
    """A path as a message quotes it: cut to a short prefix."""
    text = str(path)
    return text if len(text) <= 120 else f"{text[:100]}... ({len(text)} characters)"


def _files(folder: Path) -> list[str]:
    """Every file (or symlink) under ``folder``, as sorted POSIX paths relative to it; symlinked
    folders are listed, never entered."""
    found = []
    for top, folders, names in os.walk(folder):
        here = Path(top)
        names += [f for f in folders if (here / f).is_symlink()]
        found += [(here / n).relative_to(folder).as_posix() for n in names]
    return sorted(found)


def _owned_files(folder: Path) -> list[str] | None:
    """The files listed by ``folder``'s marker, or None when it has no readable marker."""
    marker = folder / MARKER
    if not marker.is_file() or marker.is_symlink():
        return None
    try:
        listed = json.loads(marker.read_bytes()[:1_000_000])["files"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(listed, list) or not all(isinstance(f, str) for f in listed):
        return None
    return listed


def check_output(root: Path, output: Path | str) -> Path:
    """The absolute folder a run may write to, or ``ValueError`` saying why not (nothing touched).

    ``output`` is taken relative to the current folder. See the module's list of refusals.
    """
    given = Path(output)
    if str(output).strip() == "":
        raise ValueError("-o needs a folder name, got ''")
    root = Path(root).resolve()
    absolute = Path(os.path.abspath(given))
    if absolute.is_symlink():
        raise ValueError(
            f"-o {_said(given)} is a symlink: name a real folder (a run never writes through one)"
        )
    target = absolute.resolve()
    if target == root or target in root.parents:
        raise ValueError(
            f"-o {_said(given)} is the repository or a folder above it: name a new folder, "
            f"e.g. -o {Path('_build') / 'runs' / 'mine'}"
        )
    if root in target.parents:
        top = target.relative_to(root).parts[0]
        if top in PROTECTED:
            raise ValueError(
                f"-o {_said(given)} is inside the repository's {top}/, which a run never writes: "
                "name a new folder (e.g. under _build/runs/)"
            )
    if target.exists() and not target.is_dir():
        raise ValueError(f"-o {_said(given)} is an existing file, not a folder: name a new folder")
    if target.is_dir():
        if os.path.ismount(target):
            raise ValueError(f"-o {_said(given)} is a mount point: name a new folder inside it")
        entries = sorted(p.name for p in target.iterdir())
        if entries:
            owned = _owned_files(target)
            if owned is None:
                raise ValueError(
                    f"-o {_said(given)} is a folder that no forgetting run wrote and is not empty "
                    f"({len(entries)} entries): name a new or empty folder"
                )
            extra = sorted(set(_files(target)) - set(owned) - {MARKER})
            if extra:
                raise ValueError(
                    f"-o {_said(given)} holds {len(extra)} file(s) its run did not write "
                    f"(e.g. {shown(extra[0])}): move them, or name another folder"
                )
    existing = target
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"-o {_said(given)} lies inside {_said(existing)}, which is a file")
    parent = target.parent if target.parent.exists() else existing
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(
            f"-o {_said(given)}: cannot write into {_said(parent)} (permission denied or read-only)"
        )
    return target


def _remove_leftovers(target: Path) -> None:
    """Remove what an interrupted export to ``target`` left beside it."""
    parent = target.parent
    for path in parent.iterdir() if parent.is_dir() else []:
        found = LEFTOVER.match(path.name)
        if found and found["name"] == target.name and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


def _copy_run(source: Path, incoming: Path) -> None:
    """Copy a run folder to ``incoming`` (renamed when on the same filesystem), file by file."""
    try:
        os.rename(source, incoming)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
    incoming.mkdir()
    for path in sorted(source.rglob("*")):
        copy = incoming / path.relative_to(source)
        if path.is_dir():
            copy.mkdir()
        else:
            shutil.copyfile(path, copy)


def export(root: Path, run: ChapterRun, output: Path | str) -> Path:
    """Move a run's notebook, results and figures to ``output`` (see :func:`check_output`).

    Raises ``ValueError`` (a folder a run may not use) or :class:`OutputFailed` (the disk is
    full, a write was refused); in both cases ``output`` is as it was, no temp folder is left,
    and the run's own folder is removed by its owner as usual.
    """
    target = check_output(root, output)
    created = []
    for folder in reversed(target.parents):
        if not folder.exists():
            created.append(folder)
    incoming = target.with_name(f".{target.name}.{secrets.token_hex(6)}.incoming")
    retired: Path | None = None
    try:
        for folder in created:
            folder.mkdir()
        _remove_leftovers(target)
        _copy_run(run.folder, incoming)
        if Path(root).resolve() in target.parents:  # inside the clone: out of git's and the linters' way
            (incoming / ".gitignore").write_text(
                "# written by forgetting run: a run's output is not committed\n*\n"
            )
        files = _files(incoming)
        (incoming / MARKER).write_text(json.dumps({"chapter": run.name, "files": files}, indent=1) + "\n")
        with no_interrupts():
            if target.exists():
                retired = target.with_name(f".{target.name}.{secrets.token_hex(6)}.old")
                os.rename(target, retired)
            os.rename(incoming, target)
    except OSError as error:
        if retired is not None and not target.exists():
            os.rename(retired, target)
        shutil.rmtree(incoming, ignore_errors=True)
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        reason = "the disk is full" if error.errno in (errno.ENOSPC, errno.EDQUOT) else error.strerror
        raise OutputFailed(
            f"cannot write the run to {_said(target)}: {reason or error}; that folder was left as it was"
        ) from None
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
    run.folder = target
    return target
