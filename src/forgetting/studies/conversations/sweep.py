"""Every policy over its parameter range, on every conversation, through the executor.

:func:`policy_grid` lists the settings (one policy object each, with the family it belongs to
and the value of the parameter the frontier runs along); :func:`run_sweep` scores every
setting on every conversation for each retrieval setting ``(recall_k, min_similarity)`` and
returns one row per (retrieval setting, policy setting) with the pooled shares of
:func:`~.benchmark.pooled`. A task is one conversation (all the policies of the grid at every
retrieval setting), so ``--workers`` spreads conversations; the rows do not depend on the
executor. A policy whose rule never reads a recall (:func:`recall_blind`) is replayed once per
conversation for every retrieval setting (:func:`replay_blind`); MemoryBanks that differ only in
their cap share the runs in which no memory reached a cap
(:func:`~.field_rules.memorybank_replays`). Seeded policies (random eviction, MemoryBank) run
``replicates`` seeds, ``seed`` to ``seed + replicates - 1``, the same on every conversation, and
their rows are pooled over the seeds too (a row's ``replicates`` says over how many).

The field rules run as their code is written, each variant a family of its own: MemoryBank at
``0cc7111`` (v0, its cap swept), at ``3869efc`` as written and with the docstring's evident
intent (:class:`~.field_rules.MemoryBankCode`); YourMemory on its decay job's active-day clock
(the default) and on calendar days (:class:`~.field_rules.YourMemoryClock`), both reinforcing
only the recalls at cosine ``>= 0.75`` (:data:`~.field_rules.YOURMEMORY_REINFORCE`): a
setting's ``reinforce_min`` raises the minimum similarity of its recall stream to that
threshold, which recalls exactly :func:`~.field_rules.yourmemory_reinforced` of the ranking.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..._validate import int_problem, raise_problems, real_problem, seed_problem
from ...conversations.capacity import Capacity, RandomEviction
from ...conversations.field_rules import (
    YOURMEMORY_REINFORCE,
    MemoryBank,
    MemoryBankCode,
    YourMemory,
    YourMemoryClock,
    memorybank_replays,
)
from ...conversations.policies import (
    CheckedEvents,
    Ebbinghaus,
    KeepAll,
    Policy,
    Replay,
    Window,
    record_drops,
    replay,
)
from ...conversations.records import Conversation
from ..executor import Executor, InProcess
from .benchmark import QuestionRanking, Score, Scorer, pooled, question_index, ranked_history, recall_events
from .embeddings import ConversationVectors

__all__ = [
    "BANK_VARIANTS",
    "YOURMEMORY_VARIANTS",
    "Setting",
    "SweepTask",
    "policy_grid",
    "recall_blind",
    "replay_blind",
    "run_sweep",
]

#: MemoryBank's rules at its later commit, by family: no cap to sweep, one setting each.
BANK_VARIANTS = {
    "MemoryBank 3869efc as written": MemoryBankCode.HEAD,
    "MemoryBank 3869efc, intent": MemoryBankCode.INTENT,
}
#: YourMemory's clocks, by family: the decay job's active days (the default) and calendar days.
YOURMEMORY_VARIANTS = {
    "YourMemory": YourMemoryClock.ACTIVE,
    "YourMemory, calendar days": YourMemoryClock.CALENDAR,
}


@dataclass(frozen=True)
class Setting:
    """One point of the grid: its family, the parameter the frontier runs along, its value, and
    ``reinforce_min``: a minimum cosine for a recall to reach the policy (``None``: the retrieval
    setting's own minimum), YourMemory's reinforcement threshold."""

    family: str
    parameter: str
    value: float
    policy: Policy
    replicate: int = 0
    reinforce_min: float | None = None


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
    """The settings of every family, each over its range (the chapter's parameters); the field
    rules' variants of :data:`BANK_VARIANTS` and :data:`YOURMEMORY_VARIANTS` are families of
    their own."""
    raise_problems(
        [
            seed_problem("seed", seed),
            int_problem("replicates", replicates, minimum=1),
            real_problem("eviction_threshold", eviction_threshold, 0.0, 1.0, low_open=True, high_open=True),
        ]
    )
    grid = [Setting("Keep everything", "-", 0.0, KeepAll())]
    grid += [
        Setting(
            "Ebbinghaus, turns",
            "S0 (turns)",
            s,
            Ebbinghaus(eviction_threshold=eviction_threshold, baseline_stability=float(s), clock="turns"),
        )
        for s in stabilities_turns
    ]
    grid += [
        Setting(
            "Ebbinghaus, days",
            "S0 (days)",
            s,
            Ebbinghaus(eviction_threshold=eviction_threshold, baseline_stability=float(s), clock="days"),
        )
        for s in stabilities_days
    ]
    grid += [Setting("Recency window", "W (turns)", w, Window(window_size=int(w))) for w in windows]
    for rule in ("lru", "fifo", "lfu"):
        grid += [
            Setting(rule.upper(), "C (turns)", c, Capacity(capacity=int(c), rule=rule)) for c in capacities
        ]
    for r in range(replicates):
        grid += [
            Setting("Random eviction", "C (turns)", c, RandomEviction(capacity=int(c), seed=seed + r), r)
            for c in capacities
        ]
        grid += [
            Setting(
                "MemoryBank",
                "S cap (days)",
                c,
                MemoryBank(seed=seed + r, max_strength=int(c), forget_at=bank_pass),
                r,
            )
            for c in bank_strengths
        ]
        grid += [
            Setting(family, "-", 0.0, MemoryBank(seed=seed + r, forget_at=bank_pass, code=code), r)
            for family, code in BANK_VARIANTS.items()
        ]
    for family, clock in YOURMEMORY_VARIANTS.items():
        grid += [
            Setting(
                family,
                "importance",
                imp,
                YourMemory(importance=float(imp), forget_at=yourmemory_pass, clock=clock),
                reinforce_min=YOURMEMORY_REINFORCE,
            )
            for imp in importances
        ]
    return grid


def recall_blind(policy: Policy) -> bool:
    """Whether the rule of ``policy`` never reads a recall (keep everything, FIFO, random
    eviction): what it holds does not depend on the retriever."""
    return isinstance(policy, (KeepAll, RandomEviction)) or (
        isinstance(policy, Capacity) and policy.rule == "fifo"
    )


def replay_blind(policy: Policy, streams: Sequence[CheckedEvents], ks: Sequence[int]) -> list[Replay]:
    """``[replay(policy, events, k) for events, k in zip(streams, ks)]`` from one run of a
    :func:`recall_blind` policy: the streams are the same turns with other ``recalled``, which
    such a rule never reads, so only ``missed_recalls`` differs (its ``recall`` is not called)."""
    spine = [event[:4] for event in streams[0]]
    if not recall_blind(policy) or any([event[:4] for event in s] != spine for s in streams[1:]):
        raise ValueError("replay_blind needs a recall-blind policy and streams of the same turns")
    state = policy.start()
    held: dict[Hashable, None] = {}
    dropped: dict[Hashable, int] = {}
    counts: list[int] = []
    missed = [0] * len(streams)
    is_held = held.__contains__
    for step in zip(*streams):
        event = step[0]
        record_drops(policy, held, dropped, state.forget(event), event.turn)
        for j, (other, k) in enumerate(zip(step, ks)):
            head = other.recalled[:k]
            missed[j] += len(head) - sum(map(is_held, head))
        record_drops(policy, held, dropped, state.store(event), event.turn)
        held[event.stored] = None
        counts.append(len(held))
    stored = tuple(event.stored for event in streams[0])
    return [Replay(policy.label, stored, dict(dropped), tuple(held), tuple(counts), m) for m in missed]


@dataclass(frozen=True)
class SweepTask:
    """One conversation and every retrieval setting: what a worker scores every policy on."""

    conversation: Conversation
    vectors: ConversationVectors
    tokens: np.ndarray
    retrievals: tuple[tuple[int, float], ...]  # (recall_k, min_similarity)
    question_k: int


def _score_task(settings: Sequence[Setting], task: SweepTask) -> list[list[Score]]:
    """Each setting's :func:`~.benchmark.score` at each retrieval setting, ``[retrieval][setting]``;
    a :func:`recall_blind` policy is replayed once for all of them (:func:`replay_blind`), MemoryBanks
    of other caps share runs (:func:`~.field_rules.memorybank_replays`)."""
    conversation, vectors = task.conversation, task.vectors
    index = question_index(conversation)
    ranking = QuestionRanking.of(vectors.question_cosines, index)
    scorer = Scorer.of(conversation, index, ranking, task.tokens, task.question_k)
    minimums = [m for _, m in task.retrievals]
    minimums += [max(m, s.reinforce_min) for s in settings if s.reinforce_min is not None for m in minimums]
    by_minimum = {
        m: recall_events(conversation, ranked_history(vectors.turn_cosines, m))
        for m in dict.fromkeys(minimums)
    }
    streams = [by_minimum[m] for _, m in task.retrievals]
    ks = [k for k, _ in task.retrievals]
    banks: dict[MemoryBank, list[Replay]] = {}  # MemoryBanks of other caps share runs (memorybank_replays)
    for group in _by_all_but_cap([s.policy for s in settings if isinstance(s.policy, MemoryBank)]):
        per_stream = [memorybank_replays(group, events, k) for events, k in zip(streams, ks)]
        banks.update({bank: [runs[i] for runs in per_stream] for i, bank in enumerate(group)})
    columns = []
    for setting in settings:
        if setting.policy in banks:
            columns.append([scorer(r.held, r.missed_recalls) for r in banks[setting.policy]])
        elif recall_blind(setting.policy):
            replays = replay_blind(setting.policy, streams, ks)
            first = scorer(replays[0].held, 0)  # every replay holds the same turns
            columns.append([replace(first, missed_recalls=r.missed_recalls) for r in replays])
        else:
            mine = streams
            if setting.reinforce_min is not None:  # only recalls at or above the threshold reach it
                mine = [by_minimum[max(m, setting.reinforce_min)] for _, m in task.retrievals]
            replays = [replay(setting.policy, events, k) for events, k in zip(mine, ks)]
            columns.append([scorer(r.held, r.missed_recalls) for r in replays])
    return [list(row) for row in zip(*columns)]


def _by_all_but_cap(banks: Sequence[MemoryBank]) -> list[list[MemoryBank]]:
    """``banks`` without repeats, grouped by everything but ``max_strength``; a bank of a later
    code (no cap: :class:`~.field_rules.MemoryBankCode`) is a group of its own."""
    groups: dict[MemoryBank, list[MemoryBank]] = {}
    for bank in dict.fromkeys(banks):
        key = replace(bank, max_strength=1) if bank.code == MemoryBankCode.V0 else bank
        groups.setdefault(key, []).append(bank)
    return list(groups.values())


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
    pairs = tuple((int(k), float(m)) for k, m in retrievals)
    tasks = [SweepTask(c, v, t, pairs, question_k) for c, v, t in zip(conversations, vectors, tokens)]
    results = (executor or InProcess()).map(functools.partial(_score_task, list(settings)), tasks)
    rows = []
    per_retrieval = len(conversations)
    for r, (k, m) in enumerate(pairs):
        chunk = [scores[r] for scores in results]
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
                    "recall_k": k,
                    "min_similarity": m,
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
