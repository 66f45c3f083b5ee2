"""Where a sweep's independent pieces run: this process, a local process pool, or a Dask cluster.

A seed sweep is a list of per-seed results, each a function of its seed alone.
:func:`map_seeds` cuts the seeds into contiguous chunks, has an :class:`Executor` run a
picklable per-chunk function on every chunk, and joins the chunks' results **in seed order**.
The list -- and so any reduction over it, done afterwards by the caller -- is bit-identical
whatever ran it and whatever the chunk size: each seed's result comes from the same code and
the same seed, and nothing is added up before the list is back in order.

* :class:`InProcess` -- the default: one chunk after another in the calling process.
* :class:`ProcessPool` -- ``workers`` local processes (joblib's loky backend).
* :class:`DaskCluster` -- the workers of a running ``dask.distributed`` scheduler, given by its
  address ``tcp://HOST:PORT``; they need this package installed (the same lock file).

:func:`executor_from_options` validates and builds one from ``workers`` or ``scheduler``.
``forgetting run CHAPTER --workers N`` / ``--scheduler ADDRESS`` hands the choice to the
chapter's kernel in :data:`EXECUTOR_ENV`; the chapter reads it back with
:func:`executor_from_env`. Which executor ran never enters a result or a record.

>>> from functools import partial
>>> square = partial(pow, exp=2)
>>> map_seeds(each_seed(square), range(5), chunk_size=2)
[0, 1, 4, 9, 16]
"""

from __future__ import annotations

import functools
import math
import os
import re
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from types import TracebackType
from typing import Any, Protocol, TypeVar, runtime_checkable

from .._validate import int_problem, raise_problems, shown
from ._lifetime import die_with_parent
from .progress import progress

__all__ = [
    "EXECUTOR_ENV",
    "DEFAULT_CHUNKS",
    "Executor",
    "InProcess",
    "ProcessPool",
    "DaskCluster",
    "scheduler_problem",
    "workers_problem",
    "require_scheduler_reachable",
    "executor_from_options",
    "executor_spec",
    "executor_from_spec",
    "executor_from_env",
    "on_every_core",
    "chunks",
    "each_seed",
    "map_seeds",
]

T = TypeVar("T")
R = TypeVar("R")

#: Environment variable through which the pipeline tells a chapter kernel what runs its sweeps:
#: a number of local workers (``"4"``) or a scheduler address (``"tcp://10.0.0.5:8786"``).
EXECUTOR_ENV = "FORGETTING_EXECUTOR"

#: Chunks a seed range is cut into when the caller names no chunk size: enough to keep every
#: worker of a small cluster busy and the progress bar moving, few enough to cost nothing.
DEFAULT_CHUNKS = 64

#: A scheduler address: ``tcp://`` then a host name, an IPv4 address or a bracketed IPv6 one, then a port.
_ADDRESS = re.compile(
    r"tcp://(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):(?P<port>\d{1,5})"
)


