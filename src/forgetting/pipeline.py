"""Execute chapters with papermill, promote published results, render the book.

* :func:`run_chapter` executes ``book/<name>.ipynb`` into ``_executed/book/`` with
  validated parameters. Parameters are checked *before* any kernel starts.
* :func:`promote` moves a chapter's staged files into ``data/results/`` -- only
  when the staged record says it ran at published parameters, and each file by
  an atomic rename, so a failed or interrupted run never touches published results.
* :func:`verify` reruns chapters at published parameters and compares the staged
  files with ``data/results/`` byte for byte.
* :func:`build_site` runs ``jupyter-book build -W -n`` on the executed notebooks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from .book import atomic_write, staging_dir
from .chapters import chapter_names, spec

KERNEL = "python3"


@dataclass
class ChapterRun:
    name: str
    seconds: float
    staged: list[Path]
    published: bool


def executed_dir(root: Path) -> Path:
    return root / "_executed" / "book"


def results_dir(root: Path) -> Path:
    return root / "data" / "results"


def staged_files(root: Path, name: str) -> list[Path]:
    """The staged record of ``name`` and its tables, sorted."""
    folder = staging_dir(root)
    files = [folder / f"{name}.json"] + sorted(folder.glob(f"{name}-*.csv"))
    return [f for f in files if f.exists()]


def run_chapter(root: Path, name: str, overrides: Mapping[str, Any] | None = None,
                quick: bool = False, progress: bool = False) -> ChapterRun:
    """Execute one chapter with papermill; ``quick`` applies the chapter's smoke parameters."""
    import papermill

    chapter = spec(name)
    params = chapter.validate({**(chapter.quick if quick else {}), **dict(overrides or {})})
    out_dir = executed_dir(root)
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in staged_files(root, name):
        stale.unlink()
    start = time.perf_counter()
    papermill.execute_notebook(
        str(root / "book" / f"{name}.ipynb"), str(out_dir / f"{name}.ipynb"),
        parameters=params, kernel_name=KERNEL, cwd=str(root / "book"),
        progress_bar=progress, log_output=False,
    )
    seconds = time.perf_counter() - start
    staged = staged_files(root, name)
    record = json.loads(staged[0].read_text()) if staged else {}
    return ChapterRun(name, seconds, staged, bool(record.get("published_parameters")))


def promote(root: Path, run: ChapterRun) -> list[Path]:
    """Copy a published run's staged files into ``data/results/`` (temp file + rename each)."""
    if not run.published:
        raise ValueError(f"chapter {run.name} did not run at its published parameters; "
                         "its results cannot replace data/results")
    target = results_dir(root)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for source in run.staged:
        destination = target / source.name
        atomic_write(destination, lambda handle, data=source.read_bytes(): handle.write(data))
        written.append(destination)
    return written


def compare(root: Path, run: ChapterRun) -> list[str]:
    """Differences between a run's staged files and the published ones (empty if identical)."""
    published = results_dir(root)
    problems = []
    names = {p.name for p in run.staged} | {p.name for p in published.glob(f"{run.name}.json")} | {
        p.name for p in published.glob(f"{run.name}-*.csv")}
    staged = {p.name: p for p in run.staged}
    for file_name in sorted(names):
        new, old = staged.get(file_name), published / file_name
        if new is None:
            problems.append(f"{file_name}: published but not produced")
        elif not old.exists():
            problems.append(f"{file_name}: produced but never published")
        elif new.read_bytes() != old.read_bytes():
            problems.append(f"{file_name}: differs from data/results")
    return problems


def run_all(root: Path, names: Iterable[str] | None = None, quick: bool = False,
            publish: bool = False, echo: Any = print) -> list[ChapterRun]:
    """Execute chapters in order, printing progress; ``publish`` promotes full runs."""
    runs = []
    names = list(names or chapter_names())
    for index, name in enumerate(names, 1):
        echo(f"[{index}/{len(names)}] {name} ...")
        run = run_chapter(root, name, quick=quick)
        if publish and run.published:
            promote(root, run)
        echo(f"[{index}/{len(names)}] {name} done in {run.seconds:.1f} s")
        runs.append(run)
    return runs


def build_site(root: Path, builder: str = "html") -> None:
    """``jupyter-book build`` with warnings as errors and nitpicky references."""
    command = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(root), "-W", "-n",
               "--keep-going", "--builder", builder]
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    subprocess.run(command, check=True, env=env)


def timing_table(runs: Iterable[ChapterRun], status: Mapping[str, str] | None = None) -> str:
    """A plain-text table: chapter, status, seconds."""
    lines = [f"{'chapter':<22} {'status':<10} {'seconds':>8}"]
    for run in runs:
        state = (status or {}).get(run.name, "ok")
        lines.append(f"{run.name:<22} {state:<10} {run.seconds:>8.1f}")
    return "\n".join(lines)
