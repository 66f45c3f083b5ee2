"""Shared fixtures: one smoke build of the whole book in a scratch copy of the repository."""

import atexit
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from forgetting.safeio import writable

# The tests check values, never speed (speed is measured in benchmarks/): no example fails for
# taking long, which it would at hypothesis's default 200 ms deadline on a loaded machine, and
# the suite loads this one on purpose, with the full-size chapter runs beside the other tests.
settings.register_profile("forgetting", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("forgetting")

ROOT = Path(__file__).resolve().parents[1]

# --- the project's shell, whatever shell the suite was started from --------------------------------
#
# The suite runs in, and starts its processes and kernels from, this process's environment: a
# variable of the caller's shell that names another project's environment or folders would reach
# every one of them. `project_environment` decides per variable; it is applied below, before
# any test is collected, so the session's environment (`session_environ`) is already the project's.

#: Variables of the caller's shell that change what a Python process imports or runs besides its
#: command: another project's folders (PYTHONPATH: its modules, or a ``sitecustomize.py`` run at
#: every start); a file run at every interactive start, which ipykernel also runs in every kernel
#: before its first cell (PYTHONSTARTUP); an interpreter left open after its script
#: (PYTHONINSPECT); warning filters other than the suite's (PYTHONWARNINGS). Tests that want one
#: set it for their own processes (``tests/test_other_cpu.py`` sets PYTHONPATH for its kernels).
FOREIGN_PYTHON = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONWARNINGS")
#: Where IPython and Jupyter keep profiles, configuration, kernelspecs and connection files: a
#: fresh folder each for the session, so that neither the caller's (a profile's startup files run
#: in every kernel, a user kernelspec named ``python3`` replaces the project's kernel) nor an
#: unwritable or odd one reaches the tests (IPython warns, an error here, and falls back to a
#: temporary folder). Every other ``JUPYTER_*`` variable of the caller is dropped.
JUPYTER_DIRS = ("IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR")
#: Folders libraries write their caches and configuration in (matplotlib's among them, which says
#: so in a chapter's output when it cannot): dropped when the caller's cannot be written in, so
#: that the libraries fall back to ``$HOME``'s.
WRITTEN_DIRS = ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")


def project_environment(environ: Mapping[str, str], scratch: Path) -> dict[str, str]:
    """``environ`` as the project's shell has it: the variables that name another project's
    environment or folders replaced, folders of its own under ``scratch`` for IPython and Jupyter.

    - ``VIRTUAL_ENV``: this interpreter's virtualenv (``sys.prefix``), as its activation sets it,
      or unset outside one. Another project's makes IPython add that environment's packages to
      ``sys.path`` and warn "Attempting to work in a virtualenv" (an error here: issue 42).
    - ``CONDA_PREFIX``, ``CONDA_DEFAULT_ENV``: unset unless they name this interpreter's
      environment (Jupyter reads them to order its paths).
    - :data:`FOREIGN_PYTHON` unset; :data:`JUPYTER_DIRS` under ``scratch``, other ``JUPYTER_*``
      unset; :data:`WRITTEN_DIRS` unset where they cannot be written in.
    - ``HOME``: ``scratch/home`` when unset, not an existing folder or not writable.
    """
    env = dict(environ)
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix
    else:
        env.pop("VIRTUAL_ENV", None)
    conda = env.get("CONDA_PREFIX")
    if conda is not None and os.path.realpath(conda) != os.path.realpath(sys.prefix):
        env.pop("CONDA_PREFIX")
        env.pop("CONDA_DEFAULT_ENV", None)
    for name in [*FOREIGN_PYTHON, *(name for name in env if name.startswith("JUPYTER_"))]:
        env.pop(name, None)
    for name in JUPYTER_DIRS:
        folder = scratch / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    if not (os.path.isdir(env.get("HOME", "")) and writable(env.get("HOME"), create=False)):
        (scratch / "home").mkdir(parents=True, exist_ok=True)
        env["HOME"] = str(scratch / "home")
    for name in WRITTEN_DIRS:
        if name in env and not writable(env[name]):
            del env[name]
    return env


def _project_shell() -> None:
    """Make this process's environment the project's (:func:`project_environment`, in a folder
    removed when the session ends), and drop the caller's ``PYTHONPATH`` folders outside this
    checkout from ``sys.path``, so that what the tests import next comes from the project's
    environment. ``make.py test`` starts pytest without them; a plain ``pytest`` from a shell
    that sets PYTHONPATH has them on ``sys.path`` before the virtualenv's packages.

    Not in a pool process the session starts (which imports this module to find
    :func:`_full_run`, before ``multiprocessing.parent_process()`` is set, but named by then):
    it inherits the session's environment and ``sys.path``.
    """
    if multiprocessing.current_process().name != "MainProcess":
        return
    foreign = {
        os.path.abspath(entry)
        for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if entry and not Path(entry).resolve().is_relative_to(ROOT)
    }
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) not in foreign]
    scratch = Path(tempfile.mkdtemp(prefix="forgetting-tests-shell-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    project = project_environment(os.environ, scratch)
    os.environ.clear()
    os.environ.update(project)


_project_shell()


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Run the block with exactly ``values`` as this process's environment, then restore the
    environment the block found (whatever the block set in between)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


BOOK_FILES = ("_config.yml", "_toc.yml", "CITATION.cff", "book", "data")
EMBEDDINGS = Path(".cache") / "embeddings"

# A runner started in the background of a non-interactive shell (`cmd &`) inherits SIGINT
# ignored, and so would every process the tests start: the Ctrl-C tests would then test a
# caller that ignores Ctrl-C (tests/test_processes.py tests that case on purpose). A handler,
# unlike an ignored signal, is reset to the default in each process the tests start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# The same for a runner started under `nohup`, which inherits SIGHUP ignored: the tests that
# send SIGHUP would otherwise test a caller that ignores it. Restored to the default here, it
# is the default in every process the tests start, as under a terminal.
if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _scratch_books_find_their_data() -> None:
    """Point ``$FORGETTING_LOCOMO`` and ``$FORGETTING_LONGMEMEVAL`` at the copies this checkout
    finds, each when it is unset.

    A checkout finds a copy at ``../shared/data/<name>/`` or in its own ``.cache/``; the scratch
    books the tests run chapters in are copies elsewhere and would not, so ``make.py test``
    beside such a copy ran real-conversations without its data (and knowledge-updates, whose
    full-size runs in CI then failed as not rerun). CI sets LoCoMo's variable itself.
    """
    from forgetting.conversations.longmemeval_source import LME_ENV
    from forgetting.conversations.source import LOCOMO_ENV
    from forgetting.pipeline.data import locate, unavailable

    for name, variable in (("locomo", LOCOMO_ENV), ("longmemeval", LME_ENV)):
        if variable not in os.environ:
            try:
                os.environ[variable] = str(locate(name))
            except unavailable():
                pass


_scratch_books_find_their_data()


def copy_book(target: Path, share_embeddings: bool = False) -> Path:
    """Copy what a book build reads into ``target`` (the package itself is installed).

    ``share_embeddings``: ``target/.cache/embeddings`` links to this checkout's embedding cache
    instead of starting empty. Its entries are keyed by model and text, checksummed and written
    atomically, so scratch books that only compute genuine vectors can share them (LoCoMo's
    take minutes to compute); a test that plants other vectors must not share it.
    """
    target.mkdir(parents=True, exist_ok=True)
    for name in BOOK_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        elif source.exists():
            shutil.copy2(source, target / name)
    if share_embeddings:
        shared = ROOT / EMBEDDINGS
        shared.mkdir(parents=True, exist_ok=True)
        (target / EMBEDDINGS).parent.mkdir(parents=True, exist_ok=True)
        (target / EMBEDDINGS).symlink_to(shared, target_is_directory=True)
    return target


def missing_data(chapter: str) -> str | None:
    """Why ``chapter`` cannot be rerun here for want of its external data (``None``: it can)."""
    from forgetting.pipeline.chapters import spec
    from forgetting.pipeline.data import locate, unavailable

    for name in spec(chapter).data:
        try:
            locate(name)
        except unavailable() as error:
            return f"{chapter} needs the {name} data: {error}"
    return None


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """Every chapter executed at quick parameters, two at a time (the parallel build), then
    ``jupyter-book build -W -n``."""
    from forgetting import pipeline

    root = copy_book(tmp_path_factory.mktemp("book"), share_embeddings=True)
    runs = pipeline.run_all(root, quick=True, publish=True, jobs=2)
    pipeline.build_site(root)
    return root, runs


@pytest.fixture
def in_repository(monkeypatch, tmp_path):
    """Run the command line from the repository (its chapters and registry) with papermill
    forbidden, and a run's default output folder under ``tmp_path``: a test of what is refused
    before any kernel starts cannot depend on what earlier work left in ``_build/runs/`` (a
    folder no run wrote is refused there, and that check comes first)."""
    import papermill

    from forgetting.pipeline import cli

    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: pytest.fail("a kernel was started"))
    monkeypatch.setattr(cli, "default_output_dir", lambda root, chapter: tmp_path / "runs" / chapter)
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="session")
def session_environ() -> dict[str, str]:
    """A copy of this process's environment as the session found it (the project's shell:
    :func:`project_environment` was applied to the caller's when this module was loaded)."""
    return dict(os.environ)


