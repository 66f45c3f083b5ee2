"""The ``forgetting`` command's entry point: signals are handled before any heavy import.

Importing the command line takes a moment (numpy, pandas, papermill, ...). Until it is
imported, Ctrl-C, SIGTERM and SIGHUP end the command at once with one line (nothing has been
done yet); then :func:`forgetting.pipeline.cli.main` takes over, where they stop the work
and clean up. This module imports only the standard library and :mod:`.processes`. While a
publication switches a chapter's files (:func:`forgetting.safeio.no_interrupts`) the handlers set
here are replaced by one that only records the signal, whichever thread receives it; the one set
here acts on it once the switch is done, so what a stopped command says stays true.

A stopped command then ends without Python's finalization (:func:`_end_stopped`): a stop
abandons papermill's coroutine half-way, and its ZeroMQ sockets can outlive their context at
interpreter exit, whose destructor then waits for them forever. CI saw that once: the command's
main thread in ``poll``, ZeroMQ's four threads in ``epoll_wait``, the kernel still running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType
from typing import NoReturn

EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


def _stop_before_start(signum: int, frame: FrameType | None) -> None:
    how = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    try:
        os.write(2, f"forgetting: {how} before it started; nothing was done\n".encode())
    finally:
        os._exit(EXIT_INTERRUPTED if signum == signal.SIGINT else EXIT_TERMINATED)


def _end_stopped(code: int) -> NoReturn:
    """End a stopped command with ``code`` now, as the signal's default action would end it.

    Every cleanup has run by then (run folders and journals in ``finally`` blocks; kernels and
    local workers die with this process), so only the interpreter's finalization is skipped:
    ``atexit`` handlers and object destructors, of which ZeroMQ's can hang (module docstring).
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken stream: nothing to say
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; see :mod:`forgetting.pipeline.cli`."""
    early = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.getsignal(s) for s in early}
    for s, handler in previous.items():
        if handler is not signal.SIG_IGN:  # a signal the caller ignores (nohup, `&`) stays ignored
            signal.signal(s, _stop_before_start)
    from .processes import Terminated, guard_stdio, raise_terminated

    guard_stdio()
    from .cli import main as cli_main  # the heavy import

    try:  # from here on a signal raises, and what was started is cleaned up
        for s, handler in previous.items():
            signal.signal(
                s, raise_terminated if s != signal.SIGINT and handler is signal.SIG_DFL else handler
            )
        code = cli_main(argv)
    except KeyboardInterrupt:  # one that came before cli.main could catch it
        print("forgetting: error: interrupted before any work; nothing was done", file=sys.stderr)
        _end_stopped(EXIT_INTERRUPTED)
    except Terminated as stop:
        print(f"forgetting: error: stopped by {stop} before any work; nothing was done", file=sys.stderr)
        _end_stopped(EXIT_TERMINATED)
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        _end_stopped(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
