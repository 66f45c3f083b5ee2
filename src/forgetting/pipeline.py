"""Execute chapters with papermill, compare and promote published results, render the book.

Every run gets a private folder (``_executed/runs/<chapter>-<random>/``) that its kernel
writes to: the executed notebook, ``results/`` (record and tables) and ``figures/``. The
pipeline adds ``results/<chapter>-figures.json``, the SHA-256 of every figure file. Nothing
else is written while the kernel runs, so concurrent runs cannot mix their files.

* :func:`run_chapter` validates the parameters (each alone and the chapter's cross-parameter
  rules) *before* a kernel starts, then executes the chapter into a fresh run folder.
* :func:`compare` reports, per published file, ``identical`` or its first differing value.
* :func:`promote` replaces a chapter's published set -- ``data/results/<chapter>*`` and
  ``figures/<chapter>-*`` -- as a whole, stray files removed, under an exclusive lock, and
  only for a complete run at published parameters.
* :func:`export` moves a run to a folder the user names (custom parameters never publish).
* :func:`build_site` runs ``jupyter-book build -W -n`` on what the site renders.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from .chapters import chapter_names, spec
from .paths import (PROGRESS_ENV, RUN_DIR_ENV, book_dir, figures_dir, results_dir, run_figures,
                    run_results, runs_dir, site_input_dir, site_output_dir, site_source_dir)
from .safeio import check_inside, exclusive_lock, write_temp

KERNEL = "python3"
FIGURES_MANIFEST = "{name}-figures.json"


class ChapterFailed(RuntimeError):
    """A chapter's notebook raised; the message names the cell's error in one line."""


class BuildFailed(RuntimeError):
    """``jupyter-book build`` failed; the message gives its first warning and the log file."""


@dataclass
class ChapterRun:
    """One finished run: where its files are and whether it ran at published parameters."""

    name: str
    seconds: float
    folder: Path
    published: bool

    @property
    def notebook(self) -> Path:
        return self.folder / f"{self.name}.ipynb"

    @property
    def results(self) -> list[Path]:
        """Record, tables and figure manifest, sorted by name."""
        return sorted(run_results(self.folder).glob("*"))

    @property
    def figures(self) -> list[Path]:
        return sorted(run_figures(self.folder).glob("*"))

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


# --- ownership of published files -------------------------------------------------------

def owner(file_name: str, names: Iterable[str] | None = None) -> str | None:
    """The chapter a published file belongs to: the longest chapter name it starts with."""
    stem = file_name.split(".", 1)[0]
    matches = [n for n in (names or chapter_names()) if stem == n or stem.startswith(n + "-")]
    return max(matches, key=len) if matches else None


def published_files(folder: Path, name: str) -> list[Path]:
    """The files of ``folder`` that belong to chapter ``name`` (hidden files excluded)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if not p.name.startswith(".") and p.is_file() and owner(p.name) == name)


def strays(root: Path) -> list[Path]:
    """Files in ``data/results/`` that belong to no chapter (left by an older layout or tool)."""
    folder = results_dir(root)
    return sorted(p for p in folder.iterdir() if owner(p.name) is None) if folder.is_dir() else []


# --- running -----------------------------------------------------------------------------

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
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(run, ignore_errors=True)
        except (ValueError, IndexError, PermissionError):
            continue


def run_chapter(root: Path, name: str, overrides: Mapping[str, Any] | None = None,
                quick: bool = False, progress: bool = False) -> ChapterRun:
    """Execute ``book/<name>.ipynb`` into a new private run folder; the caller owns the run.

    ``quick`` applies the chapter's smoke parameters under ``overrides``. Raises
    ``ValueError`` (bad parameters, before any kernel) or :class:`ChapterFailed`; on any
    failure, Ctrl-C included, the run folder is removed.
    """
    import papermill

    root = Path(root).resolve()  # the kernel runs in book/: every path it gets is absolute
    chapter = spec(name)
    params = chapter.validate({**(chapter.quick if quick else {}), **dict(overrides or {})})
    remove_orphans(root)
    folder = runs_dir(root) / f"{name}.{os.getpid()}.{secrets.token_hex(6)}"
    folder.mkdir(parents=True)
    start = time.perf_counter()
    env = {RUN_DIR_ENV: str(folder), PROGRESS_ENV: _terminal() if progress else None}
    try:
        with _environment(env):
            papermill.execute_notebook(
                str(root / "book" / f"{name}.ipynb"), str(folder / f"{name}.ipynb"),
                parameters=params, kernel_name=KERNEL, cwd=str(root / "book"),
                progress_bar=False, log_output=False,
                extra_arguments=["--log-level=CRITICAL"])  # no TCP-transport notice on the terminal
        _write_figure_manifest(folder, name)
    except papermill.PapermillExecutionError as error:
        shutil.rmtree(folder, ignore_errors=True)
        detail = f"{error.ename}: {error.evalue}".splitlines()[0]
        raise ChapterFailed(f"chapter {name} failed in cell {error.exec_count}: {detail}") from error
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    record = json.loads((run_results(folder) / f"{name}.json").read_text())
    published = bool(record.get("published_parameters")) and record["parameters"] == chapter.defaults
    return ChapterRun(name, time.perf_counter() - start, folder, published)


