"""Time a researcher's feedback loop in one run: import, chapter runs, and the article's engine.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_feedback.py \\
        [--repeat 3] [--seeds 20000] [--quick] [--book] [--tests]

A benchmark, not a test: it prints a markdown table ``what | seconds | note`` and asserts nothing
about time. Every row is the best of ``--repeat`` runs except the make.py rows (run once):

1. ``python -c "import forgetting"`` in a fresh interpreter; the note names the three slowest
   top-level imports (cumulative) of one ``python -X importtime -c "import forgetting"``.
2. ``forgetting run decay-retention -o DIR``, end to end, DIR new in a temporary folder each time.
3. ``forgetting run decay-headline -p n_seeds 2 -o DIR`` (the smallest headline: fixed costs).
4. ``forgetting run decay-headline -p n_seeds N -o DIR`` (``--seeds``, default 20 000) beside the
   decay-engine article's engine replaying the same sessions in this process, and the ratio
   chapter seconds / article-engine seconds.
5. ``--book`` / ``--tests``: ``python3 make.py book`` / ``test`` on a fresh ``git clone`` of the
   committed HEAD (uncommitted edits are not in it), its install done first and untimed (the
   note gives its seconds), so the row is the loop of a clone whose install is cached
   (:func:`make_row`).

The article's engine is the one :mod:`benchmarks.bench_decay` times as "the article's way":
:class:`bench_decay.ScanningEngine`, the event engines of :mod:`forgetting.decay.engines` whose
``step`` evaluates the eviction rule on every present item at every turn
(:func:`~forgetting.decay.engines.scan_evictions`: ``exp(-t / S) < theta``, or ``t > W``), as the
article's eviction check reads. The article's own ``memory_engine.py`` is not in this repository.
Row 4 replays seeds ``0..N-1`` of the chapter's published parameters (150 turns, 3 facts,
4 recalls each, noise 3 per turn), each session generated once and replayed through the decay
engine (theta 0.20, S0 8) and the window (W 15) with :func:`forgetting.studies.decay.simulation.simulate`,
then :func:`~forgetting.studies.decay.metrics.session_summary`: the 2N per-session rows that the chapter's
``study.run_seeds`` computes (with the batch simulator). Before timing, the rows of seeds 0..4
must equal ``study.run_seeds``'s; after, the chapter's recorded means and sds must equal
``study.summarize_runs`` of the article engine's N-seed rows (to the record's 10 digits). The
chapter does more than the replay: it computes the 2N rows twice (its determinism check), the
mechanism check, the lowest held retention and the window's zero causes, and it starts a kernel,
draws and saves a figure, compares with the published files: the ratio is the researcher's whole
loop against the bare replay.

A chapter row's note splits its seconds with the executed notebook's papermill metadata: kernel
start (papermill's start to the first cell), the cells (the slowest named), the rest of papermill's
time (between cells, kernel shut-down, writing the notebook), and what lies outside papermill (the
CLI's start, parameter checks, figure digests, comparison with the published files).

Subprocesses run in the repository (found from this file), so the script runs from any working
directory. It writes only to temporary folders, removed at the end (``forgetting run`` itself
keeps a private folder under ``_executed/runs/`` while it runs and removes it). ``--quick``:
repeat 1, 50 seeds (the test's size).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench_decay import ScanningEngine  # benchmarks/ is sys.path[0] when this file runs as a script

from forgetting.pipeline.chapters import spec
from forgetting.studies.decay import metrics, study
from forgetting.studies.decay.sessions import SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate

ROOT = Path(__file__).resolve().parents[1]
ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **os.environ}  # the caller's settings win
FORGETTING = Path(sys.executable).with_name("forgetting")
CHECK_SEEDS = 5
#: summarize_runs key -> the chapter's glue name (``frr_decay``, ``frr_decay_sd``, ...).
GLUED = {
    "frr": "frr",
    "survival_rate": "survival",
    "facts_evicted": "evicted",
    "footprint_reduction": "footprint",
}


def run(command: list[str], cwd: Path = ROOT, **kwargs) -> subprocess.CompletedProcess:
    """Run ``command`` in ``cwd`` (the repository) with one BLAS thread; exit with its output if it fails."""
    result = subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True, check=False, **kwargs)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result


def best(timed_run, repeat: int) -> tuple[float, object]:
    """The fastest of ``repeat`` calls of ``timed_run`` (each returns ``(seconds, what it kept)``)."""
    return min((timed_run() for _ in range(repeat)), key=lambda outcome: outcome[0])


def timed(func) -> tuple[float, object]:
    """Wall seconds of ``func()`` and its result."""
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


def slowest_top_level(report: str, count: int = 3) -> list[tuple[int, str]]:
    """The ``count`` unindented imports of a ``-X importtime`` report with the most cumulative microseconds."""
    rows = []
    for line in report.splitlines():
        if line.startswith("import time:") and line.count("|") >= 2:
            _, cumulative, name = line.split("|", 2)
            if cumulative.strip().isdigit() and not name[1:].startswith(" "):
                rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:count]


def import_row(repeat: int) -> tuple[str, float, str]:
    """Row 1: a fresh ``import forgetting``, and the slowest top-level imports by ``-X importtime``."""
    seconds, _ = best(lambda: timed(lambda: run([sys.executable, "-c", "import forgetting"])), repeat)
    report = run([sys.executable, "-X", "importtime", "-c", "import forgetting"]).stderr
    slowest = ", ".join(f"{name} {us / 1000:.1f} ms" for us, name in slowest_top_level(report))
    return 'python -c "import forgetting"', seconds, f"slowest top-level imports (cumulative): {slowest}"


def chapter_run(chapter: str, *params: str) -> tuple[float, tuple[dict, dict]]:
    """``forgetting run chapter *params -o DIR`` into a fresh temporary DIR: seconds, notebook, record."""
    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as tmp:
        out = Path(tmp) / "run"
        seconds, _ = timed(lambda: run([str(FORGETTING), "run", chapter, *params, "-o", str(out)]))
        notebook = json.loads((out / f"{chapter}.ipynb").read_text(encoding="utf-8"))
        record = json.loads((out / "results" / f"{chapter}.json").read_text(encoding="utf-8"))
    return seconds, (notebook, record)


def where_the_time_goes(seconds: float, notebook: dict) -> str:
    """Kernel start, cells (the slowest named), the rest of papermill's time and the time outside it."""
    papermill = notebook["metadata"]["papermill"]
    cells = [(cell["metadata"]["papermill"], cell) for cell in notebook["cells"]]
    first = min(datetime.fromisoformat(meta["start_time"]) for meta, _ in cells)
    kernel = (first - datetime.fromisoformat(papermill["start_time"])).total_seconds()
    in_cells = sum(meta["duration"] or 0.0 for meta, _ in cells)
    slow_meta, slow_cell = max(
        ((meta, cell) for meta, cell in cells if cell["cell_type"] == "code"),
        key=lambda pair: pair[0]["duration"] or 0.0,
    )
    line = next((s for s in "".join(slow_cell["source"]).splitlines() if s.strip()), "")
    line = (line[:34] + "…" if len(line) > 35 else line).replace("|", "\\|")
    rest = papermill["duration"] - kernel - in_cells
    return (
        f"kernel start {kernel:.2f} s, cells {in_cells:.2f} s (slowest {slow_meta['duration']:.2f} s: "
        f"`{line}`), rest of papermill {rest:.2f} s, outside papermill {seconds - papermill['duration']:.2f} s"
    )


