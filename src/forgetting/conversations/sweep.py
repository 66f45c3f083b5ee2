"""Every policy over its parameter range, on every conversation, through the executor.

:func:`policy_grid` lists the settings (one policy object each, with the family it belongs to
and the value of the parameter the frontier runs along); :func:`run_sweep` scores every
setting on every conversation for each retrieval setting ``(recall_k, min_similarity)`` and
returns one row per (retrieval setting, policy setting) with the pooled shares of
:func:`~.benchmark.pooled`. A task is one conversation and one retrieval setting (all the
policies of the grid), so ``--workers`` spreads conversations; the rows do not depend on the
executor. Seeded policies (random eviction, MemoryBank) run ``replicates`` seeds, ``seed`` to
``seed + replicates - 1``, the same on every conversation, and their rows are pooled over the
seeds too (a row's ``replicates`` says over how many).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validate import int_problem, raise_problems, real_problem, seed_problem
from ..executor import Executor, InProcess
from .benchmark import QuestionRanking, Score, pooled, question_index, ranked_history, recall_events, score
from .capacity import Capacity, RandomEviction
from .embeddings import ConversationVectors
from .field_rules import MemoryBank, YourMemory
from .policies import Ebbinghaus, KeepAll, Policy, Window
from .records import Conversation

__all__ = ["Setting", "SweepTask", "policy_grid", "run_sweep"]


@dataclass(frozen=True)
class Setting:
    """One point of the grid: its family, the parameter the frontier runs along, its value."""

    family: str
    parameter: str
    value: float
    policy: Policy
    replicate: int = 0


def policy_grid(
    stabilities_turns: Sequence[float],
    stabilities_days: Sequence[float],
    windows: Sequence[int],
    capacities: Sequence[int],
    bank_strengths: Sequence[int],
    importances: Sequence[float],
    eviction_threshold: float,
    bank_pass: str,
    yourmemory_pass: str,
    seed: int,
    replicates: int,
) -> list[Setting]:
    """The settings of every family, each over its range (the chapter's parameters)."""
    raise_problems(
        [
            seed_problem("seed", seed),
            int_problem("replicates", replicates, minimum=1),
            real_problem("eviction_threshold", eviction_threshold, 0.0, 1.0, low_open=True, high_open=True),
        ]
    )
    grid = [Setting("Keep everything", "-", 0.0, KeepAll())]
    grid += [
        Setting("Ebbinghaus, turns", "S0 (turns)", s, Ebbinghaus(eviction_threshold, float(s), "turns"))
        for s in stabilities_turns
    ]
    grid += [
        Setting("Ebbinghaus, days", "S0 (days)", s, Ebbinghaus(eviction_threshold, float(s), "days"))
        for s in stabilities_days
    ]
    grid += [Setting("Recency window", "W (turns)", w, Window(int(w))) for w in windows]
    for rule in ("lru", "fifo", "lfu"):
        grid += [Setting(rule.upper(), "C (turns)", c, Capacity(int(c), rule)) for c in capacities]
    for r in range(replicates):
        grid += [
            Setting("Random eviction", "C (turns)", c, RandomEviction(int(c), seed + r), r)
            for c in capacities
        ]
        grid += [
            Setting(
                "MemoryBank",
                "S cap (days)",
                c,
                MemoryBank(seed + r, max_strength=int(c), forget_at=bank_pass),
                r,
            )
            for c in bank_strengths
        ]
    grid += [
        Setting("YourMemory", "importance", imp, YourMemory(float(imp), forget_at=yourmemory_pass))
        for imp in importances
    ]
    return grid


@dataclass(frozen=True)
class SweepTask:
    """One conversation and one retrieval setting: what a worker scores every policy on."""

    conversation: Conversation
    vectors: ConversationVectors
    tokens: np.ndarray
    recall_k: int
    min_similarity: float
    question_k: int


def _score_task(settings: Sequence[Setting], task: SweepTask) -> list[Score]:
    ranked = ranked_history(task.vectors.turn_cosines, task.min_similarity)
    events = recall_events(task.conversation, ranked)
    index = question_index(task.conversation)
    ranking = QuestionRanking.of(task.vectors.question_cosines, index)
    return [
        score(
            task.conversation, index, ranking, task.tokens, s.policy, events, task.recall_k, task.question_k
        )
        for s in settings
    ]


def run_sweep(
    settings: Sequence[Setting],
    conversations: Sequence[Conversation],
    vectors: Sequence[ConversationVectors],
    tokens: Sequence[np.ndarray],
    retrievals: Sequence[tuple[int, float]],
    question_k: int,
    executor: Executor | None = None,
) -> list[dict[str, object]]:
    """One row per (retrieval setting, family, value), pooled over conversations and seeds.

    Each row: ``recall_k``, ``min_similarity``, ``family``, ``parameter``, ``value``, the
    pooled shares of :func:`~.benchmark.pooled` and ``replicates``.
    """
    tasks = [
        SweepTask(c, v, t, int(k), float(m), question_k)
        for k, m in retrievals
        for c, v, t in zip(conversations, vectors, tokens)
    ]
    results = (executor or InProcess()).map(functools.partial(_score_task, list(settings)), tasks)
    rows = []
    per_retrieval = len(conversations)
    for r, (k, m) in enumerate(retrievals):
        chunk = results[r * per_retrieval : (r + 1) * per_retrieval]
        groups: dict[tuple[str, float], list[Score]] = {}
        meta: dict[tuple[str, float], Setting] = {}
        for position, setting in enumerate(settings):
            key = (setting.family, float(setting.value))
            groups.setdefault(key, []).extend(scores[position] for scores in chunk)
            meta.setdefault(key, setting)
        for key, scores in groups.items():
            setting = meta[key]
            replicates = len(scores) // per_retrieval
            rows.append(
                {
                    "recall_k": int(k),
                    "min_similarity": float(m),
                    "family": setting.family,
                    "parameter": setting.parameter,
                    "value": float(setting.value),
                    "replicates": replicates,
                    **pooled(scores),
                }
            )
    return rows


def best_within(
    rows: Sequence[dict[str, object]], budget: float, key: str = "evidence_kept"
) -> list[dict[str, object]]:
    """For each family: its setting with the most ``key`` among those holding at most ``budget``
    of the turns (``turns_share <= budget``), ties to the smaller footprint, then the smaller value.

    A family with no setting within the budget gets a row with ``value`` and ``key`` NaN.
    """
    raise_problems([real_problem("budget", budget, 0.0, 1.0)])
    out = []
    for family in dict.fromkeys(str(r["family"]) for r in rows):
        mine = [r for r in rows if r["family"] == family and float(r["turns_share"]) <= budget]  # type: ignore[arg-type]
        if not mine:
            out.append({"family": family, "budget": budget, "value": float("nan"), key: float("nan")})
            continue
        best = min(mine, key=lambda r: (-float(r[key]), float(r["turns_share"]), float(r["value"])))  # type: ignore[arg-type]
        out.append({"budget": budget, **best})
    return out
