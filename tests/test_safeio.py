"""``safeio.no_interrupts``: SIGINT, SIGTERM and SIGHUP wait until a block of renames is done,
whichever thread of the process the kernel hands them to (forgetting.safeio)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from forgetting import safeio


class Stopped(BaseException):
    pass


def stop(signum, frame):
    raise Stopped(signum)


@pytest.fixture
def handlers():
    """SIGTERM and SIGHUP raise :class:`Stopped` during the test; the previous handlers after it."""
    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    yield
    for s, handler in previous.items():
        signal.signal(s, handler)


class Sender:
    """A thread started before the block (so it does not inherit a mask the block may set) that
    sends a signal to the whole process when asked: the kernel hands it to a thread that does not
    block it, and Python runs the handler in the main thread."""

    def __init__(self) -> None:
        self._ask_read, self._ask = os.pipe()
        self._done, self._said = os.pipe()
        self._thread = threading.Thread(target=self._serve)
        self._thread.start()

    def _serve(self) -> None:
        while (asked := os.read(self._ask_read, 1)) != b"\0":
            os.kill(os.getpid(), asked[0])
            os.write(self._said, b"s")

    def send(self, signum: int) -> None:
        """Send ``signum`` and wait in a blocking read until it is sent: the main thread takes the
        GIL back after it, which is where it runs the handlers pending (bpo-40010)."""
        os.write(self._ask, bytes([signum]))
        assert os.read(self._done, 1) == b"s"

    def close(self) -> None:
        os.write(self._ask, b"\0")
        self._thread.join()
        for fd in (self._ask_read, self._ask, self._done, self._said):
            os.close(fd)


@pytest.fixture
def sender():
    thread = Sender()
    yield thread
    thread.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_another_thread_receives_waits_for_the_end_of_the_block(handlers, sender, signum):
    done = []
    with pytest.raises(Stopped) as stopped, safeio.no_interrupts():
        sender.send(signum)
        for step in range(3):  # Python runs pending handlers between these steps
            done.append(step)
    assert done == [0, 1, 2] and stopped.value.args == (signum,)
    assert signal.getsignal(signum) is stop  # the handler is back


def test_ctrl_c_in_the_block_is_raised_after_it():
    done = []
    with pytest.raises(KeyboardInterrupt) as stopped, safeio.no_interrupts():
        signal.raise_signal(signal.SIGINT)
        done.append("renamed")
    assert stopped.type is KeyboardInterrupt  # Ctrl-C's own exception, not another
    assert done == ["renamed"] and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_a_signal_nothing_is_raised_and_the_handlers_are_restored(handlers):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with safeio.no_interrupts():
        pass
    assert {s: signal.getsignal(s) for s in before} == before


def test_an_ignored_signal_stays_ignored(handlers, sender):
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with safeio.no_interrupts():
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        sender.send(signal.SIGHUP)
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def test_blocks_nest_and_the_signal_is_raised_after_the_outer_one(handlers, sender):
    done = []
    with pytest.raises(Stopped) as stopped, safeio.no_interrupts():
        with safeio.no_interrupts():
            sender.send(signal.SIGTERM)
            done.append("inner")
        done.append("outer")
    assert done == ["inner", "outer"] and stopped.value.args == (signal.SIGTERM,)


def test_outside_the_main_thread_the_block_runs_as_is():
    """Python runs handlers only in the main thread: another thread's block cannot be interrupted."""
    done = []
    worker = threading.Thread(target=lambda: done.append(safeio.no_interrupts().__enter__()))
    worker.start()
    worker.join()
    assert done == [None]
