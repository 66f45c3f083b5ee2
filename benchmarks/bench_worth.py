"""Throughput of Memory Worth updates: vectorized arrays against the scalar estimator.

A plain script, not a test::

    python benchmarks/bench_worth.py                 # 10^4, 10^5, 10^6 memories
    python benchmarks/bench_worth.py --sizes 1000 --episodes 20000 --repeats 5

An *update* is one (memory, episode) counter addition, so an episode retrieving ``k``
memories is ``k`` updates. For every store size the script times

* ``update_batch``: :meth:`forgetting.worth.WorthArrays.update_batch`, input checks included;
* ``core``: the unchecked kernel it calls (``np.add.at`` in episode order);
* ``scalar``: :meth:`forgetting.worth.MemoryWorth.update`, one Python call per episode, on
  fewer episodes (``--scalar-episodes``) and only for sizes up to ``--scalar-max-size``;

and prints the best of ``--repeats`` runs with the ratio vectorized / scalar. Single-threaded:
neither path uses more than one core.
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
        f"{'memories':>10} {'episodes':>9} {'k':>3} {'update_batch/s':>15} {'core/s':>13} "
        f"{'scalar/s':>11} {'batch/scalar':>13}"
    )
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        rows = distinct_rows(rng, args.episodes, size, args.k)
        outcomes = rng.random(args.episodes) < 0.5
        n_updates = rows.size

        def checked(size: int = size, rows: np.ndarray = rows, outcomes: np.ndarray = outcomes) -> None:
            WorthArrays(size).update_batch(rows, outcomes)

        def core(size: int = size, rows: np.ndarray = rows, outcomes: np.ndarray = outcomes) -> None:
            add_episodes(np.zeros(size), np.zeros(size), rows, outcomes)

        batch_rate = n_updates / best_time(checked, args.repeats)
        core_rate = n_updates / best_time(core, args.repeats)
        scalar_text, ratio_text = "-", "-"
        if size <= args.scalar_max_size:
            scalar_rows = rows[: args.scalar_episodes].tolist()
            scalar_outcomes = outcomes[: args.scalar_episodes].tolist()

            def scalar(scalar_rows: list = scalar_rows, scalar_outcomes: list = scalar_outcomes) -> None:
                estimator = MemoryWorth()
                for row, success in zip(scalar_rows, scalar_outcomes):
                    estimator.update(row, success)

            scalar_rate = len(scalar_rows) * args.k / best_time(scalar, args.repeats)
            scalar_text, ratio_text = f"{scalar_rate:,.0f}", f"{batch_rate / scalar_rate:,.0f}x"
        print(
            f"{size:>10,} {args.episodes:>9,} {args.k:>3} {batch_rate:>15,.0f} {core_rate:>13,.0f} "
            f"{scalar_text:>11} {ratio_text:>13}"
        )
    print("\nrates are counter updates per second (episodes x k), best of", args.repeats, "runs")


if __name__ == "__main__":
    main()
