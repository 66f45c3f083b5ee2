"""Time the decay study's simulation workload: headline, noise sweep, sensitivity sweep, failure case.

    .venv/bin/python benchmarks/bench_decay.py [--repeat 5]

The workload is the one behind the decay-engine article's benchmark script (50 + 4x20 +
15x20 + 20 sessions per policy, about 900 replays); the article reports 1.3 s for it.
Besides the absolute time, it replays the same sessions with an engine that scans the
whole working set every turn (the direct reading of the rule) and reports the ratio,
measured side by side in this process.
"""

from __future__ import annotations

import argparse
import time

from forgetting.decay import study
from forgetting.decay.engines import scan_evictions
from forgetting.decay.sessions import SessionConfig, generate_session
from forgetting.decay.simulation import simulate


class ScanningEngine:
    """Same decisions, evaluated by scanning every item each step (O(working set) per turn)."""

    def __init__(self, engine):
        self.engine = engine

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def step(self, turn):
        due = scan_evictions(self.engine, turn)
        for mem_id in due:
            del self.engine._items[mem_id]
        self.engine._clock = turn
        return due


def workload():
    """(policy, config) pairs: headline 50 seeds, noise 4x20, sensitivity 15x20, failure 20."""
    base = SessionConfig(seed=0)
    jobs = []
    for seed in range(50):
        jobs += [(study.DECAY, base.replace(seed=seed)), (study.WINDOW, base.replace(seed=seed))]
    for noise in (1, 5, 10, 20):
        for seed in range(20):
            jobs += [(p, base.replace(seed=seed, noise_per_turn=noise)) for p in (study.DECAY, study.WINDOW)]
    for theta in (0.1, 0.2, 0.3):
        for window in (10, 15, 20, 30, 50):
            for seed in range(20):
                jobs += [
                    (study.DecayPolicy(theta), base.replace(seed=seed)),
                    (study.WindowPolicy(window), base.replace(seed=seed)),
                ]
    for seed in range(20):
        never = base.replace(seed=seed, recalls_per_foundational=0)
        jobs += [(study.DECAY, never), (study.WINDOW, never)]
    return jobs


def time_it(jobs, wrap, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for policy, config in jobs:
            simulate(wrap(policy.engine()), generate_session(config))
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    jobs = workload()
    scheduled = time_it(jobs, lambda e: e, args.repeat)
    scanning = time_it(jobs, ScanningEngine, args.repeat)
    print(f"replays: {len(jobs)} (sessions generated and simulated)")
    print(f"{'engine':<28} {'best of ' + str(args.repeat):>12}")
    print(f"{'scheduled (forgetting)':<28} {scheduled:>10.3f} s")
    print(f"{'full scan every turn':<28} {scanning:>10.3f} s")
    print(
        f"ratio scan / scheduled: {scanning / scheduled:.2f}x   (article's scripts: 1.3 s for this workload)"
    )


if __name__ == "__main__":
    main()
