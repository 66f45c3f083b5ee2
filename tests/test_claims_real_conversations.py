"""real-conversations' sentences held against the published record: the recommendation, the
signals, MemoryBank's footprint, the sweep's outcomes, the data's odd fields, the credit
section's comparisons (and, with LoCoMo at hand, the counts read from the data itself)."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from forgetting.studies.conversations import readings

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"
NAME = "real-conversations"


def values() -> dict[str, object]:
    return json.loads((RESULTS / f"{NAME}.json").read_text(encoding="utf-8"))["values"]


def rows(table: str) -> list[dict[str, object]]:
    return pd.read_csv(RESULTS / f"{NAME}-{table}.csv").to_dict("records")


def test_the_recommendation_table_is_recomputed_from_the_budgets_and_the_frontier():
    v = values()
    again = pd.DataFrame(
        readings.recommendation_rows(
            rows("budgets"), rows("frontier"), v["n_evidence_scored"], v["n_questions_scored"]
        )
    )
    published = pd.read_csv(RESULTS / f"{NAME}-recommend.csv")
    assert list(again.columns) == list(published.columns)
    for column in published.columns:
        if published[column].dtype.kind == "f":
            assert again[column].astype(float).tolist() == pytest.approx(published[column].tolist(), rel=1e-9)
    # "use LFU" up to the headline budget; at 0.75 random eviction, barely above chance; keep everything last
    assert published["rule"].tolist() == ["LFU", "LFU", "LFU", "Random eviction", "Keep everything"]
    assert published["budget"].tolist()[:-1] == [0.1, 0.25, 0.5, 0.75]
    assert v["recommend_lfu_budgets_text"] == "0.1, 0.25, 0.5" and v["recommend_lfu_to_headline"] is True
    assert (
        v["recommend_others_text"]
        == " (at 0.75 of the turns it is Random eviction, 1.01 times a random subset)"
    )
    assert (published["recall@k held"] <= published["hit@k held"]).all()
    assert (published["all-evidence@k held"] <= published["recall@k held"]).all()


def test_frequency_carries_information_and_recency_does_not():
    """The opening block and the recommendation: LFU 1.13-1.32 times a random subset at 0.1,
    0.25 and 0.5 of the turns; the window and LRU 0.62-0.81."""
    v = values()
    assert v["signal_budgets_text"] == "0.1, 0.25, 0.5"
    assert (round(v["signal_frequency_min"], 2), round(v["signal_frequency_max"], 2)) == (1.13, 1.32)
    assert (round(v["signal_recency_min"], 2), round(v["signal_recency_max"], 2)) == (0.62, 0.81)
    assert v["signal_frequency_min"] > 1 > v["signal_recency_max"]
    budgets = [r for r in rows("budgets") if r["budget"] <= 0.5 and r["turns_share"] == r["turns_share"]]
    lfu = [r["evidence_kept"] / r["turns_share"] for r in budgets if r["family"] == "LFU"]
    assert min(lfu) == pytest.approx(v["signal_frequency_min"]) and len(lfu) == 3
    assert v["signal_beat_random_headline"] == "LFU" and v["lift_max_family"] == "LFU"
    assert (
        v["lift_min_family"] == "MemoryBank 3869efc as written, pass per turn"
    )  # glued: "... keeps the least"
    lifts = [r["evidence_kept"] / r["turns_share"] for r in budgets if r["budget"] == 0.5]
    assert min(lifts) == pytest.approx(v["lift_min"])
    assert v["signal_random_max"] < 1  # seeded random eviction keeps less than a random subset, up to half
    assert v["signal_above_min"] < 1 < v["signal_above_max"] < 1.05  # at 0.75 "the choice matters little"


def test_memorybank_holds_at_most_a_few_percent_of_the_turns_at_every_recall_depth():
    v = values()
    bank = [r for r in rows("sweep") if str(r["family"]).startswith("MemoryBank, pass per")]  # v0
    assert max(r["turns_share"] for r in bank if r["recall_k"] == 5) == v["bank_max_share"]
    assert round(v["bank_max_share"], 3) == 0.064
    assert max(r["turns_share"] for r in bank) == v["bank_max_share_any"]
    assert round(v["bank_max_share_any"], 4) == 0.0842 and v["bank_max_share_k"] == 10
    frontier = {r["family"]: r for r in rows("frontier")}
    for key, family in (
        ("bank_head", "MemoryBank 3869efc as written"),
        ("bank_intent", "MemoryBank 3869efc, intent"),
    ):
        row = frontier[f"{family}, pass per session"]
        assert (row["turns_share"], row["evidence_kept"]) == (v[f"{key}_share"], v[f"{key}_kept"])


def test_no_setting_that_forgets_raises_or_matches_hit_at_k_and_the_settings_are_fewer_outcomes():
    v = values()
    assert v["n_settings_hit_above"] == 0 and v["n_settings_hit_equal"] == 0
    assert v["n_settings_forgetting"] == 1015 and v["n_outcomes_forgetting"] == 693
    sweep = pd.DataFrame(rows("sweep"))
    forgetting = sweep[sweep["turns_share"] < 1]
    key = ["recall_k", "min_similarity", "evidence_kept", "hit_held", "turns_share"]
    repeats = forgetting[forgetting.duplicated(key)]
    field = repeats["family"].str.startswith(("MemoryBank", "YourMemory"))
    assert len(repeats) == 1015 - 693 and field.sum() > len(repeats) / 2  # "mostly" the field rules
    for family in (
        "YourMemory",
        "YourMemory, calendar days",
    ):  # "the same rows on both clocks, all 70 settings"
        yours = [
            sweep[sweep["family"] == f"{family}, pass per {p}"][[*key, "value"]].reset_index(drop=True)
            for p in ("session", "turn", "day")
        ]
        assert yours[0].equals(yours[1]) and yours[0].equals(yours[2]) and len(yours[0]) == 70
    assert v["yourmemory_schedules_same_text"] == "on both clocks" and v["yourmemory_n_settings_active"] == 70
    assert v["n_settings_recall_above"] == 0 and v["n_settings_every_above"] == 0
    assert (forgetting["recall_held"] <= forgetting["recall_all"]).all()


def test_the_datas_odd_fields_as_the_chapter_states_them():
    v = values()
    assert (v["n_images"], v["n_caption_only"], v["n_captions"]) == (910, 316, 1226)
    assert (v["n_images_url"], v["n_images_caption_only"]) == (
        v["n_images"],
        v["n_caption_only"],
    )  # raw == loader
    assert v["n_unresolved_malformed"] + v["n_unresolved_missing"] == v["n_unresolved"] == 9
    assert v["n_unresolved_malformed"] == v["n_repaired"] == 6 and v["n_unrepaired"] == 3
    assert v["n_empty_evidence"] == 4 and v["n_questions_repaired"] == 5
    assert v["n_not_scored"] == 4 == v["n_empty_evidence"]  # the repairs leave only the empty lists unscored
    repairs = rows("repairs")
    assert [r["written"] for r in repairs] == [
        w.strip("'") for w in v["unresolved_malformed_text"].split("', '")
    ]
    assert len(repairs) == 6
    for written in ("'D30:05'", "'D:11:26'", "'D8:6; D9:17'"):
        assert written in v["unresolved_malformed_text"]


def test_memory_worths_default_thresholds_are_the_sweeps_best_cell_and_the_credit_prose_holds():
    v = values()
    sweep = rows("worth-sweep")
    best = max(sweep, key=lambda r: r["mean_difference"])
    assert (best["min_evidence"], best["low_threshold"]) == (5, 0.3) and v["mw_default_is_best"] == "also"
    assert v["mw_sweep_cells"] == len(sweep) == 20
    credit = pd.read_csv(RESULTS / f"{NAME}-credit.csv")
    assert readings.credit_claims(v, credit) == []
    assert v["mw_low"] < 0 < v["mw_high"]  # "within the spread of the splits"
    assert abs(v["mw_mean_difference"]) < 0.01  # "less than a point"


def test_the_wilson_intervals_use_the_pooled_denominators():
    v = values()
    assert v["n_questions_scored"] == 1536
    with (RESULTS / f"{NAME}-frontier.csv").open(encoding="utf-8", newline="") as handle:
        keep = next(r for r in csv.DictReader(handle) if r["family"] == "Keep everything")
    assert round(float(keep["hit_held"]) * v["n_questions_scored"]) == 735  # 735 / 1536 = 0.479
    assert math.isclose(float(keep["hit_held"]), 735 / 1536, rel_tol=1e-9)


def test_locomos_recall_and_all_evidence_sit_below_hit_at_k_over_the_whole_history():
    """hit@5 0.479, LoCoMo's recall@5 0.416, all evidence in the top 5 0.368 (categories 1-4,
    nothing forgotten); they differ on the 413 questions with more than one evidence turn."""
    v = values()
    assert (round(v["hit_all"], 3), round(v["recall_all"], 3), round(v["every_all"], 3)) == (
        0.479,
        0.416,
        0.368,
    )
    assert v["every_all"] < v["recall_all"] < v["hit_all"] and v["n_questions_several"] == 413
    assert round(v["every_all"] * v["n_questions_scored"]) == 566


LOCOMO = os.environ.get("FORGETTING_LOCOMO")


@pytest.mark.skipif(not LOCOMO or not Path(LOCOMO).is_file(), reason="LoCoMo's zip is not at hand")
def test_the_counts_read_from_locomo_itself():
    from forgetting.conversations.locomo import load_locomo
    from forgetting.conversations.source import LOCOMO_MEMBERS

    path = Path(LOCOMO)
    assert readings.image_values(path, LOCOMO_MEMBERS, None) == {
        "n_images_url": 910,
        "n_images_caption_only": 316,
    }
    found = readings.reference_values(load_locomo(path))
    assert found["n_unresolved_malformed"] == 6 and found["n_unresolved_missing"] == 3
    assert found["n_empty_evidence"] == 4
    assert {k: found[k] for k in found} == {k: values()[k] for k in found}
