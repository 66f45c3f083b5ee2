"""Execute chapters with papermill, compare and promote published results, render the book.

Every run gets a private folder (``_executed/runs/<chapter>-<random>/``) that its kernel
writes to: the executed notebook, ``results/`` (record and tables) and ``figures/``. The
pipeline adds ``results/<chapter>-figures.json``, the SHA-256 of every figure file. Nothing
else is written while the kernel runs, so concurrent runs cannot mix their files.

* :func:`run_chapter` validates the parameters (each alone and the chapter's cross-parameter
  rules) *before* a kernel starts, then executes the chapter into a fresh run folder.
* :func:`run_all` executes chapters, one after another or ``jobs`` at a time in separate
  processes (chapters read no other chapter's output; the site is built after all of them).
  A chapter whose data was unavailable is *not rerun* (:attr:`ChapterRun.not_rerun`): it is
  shown in the site with its published results, never published, and named in one last line.
* :func:`compare` reports, per published file, ``identical`` or its first differing value.
* :func:`~forgetting.pipeline.promotion.publish_run` switches a chapter's published set --
  ``data/results/<chapter>*`` and ``figures/<chapter>-*`` -- and the site's copies in one
  journaled step that a kill cannot split, only for a complete run at published parameters.
* :func:`~forgetting.pipeline.output.export` moves a run to a folder the user names, only one
  that a run owns (custom parameters never publish).
* :func:`build_site` runs ``jupyter-book build -W -n`` on what the site renders.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .._validate import int_problem, raise_problems
from ..safeio import writable
from ..studies._lifetime import die_with_parent
from ..studies.executor import EXECUTOR_ENV, executor_from_spec
from ..studies.progress import PROGRESS_ENV
from .chapter_run import ChapterRun
from .chapters import chapter_names, spec
from .paths import RUN_DIR_ENV, run_figures, run_results, runs_dir
from .promotion import publish_run

KERNEL = "python3"
FIGURES_MANIFEST = "{name}-figures.json"


#: The order in which a parallel build starts the chapters: longest first, by their times in a
#: ``make.py book`` run on the reference machine (2 cores, two chapters at a time, one BLAS
#: thread each), so that its workers finish together; a chapter not listed follows, in book
#: order. Only the order in which chapters start depends on it.
LONGEST_FIRST = (
    "real-conversations",
    "knowledge-updates",
    "beyond-credit",
    "beyond-governance",
    "mw-exp3",
    "mw-theory",
    "mw-exp2",
    "decay-sweeps",
    "mw-exp5",
    "decay-postmortems",
    "mw-exp4",
    "mw-exp1",
    "decay-curves",
    "decay-headline",
    "decay-trace",
    "decay-retention",
)
#: The thread counts of the numeric libraries a kernel loads; a parallel build sets them (below).
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: Kernel starts tried per run. Kernels started at the same moment by several processes can
#: race for the same free ports (jupyter_client picks them before the kernel binds them); the
#: loser dies before it runs any cell, and only that failure is retried.
KERNEL_STARTS = 3
KERNEL_START_FAILURES = ("Kernel died before replying to kernel_info", "Kernel didn't respond in")
#: The folder inside a run folder where its kernels' connection files go (their keys included):
#: removed once the kernel has ended, and with the run folder however the run ends.
KERNEL_FILES = ".kernel"


class ChapterFailed(RuntimeError):
    """A chapter's notebook raised; the message names the cell's error in one line."""


@contextlib.contextmanager
def _environment(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set (or unset, for None) environment variables for the kernel this process starts."""
    saved = {key: os.environ.get(key) for key in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _quiet_papermill() -> Iterator[None]:
    """Keep papermill's log (nbclient's, which writes to it) off the terminal: with no handler
    configured, Python prints its errors there ("Kernel died while waiting for execute reply.",
    "Error occurred while starting new kernel client ..."), above the one line in which the
    command reports the failure itself. A handler the user configured still gets them."""
    logger, handler = logging.getLogger("papermill"), logging.NullHandler()
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def _kernel_died(name: str, how: str | None) -> str:
    """The one line that says a chapter's kernel died (the out-of-memory killer sends SIGKILL)."""
    if how is None:
        detail = ""
    elif how == "killed by SIGKILL":
        detail = f" ({how}, as the out-of-memory killer ends a process)"
    else:
        detail = f" ({how})"
    return f"chapter {name} failed: its kernel died{detail}; its published results are unchanged"


def _terminal() -> str | None:
    """The user's terminal (for progress bars drawn from inside the kernel), if any."""
    for stream in (sys.stderr, sys.stdout):
        try:
            if stream.isatty():
                return os.ttyname(stream.fileno())
        except (OSError, ValueError, AttributeError):
            continue
    return None


def remove_orphans(root: Path) -> None:
    """Remove run folders whose process is gone (a run killed with SIGKILL leaves its folder)."""
    folder = runs_dir(root)
    for run in folder.glob("*.*.*") if folder.is_dir() else []:
        try:
            pid = int(run.name.split(".")[1])
        except (ValueError, IndexError):
            continue
        if not _running(pid):
            shutil.rmtree(run, ignore_errors=True)


def _running(pid: int) -> bool:
    """``pid`` is a running process: it exists and is not a zombie (a killed process whose
    exit its new parent has not collected yet still answers ``kill(pid, 0)``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (not Linux): trust kill()
    return state != "Z"


def run_chapter(
    root: Path,
    name: str,
    overrides: Mapping[str, Any] | None = None,
    quick: bool = False,
    progress: bool = False,
    executor: str | None = None,
) -> ChapterRun:
    """Execute ``book/<name>.ipynb`` into a new private run folder; the caller owns the run.

    ``quick`` applies the chapter's smoke parameters under ``overrides``. ``executor`` names
    what runs the chapter's seed sweeps (a number of local workers or ``tcp://HOST:PORT``,
    see :func:`forgetting.studies.executor.executor_from_spec`); the kernel finds it in
    ``FORGETTING_EXECUTOR`` and the results do not depend on it. Raises ``ValueError`` (bad
    parameters or executor, before any kernel) or :class:`ChapterFailed`; on any failure,
    Ctrl-C included, the run folder is removed.
    """
    import papermill
    from nbclient.exceptions import DeadKernelError

    from .kernel import end_kernels, kernel_exit, kernel_options

    root = Path(root).resolve()  # the kernel runs in book/: every path it gets is absolute
    chapter = spec(name)
    params = chapter.validate({**(chapter.quick if quick else {}), **dict(overrides or {})})
    if executor is not None:
        executor_from_spec(executor, "executor")
    remove_orphans(root)
    folder = runs_dir(root) / f"{name}.{os.getpid()}.{secrets.token_hex(6)}"
    folder.mkdir(parents=True)
    start = time.perf_counter()
    env = {
        RUN_DIR_ENV: str(folder),
        PROGRESS_ENV: _terminal() if progress else None,
        EXECUTOR_ENV: executor,
    }
    connections = folder / KERNEL_FILES  # not the temporary folder, where a stop left them
    env.update(kernel_homes(os.environ, connections))
    options: dict[str, Any] = {}
    try:
        with _environment(env), _quiet_papermill():
            for attempt in range(1, KERNEL_STARTS + 1):
                connections.mkdir(mode=0o700, exist_ok=True)
                options = kernel_options(connections)
                try:
                    papermill.execute_notebook(
                        str(root / "book" / f"{name}.ipynb"),
                        str(folder / f"{name}.ipynb"),
                        parameters=params,
                        kernel_name=KERNEL,
                        cwd=str(root / "book"),
                        progress_bar=False,
                        log_output=False,
                        **options,  # the kernel dies with this process, however it ends
                    )
                    break
                except RuntimeError as error:  # a kernel that never started ran no cell: start another
                    if not str(error).startswith(KERNEL_START_FAILURES):
                        raise
                    if attempt == KERNEL_STARTS:
                        raise ChapterFailed(
                            f"chapter {name} failed: its kernel did not start in {KERNEL_STARTS} tries "
                            f"({str(error).splitlines()[0]}); its published results are unchanged"
                        ) from error
                finally:  # no kernel may write its connection file again once its folder is gone
                    end_kernels(options)
                    shutil.rmtree(connections, ignore_errors=True)
        _hide_injected_parameters(folder / f"{name}.ipynb")
        _write_figure_manifest(folder, name)
    except papermill.PapermillExecutionError as error:
        shutil.rmtree(folder, ignore_errors=True)
        detail = f"{error.ename}: {error.evalue}".splitlines()[0]
        raise ChapterFailed(f"chapter {name} failed in cell {error.exec_count}: {detail}") from error
    except DeadKernelError as error:  # killed while a cell ran (the OOM killer's SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
        raise ChapterFailed(_kernel_died(name, kernel_exit(options))) from error
    except BaseException:
        if options:
            end_kernels(options)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    record = json.loads((run_results(folder) / f"{name}.json").read_text())
    not_rerun = (
        None if record.get("rerun", True) else str(record.get("reason") or "its data was not available")
    )
    published = bool(record.get("published_parameters")) and record["parameters"] == chapter.recorded(
        chapter.defaults
    )
    return ChapterRun(name, time.perf_counter() - start, folder, published and not_rerun is None, not_rerun)


#: The folders in which a kernel's matplotlib and IPython keep their configuration and caches:
#: the variable that names one, and where each looks when it is unset (``~`` is ``$HOME``).
KERNEL_HOMES = {
    "MPLCONFIGDIR": ("XDG_CONFIG_HOME", "matplotlib", "~/.config/matplotlib"),
    "IPYTHONDIR": (None, None, "~/.ipython"),
}


def kernel_homes(environ: Mapping[str, str], private: Path) -> dict[str, str]:
    """The folders of :data:`KERNEL_HOMES` a kernel gets under ``private`` (the run's kernel folder,
    removed after each kernel) because the user's cannot be written in: a read-only or missing
    ``$HOME``, or a variable naming an unwritable folder. Either library would fall back to a
    temporary folder of its own and say so, matplotlib in the chapter's first figure cell (a
    ``stderr`` output on the page), IPython on the terminal. A writable folder is left as it is."""
    given = {}
    for name, (base, leaf, fallback) in KERNEL_HOMES.items():
        folder = environ.get(name) or (
            os.path.join(environ[base], leaf)
            if base and leaf and environ.get(base)
            else os.path.expanduser(fallback)
        )
        if not writable(folder):
            given[name] = str(private / name.lower())
    return given


def _hide_injected_parameters(path: Path) -> None:
    """Tag the cell papermill injected (the run's parameters as code) ``remove-cell``, as the
    chapter's own parameters cell is: the page gives them in its "Reproduce this chapter" box,
    at its end, so that a reader meets the chapter's finding first."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "remove-cell" not in tags:
            cell.metadata["tags"] = [*tags, "remove-cell"]
    nbformat.write(notebook, path)  # type: ignore[no-untyped-call]


def _write_figure_manifest(folder: Path, name: str) -> None:
    """``results/<name>-figures.json``: SHA-256 of each figure file, so figures are compared
    and published like numbers (the files themselves are not committed)."""
    digests = {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(run_figures(folder).glob("*"))
    }
    text = json.dumps(digests, indent=2, sort_keys=True) + "\n"
    target = run_results(folder) / FIGURES_MANIFEST.format(name=name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def run_all(
    root: Path,
    names: Iterable[str] | None = None,
    quick: bool = False,
    publish: bool = False,
    echo: Callable[[str], Any] = print,
    progress: bool = False,
    jobs: int = 1,
) -> list[ChapterRun]:
    """Execute chapters; each success is shown in the site and, with ``publish``, a run at
    published parameters is promoted. The run folders are removed; runs return in book order.

    ``jobs > 1`` runs that many chapters at once, each in its own process (its own kernel,
    run folder and environment), and shows progress as one line per finished chapter (no
    progress bars: several on one terminal would overwrite each other). The published files
    are those of a sequential build: every chapter writes only its own run folder, and
    publishing is serialised by this process under the publishing lock. Each chapter's kernel
    gets ``cpu_count // jobs`` library threads (:func:`thread_limits`). Raises ``ValueError``
    unless ``jobs`` is an int >= 1.
    """
    raise_problems([int_problem("jobs", jobs, minimum=1)])
    names = list(names or chapter_names())
    if jobs > 1 and len(names) > 1:
        return _run_parallel(root, names, quick, publish, echo, min(jobs, len(names)))
    runs = []
    for index, name in enumerate(names, 1):
        echo(f"[{index}/{len(names)}] {name} ...")
        run = run_chapter(root, name, quick=quick, progress=progress)
        _finish(root, run, publish)
        echo(f"[{index}/{len(names)}] {name} done in {run.seconds:.1f} s")
        runs.append(run)
    _echo_not_rerun(runs, echo)
    return runs


def not_rerun_line(runs: Iterable[ChapterRun]) -> str | None:
    """One line naming the chapters that could not be rerun, grouped by their reason (which says
    how to get the data); ``None`` when every chapter was rerun."""
    by_reason: dict[str, list[str]] = {}
    for run in runs:
        if run.not_rerun is not None:
            by_reason.setdefault(run.not_rerun, []).append(run.name)
    if not by_reason:
        return None
    groups = "; ".join(f"{', '.join(names)} ({reason})" for reason, names in by_reason.items())
    return (
        f"could not rerun, for want of data: {groups}; the site shows their published results, none published"
    )


def _echo_not_rerun(runs: Iterable[ChapterRun], echo: Callable[[str], Any]) -> None:
    line = not_rerun_line(runs)
    if line is not None:
        echo(line)


def _finish(root: Path, run: ChapterRun, publish: bool) -> None:
    """Show the run in the site and, with ``publish``, publish it: one transaction."""
    try:
        publish_run(root, run, results=publish and run.published, site=True)
    finally:
        run.discard()


def _run_parallel(
    root: Path, names: list[str], quick: bool, publish: bool, echo: Callable[[str], Any], jobs: int
) -> list[ChapterRun]:
    """:func:`run_all` with ``jobs`` chapter processes. A failing chapter is raised once the
    chapters already running have finished (their results are kept); the others never start.
    Ctrl-C stops every chapter process and leaves no run folder behind."""
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor, as_completed

    echo(f"running {len(names)} chapters, {jobs} at a time ...")
    runs: dict[str, ChapterRun] = {}
    failure: BaseException | None = None
    context = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_chapter_process, initargs=(os.getpid(), jobs)
    )
    futures: dict[Future[ChapterRun], str] = {}
    try:
        futures = {pool.submit(run_chapter, root, name, None, quick): name for name in starting_order(names)}
        for future in as_completed(futures):
            if future.cancelled():
                continue
            error = future.exception()
            if error is not None:
                failure = failure or error
                for other in futures:
                    other.cancel()
                continue
            run = future.result()
            _finish(root, run, publish)
            runs[run.name] = run
            echo(f"[{len(runs)}/{len(names)}] {run.name} done in {run.seconds:.1f} s")
    except BaseException:
        _stop(root, pool, list(futures))
        raise
    pool.shutdown(wait=True)
    if failure is not None:
        raise failure
    _echo_not_rerun(runs.values(), echo)
    return [runs[name] for name in names]


def starting_order(names: Iterable[str]) -> list[str]:
    """``names`` as a parallel build starts them: those of :data:`LONGEST_FIRST` in its order,
    then the others in the order given."""
    ranks = {name: rank for rank, name in enumerate(LONGEST_FIRST)}
    return sorted(names, key=lambda name: ranks.get(name, len(ranks)))


def thread_limits(jobs: int, environ: Mapping[str, str], cores: int | None) -> dict[str, str]:
    """The :data:`THREAD_VARIABLES` a chapter process of a ``jobs``-wide build sets: each to
    ``max(1, cores // jobs)``, except those ``environ`` already sets (the user's choice stands).

    OpenBLAS and OpenMP start one thread per core in every process, so ``jobs`` kernels would
    run ``jobs`` times as many threads as there are cores: on 2 cores beyond-credit took 297 s
    in a 2-wide build against 53 s alone with one thread. The published files do not depend on
    the count (the book test compares a parallel build with a sequential one).

    >>> thread_limits(2, {"OMP_NUM_THREADS": "4"}, cores=2)
    {'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1'}
    """
    threads = str(max(1, (cores or 1) // jobs))
    return {name: threads for name in THREAD_VARIABLES if name not in environ}


def _chapter_process(parent: int, jobs: int) -> None:
    """In a chapter process: Ctrl-C is the parent's to handle (it stops every chapter), the
    process ends with its parent, however the parent ends (its kernel follows it: ipykernel
    exits when its parent is gone), and its kernels start with :func:`thread_limits`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    os.environ.update(thread_limits(jobs, os.environ, os.cpu_count()))


def _stop(root: Path, pool: Any, futures: list[Any]) -> None:
    """Stop a parallel build: end the chapter processes (their kernels exit when their parent
    is gone), so the broken pool fails every call that has not finished, then remove every run
    folder they leave. Nothing is cancelled first: the pool's own thread would then try to fail
    a cancelled call and print an ``InvalidStateError`` traceback (CPython 3.11)."""
    processes = getattr(pool, "_processes", None) or {}  # no public way to stop a running call
    for process in list(processes.values()):
        process.terminate()
    pool.shutdown(wait=True)
    for future in futures:
        if future.done() and not future.cancelled() and future.exception() is None:
            future.result().discard()
    remove_orphans(root)


def timing_table(runs: Iterable[ChapterRun], status: Mapping[str, str] | None = None) -> str:
    """A plain-text table: chapter, status (default ``ok``, or ``not rerun``), seconds."""
    lines = [f"{'chapter':<22} {'status':<10} {'seconds':>8}"]
    for run in runs:
        state = (status or {}).get(run.name, "ok" if run.not_rerun is None else "not rerun")
        lines.append(f"{run.name:<22} {state:<10} {run.seconds:>8.1f}")
    return "\n".join(lines)
