"""A child process that dies with its parent, however the parent ends (SIGKILL included).

Used for every process the project starts that could outlive the command: a chapter process
of ``forgetting build --jobs``, a chapter's Jupyter kernel (started through ``python -m
forgetting.studies._lifetime PID -- KERNEL...``, see :mod:`forgetting.pipeline.kernel`), and the local
workers of :class:`forgetting.studies.executor.ProcessPool`. Standard library only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def die_with_parent(parent: int) -> None:
    """Have the calling process killed with SIGKILL when its parent dies; exit at once if the
    parent ``parent`` is already gone (the request came too late to fire).

    Linux's ``PR_SET_PDEATHSIG`` fires when the *thread* that started the process ends: every
    caller starts its children from a thread that lives as long as its process. Elsewhere
    this does nothing, and the pool's or kernel's own shutdown is the only clean-up.
    """
    if not sys.platform.startswith("linux"):  # pragma: no cover - Linux only
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:  # pragma: no cover
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        os._exit(1)


def main(argv: list[str]) -> int:
    """``python -m forgetting.studies._lifetime PID -- COMMAND...``: die with ``PID``, then become
    ``COMMAND`` (``exec``: same process, the request kept)."""
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: python -m forgetting.studies._lifetime PID -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    die_with_parent(int(argv[0]))
    os.execvp(argv[2], argv[2:])
    return 1  # pragma: no cover - exec does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
