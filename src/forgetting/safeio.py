"""Writes that cannot leave half a file, escape the project, or race another writer.

* :func:`atomic_write` writes through an exclusive, no-follow temporary file in the
  target's folder, flushes it to disk and renames it over the target: a reader sees the
  old file or the new one, never a mix; a failure (full disk, Ctrl-C) leaves the old one.
* :func:`check_inside` refuses a target whose real folder is outside the project (a
  symlinked ``figures/`` or ``data/results/`` pointing elsewhere).
* :func:`exclusive_lock` serialises promotions of published files between processes.
* :func:`no_interrupts` defers SIGINT, SIGTERM and SIGHUP while a few renames complete, whichever
  thread receives them.
* :func:`writable` tells whether a file can be made in a folder (tried, not inferred).
* :func:`open_regular` opens a file for reading only if it is a regular file (never waits on a
  FIFO, never reads a device without end).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def check_inside(path: Path, root: Path) -> Path:
    """``path``'s real location; ``ValueError`` if it resolves outside ``root``."""
    real, top = path.resolve(), root.resolve()
    if real != top and top not in real.parents:
        raise ValueError(f"refusing to write {path}: it resolves to {real}, outside the project {top}")
    return real


def temp_path(path: Path) -> Path:
    """An unpredictable hidden name beside ``path``."""
    return path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")


def write_temp(path: Path, write: Callable[[Any], Any]) -> Path:
    """Write a new exclusive temp file beside ``path`` with ``write(handle)``; return its path."""
    tmp = temp_path(path)
    fd = os.open(tmp, _TEMP_FLAGS, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return tmp


def atomic_write(path: Path, write: Callable[[Any], Any], root: Path | None = None) -> None:
    """Replace ``path`` with what ``write(handle)`` writes, all or nothing.

    With ``root``, the folder must resolve inside ``root``. A symlink at ``path`` itself is
    replaced by the new file, never written through.
    """
    path = Path(path)
    if root is not None:
        check_inside(path.parent, root)
    tmp = write_temp(path, write)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: Path, data: bytes, root: Path | None = None) -> None:
    """:func:`atomic_write` of ``data``: ``path`` holds exactly these bytes, or what it held before."""
    atomic_write(path, lambda handle: handle.write(data), root)


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if needed) for the ``with`` block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def is_disk_full(error: BaseException) -> bool:
    """``error`` is an ``OSError`` for a full disk or an exhausted quota (``ENOSPC``, ``EDQUOT``)."""
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)


#: The signals that stop a command (Ctrl-C, ``kill``, a closed terminal): deferred by :func:`no_interrupts`.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def no_interrupts() -> Iterator[None]:
    """Defer SIGINT, SIGTERM and SIGHUP until the block is done, then act on them as before.

    For the block, each of them that is not ignored gets a handler that only records it; at its
    end the previous handlers are restored and each signal recorded is raised again, in the order
    received, so the previous handler (or the default action: SIGTERM ends the process) acts on it
    only then. Python runs signal handlers only in the main thread, whichever thread of the
    process the kernel hands a signal to, so a block in the main thread runs to its end however
    many threads there are (a signal mask would hold only for the thread that set it). Blocks
    nest: the inner one hands what it recorded to the outer one. Outside the main thread the
    block runs as is: no handler can run in it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def record(signum: int, frame: FrameType | None) -> None:
        if signum not in received:
            received.append(signum)

    previous: dict[int, Any] = {}
    try:
        for stop in STOP_SIGNALS:
            handler = signal.getsignal(stop)
            if handler is not signal.SIG_IGN and handler is not None:  # None: not set from Python
                previous[stop] = signal.signal(stop, record)
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for signum in received:
            signal.raise_signal(signum)


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFile(ValueError):
    """What :func:`open_regular` refuses; ``kind`` says what the path is (``"a FIFO"``)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def open_regular(path: str | os.PathLike[str], name: str = "path", limit: int | None = None) -> BinaryIO:
    """``path`` opened for binary reading, if it is a regular file of at most ``limit`` bytes.

    The file is opened with ``O_NONBLOCK`` (opening a FIFO never waits for a writer) and checked
    on the opened descriptor (``fstat``: what is checked is what is read), so a FIFO, a device
    such as ``/dev/zero`` (endless), a socket or a folder is refused before a byte is read.
    ``limit`` (``None``: no bound) refuses a larger file before it is read into memory; a reader
    should still read at most ``limit + 1`` bytes, in case the file grows.

    Raises
    ------
    FileNotFoundError
        Nothing at ``path`` (one line naming the argument ``name`` and the path).
    NotRegularFile
        A ``ValueError``: not a regular file (one line naming ``name``, the path and what it is).
    ValueError
        Larger than ``limit`` (one line naming ``name`` and the path).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FileNotFoundError(f"{name} names {path}, which does not exist") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((what for test, what in _KINDS if test(info.st_mode)), "a special file")
            raise NotRegularFile(
                f"{name} names {path}, which is {kind}, not a regular file; refusing it", kind
            )
        if limit is not None and info.st_size > limit:
            raise ValueError(
                f"{name} names {path}, a file of {info.st_size} bytes, over the limit of {limit}; refusing it"
            )
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def writable(path: str | os.PathLike[str] | None, create: bool = True) -> bool:
    """A file can be made in the folder at the absolute ``path``, or (``create``, when it does not
    exist yet) in the nearest folder above it that exists. Tried, not inferred from permissions:
    root passes every permission check, but not a read-only mount; a path that is a file, or
    lies under one, is not writable."""
    if not path or not os.path.isabs(path):
        return False
    folder = Path(path)
    while create and not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False
