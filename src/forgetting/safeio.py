"""Writes that cannot leave half a file, escape the project, or race another writer.

* :func:`atomic_write` writes through an exclusive, no-follow temporary file in the
  target's folder, flushes it to disk and renames it over the target: a reader sees the
  old file or the new one, never a mix; a failure (full disk, Ctrl-C) leaves the old one.
* :func:`check_inside` refuses a target whose real folder is outside the project (a
  symlinked ``figures/`` or ``data/results/`` pointing elsewhere).
* :func:`exclusive_lock` serialises promotions of published files between processes.
* :func:`no_interrupts` defers SIGINT, SIGTERM and SIGHUP while a few renames complete, whichever
  thread receives them.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

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
