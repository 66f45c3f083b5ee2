"""Throughput of Memory Worth updates: vectorized arrays against np.bincount and the scalar estimator.

A plain script, not a test::

    python benchmarks/bench_worth.py                 # 10^4, 10^5, 10^6 memories
    python benchmarks/bench_worth.py --sizes 1000 --episodes 20000 --repeats 5

An *update* is one (memory, episode) counter addition, so an episode retrieving ``k``
memories is ``k`` updates. For every store size the script times, side by side,

* ``update_batch``: :meth:`forgetting.worth.WorthArrays.update_batch` on a store that already
  exists, input checks included (ids in range, no repeat within an episode, shapes, dtypes);
* ``kernel``: :func:`forgetting.worth.add_episodes`, the unchecked kernel (it first checks
  that its counters hold integer counts, so unit weights may be added as counts);
* ``bincount h+/h-``: the plain numpy way to the same sums, ``np.bincount`` of the ids of the
  successful episodes and of the failed ones (checked equal to what ``update_batch`` adds);
* ``bincount all``: a single ``np.bincount`` of every id, outcome ignored (a lower bound);
* ``scalar``: :meth:`forgetting.worth.MemoryWorth.update`, one Python call per episode, on
  fewer episodes (``--scalar-episodes``) and only for sizes up to ``--scalar-max-size``;

and prints the best of ``--repeats`` runs as rates and as ratios of times. Single-threaded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from forgetting.worth import MemoryWorth, WorthArrays, add_episodes


def distinct_rows(rng: np.random.Generator, n_episodes: int, n_memories: int, k: int) -> np.ndarray:
    """``k`` distinct random ids per episode (rows with a repeat are redrawn)."""
    rows = rng.integers(0, n_memories, (n_episodes, k))
    while True:
        ordered = np.sort(rows, axis=1)
        bad = np.flatnonzero(np.any(ordered[:, 1:] == ordered[:, :-1], axis=1))
        if bad.size == 0:
            return rows
        rows[bad] = rng.integers(0, n_memories, (bad.size, k))


def best_time(run, repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls of ``run`` (each on fresh state)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[10_000, 100_000, 1_000_000],
        help="numbers of memories (default: 1e4 1e5 1e6)",
    )
    parser.add_argument("--episodes", type=int, default=100_000, help="episodes per vectorized batch")
    parser.add_argument("--k", type=int, default=10, help="memories retrieved per episode")
    parser.add_argument("--scalar-episodes", type=int, default=10_000, help="episodes for the scalar path")
    parser.add_argument(
        "--scalar-max-size", type=int, default=10_000, help="largest store size timed on the scalar path"
    )
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    header = (
        f"{'memories':>10} {'updates':>9} {'update_batch/s':>15} {'kernel/s':>12} {'bincount h+/h-/s':>17} "
        f"{'batch/bincount h+/h-':>21} {'batch/bincount all':>19} {'scalar/s':>11} {'batch speed-up':>15}"
    )
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        rows = distinct_rows(rng, args.episodes, size, args.k)
        outcomes = rng.random(args.episodes) < 0.5
        n_updates = rows.size
        # stores in use are resident in memory: touch every page before timing
        stores = [WorthArrays(size) for _ in range(args.repeats)]
        counters = [(np.zeros(size), np.zeros(size)) for _ in range(args.repeats)]
        for store in stores:
            store.successes_.fill(0.0)
            store.failures_.fill(0.0)
        for plus, minus in counters:
            plus.fill(0.0)
            minus.fill(0.0)

        def checked(stores: list = stores, rows: np.ndarray = rows, outcomes: np.ndarray = outcomes) -> None:
            stores.pop().update_batch(rows, outcomes)

        def kernel(
            counters: list = counters, rows: np.ndarray = rows, outcomes: np.ndarray = outcomes
        ) -> None:
            add_episodes(*counters.pop(), rows, outcomes)

        def by_outcome(size: int = size, rows: np.ndarray = rows, outcomes: np.ndarray = outcomes) -> tuple:
            return (
                np.bincount(rows[outcomes].ravel(), minlength=size),
                np.bincount(rows[~outcomes].ravel(), minlength=size),
            )

        def every_id(size: int = size, rows: np.ndarray = rows) -> np.ndarray:
            return np.bincount(rows.ravel(), minlength=size)

        times = {
            "batch": best_time(checked, args.repeats),
            "kernel": best_time(kernel, args.repeats),
            "h": best_time(by_outcome, args.repeats),
            "all": best_time(every_id, args.repeats),
        }
        check = WorthArrays(size).update_batch(rows, outcomes)
        plus, minus = by_outcome()
        if not (np.array_equal(check.successes_, plus) and np.array_equal(check.failures_, minus)):
            raise SystemExit("update_batch and np.bincount disagree")  # pragma: no cover - a bug
        scalar_text, ratio_text = "-", "-"
        if size <= args.scalar_max_size:
            scalar_rows = rows[: args.scalar_episodes].tolist()
            scalar_outcomes = outcomes[: args.scalar_episodes].tolist()

            def scalar(scalar_rows: list = scalar_rows, scalar_outcomes: list = scalar_outcomes) -> None:
                estimator = MemoryWorth()
                for row, success in zip(scalar_rows, scalar_outcomes):
                    estimator.update(row, success)

            scalar_rate = len(scalar_rows) * args.k / best_time(scalar, args.repeats)
            scalar_text, ratio_text = (
                f"{scalar_rate:,.0f}",
                f"{n_updates / times['batch'] / scalar_rate:,.0f}x",
            )
        print(
            f"{size:>10,} {n_updates:>9,} {n_updates / times['batch']:>15,.0f} "
            f"{n_updates / times['kernel']:>12,.0f} {n_updates / times['h']:>17,.0f} "
            f"{times['batch'] / times['h']:>20.2f}x {times['batch'] / times['all']:>18.2f}x "
            f"{scalar_text:>11} {ratio_text:>15}"
        )
    print(
        f"\nrates are counter updates per second (episodes x k = {args.episodes:,} x {args.k}), best of "
        f"{args.repeats} runs; ratios are of times (1.00x = as fast as np.bincount)"
    )


if __name__ == "__main__":
    main()
