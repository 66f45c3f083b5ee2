"""Every rule over its range on every question's history, through the executor, pooled by type.

The LoCoMo chapter's rules (:func:`~forgetting.studies.conversations.sweep.policy_grid`: keep
everything, decay on turns and on days, the window, LRU, FIFO, LFU, random eviction, MemoryBank's and
YourMemory's rules) and the contradiction rule (:class:`~.supersede.Supersede`, one per history and
threshold). A task is a block of histories; rows do not depend on the executor or the blocks.
Seeded rules run ``replicates`` seeds and their rows pool over them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..._validate import int_problem, raise_problems, real_problem
from ..conversations.sweep import Setting
from ..executor import Executor, on_every_core
from .histories import OLD_TYPES, History
from .replays import Score, recall_stream, score_policy
from .supersede import supersede_for

__all__ = ["SUPERSEDE", "Grid", "pooled_row", "run_sweep"]

#: The contradiction rule's family name.
SUPERSEDE = "Supersede near memories"
#: Histories per task handed to the executor.
BLOCK = 50


@dataclass(frozen=True)
class Grid:
    """The settings swept: the library's rules (one policy object each) and the thresholds of the
    contradiction rule (built per history)."""

    settings: tuple[Setting, ...]
    thresholds: tuple[float, ...]

    def __post_init__(self) -> None:
        raise_problems([real_problem("thresholds", t, -1.0, 1.0) for t in self.thresholds])

    @property
    def keys(self) -> list[tuple[str, str, float, int]]:
        """``(family, parameter, value, replicate)`` of every setting, in order."""
        keys = [(s.family, s.parameter, float(s.value), s.replicate) for s in self.settings]
        return keys + [(SUPERSEDE, "cosine >", float(t), 0) for t in self.thresholds]


def _score_block(
    grid: Grid, recall_k: int, min_similarity: float, question_k: int, histories: Sequence[History]
) -> list[dict[str, Score]]:
    """For each setting of ``grid`` (in :attr:`Grid.keys` order): the summed :class:`Score` of
    ``histories`` by question type."""
    out: list[dict[str, Score]] = [{} for _ in grid.keys]
    for history in histories:
        events = recall_stream(history, min_similarity)
        policies = [s.policy for s in grid.settings]
        policies += [supersede_for(t, history.turn_cosines, history.ids) for t in grid.thresholds]
        for slot, policy in zip(out, policies):
            score = score_policy(history, policy, events, recall_k, question_k)
            slot[history.kind] = slot.get(history.kind, Score()) + score
    return out


def _share(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


def pooled_row(by_type: Mapping[str, Score]) -> dict[str, float]:
    """The shares of one setting: turns held; evidence kept and hit@k of the old-information types
    pooled and each alone; a knowledge update's current and stale evidence kept, and the shares of
    its conflicts where the update is ranked first, only the stale value is retrieved, the update
    is retrieved, and where the update is ranked first here but not when everything is kept
    (gained) or the reverse (lost)."""
    total = sum(by_type.values(), Score())
    old = sum((by_type.get(t, Score()) for t in OLD_TYPES), Score())
    update = by_type.get("knowledge-update", Score())
    row = {
        "turns_share": _share(total.turns_held, total.turns),
        "old_evidence_kept": _share(old.evidence_held, old.evidence),
        "old_hit_held": _share(old.hits_held, old.questions),
    }
    for kind in OLD_TYPES:
        mine = by_type.get(kind, Score())
        row[f"evidence_kept {kind}"] = _share(mine.evidence_held, mine.evidence)
    row.update(
        update_current_kept=_share(update.current_held, update.current),
        update_stale_kept=_share(update.stale_held, update.stale),
        update_current_first=_share(update.current_first, update.conflicts),
        update_stale_only=_share(update.stale_only, update.conflicts),
        update_current_top=_share(update.current_top, update.conflicts),
        update_first_gained=_share(update.first_gained, update.conflicts),
        update_first_lost=_share(update.first_lost, update.conflicts),
    )
    return row


def run_sweep(
    grid: Grid,
    histories: Sequence[History],
    recall_k: int,
    min_similarity: float,
    question_k: int,
    executor: Executor | None = None,
) -> tuple[list[dict[str, object]], dict[str, Score]]:
    """One row per ``(family, value)``, pooled over histories and seeds, and the pooled scores of
    keeping everything by type (the first setting of ``grid`` must be keep everything).

    The histories are scored in blocks of :data:`BLOCK`, one task each, on
    :func:`~..executor.on_every_core` of ``executor``: in-process (``None`` or
    :class:`~..executor.InProcess`) with more than one block, one worker per core. The rows do
    not depend on the executor."""
    raise_problems(
        [
            int_problem("recall_k", recall_k, minimum=1),
            int_problem("question_k", question_k, minimum=1),
            real_problem("min_similarity", min_similarity, -1.0, 1.0),
        ]
    )
    if not grid.settings or grid.settings[0].family != "Keep everything":
        raise ValueError("the grid's first setting must be keep everything")
    blocks = [list(histories[i : i + BLOCK]) for i in range(0, len(histories), BLOCK)]
    task = functools.partial(_score_block, grid, recall_k, min_similarity, question_k)
    results = on_every_core(executor, len(blocks)).map(task, blocks)
    merged: list[dict[str, Score]] = [{} for _ in grid.keys]
    for block in results:
        for slot, scores in zip(merged, block):
            for kind, score in scores.items():
                slot[kind] = slot.get(kind, Score()) + score
    groups: dict[tuple[str, str, float], list[dict[str, Score]]] = {}
    for (family, parameter, value, _), scores in zip(grid.keys, merged):
        groups.setdefault((family, parameter, value), []).append(scores)
    rows: list[dict[str, object]] = []
    for (family, parameter, value), replicates in groups.items():
        by_type: dict[str, Score] = {}
        for scores in replicates:
            for kind, score in scores.items():
                by_type[kind] = by_type.get(kind, Score()) + score
        rows.append(
            {"family": family, "parameter": parameter, "value": value, "replicates": len(replicates),
             **pooled_row(by_type)}
        )  # fmt: skip
    return rows, merged[0]
