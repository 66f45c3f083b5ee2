"""decay-sweeps, "Noise against a budget": the sentences held to the published capacity table."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from forgetting.studies.decay import sweep_study

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def _published() -> tuple[dict[str, object], list[dict[str, object]]]:
    values = json.loads((RESULTS / "decay-sweeps.json").read_text(encoding="utf-8"))["values"]
    with (RESULTS / "decay-sweeps-capacity.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    ints = ("noise_per_turn", "budget", "peak_working_set")
    typed = [
        {k: int(v) if k in ints else v if k in ("policy", "rule") else float(v) for k, v in r.items()}
        for r in rows
    ]
    return values, typed


def test_the_published_capacity_sentences_are_what_the_table_shows():
    values, rows = _published()
    summary = sweep_study.capacity_summary(rows)
    for key, value in summary.items():  # every glued count, recomputed from the published table
        assert values[key] == (str(value) if isinstance(value, bool) else value), key


def test_noise_moves_the_frr_only_once_a_budget_binds_and_the_budget_holds():
    values, rows = _published()
    assert values["capacity_noise_moves"] > 0 and values["noise_all_levels_hold"] is True
    assert all(r["peak_working_set"] <= r["budget"] for r in rows)
    # "with the budget alone both policies hold the same number of items": equal footprints
    assert values["capacity_same_footprint_cells"] == values["capacity_cells"]
    # "the window with its time rule keeps no fact in any cell, as without a budget"
    assert all(r["terminal_frr_mean"] == 0.0 for r in rows if r["rule"].startswith("budget and W"))


def test_at_equal_budget_decay_never_keeps_fewer_facts():
    """'at equal cost decay never keeps fewer facts than the window': with the budget alone, in
    every cell (noise, budget), decay's mean terminal FRR is at least the window's."""
    values, rows = _published()
    alone = {(r["noise_per_turn"], r["budget"], r["policy"]): r for r in rows if r["rule"] == "budget only"}
    cells = {(noise, budget) for noise, budget, _ in alone}
    assert len(cells) == values["capacity_cells"] and values["capacity_window_ahead_cells"] == 0
    for noise, budget in cells:
        decay, window = alone[noise, budget, "decay"], alone[noise, budget, "window"]
        assert decay["terminal_frr_mean"] >= window["terminal_frr_mean"], (noise, budget)


def test_the_fine_grids_ties_are_all_or_nothing_and_the_window_wins_only_against_a_lossy_theta():
    """'ties, where both keep every fact or both lose them all; the window wins the remaining
    pairs, where a threshold high enough to lose the facts meets a window wide enough to keep them'."""
    values, _ = _published()
    with (RESULTS / "decay-sweeps-fine.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    decay = [float(r["terminal_frr_mean"]) for r in rows if r["policy"] == "decay"]
    window = [float(r["terminal_frr_mean"]) for r in rows if r["policy"] == "window"]
    ties = [(d, w) for d in decay for w in window if d == w]
    assert len(ties) == values["fine_pairs_tie"] and all(d in (0.0, 1.0) for d, _ in ties)
    losses = [(d, w) for d in decay for w in window if d < w]
    assert len(losses) == values["fine_pairs_lose"] and all(d < 1.0 and w > 0.0 for d, w in losses)
