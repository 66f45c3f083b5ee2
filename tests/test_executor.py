"""Executors and map_seeds: the same results, bit for bit, whatever runs the seeds and however
they are chunked; progress on the terminal; bad input refused before anything runs."""

import contextlib
import functools
import os
import socket
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting.hashing import digest
from forgetting.studies import executor as ex
from forgetting.studies import governance, worlds
from forgetting.studies.decay import frontier, study
from forgetting.studies.decay.sessions import SessionConfig
from forgetting.studies.progress import PROGRESS_ENV

SHORT = SessionConfig(seed=0, session_length=60, noise_per_turn=2)


def session_configs(n):
    return [SHORT.replace(seed=s) for s in range(n)]


@settings(max_examples=40, deadline=None)
@given(n_seeds=st.integers(0, 40), chunk_size=st.integers(1, 50))
def test_results_do_not_depend_on_the_chunk_size(n_seeds, chunk_size):
    configs = session_configs(n_seeds)
    direct = [study.run_session(study.DECAY, config) for config in configs]  # the plain loop
    chunk = ex.each_seed(functools.partial(study.run_session, study.DECAY))
    assert ex.map_seeds(chunk, configs, chunk_size=chunk_size) == direct


@given(n=st.integers(0, 300), chunk_size=st.integers(1, 400))
def test_chunks_are_contiguous_slices_that_join_back(n, chunk_size):
    parts = ex.chunks(range(n), chunk_size)
    assert [s for part in parts for s in part] == list(range(n))
    assert all(isinstance(part, range) for part in parts)
    assert all(len(part) == chunk_size for part in parts[:-1])
    assert len(parts) == -(-n // chunk_size)


def test_default_chunking_cuts_a_long_range_into_default_chunks():
    seen = []
    assert ex.map_seeds(functools.partial(_record, seen), range(1000)) == list(range(1000))
    assert seen[0] == range(0, 16) and len(seen) == 63 <= ex.DEFAULT_CHUNKS  # ceil(1000 / 64) per chunk


def _record(seen, chunk):
    seen.append(chunk)
    return list(chunk)


def test_every_executor_satisfies_the_protocol():
    assert isinstance(ex.InProcess(), ex.Executor)
    assert isinstance(ex.ProcessPool(2), ex.Executor)
    assert isinstance(ex.DaskCluster("tcp://127.0.0.1:8786"), ex.Executor)  # no connection yet


def test_options_choose_the_executor(monkeypatch):
    monkeypatch.setattr(ex.os, "cpu_count", lambda: 4)  # workers are capped at the cores
    assert isinstance(ex.executor_from_options(), ex.InProcess)
    assert isinstance(ex.executor_from_options(workers=1), ex.InProcess)
    assert ex.executor_from_options(workers=3).workers == 3
    assert ex.executor_from_options(scheduler="tcp://[::1]:8786").address == "tcp://[::1]:8786"
    assert ex.executor_spec(workers=2) == "2" and ex.executor_spec() is None
    assert isinstance(ex.executor_from_spec("1"), ex.InProcess)
    assert isinstance(ex.executor_from_spec("tcp://scheduler.lan:8786"), ex.DaskCluster)


def test_the_environment_names_the_chapter_executor(monkeypatch):
    monkeypatch.delenv(ex.EXECUTOR_ENV, raising=False)
    assert isinstance(ex.executor_from_env(), ex.InProcess)
    monkeypatch.setenv(ex.EXECUTOR_ENV, "2")
    assert ex.executor_from_env().workers == 2
    monkeypatch.setenv(ex.EXECUTOR_ENV, "two")
    with pytest.raises(ValueError, match="FORGETTING_EXECUTOR must be a number of workers >= 1 or"):
        ex.executor_from_env()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ex.ProcessPool(0), "workers must be an int >= 1, got 0"),
        (lambda: ex.ProcessPool(True), "workers must be an int >= 1, got True"),
        (lambda: ex.ProcessPool("2"), "workers must be an int >= 1, got '2'"),
        (lambda: ex.executor_from_options(workers=-1), "workers must be an int >= 1, got -1"),
        (
            lambda: ex.DaskCluster("localhost:8786"),
            "scheduler must be a Dask scheduler address tcp://HOST:PORT",
        ),
        (lambda: ex.DaskCluster("tcp://host"), r"got 'tcp://host'"),
        (lambda: ex.DaskCluster("tcp://host:0"), r"port in 1\.\.65535, got 'tcp://host:0'"),
        (lambda: ex.DaskCluster("tcp://host:70000"), r"got 'tcp://host:70000'"),
        (lambda: ex.DaskCluster("tcp://ho st:8786"), r"got 'tcp://ho st:8786'"),
        (lambda: ex.DaskCluster(8786), "got 8786"),
        (lambda: ex.executor_from_options(2, "tcp://h:1"), "give workers or scheduler, not both"),
        (lambda: ex.executor_from_options(0, "x"), "not both.*workers must be.*scheduler must be"),
        (lambda: ex.executor_from_spec("-1"), "executor must be a number of workers >= 1 or"),
        (lambda: ex.executor_from_spec("0"), "workers must be an int >= 1, got 0"),
        (lambda: ex.chunks(range(3), 0), "chunk_size must be an int >= 1, got 0"),
        (lambda: ex.map_seeds(list, range(3), chunk_size=1.5), "chunk_size must be an int >= 1, got 1.5"),
        (
            lambda: ex.map_seeds(list, -1),
            r"^seeds must be a sequence of seeds \(a range, a list, a 1-d array\), got -1",
        ),
        (lambda: ex.map_seeds(list, np.zeros((2, 2))), r"^seeds must be a sequence of seeds .*, got array"),
        (lambda: ex.map_seeds(None, range(3)), r"^chunk_fn must be callable, got None"),
        (
            lambda: ex.map_seeds(list, range(3), executor="pool"),
            r"^executor must be an Executor \(with imap\) or None",
        ),
        (lambda: ex.map_seeds(list, range(3), label=3), r"^label must be a str or None, got 3"),
        (
            lambda: ex.map_seeds(None, "123", chunk_size=0),
            "chunk_fn must be.*; seeds must be.*; chunk_size must be",
        ),
    ],
)
def test_bad_input_is_refused_with_a_sentence(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_a_chunk_must_answer_once_per_seed():
    with pytest.raises(ValueError, match="one result per seed: got 1 for 2 seeds"):
        ex.map_seeds(lambda chunk: [0], range(4), chunk_size=2)


def test_an_unreachable_scheduler_is_one_sentence():
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ValueError, match=f"scheduler 'tcp://127.0.0.1:{port}' does not answer") as error:
        ex.require_scheduler_reachable(f"tcp://127.0.0.1:{port}", timeout=2.0)
    # the connect's own answer, not a timeout: a refused port is told at once, not after retries
    assert "(Connection refused)" in str(error.value)


