"""How the real-conversation chapter shows its tables and draws its families.

Display only: the tables' CSV files are written from :func:`~.study.chapter_results`' rows,
never from these views, so changing a view never changes a published file's digest.
"""

from __future__ import annotations

from typing import Any

__all__ = ["budget_view", "family_style", "retrieval_view"]


def budget_view(budgets: Any, budget: float) -> Any:
    """The best setting of each family within ``budget``: its value, footprint, evidence kept,
    evidence kept per share of turns held (1: what a random subset keeps on average), hits.
    A family with no setting within the budget (keep everything) has no row."""
    # columns a table has none of when no family has a setting within any budget (a small file of one's own)
    measured = ["parameter", "turns_share", "tokens_share", "hit_held"]
    budgets = budgets.reindex(columns=[*budgets.columns, *(c for c in measured if c not in budgets.columns)])
    rows = budgets[
        (budgets["budget"] == budget) & budgets["turns_share"].notna()
    ].copy()  # none within: left out
    rows["evidence per share held"] = rows["evidence_kept"] / rows["turns_share"]
    rows = rows[["family", "parameter", "value", "turns_share", "tokens_share", "evidence_kept",
                 "evidence per share held", "hit_held"]]  # fmt: skip
    return rows.rename(columns={"turns_share": "turns held", "tokens_share": "tokens held",
                                "evidence_kept": "evidence kept", "hit_held": "hit@k held"})  # fmt: skip


def retrieval_view(retrieval: Any) -> Any:
    """Evidence kept within the headline budget, family by retrieval setting ``(k, min similarity)``."""
    view = retrieval.pivot_table(
        index="family",
        columns=["recall_k", "min_similarity"],
        values="evidence_kept",
        sort=False,
        dropna=False,
    )
    view.columns = [f"k = {k}, ≥ {m:g}" for k, m in view.columns]
    return view


#: Plot colour of each base family (tab10), and line style of each forgetting-pass schedule.
_COLOURS = {
    "Keep everything": "#7f7f7f",
    "Ebbinghaus, turns": "#1f77b4",
    "Ebbinghaus, days": "#17becf",
    "Recency window": "#d62728",
    "LRU": "#ff7f0e",
    "FIFO": "#8c564b",
    "LFU": "#2ca02c",
    "Random eviction": "#000000",
    "MemoryBank": "#9467bd",
    "YourMemory": "#e377c2",
}
_DASHES = {"session": "-", "turn": "--", "day": ":"}


def family_style(family: str) -> dict[str, Any]:
    """Matplotlib keyword arguments of a family's line: one colour per rule, the field rules'
    pass schedules told apart by line style."""
    base, _, schedule = family.partition(", pass per ")
    return {"color": _COLOURS[base], "linestyle": _DASHES.get(schedule, "-"), "marker": "o", "markersize": 2.5,
            "linewidth": 1}  # fmt: skip
