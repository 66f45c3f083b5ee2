"""How long the real-conversation chapter's work takes, cold and warm, on this machine.

Prints, side by side in one run: embedding the chosen LoCoMo conversations into an empty cache
(cold) and reading them back (warm), then the chapter's whole computation
(:func:`forgetting.studies.conversations.study.chapter_results`: every policy's sweep, the budgets, the
held-out Memory Worth) on ``--workers`` local processes, and the two totals against the
issue's targets (cold under 180 s, warm under 30 s). Nothing here asserts a time.

    python benchmarks/bench_locomo.py                       # the published parameters
    python benchmarks/bench_locomo.py --quick --conversations 0   # the smoke size, one conversation

Needs the LoCoMo zip (``$FORGETTING_LOCOMO``, the cache or the copy beside the project).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from forgetting.conversations import locomo_zip
from forgetting.pipeline.chapters import spec
from forgetting.studies.conversations import study
from forgetting.studies.executor import InProcess, ProcessPool

COLD_TARGET, WARM_TARGET = 180.0, 30.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="local processes (1: this process)")
    parser.add_argument("--quick", action="store_true", help="the chapter's smoke parameters")
    parser.add_argument(
        "--conversations", type=int, nargs="+", help="positions 0-9 (default: the parameters')"
    )
    args = parser.parse_args()
    chapter = spec("real-conversations")
    params = {**chapter.defaults, **(chapter.quick if args.quick else {})}
    if args.conversations:
        params["conversations"] = args.conversations
    executor = ProcessPool(args.workers) if args.workers > 1 else InProcess()
    path = locomo_zip()
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        study.prepare(path, params["conversations"], Path(cache), executor)
        cold_embed = time.perf_counter() - start
        start = time.perf_counter()
        prepared = study.prepare(path, params["conversations"], Path(cache), executor)
        warm_embed = time.perf_counter() - start
    start = time.perf_counter()
    study.chapter_results(prepared, params, executor)
    compute = time.perf_counter() - start
    turns = sum(len(c.turns) for c in prepared.conversations)
    rows = [
        ("embed, empty cache", cold_embed),
        ("embed, warm cache", warm_embed),
        ("sweeps, budgets, Memory Worth", compute),
        ("cold total", cold_embed + compute),
        ("warm total", warm_embed + compute),
    ]
    print(
        f"{len(prepared.conversations)} conversations, {turns} turns, workers={args.workers}, quick={args.quick}"
    )
    for label, seconds in rows:
        print(f"  {label:<32} {seconds:8.1f} s")
    print(f"  cold total / {COLD_TARGET:.0f} s target: {(cold_embed + compute) / COLD_TARGET:.2f}")
    print(f"  warm total / {WARM_TARGET:.0f} s target: {(warm_embed + compute) / WARM_TARGET:.2f}")


if __name__ == "__main__":
    main()