@pytest.fixture(scope="module")
def local_cluster():
    """The address of a real ``dask.distributed.LocalCluster`` on this machine: two worker
    processes of one thread each, no dashboard; started within 120 s or the test fails. One per
    test module that asks for it: idle, a cluster still takes CPU time (its scheduler and two
    workers about 6 CPU-s a minute on this project's machine), and one for the session lasted
    from its first user to the session's end (about five minutes).

    This process's environment is as it was before the cluster started. Dask's nannies set
    their workers' variables (``MALLOC_TRIM_THRESHOLD_``, ``PYTHONHASHSEED``, ...) in the
    environment of the process that starts them, and leave them there: the processes the suite
    started afterwards inherited them. With ``MALLOC_TRIM_THRESHOLD_=65536`` alone, mw-exp2 took
    twice its time, half of it in the system.
    """
    from distributed import LocalCluster

    def too_slow(signum, frame):
        raise TimeoutError("the LocalCluster did not start within 120 s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(120)
    try:
        with environment(dict(os.environ)):
            cluster = LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                scheduler_kwargs={"dashboard": False},
                # its HTTP server (health, metrics) binds any free port: the default, 8787, is
                # taken by any other cluster on the machine, and the warning dask gives then is
                # an error here (a second test suite on the machine failed this way)
                dashboard_address=":0",
                silence_logs=40,
            )
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    with cluster:
        yield cluster.scheduler_address