def chapter_row(what: str, repeat: int, chapter: str, *params: str) -> tuple[tuple[str, float, str], dict]:
    """A chapter row (best of ``repeat`` runs) and the record of that run."""
    seconds, (notebook, record) = best(lambda: chapter_run(chapter, *params), repeat)
    return (what, seconds, where_the_time_goes(seconds, notebook)), record


def headline_setup() -> tuple[SessionConfig, tuple[study.Policy, study.Policy]]:
    """The decay-headline chapter's session config and policies at its published parameters."""
    params = spec("decay-headline").defaults
    config = SessionConfig(
        seed=0,
        session_length=params["session_length"],
        num_foundational=params["num_foundational"],
        recalls_per_foundational=params["recalls_per_foundational"],
        noise_per_turn=params["noise_per_turn"],
    )
    return config, (
        study.DecayPolicy(params["eviction_threshold"]),
        study.WindowPolicy(params["window_size"]),
    )


def article_rows(config: SessionConfig, policies, n_seeds: int) -> list[list[dict]]:
    """Per-session rows of each policy through the scanning engine (each session generated once)."""
    rows: list[list[dict]] = [[] for _ in policies]
    for seed in range(n_seeds):
        session = generate_session(config.replace(seed=seed))
        for policy_rows, policy in zip(rows, policies, strict=True):
            trace = simulate(ScanningEngine(policy.engine()), session)
            policy_rows.append({"seed": seed, **metrics.session_summary(trace)})
    return rows


def record_agrees(values: dict, policies, rows: list[list[dict]]) -> bool:
    """Whether the chapter's glued means and sds equal ``summarize_runs`` of ``rows`` (rel. 1e-9)."""
    for policy, policy_rows in zip(policies, rows, strict=True):
        summary = study.summarize_runs(policy_rows)
        for key, name in GLUED.items():
            for stat, suffix in (("mean", ""), ("sd", "_sd")):
                glued = values[f"{name}_{policy.kind}{suffix}"]
                if not math.isclose(glued, summary[f"{key}_{stat}"], rel_tol=1e-9, abs_tol=1e-12):
                    return False
    return True


