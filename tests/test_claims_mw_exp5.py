"""mw-exp5's sentences about the two derivations of the shift and the sweep over k, against the record."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from forgetting.studies.published import load_published
from forgetting.studies.text.depth import derived_shift, expected_end_value
from forgetting.worth import DEFAULT_PRIOR

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def record() -> dict[str, object]:
    return json.loads((RESULTS / "mw-exp5.json").read_text(encoding="utf-8"))["values"]


def table(name: str) -> list[dict[str, str]]:
    with (RESULTS / name).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_both_derivations_recomputed_from_the_published_rates():
    """The shift from the paper's start is the chapter's; from the world's own start it is later,
    and each start's expected end at its own shift is the paper's end value."""
    v, paper = record(), load_published()
    before, after = paper["mw-exp5.stale_mw_before"].value, paper["mw-exp5.stale_mw_after"].value
    rates = {
        "rate_before": v["stale_rate_before"],
        "rate_after": v["stale_rate_after"],
        "p_plus_after": v["stale_p_plus_after"],
    }
    n = v["episodes"]
    assert derived_shift(before, after, rates, n) == v["shift_episode"] == v["inferred_shift_episode"]
    own = derived_shift(v["stale_p_plus_before"], after, rates, n)
    assert own == v["shift_from_own_start"] and own > v["shift_episode"]
    assert abs(expected_end_value(before, rates, v["shift_episode"], n) - after) < 0.001
    assert abs(v["expected_end_own_shift"] - after) < 0.001
    assert math.isclose(
        expected_end_value(v["stale_p_plus_before"], rates, v["shift_episode"], n),
        v["stale_expected_after"],
        rel_tol=1e-9,
    )


def test_the_end_value_misses_the_paper_by_over_two_sd_but_not_its_own_expectation():
    v, paper_end = record(), load_published()["mw-exp5.stale_mw_after"].value
    assert v["end_gap_in_sd"] > 2
    se = v["stale_mw_after_sd"] / math.sqrt(v["n_seeds"])
    assert abs(v["stale_mw_after_mean"] - v["stale_expected_after"]) / se < 1.96
    own = next(
        r for r in table("mw-exp5-shift-sweep.csv") if int(r["shift_episode"]) == v["shift_from_own_start"]
    )
    assert abs(float(own["stale_mw_after_mean"]) - paper_end) < 2 * float(own["stale_mw_after_sd"])


def test_the_depth_sweep_sentences():
    v, rows = record(), table("mw-exp5-depth-sweep.csv")
    paper_end = load_published()["mw-exp5.stale_mw_after"].value
    retrieved = [r for r in rows if float(r["stale_rate_before"]) > 0]
    never = [r for r in rows if float(r["stale_rate_before"]) == 0]
    assert [r["k"] for r in never] == v["depth_never_retrieved"].split(", ")
    assert all(
        float(r["stale_mw_after_mean"]) == DEFAULT_PRIOR and r["shift_from_paper_start"] == "" for r in never
    )
    ends = [float(r["stale_mw_after_mean"]) for r in retrieved]
    assert (min(ends), max(ends)) == (v["depth_end_low"], v["depth_end_high"])
    assert all(end < paper_end for end in ends)
    assert all(int(r["shift_from_own_start"]) > int(r["shift_from_paper_start"]) for r in retrieved)
    assert any(
        r["k"] == str(v["k"]) and int(r["shift_from_paper_start"]) == v["shift_episode"] for r in retrieved
    )
