"""How the real-conversation chapter shows its tables and draws its families.

Display only: the tables' CSV files are written from :func:`~.study.chapter_results`' rows,
never from these views, so changing a view never changes a published file's digest.
"""

from __future__ import annotations

from typing import Any

__all__ = ["budget_view", "credit_figure", "drawn", "family_style", "retrieval_view"]


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
    "MemoryBank 3869efc as written": "#c5b0d5",
    "MemoryBank 3869efc, intent": "#5b2a86",
    "YourMemory": "#e377c2",
    "YourMemory, calendar days": "#bcbd22",
}
_DASHES = {"session": "-", "turn": "--", "day": ":"}


def drawn(family: str) -> bool:
    """Whether the chapter's frontier figures draw ``family``: every rule, the field rules with
    their pass at each session only (the tables hold every schedule)."""
    _, marker, schedule = family.partition(", pass per ")
    return not marker or schedule == "session"


def family_style(family: str) -> dict[str, Any]:
    """Matplotlib keyword arguments of a family's line: one colour per rule, the field rules'
    pass schedules told apart by line style."""
    base, _, schedule = family.partition(", pass per ")
    return {"color": _COLOURS[base], "linestyle": _DASHES.get(schedule, "-"), "marker": "o", "markersize": 2.5,
            "linewidth": 1}  # fmt: skip


#: Colour and line style of each credit rule in the credit figure.
_CREDIT_STYLES = {"memory worth": ("C0", "-"), "omission": ("C2", "-"), "exact on train": ("0.3", "--")}


def credit_figure(rates: Any, curves: Any, question_k: int, size: Any) -> Any:
    """The credit section's figure: (a) the change of held-out hit@k when each rule's flags are
    suppressed, against the omission rate, with the 2.5-97.5 % band of the splits; (b) omission's
    training hits lost and gained per 100 training questions. ``rates`` and ``curves`` are
    :func:`~.readings.credit_curves`' (rows of a rule that scored nothing at a rate are left out)."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (left, right) = plt.subplots(1, 2, figsize=size)
    for rule in ("memory worth", "omission", "exact on train"):
        color, style = _CREDIT_STYLES[rule]
        rows = curves[rule]
        rows = rows[rows["scored (mean)"] > 0]  # omission has no estimate without omission
        percent = 100 * np.array(rows.index)
        left.plot(
            percent, 100 * rows["mean_difference"], color=color, ls=style, marker="o", ms=3, lw=1, label=rule
        )
        left.fill_between(percent, 100 * rows["low"], 100 * rows["high"], color=color, alpha=0.12, lw=0)
    left.axhline(0, color="black", lw=0.6)
    left.set_xlabel(r"training questions withholding a turn, $\varepsilon$ (%)")
    left.set_ylabel(f"held-out hit@{question_k} change (points)")
    left.set_title("(a) suppressing the flags")
    omission = curves["omission"]
    right.plot(100 * np.array(rates), 100 * omission["train hits lost"], color="black", marker="o", ms=3, lw=1,
               label="hits lost")  # fmt: skip
    right.plot(100 * np.array(rates), 100 * omission["train hits gained"], color="0.5", marker="s", ms=3, lw=1,
               ls=":", label="hits gained")  # fmt: skip
    right.set_xlabel(r"$\varepsilon$ (%)")
    right.set_ylabel("per 100 training questions")
    right.set_title("(b) the price of omission")
    handles = left.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    labels = left.get_legend_handles_labels()[1] + right.get_legend_handles_labels()[1]
    fig.legend(
        handles, labels, loc="lower center", ncol=5, frameon=False, bbox_to_anchor=(0.5, -0.02), fontsize=6
    )
    fig.subplots_adjust(bottom=0.27, wspace=0.35)
    return fig


def recommend_view(recommend: Any) -> Any:
    """The recommendation table as the page shows it: each measure with its 95 % interval in one
    cell (three decimals), the rule's setting beside it, the most evidence within the budget with
    the rule that keeps it."""

    def interval(row: Any, value: str, low: str, high: str) -> str:
        return f"{row[value]:.3f} ({row[low]:.3f}-{row[high]:.3f})"

    rows = []
    for _, row in recommend.iterrows():
        rows.append(
            {
                "budget": "none" if row["rule"] == "Keep everything" else f"{row['budget']:g}",
                "rule": f"{row['rule']}, {row['setting']}"
                if isinstance(row["setting"], str) and row["setting"]
                else row["rule"],
                "turns held": f"{row['turns held']:.3f}",
                "evidence kept": interval(row, "evidence kept", "evidence low", "evidence high"),
                "hit@k held": interval(row, "hit@k held", "hit low", "hit high"),
                "recall@k held": f"{row['recall@k held']:.3f}",
                "all-evidence@k held": f"{row['all-evidence@k held']:.3f}",
                "per share held": interval(row, "evidence per share held", "per share low", "per share high"),
                "most evidence within": f"{row['most evidence within']:.3f} ({row['kept by']})",
            }
        )
    import pandas as pd

    return pd.DataFrame(rows)
