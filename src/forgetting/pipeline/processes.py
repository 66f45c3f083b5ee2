"""The processes of a ``forgetting`` command end with it, and a signal ends it in one line.

* :func:`~forgetting.studies._lifetime.die_with_parent` -- a chapter process of ``build --jobs``, a
  chapter's Jupyter kernel and the kernel's local workers are killed by the operating system
  the moment their parent dies, SIGKILL included (Linux ``PR_SET_PDEATHSIG``).
* :func:`terminate_as_interrupt` -- SIGTERM and SIGHUP raise :class:`Terminated` in the main
  thread, so the same clean-up runs as for Ctrl-C (run folders removed, workers stopped).
* :func:`guard_stdio` -- a command started with a closed standard stream, or whose reader went
  away (``forgetting verify | head -1``), keeps working: the lost output goes to ``/dev/null``.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

from ..studies._lifetime import die_with_parent

__all__ = ["Terminated", "die_with_parent", "guard_stdio", "raise_terminated", "terminate_as_interrupt"]


class Terminated(BaseException):
    """The command received SIGTERM or SIGHUP (a ``BaseException``, like ``KeyboardInterrupt``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def raise_terminated(signum: int, frame: FrameType | None) -> None:
    """A signal handler: raise :class:`Terminated` (in the main thread)."""
    raise Terminated(signum)


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Terminated` inside the block (main thread only);
    the previous handlers are restored after it."""
    signals = (signal.SIGTERM, signal.SIGHUP)
    try:
        previous = {s: signal.signal(s, raise_terminated) for s in signals}
    except ValueError:  # pragma: no cover - not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _reopen_closed_streams() -> None:
    """Put ``/dev/null`` on file descriptors 0-2 that are closed, so that a file or socket a
    child opens never lands on them, and the processes we start inherit them: ``os.open``
    gives the lowest free descriptor, the closed one itself, and Python opens it
    non-inheritable, so a kernel started without it crashed at start (its ``sys.stdout`` None)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)  # inheritable, as dup2 makes it
                os.close(null)
            else:
                os.set_inheritable(fd, True)


class _SurvivingStream(io.TextIOBase):
    """A text stream that sends its output to ``/dev/null`` once its reader has gone away."""

    def __init__(self, stream: Any, fd: int) -> None:
        super().__init__()
        self._stream = stream
        self._fd = fd

    def _lost(self, error: OSError) -> None:
        if error.errno not in (errno.EPIPE, errno.EBADF, errno.EINVAL):
            raise error
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, self._fd)
        os.close(null)
        self._stream = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except OSError as error:
            self._lost(error)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            self._lost(error)

    def isatty(self) -> bool:
        return bool(self._stream.isatty())

    def fileno(self) -> int:
        return self._fd

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._stream, "encoding", "utf-8"))


def guard_stdio() -> None:
    """Make the process's standard output and error survive a closed or vanished reader."""
    _reopen_closed_streams()
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        if stream is None:
            stream = open(fd, "w", closefd=False)  # noqa: SIM115 - the process's own stream
        if not isinstance(stream, _SurvivingStream):
            setattr(sys, name, _SurvivingStream(stream, fd))