def headline_rows(n_seeds: int, repeat: int) -> list[tuple[str, float, str]]:
    """Row 4: the N-seed chapter, the article's engine on the same 2N sessions, and their ratio."""
    config, policies = headline_setup()
    expected = [study.run_seeds(policy, config, CHECK_SEEDS) for policy in policies]
    if article_rows(config, policies, CHECK_SEEDS) != expected:
        raise SystemExit("the article's engine and study.run_seeds disagree")  # pragma: no cover - a bug
    chapter, record = chapter_row(
        f"forgetting run decay-headline -p n_seeds {n_seeds} -o DIR",
        repeat,
        "decay-headline",
        "-p",
        "n_seeds",
        str(n_seeds),
    )
    seconds, rows = best(lambda: timed(lambda: article_rows(config, policies, n_seeds)), repeat)
    if not record_agrees(record["values"], policies, rows):
        raise SystemExit("the chapter's summary and the article engine's differ")  # pragma: no cover - a bug
    replays = n_seeds * len(policies)
    article = (
        f"article's engine (scan every item every turn), {n_seeds} seeds x 2 policies, in-process",
        seconds,
        f"{replays / seconds:,.0f} replays/s; same rows as study.run_seeds for seeds 0..{CHECK_SEEDS - 1}, "
        "same means and sds as the chapter's record",
    )
    ratio = chapter[1] / seconds
    verdict = (
        f"the chapter takes {ratio:.1f}x as long" if ratio >= 1 else f"the chapter is {1 / ratio:.1f}x faster"
    )
    return [chapter, article, ("ratio: chapter / article's engine", math.nan, f"{ratio:.3f} ({verdict})")]


def make_row(target: str) -> tuple[str, float, str]:
    """Row 5: ``python3 make.py target`` on a fresh clone whose install is done (cached).

    The clone's ``make.py`` installs into ``<clone>/.venv`` once, untimed (its seconds are in the
    note), then ``python3 make.py target`` is timed: it finds its install stamp and goes straight
    to the work. The clone's embedding cache links to this checkout's (as the tests' scratch
    books do: entries are keyed by model and text, checksummed and written atomically), so
    LoCoMo's vectors are computed only if this checkout has none.
    """
    what = f"python3 make.py {target} (fresh clone, install cached)"
    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as tmp:
        clone = Path(tmp) / "clone"
        run(["git", "clone", "--quiet", str(ROOT), str(clone)])
        shared = ROOT / ".cache" / "embeddings"
        shared.mkdir(parents=True, exist_ok=True)
        (clone / ".cache").mkdir()
        (clone / ".cache" / "embeddings").symlink_to(shared, target_is_directory=True)
        start = time.perf_counter()
        run([sys.executable, "-c", "import make; make.install()"], cwd=clone)
        installed = time.perf_counter() - start
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "make.py", target],
            cwd=clone,
            env=ENV,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - start
    lines = (result.stdout + result.stderr).strip().splitlines()
    failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]  # pytest's summary
    said = "; ".join(line[:240] for line in failed) if failed else (lines[-1:] or [""])[0][:80]
    note = f"install first, untimed: {installed:.0f} s; exit {result.returncode}: {said}"
    return what, seconds, note.replace("|", "\\|")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--seeds", type=int, default=20_000, help="n_seeds of row 4 (default 20000)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: repeat 1, 50 seeds")
    parser.add_argument("--book", action="store_true", help="also python3 make.py book on a fresh clone")
    parser.add_argument("--tests", action="store_true", help="also python3 make.py test on a fresh clone")
    args = parser.parse_args(argv)
    repeat, seeds = (1, 50) if args.quick else (args.repeat, args.seeds)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"best of {repeat}; {os.cpu_count()} cores, load average {load} at the start (other jobs count)")
    print()
    rows = [
        import_row(repeat),
        chapter_row("forgetting run decay-retention -o DIR", repeat, "decay-retention")[0],
        chapter_row(
            "forgetting run decay-headline -p n_seeds 2 -o DIR",
            repeat,
            "decay-headline",
            "-p",
            "n_seeds",
            "2",
        )[0],
        *headline_rows(seeds, repeat),
    ]
    rows += [make_row(target) for target, wanted in (("book", args.book), ("test", args.tests)) if wanted]
    print("| what | seconds | note |")
    print("|---|---:|---|")
    for what, seconds, note in rows:
        print(f"| {what} | {'' if math.isnan(seconds) else f'{seconds:.2f}'} | {note} |")
    print()
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
