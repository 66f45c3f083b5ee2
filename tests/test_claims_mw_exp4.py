"""mw-exp4's sentences about what the paper's threshold is a share of, against the record."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def record() -> dict[str, float]:
    values: dict[str, float] = json.loads((RESULTS / "mw-exp4.json").read_text(encoding="utf-8"))["values"]
    return values


def test_the_papers_share_of_pair_episodes_is_about_3_percent_of_all_episodes():
    """ "at d = 30 % only about 3 % of all episodes break it": the pair rate times the paper's d."""
    v = record()
    assert round(100 * v["pair_rate"] * v["paper_threshold"]) == 3


def test_read_as_a_share_of_all_episodes_the_papers_value_cannot_be_reached():
    """At most the pair's episodes can break it (d = 1), and they are fewer than the paper's share."""
    v = record()
    assert v["d_last"] == 1.0 and v["pair_rate"] * v["d_last"] < v["paper_threshold"]


def test_the_opening_blocks_one_lower_threshold_is_both_other_settings():
    """The opening: "at k = 5 or a pair rate of 0.5 the threshold drops to" one value (threshold_depth)."""
    v = record()
    assert v["threshold_depth"] == v["threshold_pair_rate"] < v["diversity_threshold"]