@contextlib.contextmanager
def loopback_server(reply: bytes | None) -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` of a server that accepts every connection and never speaks Dask:
    with ``reply=None`` it never answers, else it sends ``reply`` (an HTTP status line) and then
    nothing more. Its connections stay open until the block ends (a closed one would fail fast)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:  # the 0.1 s accept timeout: look at `stop` again
                continue
            held.append(connection)
            if reply is not None:
                with contextlib.suppress(OSError):
                    connection.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(10)
        for connection in [*held, listener]:
            connection.close()


HTTP_REPLY = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"


@pytest.mark.parametrize("reply", [None, HTTP_REPLY], ids=["never answers", "answers HTTP"])
def test_a_port_that_does_not_speak_dask_is_not_a_scheduler(reply):
    """A bare TCP connection is not a scheduler: a server that accepts and stays silent (the
    kernel's client waited on it for ever), and one that answers HTTP (whose status line the
    client read as a frame length: ``MemoryError: Unable to allocate 3.07 EiB``), are refused in
    one sentence within the timeout."""
    with loopback_server(reply) as address, pytest.raises(ValueError) as info:
        ex.require_scheduler_reachable(address, timeout=0.5)
    assert str(info.value).startswith(
        f"scheduler {address!r} does not answer as a Dask scheduler within 0.5 s"
    )
    assert "\n" not in str(info.value)


@pytest.mark.cluster
def test_a_real_scheduler_is_reachable(local_cluster):
    ex.require_scheduler_reachable(local_cluster, timeout=30.0)  # no error: it answered its identity


def test_progress_counts_seeds_on_the_named_terminal(tmp_path, monkeypatch):
    terminal = tmp_path / "tty"
    monkeypatch.setenv(PROGRESS_ENV, str(terminal))
    chunk = ex.each_seed(functools.partial(study.run_session, study.DECAY))
    ex.map_seeds(chunk, session_configs(30), chunk_size=7, label="decay sweep")
    drawn = terminal.read_text()
    assert "decay sweep" in drawn and "/30" in drawn  # seeds, not chunks, out of the known total


def test_a_process_pool_gives_the_in_process_rows():
    in_process = study.run_seeds(study.DECAY, SHORT, 40)
    pooled = study.run_seeds(study.DECAY, SHORT, 40, ex.ProcessPool(2))
    assert pooled == in_process and digest(pooled) == digest(in_process)
    assert [row["seed"] for row in pooled] == list(range(40))


def test_a_worker_error_reaches_the_caller():
    world = governance.GovernanceWorld()
    with pytest.raises(ValueError, match="policy must be one of"):
        governance.run_governance_seeds(world, 4, policies=("nope",), executor=ex.ProcessPool(2))


@pytest.mark.slow  # left out of the fast tier (make.py fast)
@pytest.mark.cluster
def test_a_dask_cluster_and_a_process_pool_give_the_in_process_results(local_cluster):
    """A real LocalCluster (two worker processes) against this process and a local pool:
    the decay headline, the governance runs and Experiment 1, compared bit for bit."""
    world = worlds.ControlledWorld(n_memories=20, retrieved_per_episode=3, n_episodes=300, checkpoints=(100,))
    gov = governance.GovernanceWorld()

    def results(executor):
        return {
            "headline": study.headline(SHORT, 25, executor=executor),
            "rows": study.run_seeds(study.WINDOW, SHORT, 25, executor),
            "governance": governance.governance_digest(
                governance.run_governance_seeds(gov, 3, executor=executor)
            ),
            "exp1": worlds.controlled_experiment(world, n_seeds=5, seed=7, executor=executor),
            "noise": study.noise_sweep(SHORT, [1, 5], 25, executor=executor),
            "grid": study.sensitivity_sweep(SHORT, [0.1, 0.3], [10, 20], 25, executor=executor),
            "frontier": frontier.frontier(SHORT, 25, [0.2, 0.5], [15, 40], executor=executor),
        }

    expected = results(None)
    with ex.DaskCluster(local_cluster, timeout=30) as cluster:
        for executor in (ex.ProcessPool(2), cluster):
            got = results(executor)
            assert got["headline"] == expected["headline"], executor
            assert digest(got["rows"]) == digest(expected["rows"]), executor
            assert got["governance"] == expected["governance"], executor
            for grid in ("noise", "grid", "frontier"):  # parameter grids through the executor too
                assert digest(got[grid]) == digest(expected[grid]), (grid, executor)
            for field in ("rho", "rho_at_checkpoints", "taxonomy", "utilities", "worth", "evidence"):
                assert np.array_equal(getattr(got["exp1"], field), getattr(expected["exp1"], field)), field


@pytest.mark.cluster
def test_the_cluster_leaves_this_process_s_environment_as_it_was(local_cluster, session_environ):
    """Dask's nannies set their workers' variables in the starting process's environment; the
    fixture takes them out again, so the processes the suite starts afterwards (chapter kernels
    among them) do not run with glibc's trim threshold at 64 KiB or a fixed hash seed."""
    import dask

    names = {*dask.config.get("distributed.nanny.pre-spawn-environ"), "PYTHONHASHSEED"}
    assert "MALLOC_TRIM_THRESHOLD_" in names
    now = {name: os.environ.get(name) for name in names}
    assert now == {name: session_environ.get(name) for name in names}


@pytest.mark.cluster
def test_a_dask_error_reaches_the_caller(local_cluster):
    with ex.DaskCluster(local_cluster, timeout=30) as cluster:
        with pytest.raises(ValueError, match="policy must be one of"):
            governance.run_governance_seeds(
                governance.GovernanceWorld(), 2, policies=("nope",), executor=cluster
            )
        assert cluster.map(abs, [-2, 3, -4]) == [2, 3, 4]  # the client is still usable afterwards


def test_more_workers_than_cores_are_refused(monkeypatch):
    monkeypatch.setattr(ex.os, "cpu_count", lambda: 2)
    assert ex.executor_from_options(workers=2).workers == 2
    for build in (
        lambda: ex.executor_from_options(workers=3),
        lambda: ex.executor_from_spec("100000"),
        lambda: ex.executor_spec(workers=12),
    ):
        with pytest.raises(ValueError, match="workers must be at most 2, the cores of this machine, got"):
            build()
    monkeypatch.setattr(ex.os, "cpu_count", lambda: None)  # unknown: one core
    with pytest.raises(ValueError, match="at most 1"):
        ex.executor_from_options(workers=2)


def test_a_pool_starts_no_more_processes_than_items(monkeypatch):
    """Twelve workers for two chunks start two processes; the results keep their order."""
    import joblib

    started = []

    class Recorder:
        def __init__(self, n_jobs, return_as, backend=None):
            started.append(n_jobs)

        def __call__(self, tasks):
            return (fn(*args, **kwargs) for fn, args, kwargs in tasks)

    monkeypatch.setattr(joblib, "Parallel", Recorder)
    pool = ex.ProcessPool(12)
    assert ex.map_seeds(functools.partial(_record, []), range(2), executor=pool) == [0, 1]
    assert pool.map(abs, [-3, 4, -5]) == [3, 4, 5]
    assert pool.map(abs, []) == []
    assert ex.ProcessPool(2).map(abs, list(range(-9, 0))) == list(range(9, 0, -1))
    assert started == [2, 3, 1, 2]


@pytest.mark.parametrize("given_executor", [None, ex.InProcess()])
@pytest.mark.parametrize("tasks", [2, 3, 50])
def test_a_chapter_run_alone_spreads_its_tasks_over_every_core(given_executor, tasks):
    chosen = ex.on_every_core(given_executor, tasks)
    assert isinstance(chosen, ex.ProcessPool) and chosen.workers == min(os.cpu_count() or 1, tasks)


@pytest.mark.parametrize("given_executor", [None, ex.InProcess()])
@pytest.mark.parametrize("tasks", [0, 1])
def test_a_single_task_stays_in_process(given_executor, tasks):
    assert isinstance(ex.on_every_core(given_executor, tasks), ex.InProcess)


def test_a_chosen_executor_runs_the_tasks_as_given():
    pool = ex.ProcessPool(3)
    assert ex.on_every_core(pool, 1) is pool and ex.on_every_core(pool, 50) is pool
