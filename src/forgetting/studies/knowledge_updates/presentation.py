"""How the knowledge-update chapter shows its tables and draws its figure.

Display only: the CSV files are written from :func:`~.study.chapter_results`' rows, never from
these views, so changing a view never changes a published file's digest.
"""

from __future__ import annotations

from typing import Any

from ..conversations.presentation import family_style as locomo_style
from .sweep import SUPERSEDE

__all__ = ["family_style", "recommend_view", "tradeoff_figure", "types_view", "updates_view"]


def family_style(family: str) -> dict[str, Any]:
    """The LoCoMo chapter's line style of a rule; the contradiction rule in black, dashed."""
    if family == SUPERSEDE:
        return {"color": "black", "linestyle": "--", "marker": "s", "markersize": 3, "linewidth": 1.2}
    return locomo_style(family)


def recommend_view(recommend: Any) -> Any:
    """The recommendation table as the page shows it (three decimals)."""
    rows = []
    for _, row in recommend.iterrows():
        keep = row["rule"] == "Keep everything"
        rows.append(
            {
                "old evidence kept at least": "(none forgets)" if keep else f"{row['floor']:g}",
                "setting": row["setting"],
                "update ranked first": f"{row['update_current_first']:.3f}",
                "first, not when all kept": f"{row['update_first_gained']:.3f}",
                "all kept, not here": f"{row['update_first_lost']:.3f}",
                "only the stale value": f"{row['update_stale_only']:.3f}",
                "old evidence kept": f"{row['old_evidence_kept']:.3f}",
                "memories held": f"{row['turns_share']:.3f}",
            }
        )
    import pandas as pd

    return pd.DataFrame(rows)


def _setting(row: Any) -> str:
    if row["family"] == "Keep everything":
        return "Keep everything"
    return f"{row['family']}, {row['parameter']} {float(row['value']):g}"


def updates_view(updates: Any) -> Any:
    """Every setting: memories held, old evidence kept, and the knowledge updates' measures."""
    view = updates.copy()
    view.insert(0, "setting", [_setting(r) for _, r in view.iterrows()])
    view = view.drop(columns=["family", "parameter", "value", "replicates"])
    return view.rename(columns={"turns_share": "memories held", "old_evidence_kept": "old evidence kept",
                                "update_current_kept": "current kept", "update_stale_kept": "stale kept",
                                "update_current_first": "update first", "update_stale_only": "stale only",
                                "update_current_top": "update in top k", "update_first_gained": "first: gained",
                                "update_first_lost": "first: lost"})  # fmt: skip


def types_view(types: Any) -> Any:
    """Every setting: evidence kept by old-information question type."""
    view = types.copy()
    view.insert(0, "setting", [_setting(r) for _, r in view.iterrows()])
    view = view.drop(columns=["family", "parameter", "value", "replicates"])
    return view.rename(columns=lambda c: c.replace("evidence_kept ", "").replace("_", " "))


def tradeoff_figure(updates: Any, size: Any) -> Any:
    """Old-information evidence kept (x) against the share of conflicts where the update is ranked
    first (y), every rule over its range; the dotted line is keeping everything."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    for family, group in updates.groupby("family", sort=False):
        group = group.sort_values("old_evidence_kept")
        if family == "Keep everything":
            ax.axhline(
                float(group["update_current_first"].iloc[0]), color="0.5", linestyle=":", linewidth=0.8
            )
            ax.plot(group["old_evidence_kept"], group["update_current_first"], "o", color="0.3", markersize=4,
                    label=family)  # fmt: skip
            continue
        ax.plot(
            group["old_evidence_kept"], group["update_current_first"], label=family, **family_style(family)
        )
    ax.set_xlabel("share of old-information evidence kept")
    ax.set_ylabel("share of updates ranked above the stale value")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=5.5, ncol=2, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig
