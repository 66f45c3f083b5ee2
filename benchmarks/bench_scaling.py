"""Cost per event of the event engines as the live working set grows, 10^2 ... 10^6 items.

    .venv/bin/python benchmarks/bench_scaling.py [--sizes 100 1000 ...] [--turns 2000] [--repeat 3]

The stream keeps about ``N`` items live: every turn registers ``--per-turn`` new items, recalls
as many ids drawn uniformly from the latest ``N / 2`` registrations (some already evicted: a
silent miss), then calls ``step``. The window has ``W = N / per_turn - 1``, so an untouched item
lives ``N / per_turn`` turns; decay gets the ``S0`` whose grace period is that long
(``theta = 0.2``; recalled items live longer, so its live set is a little larger: the table
shows it at the end). The engines are filled first; only the stream is timed, in CPU time of this
process (``time.process_time``), best of ``--repeat``.

Columns: microseconds per event (register, recall or step) for the scheduled engines and, up to
``--scan-max`` items, for the same engine stepped by scanning every item (the article's way);
and, as the machine's floor at that size, one ``dict.get`` of the same random ids in a dict
of the same size, which every recall by id must pay (its cache misses grow with the dict).
"""

from __future__ import annotations

import argparse
import math
import random
import time

from forgetting.decay.engines import EbbinghausEngine, RecencyWindow, scan_evictions


def scanning(engine):
    """Replace ``engine.step`` by a scan of every present item (same decisions)."""

    def step(turn):
        due = scan_evictions(engine, turn)
        for mem_id in due:
            del engine._items[mem_id]
        engine._clock = turn
        return due

    engine.step = step
    return engine


def make_engine(kind, live, per_turn):
    lifetime = max(2, live // per_turn)
    if kind == "window":
        return RecencyWindow(window_size=lifetime - 1)
    return EbbinghausEngine(
        eviction_threshold=0.2, baseline_stability=(lifetime - 0.5) / math.log(5)
    )  # delay = lifetime turns


def stream_cost(kind, live, per_turn, turns, scan, seed=0):
    """(microseconds per event, live items at the end) for one filled engine and one stream."""
    engine = make_engine(kind, live, per_turn)
    lifetime = max(2, live // per_turn)
    ids = [f"m{i}" for i in range((lifetime + turns + 1) * per_turn)]
    next_id = 0
    for turn in range(1, lifetime + 1):
        for mem_id in ids[next_id : next_id + per_turn]:
            engine.register(mem_id, "", turn)
        next_id += per_turn
        engine.step(turn)
    if scan:
        scanning(engine)
    rng = random.Random(seed)
    plan = []
    for turn in range(lifetime + 1, lifetime + 1 + turns):
        new = ids[next_id : next_id + per_turn]
        next_id += per_turn
        recalls = [ids[next_id - 1 - rng.randrange(max(1, live // 2))] for _ in range(per_turn)]
        plan.append((turn, new, recalls))
    register, recall, step = engine.register, engine.recall, engine.step
    start = time.process_time()
    for turn, new, recalls in plan:
        for mem_id in new:
            register(mem_id, "", turn)
        for mem_id in recalls:
            recall(mem_id, turn)
        step(turn)
    elapsed = time.process_time() - start
    return elapsed / (turns * (2 * per_turn + 1)) * 1e6, engine.working_set_size()


def lookup_floor(live, samples, seed=0):
    """Microseconds per ``dict.get`` of a random present id in a dict of ``live`` items."""
    ids = [f"m{i}" for i in range(live)]
    table = dict.fromkeys(ids)
    rng = random.Random(seed)
    keys = [ids[rng.randrange(live)] for _ in range(samples)]
    get = table.get
    start = time.process_time()
    for key in keys:
        get(key)
    return (time.process_time() - start) / samples * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--turns", type=int, default=2000, help="timed turns per run")
    parser.add_argument("--per-turn", type=int, default=10, help="registrations (and recalls) per turn")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scan-max", type=int, default=10_000, help="largest size run with the scan engine")
    args = parser.parse_args(argv)
    header = (
        f"{'live items':>10} {'decay us/ev':>12} {'window us/ev':>13} {'decay live':>11} "
        f"{'scan decay':>11} {'scan window':>12} {'dict.get us':>12}"
    )
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        row = {}
        for kind in ("decay", "window"):
            runs = [stream_cost(kind, size, args.per_turn, args.turns, False, s) for s in range(args.repeat)]
            row[kind], row[kind + " live"] = min(runs)
            if size <= args.scan_max:
                scan_turns = max(10, min(args.turns, 2_000_000 // size))
                row["scan " + kind] = min(
                    stream_cost(kind, size, args.per_turn, scan_turns, True, s)[0] for s in range(args.repeat)
                )
        floor = min(lookup_floor(size, 200_000, s) for s in range(args.repeat))
        scan_decay = f"{row['scan decay']:.2f}" if "scan decay" in row else "-"
        scan_window = f"{row['scan window']:.2f}" if "scan window" in row else "-"
        print(
            f"{size:>10,} {row['decay']:>12.2f} {row['window']:>13.2f} {row['decay live']:>11,} "
            f"{scan_decay:>11} {scan_window:>12} {floor:>12.3f}"
        )
    print(
        f"\nevents: {args.per_turn} registrations + {args.per_turn} recalls + 1 step per turn; "
        f"CPU time, best of {args.repeat}"
    )


if __name__ == "__main__":
    main()