NOISE = Path(__file__).parent / "other_cpu"
"""The folder whose ``sitecustomize.py`` perturbs exp, log and pow (see ``tests/test_other_cpu.py``)."""
FULL_RUN_JOBS = 2
"""How many full-size chapter runs go at once after the suite's other tests are done (this
machine's cores; each kernel runs single-threaded). While those tests run, one run goes beside
them: the pytest process runs them one after another, and with two runs beside it the runs were
done long before it was (a sampled session: about 100 s with one core idle at the end); with one
run beside it throughout, the runs were left alone at the end instead (79 s)."""
EMBEDDING_CHAPTERS = ("real-conversations", "knowledge-updates")
"""Chapters whose first run in a fresh clone computes embeddings (minutes) that the second reuses:
their two runs go one after the other in the first pool, never side by side."""


def _full_run(root: Path, name: str, noise_log: Path | None, environ: dict[str, str]):
    """One chapter at its published parameters, in a pool process (one chapter at a time each),
    in the environment ``environ`` (the session's at its start); with ``noise_log``, its kernel
    loads the perturbing ``sitecustomize`` and logs into that folder. The process's environment
    is restored after the run.

    A pool process inherits the test process's environment as it is when the pool starts the
    process, which may be in the middle of a test that set variables for itself.
    """
    from forgetting import pipeline

    noise = {} if noise_log is None else {"PYTHONPATH": str(NOISE), "FORGETTING_ULP_NOISE": str(noise_log)}
    with environment({**environ, **noise}):
        return pipeline.run_chapter(root, name)


def _wants_full_runs(item) -> bool:
    return "full_runs" in getattr(item, "fixturenames", ()) and hasattr(item, "callspec")


