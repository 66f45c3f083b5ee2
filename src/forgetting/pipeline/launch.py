"""The ``forgetting`` command's entry point: signals are handled before any heavy import.

Importing the command line takes a moment (numpy, pandas, papermill, ...). Until it is
imported, Ctrl-C, SIGTERM and SIGHUP end the command at once with one line (nothing has been
done yet); then :func:`forgetting.pipeline.cli.main` takes over, where they stop the work
and clean up. This module imports only the standard library and :mod:`.processes`.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


def _stop_before_start(signum: int, frame: FrameType | None) -> None:
    how = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    try:
        os.write(2, f"forgetting: {how} before it started; nothing was done\n".encode())
    finally:
        os._exit(EXIT_INTERRUPTED if signum == signal.SIGINT else EXIT_TERMINATED)


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
        return cli_main(argv)
    except KeyboardInterrupt:  # one that came before cli.main could catch it
        print("forgetting: error: interrupted before any work; nothing was done", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated as stop:
        print(f"forgetting: error: stopped by {stop} before any work; nothing was done", file=sys.stderr)
        return EXIT_TERMINATED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
