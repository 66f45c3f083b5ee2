"""Time the decay study's simulation workload three ways, side by side in one run.

    .venv/bin/python benchmarks/bench_decay.py [--repeat 3] [--scale 1]

The workload is the one behind the decay-engine article's benchmark script: headline 50 seeds,
noise sweep 4 x 20, sensitivity 15 x 20 and failure case 20, for both policies (about 900
session replays); the article reports 1.3 s for it. It is run

* ``batch``: :mod:`forgetting.studies.decay.batch` through :func:`forgetting.studies.decay.study.run_policies`
  (sessions generated once per setting, both policies replayed as arrays);
* ``event``: the event engines, one session at a time (:func:`study.run_session`);
* ``scan``: the same event replay with an engine that scans every item at every ``step``, the
  article's way (the direct reading of the rule).

All three give the same per-session summaries (checked here before timing). ``--scale`` multiplies
every seed count (the article's workload is scale 1); ``--max-seeds`` caps every group's count (a
smoke run: the test suite's). Ratios are of the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import time

from forgetting.decay.engines import scan_evictions
from forgetting.studies.decay import metrics, study
from forgetting.studies.decay.sessions import SessionConfig, generate_session
from forgetting.studies.decay.simulation import simulate


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


def workload(scale, max_seeds=None):
    """(policies, config, n_seeds) groups: headline, noise 4 levels, sensitivity 15 pairs, failure;
    every ``n_seeds`` at most ``max_seeds`` (``None``: uncapped)."""
    base = SessionConfig(seed=0)
    both = [study.DECAY, study.WINDOW]
    groups = [(both, base, 50 * scale)]
    groups += [(both, base.replace(noise_per_turn=noise), 20 * scale) for noise in (1, 5, 10, 20)]
    groups += [
        ([study.DecayPolicy(theta), study.WindowPolicy(window)], base, 20 * scale)
        for theta in (0.1, 0.2, 0.3)
        for window in (10, 15, 20, 30, 50)
    ]
    groups += [(both, base.replace(recalls_per_foundational=0), 20 * scale)]
    cap = max_seeds or max(n for _, _, n in groups)
    return [(policies, config, min(n, cap)) for policies, config, n in groups]


def run_batch(groups):
    return [study.run_policies(policies, config, n) for policies, config, n in groups]


def run_events(groups, wrap):
    out = []
    for policies, config, n in groups:
        out.append(
            [
                [
                    {
                        "seed": seed,
                        **metrics.session_summary(
                            simulate(wrap(policy.engine()), generate_session(config.replace(seed=seed)))
                        ),
                    }
                    for seed in range(n)
                ]
                for policy in policies
            ]
        )
    return out


def best_time(run, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=int, default=1, help="multiply every seed count")
    parser.add_argument("--max-seeds", type=int, default=None, help="cap every group's seed count")
    args = parser.parse_args(argv)
    if args.max_seeds is not None and args.max_seeds < 1:
        parser.error(f"--max-seeds must be an int >= 1, got {args.max_seeds}")
    groups = workload(args.scale, args.max_seeds)
    replays = sum(len(policies) * n for policies, _, n in groups)
    batch_result = run_batch(groups)
    if batch_result != run_events(groups, lambda e: e) or batch_result != run_events(groups, ScanningEngine):
        raise SystemExit("the three paths disagree")  # pragma: no cover - would be a bug
    times = {
        "batch (forgetting.studies.decay.batch)": best_time(lambda: run_batch(groups), args.repeat),
        "event engines, one session at a time": best_time(
            lambda: run_events(groups, lambda e: e), args.repeat
        ),
        "scan every item every turn (article)": best_time(
            lambda: run_events(groups, ScanningEngine), args.repeat
        ),
    }
    scan = times["scan every item every turn (article)"]
    print(f"replays: {replays} (identical summaries on all three paths), best of {args.repeat}")
    print(f"{'path':<40} {'seconds':>9} {'replays/s':>11} {'scan / path':>12}")
    for name, seconds in times.items():
        print(f"{name:<40} {seconds:>9.3f} {replays / seconds:>11,.0f} {scan / seconds:>11.1f}x")
    print("article's scripts: 1.3 s for the scale-1 workload (their machine)")


if __name__ == "__main__":
    main()