@runtime_checkable
class Executor(Protocol):
    """Runs ``fn`` on every item, possibly elsewhere, and gives the results back in input order.

    ``fn`` and the items must be picklable for executors that leave the process (a module-level
    function, or a :func:`functools.partial` of one, with plain data).
    """

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``[fn(item) for item in items]``, computed wherever this executor runs things."""
        ...

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """The same results, yielded in input order as soon as each is ready (for progress)."""
        ...


class InProcess:
    """Every call in the calling process, one after another: the reference the others must match."""

    workers = 1

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return list(self.imap(fn, items))

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        return (fn(item) for item in items)

    def __repr__(self) -> str:
        return "InProcess()"


class ProcessPool:
    """``workers`` local processes, through joblib's loky backend (cloudpickle, reused workers);
    a call with fewer items starts only as many.

    Raises ``ValueError`` unless ``workers`` is an int >= 1.
    """

    def __init__(self, workers: int) -> None:
        raise_problems([int_problem("workers", workers, minimum=1)])
        self.workers = workers

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return list(self.imap(fn, items))

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        from joblib import Parallel, delayed, parallel_config

        # No more processes than items: two seeds never start twelve workers (results keep their
        # order); the workers die with this process, however it ends (a killed kernel leaves none).
        processes = max(1, min(self.workers, len(items)))
        with parallel_config(backend="loky", initializer=die_with_parent, initargs=(os.getpid(),)):
            parallel = Parallel(n_jobs=processes, return_as="generator")
        results: Iterator[R] = iter(parallel(delayed(fn)(item) for item in items))
        return results

    def __repr__(self) -> str:
        return f"ProcessPool(workers={self.workers})"


def on_every_core(executor: Executor | None, tasks: int) -> Executor:
    """What runs ``tasks`` tasks of a chapter that takes minutes: ``executor``, except in-process
    (``None`` or :class:`InProcess`) with more than one task, which becomes a :class:`ProcessPool`
    of one worker per core (at most one per task); a single task stays in this process.

    Results do not depend on the executor, so a chapter run alone uses every core without being
    asked, and ``--workers`` or ``--scheduler`` still choose. joblib's loky gives each worker
    ``cores // workers`` BLAS threads (one on two cores).
    """
    if tasks > 1 and (executor is None or isinstance(executor, InProcess)):
        return ProcessPool(min(os.cpu_count() or 1, tasks))
    return executor or InProcess()


class DaskCluster:
    """The workers of a running ``dask.distributed`` scheduler at ``address`` (``tcp://HOST:PORT``).

    The client connects on first use (``timeout`` seconds to reach the scheduler) and is
    closed by :meth:`close` or at the end of a ``with`` block. Raises ``ValueError`` for an
    address that is not ``tcp://HOST:PORT`` with a port in 1..65535.
    """

    def __init__(self, address: str, timeout: float = 30.0) -> None:
        raise_problems([scheduler_problem(address)])
        self.address = address
        self.timeout = timeout
        self._client: Any = None

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (connected on first use)."""
        if self._client is None:
            from distributed import Client

            self._client = Client(  # type: ignore[no-untyped-call, unused-ignore]
                self.address, timeout=self.timeout, set_as_default=False
            )
        return self._client

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return list(self.imap(fn, items))

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        client = self.client
        futures = client.map(fn, list(items), pure=False)
        return _in_order(client, futures)

    def close(self) -> None:
        """Disconnect from the scheduler (the cluster itself keeps running)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> DaskCluster:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DaskCluster({self.address!r})"


def _in_order(client: Any, futures: list[Any]) -> Iterator[Any]:
    """Each future's result in submission order; whatever is left is cancelled on early exit."""
    try:
        for future in futures:
            yield future.result()
    finally:
        client.cancel(futures)


def scheduler_problem(address: object) -> str | None:
    """``None`` for a well-formed ``tcp://HOST:PORT`` (port 1..65535), else the sentence saying why not."""
    allowed = "a Dask scheduler address tcp://HOST:PORT with a port in 1..65535"
    if not isinstance(address, str):
        return f"scheduler must be {allowed}, got {address!r}"
    match = _ADDRESS.fullmatch(address)
    if match is None or not 1 <= int(match["port"]) <= 65535:
        return f"scheduler must be {allowed}, got {address!r}"
    return None


def require_scheduler_reachable(address: str, timeout: float = 5.0) -> None:
    """Raise ``ValueError`` unless a Dask scheduler answers at ``address`` within ``timeout`` seconds.

    A check before a chapter kernel starts, so that a wrong address fails in one line instead of
    inside a cell. Only a Dask scheduler passes: the comm's handshake and then an ``identity``
    request whose answer names a scheduler, within ``timeout`` (the whole exchange within
    ``timeout`` + 0.5 s). A bare TCP connection is not enough: a server that accepts and never
    answers held the kernel's client for good, and one that answers HTTP had its status line
    read as a frame length (a ``MemoryError`` of exbibytes). The exchange runs in a daemon
    thread that is waited for at most ``timeout`` + 2 s, so that nothing it waits on (a host
    name lookup) can hold the command.
    """
    raise_problems([scheduler_problem(address)])
    answers: list[object] = []
    asking = threading.Thread(
        target=lambda: answers.append(_scheduler_identity(address, timeout)),
        name="forgetting-scheduler-check",
        daemon=True,
    )
    asking.start()
    asking.join(timeout + 2.0)
    answer = answers[0] if answers else TimeoutError()
    if isinstance(answer, dict) and answer.get("type") == "Scheduler":
        return
    while isinstance(answer, OSError) and isinstance(answer.__cause__, OSError):
        answer = answer.__cause__  # distributed's "timed out trying to connect" names its cause
    if isinstance(answer, TimeoutError):  # an OSError; asyncio.TimeoutError is this one since 3.11
        reason = "no answer"
    elif isinstance(answer, OSError):
        reason = answer.strerror or str(answer).strip() or type(answer).__name__
    elif isinstance(answer, BaseException):  # an HTTP status line read as a frame length: MemoryError
        reason = f"it answers, but not in Dask's protocol: {type(answer).__name__}"
    elif isinstance(answer, dict):
        reason = f"it says it is a {answer.get('type')!r}"
    else:
        reason = "its answer is not Dask's"
    raise ValueError(
        f"scheduler {address!r} does not answer as a Dask scheduler within {timeout:g} s "
        f"({reason.splitlines()[0][:200]}); start one with `dask scheduler` or give a reachable address"
    )


def _scheduler_identity(address: str, timeout: float) -> object:
    """What the server at ``address`` answers to Dask's handshake and an ``identity`` request
    within ``timeout`` seconds, or the exception that ended the exchange (``MemoryError`` for
    bytes that were no Dask frame)."""
    import asyncio

    from distributed.comm.core import connect

    async def ask() -> object:
        comm = await connect(address, timeout=timeout)  # type: ignore[no-untyped-call, unused-ignore]
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    match = _ADDRESS.fullmatch(address)
    assert match is not None
    try:  # a refused port fails at once here, where distributed's connect retries until the timeout
        socket.create_connection((match["host"].strip("[]"), int(match["port"])), timeout=timeout).close()
    except OSError as error:
        return error
    try:
        return asyncio.run(asyncio.wait_for(ask(), timeout + 0.5))  # connect's own error first
    except Exception as error:  # whatever ended it, it was not a scheduler's answer
        return error


def workers_problem(workers: object) -> str | None:
    """``None`` for an int from 1 to the machine's cores (``os.cpu_count()``), else the sentence saying why not.

    More local processes than cores only slow a sweep down (and 100 000 of them stop the machine).
    """
    problem = int_problem("workers", workers, minimum=1)
    cores = os.cpu_count() or 1
    if problem is None and isinstance(workers, int) and workers > cores:
        return f"workers must be at most {cores}, the cores of this machine, got {shown(workers)}"
    return problem


def executor_from_options(workers: int | None = None, scheduler: str | None = None) -> Executor:
    """The executor for ``workers`` local processes or the Dask cluster at ``scheduler``.

    Neither: :class:`InProcess`; ``workers == 1``: :class:`InProcess`; ``workers > 1``:
    :class:`ProcessPool`; ``scheduler``: :class:`DaskCluster`. Raises ``ValueError`` for both
    at once, ``workers`` not an int from 1 to the machine's cores (:func:`workers_problem`), or a
    malformed address (all problems at once).
    """
    problems: list[str | None] = []
    if workers is not None and scheduler is not None:
        problems.append(
            f"give workers or scheduler, not both (got workers={workers!r}, scheduler={scheduler!r})"
        )
    if workers is not None:
        problems.append(workers_problem(workers))
    if scheduler is not None:
        problems.append(scheduler_problem(scheduler))
    raise_problems(problems)
    if scheduler is not None:
        return DaskCluster(scheduler)
    return ProcessPool(workers) if workers is not None and workers > 1 else InProcess()


def executor_spec(workers: int | None = None, scheduler: str | None = None) -> str | None:
    """The text :data:`EXECUTOR_ENV` carries for these options (validated), ``None`` for the default."""
    executor_from_options(workers, scheduler)
    return scheduler if scheduler is not None else (None if workers is None else str(workers))


def executor_from_spec(spec: str, source: str = "executor") -> Executor:
    """The executor a spec names: a positive integer (local workers) or ``tcp://HOST:PORT``.

    Raises ``ValueError`` naming ``source`` (where the text came from) for anything else.
    """
    if spec.isdigit():
        return executor_from_options(workers=int(spec))
    if spec.startswith("tcp://"):
        return executor_from_options(scheduler=spec)
    raise ValueError(
        f"{source} must be a number of workers >= 1 or a scheduler address tcp://HOST:PORT, got {spec!r}"
    )


def executor_from_env() -> Executor:
    """The executor named in :data:`EXECUTOR_ENV`, else :class:`InProcess`."""
    spec = os.environ.get(EXECUTOR_ENV, "")
    return executor_from_spec(spec, EXECUTOR_ENV) if spec else InProcess()


def chunks(items: Sequence[T], chunk_size: int) -> list[Sequence[T]]:
    """``items`` cut into contiguous slices of ``chunk_size`` (the last may be shorter).

    Slicing keeps the type: a ``range`` gives ranges, a list gives lists. Joining the slices
    in order gives ``items`` back.
    """
    raise_problems([int_problem("chunk_size", chunk_size, minimum=1)])
    return [items[start : start + chunk_size] for start in range(0, len(items), chunk_size)]


def _each(fn: Callable[[T], R], chunk: Sequence[T]) -> list[R]:
    return [fn(item) for item in chunk]


def each_seed(fn: Callable[[T], R]) -> Callable[[Sequence[T]], list[R]]:
    """A per-chunk function from a per-seed one: ``chunk -> [fn(seed) for seed in chunk]`` (picklable)."""
    return functools.partial(_each, fn)


def map_seeds(
    chunk_fn: Callable[[Sequence[T]], Sequence[R]],
    seeds: Sequence[T],
    executor: Executor | None = None,
    chunk_size: int | None = None,
    label: str | None = None,
) -> list[R]:
    """One result per seed, in seed order: ``chunk_fn`` on contiguous chunks of ``seeds``, joined.

    Parameters
    ----------
    chunk_fn : callable
        Takes a chunk (a slice of ``seeds``) and returns one result per seed of it, in its
        order. Must be picklable for executors that leave the process (see :func:`each_seed`).
    seeds : sequence
        A ``range`` of integer seeds, or any sliceable sequence (e.g. numpy seed streams).
    executor : Executor, optional
        What runs the chunks; :class:`InProcess` by default.
    chunk_size : int, optional
        Seeds per chunk; default ``ceil(len(seeds) / DEFAULT_CHUNKS)``. The result does not
        depend on it.
    label : str, optional
        Progress-bar label (seeds done / total, rate, ETA on the user's terminal).

    Returns
    -------
    list
        ``result[i]`` is the result of ``seeds[i]``, whatever ran it and however it was chunked.

    Raises
    ------
    ValueError
        A bad argument, each named, all at once (``chunk_fn`` not callable, ``seeds`` not a
        sliceable sequence or 1-d array, ``executor`` without ``imap``, ``label`` not a str,
        ``chunk_size`` not an int >= 1); or a chunk answered with the wrong number of results.
    """
    raise_problems(_map_seeds_problems(chunk_fn, seeds, executor, chunk_size, label))
    if not len(seeds):
        return []
    size = chunk_size if chunk_size is not None else math.ceil(len(seeds) / DEFAULT_CHUNKS)
    parts = chunks(seeds, size)
    results = (executor or InProcess()).imap(chunk_fn, parts)
    checked = (_checked(part, result) for part, result in zip(parts, results))
    flat = progress(chain.from_iterable(checked), label or f"{len(seeds)} seeds", total=len(seeds))
    return list(flat)


def _map_seeds_problems(
    chunk_fn: object, seeds: object, executor: object, chunk_size: object, label: object
) -> list[str | None]:
    """Why :func:`map_seeds` cannot run with these arguments, one sentence each (``None``: fine)."""
    sliceable = hasattr(seeds, "__len__") and hasattr(seeds, "__getitem__")
    return [
        None if callable(chunk_fn) else f"chunk_fn must be callable, got {shown(chunk_fn)}",
        None
        if sliceable and not isinstance(seeds, (str, bytes, dict)) and getattr(seeds, "ndim", 1) == 1
        else f"seeds must be a sequence of seeds (a range, a list, a 1-d array), got {shown(seeds)}",
        None
        if executor is None or callable(getattr(executor, "imap", None))
        else f"executor must be an Executor (with imap) or None, got {shown(executor)}",
        None
        if label is None or isinstance(label, str)
        else f"label must be a str or None, got {shown(label)}",
        None if chunk_size is None else int_problem("chunk_size", chunk_size, minimum=1),
    ]


def _checked(part: Sequence[Any], result: Sequence[R]) -> Sequence[R]:
    if len(result) != len(part):
        raise ValueError(f"chunk_fn must return one result per seed: got {len(result)} for {len(part)} seeds")
    return result