def pytest_collection_modifyitems(session, config, items):
    """The tests that read the full-size runs go last, in their order: the runs start with the
    session (:func:`_full_runs_started`) and go on beside every other test, so by the time those
    tests come their runs are done or nearly (before, the session waited for them at the first
    such test: the test process idle, the rest of the suite not started)."""
    late = [item for item in items if _wants_full_runs(item)]
    if late:
        ids = {id(item) for item in late}
        items[:] = [item for item in items if id(item) not in ids] + late


@pytest.fixture(scope="session", autouse=True)
def _full_runs_started(request, tmp_path_factory, session_environ):
    """Start every chapter the session's selected tests ask for at its published parameters,
    twice, before the session's first test, one run at a time until :func:`full_runs` widens to
    ``FULL_RUN_JOBS``; yields ``({(kind, name): (root, future, noise log)}, widen)`` (empty when
    no selected test reads them, or none of their chapters has its data here).

    The runs go in pool processes, so the suite's other tests run beside them in this one; the
    chapters' kernels run single-threaded (``make.py test`` sets the thread variables). ``widen()``
    moves the runs not started yet to a pool of ``FULL_RUN_JOBS`` processes, in their order,
    except those of :data:`EMBEDDING_CHAPTERS`. At the end of the session runs not started are
    cancelled and the run folders removed.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from forgetting.pipeline.run import starting_order

    wanted = {item.callspec.params["name"] for item in request.session.items if _wants_full_runs(item)}
    names = starting_order(sorted(wanted))  # longest first, as a parallel build starts them
    names = [name for name in names if missing_data(name) is None]
    if not names:
        yield {}, lambda: None
        return
    # a scratch copy per run, so that no run reads or removes what another left in its copy (a
    # pool process runs several chapters; interpreter start and imports are paid once per process)
    roots = {
        (kind, name): copy_book(tmp_path_factory.mktemp(f"{kind}-{name}"), share_embeddings=True)
        for kind in ("plain", "perturbed")
        for name in names
    }
    logs = {name: tmp_path_factory.mktemp(f"ulp-log-{name}") for name in names}
    context = multiprocessing.get_context("spawn")
    pools = [ProcessPoolExecutor(1, mp_context=context)]

    def submit(pool: ProcessPoolExecutor, kind: str, name: str):
        log = logs[name] if kind == "perturbed" else None
        return pool.submit(_full_run, roots[kind, name], name, log, session_environ)

    # longest first, a chapter's two runs one after the other: what is left when the pool
    # widens is short runs, which two processes finish together (with the longest run last, a
    # sampled session ended with it, its last 45 s alone on one core)
    order = [(kind, name) for name in names for kind in ("perturbed", "plain")]
    started = {
        (kind, name): (roots[kind, name], submit(pools[0], kind, name), logs[name]) for kind, name in order
    }

    def widen() -> None:
        if len(pools) == 1:
            pools.append(ProcessPoolExecutor(FULL_RUN_JOBS, mp_context=context))
            for key, (root, future, log) in started.items():  # in order; a started run stays where it is
                if key[1] not in EMBEDDING_CHAPTERS and future.cancel():
                    started[key] = (root, submit(pools[1], *key), log)

    try:
        yield started, widen
    finally:
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)
        for _, future, _ in started.values():
            if future.done() and not future.cancelled() and future.exception() is None:
                future.result().discard()


@pytest.fixture(scope="session")
def full_runs(_full_runs_started):
    """Every chapter the session's selected tests ask for, run at its published parameters twice:
    as is, and with exp, log and pow perturbed by about four ulp (started with the session by
    :func:`_full_runs_started`; this widens their pool and waits for them).

    Returns ``{"plain" | "perturbed": {name: (root, run or the exception it raised, noise log)}}``;
    each in a scratch copy of the book. One execution per chapter and kind serves every test
    that reads it; the run folders are removed at the session's end.
    """
    started, widen = _full_runs_started
    widen()  # nothing else is left to run beside them
    results: dict[str, dict] = {"plain": {}, "perturbed": {}}
    for (kind, name), (root, future, log) in started.items():
        error = future.exception()
        results[kind][name] = (root, error if error is not None else future.result(), log)
    return results
