"""A large decay headline on one worker, on every local core and on a Dask LocalCluster, side by side.

A plain script, not a test::

    .venv/bin/python benchmarks/bench_sweep.py                       # 10^5 seeds, all local cores
    .venv/bin/python benchmarks/bench_sweep.py --seeds 2000 --workers 4 --cluster-workers 2

The workload is the decay-headline chapter at its published parameters except ``n_seeds``:
both policies (decay and window) over seeds ``0..seeds-1``, through
:func:`forgetting.studies.decay.study.run_seeds` with each executor of :mod:`forgetting.studies.executor`:

* ``in-process``: one worker, the calling process;
* ``loky pool``: ``--workers`` local processes (default: every core);
* ``LocalCluster``: a ``dask.distributed.LocalCluster`` of ``--cluster-workers`` processes of
  one thread each, reached through its scheduler address like a remote cluster.

Start-up (spawning the pool's processes or starting the cluster, then a 64-seed sweep that
makes every worker import the library) is done before the clock starts and printed on its
own. For each executor the table shows the sweep's wall time, the speed-up over in-process,
and the SHA-256 (:func:`forgetting.hashing.digest`) of every per-seed row of both policies:
the digests must be identical, and the script exits with status 1 if they are not.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from forgetting.hashing import digest
from forgetting.pipeline.chapters import spec
from forgetting.studies import executor as ex
from forgetting.studies.decay import study
from forgetting.studies.decay.sessions import SessionConfig

#: Seeds of the untimed first sweep on each pool: one chunk each, so every worker imports the library.
WARM_UP_SEEDS = 64


def headline_rows(n_seeds: int, executor: ex.Executor) -> dict[str, list[dict]]:
    """Per-seed rows of both policies of the decay headline (published parameters, ``n_seeds`` seeds)."""
    params = spec("decay-headline").defaults
    config = SessionConfig(
        seed=0,
        session_length=params["session_length"],
        num_foundational=params["num_foundational"],
        recalls_per_foundational=params["recalls_per_foundational"],
        noise_per_turn=params["noise_per_turn"],
    )
    policies = (study.DecayPolicy(params["eviction_threshold"]), study.WindowPolicy(params["window_size"]))
    return {p.kind: study.run_seeds(p, config, n_seeds, executor) for p in policies}


def timed(n_seeds: int, executor: ex.Executor) -> tuple[float, str, dict]:
    start = time.perf_counter()
    rows = headline_rows(n_seeds, executor)
    seconds = time.perf_counter() - start
    summary = {kind: study.summarize_runs(r) for kind, r in rows.items()}
    return seconds, digest(rows), summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100_000, help="sessions per policy (default 1e5)")
    cores = os.cpu_count() or 1
    parser.add_argument("--workers", type=int, default=cores, help=f"pool processes (default {cores})")
    parser.add_argument(
        "--cluster-workers", type=int, default=cores, help=f"LocalCluster worker processes (default {cores})"
    )
    args = parser.parse_args(argv)
    from distributed import LocalCluster

    pool = ex.ProcessPool(args.workers)
    start = time.perf_counter()
    headline_rows(WARM_UP_SEEDS, pool)  # spawn the processes and import the library before timing
    pool_start = time.perf_counter() - start
    start = time.perf_counter()
    environ = dict(os.environ)
    cluster = LocalCluster(
        n_workers=args.cluster_workers,
        threads_per_worker=1,
        processes=True,
        scheduler_kwargs={"dashboard": False},
        silence_logs=40,
    )
    # Dask's nannies leave their workers' variables (MALLOC_TRIM_THRESHOLD_, PYTHONHASHSEED, ...)
    # in this process's environment; a pool process started later would inherit them
    os.environ.clear()
    os.environ.update(environ)
    dask = ex.DaskCluster(cluster.scheduler_address)
    headline_rows(WARM_UP_SEEDS, dask)
    cluster_start = time.perf_counter() - start
    try:
        results = [
            ("in-process", 1, 0.0, *timed(args.seeds, ex.InProcess())),
            ("loky pool", args.workers, pool_start, *timed(args.seeds, pool)),
            ("LocalCluster", args.cluster_workers, cluster_start, *timed(args.seeds, dask)),
        ]
    finally:
        dask.close()
        cluster.close()

    print(f"decay headline, published parameters, {args.seeds} seeds x 2 policies, {cores} cores here")
    header = f"{'executor':<13} {'workers':>7} {'start (s)':>9} {'sweep (s)':>9} {'speed-up':>8}  sha256 of all rows"
    print(header)
    print("-" * len(header))
    base = results[0][3]
    for name, workers, started, seconds, sha, _ in results:
        print(f"{name:<13} {workers:>7} {started:>9.2f} {seconds:>9.2f} {base / seconds:>7.2f}x  {sha}")
    same = len({sha for *_, sha, _ in results}) == 1 and len({repr(s) for *_, s in results}) == 1
    decay, window = results[0][5]["decay"], results[0][5]["window"]
    print(f"terminal FRR: decay {decay['frr_mean']:.3f}, window {window['frr_mean']:.3f}")
    print("digests identical: " + ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
