"""The folder a user names with ``forgetting run -o``: created or reused only when a run owns it.

:func:`check_output` is called before any kernel starts and again before the run is moved
there. It refuses, with one sentence and nothing touched:

* the repository itself or any folder above it;
* a location inside the repository's own folders (:data:`PROTECTED`: the book, the data and
  published results, the sources, the tests, ``.git``, the build products, ...);
* a symlink, a mount point, an existing file, or a folder inside a file;
* a non-empty folder that no run wrote (a run leaves the marker :data:`MARKER` listing its
  files with their SHA-256), a run's folder holding files the run did not write, or files of
  the run that changed since it wrote them (a user's edits are never replaced without a word;
  a file of the run that was removed is no loss), or a marker without digests (an earlier
  version's, whose edits cannot be seen).

:func:`claim_output` holds the folder for one run at a time, from before its kernel starts until
its files are in place; another run into it is refused at once (:class:`OutputBusy`).
:func:`export` copies the run beside the target, on the target's filesystem, writes the
marker, then swaps it in with two renames; only the previous run's own files are removed. A
folder inside the repository also gets a ``.gitignore`` of ``*``: git, and the linters that
follow it, never see a run's output.
A failure removes what it created and leaves the target as it was.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from .._validate import shown
from ..safeio import no_interrupts
from .chapter_run import ChapterRun
from .paths import default_output_dir, runs_dir

#: The file that marks a folder as written by a run: ``{"chapter": ..., "files": {path: sha256}}``.
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


#: The claim of the run writing a folder: ``.<name>.forgetting-claim`` beside it, ``flock``-ed.
CLAIM = ".{name}.forgetting-claim"
#: How often a claim is tried again when the file it locked was removed by the run before.
CLAIM_TRIES = 100


class OutputFailed(RuntimeError):
    """The run could not be written to the folder the user named; the folder is as it was."""


class OutputBusy(OutputFailed):
    """Another run holds the folder (:func:`claim_output`); nothing was written."""


#: The folders this process holds a claim on, with the claim's file descriptor.
_HELD: dict[Path, int] = {}


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


def _digest(path: Path) -> str:
    """The SHA-256 of a regular file's bytes; anything else (a symlink, a pipe, a folder, nothing)
    gets a text no file's digest equals. Never follows a symlink, never waits on a pipe."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        return f"not a readable file ({error.strerror})"
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not a regular file"
        digest = hashlib.sha256()
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _digests(folder: Path) -> dict[str, str]:
    """Every file of ``folder`` (:func:`_files`) with its :func:`_digest`."""
    return {name: _digest(folder / name) for name in _files(folder)}


def _owned_files(folder: Path) -> dict[str, str] | list[str] | None:
    """The files of ``folder``'s marker with their SHA-256 (a list of names for a marker written
    before digests were recorded), or None when it has no readable marker."""
    marker = folder / MARKER
    if not marker.is_file() or marker.is_symlink():
        return None
    try:
        listed = json.loads(marker.read_bytes()[:10_000_000])["files"]
    except (ValueError, KeyError, TypeError):
        return None
    if isinstance(listed, dict) and all(isinstance(d, str) for d in listed.values()):
        return {str(name): digest for name, digest in listed.items()}
    if isinstance(listed, list) and all(isinstance(f, str) for f in listed):
        return listed
    return None


