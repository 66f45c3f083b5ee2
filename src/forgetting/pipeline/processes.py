"""The processes of a ``forgetting`` command end with it, and a signal ends it in one line.

* :func:`die_with_parent` -- a child process (a chapter process of ``build --jobs``) is killed
  by the kernel the moment its parent dies, SIGKILL included (Linux ``PR_SET_PDEATHSIG``);
  a chapter's Jupyter kernel already exits when its parent is gone (ipykernel's parent poller).
* :func:`terminate_as_interrupt` -- SIGTERM and SIGHUP raise :class:`Terminated` in the main
  thread, so the same clean-up runs as for Ctrl-C (run folders removed, workers stopped).
* :func:`guard_stdio` -- a command started with a closed standard stream, or whose reader went
  away (``forgetting verify | head -1``), keeps working: the lost output goes to ``/dev/null``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import io
import os
import signal
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class Terminated(BaseException):
    """The command received SIGTERM or SIGHUP (a ``BaseException``, like ``KeyboardInterrupt``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def die_with_parent(parent: int) -> None:
    """Have the calling process killed when its parent dies; exit now if ``parent`` is gone.

    On systems without ``prctl`` (not Linux) this does nothing: there the pool's own
    shutdown is the only clean-up.
    """
    if not sys.platform.startswith("linux"):  # pragma: no cover - Linux only
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:  # pragma: no cover
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Terminated` inside the block (main thread only);
    the previous handlers are restored after it."""
    signals = (signal.SIGTERM, signal.SIGHUP)
    try:
        previous = {s: signal.signal(s, _raise_terminated) for s in signals}
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
    child opens never lands on them."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


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