def _write_figure_manifest(folder: Path, name: str) -> None:
    """``results/<name>-figures.json``: SHA-256 of each figure file, so figures are compared
    and published like numbers (the files themselves are not committed)."""
    digests = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(run_figures(folder).glob("*"))}
    text = json.dumps(digests, indent=2, sort_keys=True) + "\n"
    target = run_results(folder) / FIGURES_MANIFEST.format(name=name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


# --- comparing ---------------------------------------------------------------------------

def first_difference(name: str, new: bytes, old: bytes) -> str:
    """Where two versions of a published file first differ, in the reader's terms."""
    if name.endswith(".json"):
        try:
            found = _json_difference(json.loads(new), json.loads(old), "")
        except ValueError:
            found = None
        if found:
            return found
    if name.endswith(".csv"):
        new_rows, old_rows = (list(csv.reader(io.StringIO(b.decode()))) for b in (new, old))
        header = old_rows[0] if old_rows else []
        for index, (a, b) in enumerate(zip(new_rows, old_rows)):
            if a != b:
                for column, (x, y) in enumerate(zip(a, b)):
                    if x != y:
                        label = header[column] if column < len(header) else column
                        return f"row {index}, column {label}: {x} (published {y})"
                return f"row {index}: {len(a)} fields (published {len(b)})"
        return f"{len(new_rows)} rows (published {len(old_rows)})"
    for offset, (a, b) in enumerate(zip(new, old)):
        if a != b:
            return f"first differing byte at offset {offset}"
    return f"{len(new)} bytes (published {len(old)})"


def _json_difference(new: Any, old: Any, where: str) -> str | None:
    if isinstance(new, dict) and isinstance(old, dict):
        for key in sorted(set(new) | set(old)):
            here = f"{where}.{key}" if where else key
            if key not in old:
                return f"{here}: new, not published"
            if key not in new:
                return f"{here}: published, not produced"
            found = _json_difference(new[key], old[key], here)
            if found:
                return found
        return None
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        for index, (a, b) in enumerate(zip(new, old)):
            found = _json_difference(a, b, f"{where}[{index}]")
            if found:
                return found
        return None
    if new != old or type(new) is not type(old):
        return f"{where}: {json.dumps(new)} (published {json.dumps(old)})"
    return None


IDENTICAL = "identical"


def file_report(root: Path, run: ChapterRun) -> list[tuple[str, str]]:
    """Each file of the run or of the published set, with ``identical`` or how it differs."""
    staged = {p.name: p for p in run.results}
    published = {p.name: p for p in published_files(results_dir(root), run.name)}
    report = []
    for file_name in sorted(set(staged) | set(published)):
        new, old = staged.get(file_name), published.get(file_name)
        if new is None:
            report.append((file_name, "published but not produced"))
        elif old is None:
            report.append((file_name, "produced but never published"))
        elif new.read_bytes() != old.read_bytes():
            report.append((file_name, first_difference(file_name, new.read_bytes(), old.read_bytes())))
        else:
            report.append((file_name, IDENTICAL))
    return report


def compare(root: Path, run: ChapterRun) -> list[str]:
    """Differences between a run and the chapter's published set (empty if identical)."""
    return [f"{name}: {status}" for name, status in file_report(root, run) if status != IDENTICAL]


# --- publishing --------------------------------------------------------------------------

def _lock_path(root: Path) -> Path:
    return site_input_dir(root) / ".publish.lock"


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Defer SIGINT/SIGTERM while a set of renames completes (main thread only)."""
    signals = {signal.SIGINT, signal.SIGTERM}
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def replace_set(root: Path, folder: Path, name: str, sources: list[Path]) -> None:
    """Make ``folder``'s files of chapter ``name`` exactly ``sources`` (by name).

    Every new file is first written to an exclusive temp file (a full disk fails here,
    leaving the old set); then, with interrupts deferred, the temps are renamed into place
    and the chapter's other files are removed.
    """
    folder.mkdir(parents=True, exist_ok=True)
    check_inside(folder, root)
    temps: list[tuple[Path, Path]] = []
    try:
        for source in sources:
            target = folder / source.name
            temps.append((write_temp(target, lambda h, data=source.read_bytes(): h.write(data)), target))
        with _no_interrupts():
            for tmp, target in temps:
                os.replace(tmp, target)
            keep = {s.name for s in sources}
            for old in published_files(folder, name):
                if old.name not in keep:
                    old.unlink()
    finally:
        for tmp, _ in temps:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def promote(root: Path, run: ChapterRun) -> None:
    """Replace the chapter's published results and figures with this run's, as a whole."""
    if not run.published:
        raise ValueError(f"chapter {run.name} did not run at its published parameters; "
                         "its results cannot replace data/results")
    with exclusive_lock(_lock_path(root)):
        replace_set(root, results_dir(root), run.name, run.results)
        replace_set(root, figures_dir(root), run.name, run.figures)
        for path in strays(root):
            path.unlink()


def show_in_site(root: Path, run: ChapterRun) -> None:
    """Make this run the one the site renders (``_executed/site/<chapter>.ipynb`` and its figures)."""
    site = site_source_dir(root)
    with exclusive_lock(_lock_path(root)):
        replace_set(root, site / "figures", run.name, run.figures)
        replace_set(root, site, run.name, [run.notebook])


#: What the site takes from ``book/`` besides the executed chapters.
SITE_PAGES = ("*.md", "references.bib", "images/*")


def prepare_site(root: Path) -> Path:
    """Copy the book's pages, bibliography and images into the site's source folder."""
    site = site_source_dir(root)
    for pattern in SITE_PAGES:
        for source in sorted(book_dir(root).glob(pattern)):
            target = site / source.relative_to(book_dir(root))
            target.parent.mkdir(parents=True, exist_ok=True)
            data = source.read_bytes()
            if not target.exists() or target.read_bytes() != data:
                target.write_bytes(data)
    return site


def export(run: ChapterRun, output: Path) -> Path:
    """Move a run's notebook, results and figures to ``output`` (replacing a previous run there)."""
    output = output.resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    incoming = output.with_name(f".{output.name}.{secrets.token_hex(6)}.incoming")
    shutil.move(str(run.folder), incoming)
    run.folder = incoming
    with _no_interrupts():
        retired = None
        if output.exists():
            retired = output.with_name(f".{output.name}.{secrets.token_hex(6)}.old")
            os.replace(output, retired)
        os.replace(incoming, output)
        run.folder = output
    if retired is not None:
        shutil.rmtree(retired, ignore_errors=True)
    return output


# --- batches -----------------------------------------------------------------------------

def run_all(root: Path, names: Iterable[str] | None = None, quick: bool = False,
            publish: bool = False, echo: Callable[[str], Any] = print,
            progress: bool = False) -> list[ChapterRun]:
    """Execute chapters in book order; each success is shown in the site and, with
    ``publish``, a run at published parameters is promoted. The run folders are removed."""
    runs = []
    names = list(names or chapter_names())
    for index, name in enumerate(names, 1):
        echo(f"[{index}/{len(names)}] {name} ...")
        run = run_chapter(root, name, quick=quick, progress=progress)
        try:
            show_in_site(root, run)
            if publish and run.published:
                promote(root, run)
        finally:
            run.discard()
        echo(f"[{index}/{len(names)}] {name} done in {run.seconds:.1f} s")
        runs.append(run)
    return runs


def build_site(root: Path, builder: str = "html") -> Path:
    """``jupyter-book build -W -n`` of the site's source folder, with the repository's
    ``_config.yml`` and ``_toc.yml``; its output goes to ``_build/jupyter-book.log``."""
    site = prepare_site(root)
    missing = [n for n in chapter_names() if not (site / f"{n}.ipynb").exists()]
    if missing:
        raise BuildFailed(f"no executed notebook for {', '.join(missing)}: run `forgetting build` "
                          "(or `forgetting build --quick`) first")
    command = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(site),
               "--path-output", str(root), "--config", str(root / "_config.yml"),
               "--toc", str(root / "_toc.yml"), "-W", "-n", "--keep-going", "--builder", builder]
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    log = root / "_build" / "jupyter-book.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as handle:
        code = subprocess.run(command, env=env, stdout=handle, stderr=subprocess.STDOUT).returncode
    if code:
        lines = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace")).splitlines()
        first = next((line for line in lines if "WARNING" in line or "ERROR" in line),
                     lines[-1] if lines else "no output")
        raise BuildFailed(f"jupyter-book build failed ({first.strip()}); full log: {log}")
    return site_output_dir(root, builder) / "index.html"


def timing_table(runs: Iterable[ChapterRun], status: Mapping[str, str] | None = None) -> str:
    """A plain-text table: chapter, status, seconds."""
    lines = [f"{'chapter':<22} {'status':<10} {'seconds':>8}"]
    for run in runs:
        state = (status or {}).get(run.name, "ok")
        lines.append(f"{run.name:<22} {state:<10} {run.seconds:>8.1f}")
    return "\n".join(lines)