def check_output(root: Path, output: Path | str, label: str = "-o") -> Path:
    """The absolute folder a run may write to, or ``ValueError`` saying why not (nothing touched).

    ``output`` is taken relative to the current folder. See the module's list of refusals.
    ``label`` names the folder in a message (what the user gave: ``-o``).
    """
    given = Path(output)
    if str(output).strip() == "":
        raise ValueError(f"{label} needs a folder name, got ''")
    root = Path(root).resolve()
    absolute = Path(os.path.abspath(given))
    if absolute.is_symlink():
        raise ValueError(
            f"{label} {_said(given)} is a symlink: name a real folder (a run never writes through one)"
        )
    target = absolute.resolve()
    if target == root or target in root.parents:
        raise ValueError(
            f"{label} {_said(given)} is the repository or a folder above it: name a new folder, "
            f"e.g. -o {Path('_build') / 'runs' / 'mine'}"
        )
    if root in target.parents:
        top = target.relative_to(root).parts[0]
        if top in PROTECTED:
            raise ValueError(
                f"{label} {_said(given)} is inside the repository's {top}/, which a run never writes: "
                "name a new folder (e.g. under _build/runs/)"
            )
    if target.exists() and not target.is_dir():
        raise ValueError(f"{label} {_said(given)} is an existing file, not a folder: name a new folder")
    if target.is_dir():
        if os.path.ismount(target):
            raise ValueError(f"{label} {_said(given)} is a mount point: name a new folder inside it")
        entries = sorted(p.name for p in target.iterdir())
        if entries:
            owned = _owned_files(target)
            if owned is None:
                raise ValueError(
                    f"{label} {_said(given)} is a folder that no forgetting run wrote and is not empty "
                    f"({len(entries)} entries): name a new or empty folder"
                )
            present = set(_files(target))
            extra = sorted(present - set(owned) - {MARKER})
            if extra:
                raise ValueError(
                    f"{label} {_said(given)} holds {len(extra)} file(s) its run did not write "
                    f"(e.g. {shown(extra[0])}): move them, or name another folder"
                )
            if isinstance(owned, list):
                raise ValueError(
                    f"{label} {_said(given)} was written by an earlier version of forgetting, whose marker "
                    f"{MARKER} records no digest of its files, so an edit to them cannot be seen: "
                    "remove that folder (after saving what you changed), or name another folder"
                )
            changed = [
                name
                for name, digest in sorted(owned.items())
                if name in present and _digest(target / name) != digest
            ]
            if changed:
                raise ValueError(
                    f"{label} {_said(given)} holds {len(changed)} file(s) of its run that changed since it "
                    f"wrote them (e.g. {shown(changed[0])}): move them out, or name another folder"
                )
    existing = target
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{label} {_said(given)} lies inside {_said(existing)}, which is a file")
    parent = target.parent if target.parent.exists() else existing
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(
            f"{label} {_said(given)}: cannot write into {_said(parent)} (permission denied or read-only)"
        )
    return target


def _lock_claim(path: Path, given: Path | str, label: str) -> int:
    """An open descriptor of the claim file ``path`` with an exclusive ``flock`` on it, which this
    process holds until the descriptor is closed (or the process dies); :class:`OutputBusy` at once
    when another process holds it."""
    for _ in range(CLAIM_TRIES):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 100, 0).decode(errors="replace").strip() or "starting"
            os.close(fd)
            raise OutputBusy(
                f"{label} {_said(Path(given))} is being written by another forgetting run ({holder}): "
                "wait for it to end, or name another folder"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # the run that held it removes the file before it lets go: then this lock guards nothing
        try:
            now = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        opened = os.fstat(fd)
        if now is not None and (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"process {os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)
    raise OutputBusy(f"{label} {_said(Path(given))}: its claim {path.name} keeps changing; try again")


@contextlib.contextmanager
def claim_output(root: Path, output: Path | str, label: str = "-o") -> Iterator[Path]:
    """Hold the folder ``output`` for this run for the ``with`` block; yield it as
    :func:`check_output` gives it.

    The folder is checked (:func:`check_output`, nothing touched), claimed with an exclusive
    ``flock`` on :data:`CLAIM` beside it (its missing parents created), then checked again, now
    that no other run can change it. A folder another run holds is refused at once with
    :class:`OutputBusy`: two runs into one folder can never both succeed. The lock dies with its
    process, so a killed run's claim never blocks the next run; the file is removed at the end of
    the block (a SIGKILL leaves it, and the next claim takes it over). One claim is one run: a
    second claim of the same folder is refused even in the same process (only :func:`export`
    uses the claim it runs inside). The parents it created are removed again if the block
    leaves no folder.
    """
    target = check_output(root, output, label)
    created = [folder for folder in reversed(target.parents) if not folder.exists()]
    path = target.with_name(CLAIM.format(name=target.name))
    fd: int | None = None
    try:
        try:
            for folder in created:
                folder.mkdir(exist_ok=True)  # another run may create it at the same moment
            fd = _lock_claim(path, output, label)
        except OSError as error:
            raise OutputFailed(
                f"cannot claim {label} {_said(Path(output))} for this run: "
                f"{error.strerror or error} ({_said(path)})"
            ) from None
        _HELD[target] = fd
        yield check_output(root, output, label)
    finally:
        if fd is not None:
            _HELD.pop(target, None)
            path.unlink(missing_ok=True)  # before the lock goes: see _lock_claim
            os.close(fd)
        if not target.exists():
            for folder in reversed(created):
                with contextlib.suppress(OSError):
                    folder.rmdir()


class RunAlone:
    """The output of a chapter run outside the pipeline (plain papermill, Jupyter): a whole set.

    Such a run has no private folder of the pipeline's (``FORGETTING_RUN_DIR``) and writes to
    ``_build/runs/<chapter>/`` (:func:`~forgetting.pipeline.paths.default_output_dir`). Written
    there in place, its files would mix with another run's (a ``forgetting run`` notebook beside
    this run's record). So it claims that folder when the chapter opens (a folder
    :func:`check_output` refuses, or one another run holds, stops the chapter before any work),
    writes into a private folder (:attr:`folder`, in ``_executed/runs/`` like a pipeline run's,
    removed by the next command if the kernel dies), and :meth:`finish` (``chapter.save()``, the
    last cell) moves the whole set there with :func:`export`: the folder then holds this run's
    record, tables and figures, and nothing of an earlier run. The executed notebook is where
    papermill was told to write it.
    """

    def __init__(self, root: Path, name: str) -> None:
        self.root, self.name = Path(root), name
        self.target = default_output_dir(self.root, name)
        self.label = "the output folder"
        earlier = _ALONE.pop(self.target, None)
        if earlier is not None:  # the chapter opened again in one kernel (Jupyter): that run is over
            earlier.abandon()
        self._claim = contextlib.ExitStack()
        try:
            self._claim.enter_context(claim_output(self.root, self.target, self.label))
        except (ValueError, OutputFailed) as error:
            raise self._advised(error) from None
        self.folder = self._private()
        _ALONE[self.target] = self

    def abandon(self) -> None:
        """Give up the claim and the files written so far (the output folder is as it was)."""
        self._claim.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _private(self) -> Path:
        return runs_dir(self.root) / f"{self.name}.{os.getpid()}.{secrets.token_hex(6)}"

    def _advised(self, error: Exception) -> Exception:
        return type(error)(
            f"{error} (a chapter run by papermill or Jupyter writes there; "
            f"`forgetting run {self.name} -o FOLDER` writes elsewhere)"
        )

    def finish(self, folder: Path) -> Path:
        """Replace the output folder with the run's files in ``folder``, as a whole; return it.
        ``folder`` is gone afterwards (moved, or removed if the output failed)."""
        try:
            target = export(self.root, ChapterRun(self.name, 0.0, folder, False), self.target, self.label)
        except (ValueError, OutputFailed) as error:
            raise self._advised(error) from None
        finally:
            self._claim.close()
            shutil.rmtree(folder, ignore_errors=True)  # copied, not moved (another filesystem)
            if _ALONE.get(self.target) is self:
                del _ALONE[self.target]
        self.folder = self._private()  # a later save() starts a new set
        return target


#: The run outside the pipeline this process has open, by output folder (one kernel, one each).
_ALONE: dict[Path, RunAlone] = {}


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


def export(root: Path, run: ChapterRun, output: Path | str, label: str = "-o") -> Path:
    """Move a run's notebook, results and figures to ``output`` (see :func:`check_output`), under
    its claim (:func:`claim_output`; the caller's, if it holds one).

    Raises ``ValueError`` (a folder a run may not use) or :class:`OutputFailed` (another run
    holds it: :class:`OutputBusy`; the disk is full, a write was refused); in both cases
    ``output`` is as it was, no temp folder is left, and the run's own folder is removed by its
    owner as usual.
    """
    target = check_output(root, output, label)
    if target in _HELD:  # the caller's claim (the command holds it from before the kernel)
        return _export(root, run, target)
    with claim_output(root, output, label) as target:
        return _export(root, run, target)


def _export(root: Path, run: ChapterRun, target: Path) -> Path:
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
        files = _digests(incoming)
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
