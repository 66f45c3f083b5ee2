"""What the real-conversation chapter reads off its own results (:mod:`.readings`): the
recommendation by budget, the signals, the sweep's counts, the data's odd fields, the credit
section's comparisons."""

import json
import math
import zipfile
from datetime import datetime

import pandas as pd
import pytest

from forgetting.conversations.records import Conversation, Question, Turn
from forgetting.studies.conversations import readings


def budget_row(family, budget, turns, evidence, hit=0.3, value=1, parameter="C"):
    return {"family": family, "budget": budget, "value": value, "parameter": parameter, "turns_share": turns,
            "tokens_share": turns, "evidence_kept": evidence, "hit_held": hit, "recall_held": hit / 2,
            "every_held": hit / 4}  # fmt: skip


def test_wilson_is_the_score_interval_and_stays_inside_zero_and_one():
    low, high = readings.wilson(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and 0.27 < high < 0.28
    low, high = readings.wilson(10, 10)
    assert high == 1.0 and 0.72 < low < 0.73
    assert all(math.isnan(x) for x in readings.wilson(0, 0))


def test_the_recommendation_takes_the_most_evidence_per_share_held_then_keeps_everything():
    budgets = [
        budget_row("LFU", 0.5, 0.25, 0.4),  # 1.6 per share
        budget_row("YourMemory, pass per turn", 0.5, 0.5, 0.45),  # more evidence, 0.9 per share
        budget_row("YourMemory, pass per day", 0.5, 0.5, 0.45),
        budget_row("Keep everything", 0.5, math.nan, math.nan),
        budget_row("LFU", 0.1, math.nan, math.nan),  # no family within: no row
    ]
    frontier = [{"family": "Keep everything", "turns_share": 1.0, "tokens_share": 1.0, "evidence_kept": 1.0,
                 "hit_held": 0.48, "recall_held": 0.42, "every_held": 0.37}]  # fmt: skip
    rows = readings.recommendation_rows(budgets, frontier, 100, 50)
    assert (rows[0]["recall@k held"], rows[0]["all-evidence@k held"]) == (
        0.15,
        0.075,
    )  # LFU's row, beside hit@k
    assert (rows[1]["recall@k held"], rows[1]["all-evidence@k held"]) == (0.42, 0.37)
    assert [r["budget"] for r in rows] == [0.5, 1.0]
    best, keep = rows
    assert best["rule"] == "LFU" and best["setting"] == "C = 1"
    assert best["evidence per share held"] == pytest.approx(1.6)
    assert best["per share low"] < 1.6 < best["per share high"]
    assert best["most evidence within"] == 0.45
    assert best["kept by"] == "YourMemory, pass per turn and YourMemory, pass per day"
    assert keep["rule"] == "Keep everything" and keep["hit@k held"] == 0.48 and keep["hit low"] < 0.48


def test_signal_values_range_over_the_budgets_up_to_the_headline_one():
    budgets = [budget_row("LFU", b, 0.2, 0.2 * lift) for b, lift in ((0.1, 1.3), (0.5, 1.1), (0.75, 1.0))]
    budgets += [budget_row("LRU", b, 0.2, 0.2 * lift) for b, lift in ((0.1, 0.6), (0.5, 0.8), (0.75, 0.9))]
    values = readings.signal_values(budgets, 0.5)
    assert values["signal_frequency_min"] == pytest.approx(1.1)
    assert values["signal_frequency_max"] == pytest.approx(1.3)
    assert values["signal_recency_min"] == pytest.approx(0.6)
    assert values["signal_recency_max"] == pytest.approx(0.8)
    assert values["signal_above_min"] == pytest.approx(0.9) and values["signal_above_max"] == pytest.approx(
        1.0
    )
    assert math.isnan(values["signal_age_min"])
    assert values["signal_budgets_text"] == "0.1, 0.5" and values["signal_above_text"] == "0.75"


def test_sweep_values_find_memorybanks_largest_footprint_and_count_distinct_outcomes():
    def row(family, k, turns, evidence=0.1, hit=0.1):
        return {"family": family, "recall_k": k, "min_similarity": 0.0, "turns_share": turns,
                "evidence_kept": evidence, "hit_held": hit}  # fmt: skip

    def yours(family, schedule, value, turns):
        return {**row(f"{family}, pass per {schedule}", 5, turns), "value": value, "recall_held": 0.1,
                "every_held": 0.1}  # fmt: skip

    sweep = [row("MemoryBank, pass per day", 5, 0.06), row("MemoryBank, pass per turn", 10, 0.08),
             row("MemoryBank 3869efc, intent, pass per day", 10, 0.9),  # not v0: not MemoryBank's cap sweep
             row("FIFO", 5, 0.5), row("FIFO", 5, 0.5), row("FIFO", 10, 0.5),
             row("Keep everything", 5, 1.0)]  # fmt: skip
    sweep += [yours("YourMemory", p, v, 0.2 * v) for p in ("session", "turn", "day") for v in (1, 2)]
    sweep += [
        yours("YourMemory, calendar days", p, 1, 0.3 if p == "day" else 0.2)
        for p in ("session", "turn", "day")
    ]
    values = readings.sweep_values(sweep, 5)
    assert values["bank_max_share_any"] == 0.08 and values["bank_max_share_k"] == 10
    assert values["n_outcomes_forgetting"] == 8  # the two FIFO rows at k = 5 are one outcome, and so on
    assert values["yourmemory_schedules_same_active"] and not values["yourmemory_schedules_same_calendar"]
    assert values["yourmemory_schedules_same_text"] == "on the active-day clock only"
    assert (values["yourmemory_n_settings_active"], values["yourmemory_n_settings_calendar"]) == (2, 1)


def conversation(evidence):
    when = datetime(2023, 5, 8)
    turns = tuple(Turn("c", s, i, f"D{s}:{n}", "A", "hi", None, when)
                  for i, (s, n) in enumerate([(1, 1), (1, 2), (30, 5), (11, 26)]))  # fmt: skip
    questions = tuple(Question("c", "q?", "a", 1, tuple(ev)) for ev in evidence)
    return Conversation("c", ("A", "B"), turns, questions, ((1, when), (11, when), (30, when)))


def test_reference_values_tell_malformed_ids_of_existing_turns_from_ids_of_none():
    c = conversation(
        [["D30:05"], ["D:11:26"], ["D1:1; D1:2"], ["D1:1 D30:5"], ["D4:36"], ["D"], [], ["D1:1"]]
    )
    values = readings.reference_values([c])
    assert values["n_unresolved_malformed"] == 4
    assert values["n_unresolved_missing"] == 2
    assert values["n_empty_evidence"] == 1
    assert values["unresolved_missing_text"] == "'D4:36', 'D'"


def test_image_values_count_captions_with_and_without_an_image(tmp_path):
    sample = {"conversation": {"session_1": [
        {"speaker": "A", "dia_id": "D1:1", "text": "x", "blip_caption": "a cat", "img_url": ["u"]},
        {"speaker": "B", "dia_id": "D1:2", "text": "y", "blip_caption": "a dog"},
        {"speaker": "A", "dia_id": "D1:3", "text": "z", "blip_caption": "a hat", "img_url": []},
        {"speaker": "B", "dia_id": "D1:4", "text": "w"}]}}  # fmt: skip
    path = tmp_path / "own.json"
    path.write_text(json.dumps([sample, {"conversation": {"session_1": []}}]))
    assert readings.image_values(path, None, None) == {"n_images_url": 1, "n_images_caption_only": 2}
    assert readings.image_values(path, None, [1]) == {"n_images_url": 0, "n_images_caption_only": 0}
    archive = tmp_path / "own.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("b/10.json", json.dumps({"conversation": {"session_1": []}}))
        handle.writestr("b/2.json", json.dumps(sample))
        handle.writestr("__MACOSX/b/2.json", "not json")
    assert readings.image_values(archive, None, [0]) == {"n_images_url": 1, "n_images_caption_only": 2}
    assert readings.image_values(archive, ["b/10.json"], None)["n_images_url"] == 0


def test_worth_sweep_values_say_whether_the_default_is_the_best_cell():
    rows = [{"min_evidence": 5, "low_threshold": 0.3, "mean_difference": 0.003},
            {"min_evidence": 1, "low_threshold": 0.3, "mean_difference": -0.03}]  # fmt: skip
    assert readings.worth_sweep_values(rows, 5.0, 0.3) == {"mw_sweep_cells": 2, "mw_default_is_best": "also"}
    assert readings.worth_sweep_values(rows, 1.0, 0.3)["mw_default_is_best"] == "not"


def test_credit_claims_name_each_comparison_that_fails():
    def rows(rule, difference, scored, low=-0.01, high=0.01):
        return [{"rule": rule, "epsilon": e, "mean_difference": difference, "scored (mean)": scored,
                 "flagged (mean)": 1.0, "low": low, "high": high} for e in (0.0, 0.5)]  # fmt: skip

    credit = pd.DataFrame(
        rows("memory worth", 0.003, 100) + rows("omission", 0.001, 10) + rows("exact on train", 0.0, 1000)
    )
    values = {"credit_oracle_none_difference": 0.0, "credit_mw_none_difference": 0.003,
              "credit_oracle_none_crowding": 0.08, "credit_mw_none_crowding": 0.16,
              "credit_oracle_none_low": -0.01, "credit_oracle_none_high": 0.01, "credit_mw_none_low": -0.01,
              "credit_mw_none_high": 0.01, "credit_both": 3}  # fmt: skip
    assert readings.credit_claims(values, credit) == []
    rates, curves = readings.credit_curves(credit)
    assert rates == [0.0, 0.5] and list(curves) == list(readings.CREDIT_RULES)
    assert readings.credit_claims({**values, "credit_both": 0}, credit) == [
        "no turn both helps one question and crowds out another"
    ]


def test_retrieval_values_name_every_leader_and_check_memorybank_is_last_everywhere():
    def row(family, k, kept):
        return {"family": family, "recall_k": k, "min_similarity": 0.0, "evidence_kept": kept}

    rows = [row("LFU", 1, 0.4), row("FIFO", 1, 0.3), row("MemoryBank, pass per day", 1, 0.1),
            row("LFU", 5, 0.3), row("FIFO", 5, 0.35), row("MemoryBank, pass per day", 5, 0.05),
            row("Keep everything", 5, float("nan"))]  # fmt: skip
    assert readings.retrieval_values(rows) == {
        "retrieval_leaders": "LFU and FIFO",
        "bank_last_everywhere": True,
    }
    rows[2] = row("MemoryBank, pass per day", 1, 0.35)
    assert readings.retrieval_values(rows)["bank_last_everywhere"] is False


def test_the_credit_figure_draws_each_rule_and_omissions_price():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from forgetting.studies.conversations import presentation

    def rows(rule, scored):
        return [{"rule": rule, "epsilon": e, "mean_difference": 0.001, "scored (mean)": scored if e else 0.0,
                 "flagged (mean)": 1.0, "low": -0.01, "high": 0.01, "train hits lost": 0.1 * e,
                 "train hits gained": 0.05 * e} for e in (0.0, 0.5)]  # fmt: skip

    credit = pd.DataFrame(rows("memory worth", 10) + rows("omission", 5) + rows("exact on train", 20))
    rates, curves = readings.credit_curves(credit)
    fig = presentation.credit_figure(rates, curves, 5, (6, 3))
    left, right = fig.axes
    assert [line.get_label() for line in left.get_lines()[:3]] == list(readings.CREDIT_RULES)
    assert len(left.get_lines()[0].get_xdata()) == 1  # a rate that scored nothing is left out
    assert [line.get_label() for line in right.get_lines()] == ["hits lost", "hits gained"]
    plt.close(fig)


def test_the_recommend_view_puts_each_interval_beside_its_value():
    from forgetting.studies.conversations import presentation

    frontier = [{"family": "Keep everything", "turns_share": 1.0, "tokens_share": 1.0, "evidence_kept": 1.0,
                 "hit_held": 0.5, "recall_held": 0.4, "every_held": 0.3}]  # fmt: skip
    budgets = [budget_row("LFU", 0.5, 0.25, 0.4)]
    view = presentation.recommend_view(pd.DataFrame(readings.recommendation_rows(budgets, frontier, 100, 50)))
    assert view["rule"].tolist() == ["LFU, C = 1", "Keep everything"]
    assert view["budget"].tolist() == ["0.5", "none"]
    assert view["per share held"].iloc[0].startswith("1.600 (")


def test_the_recommendation_values_name_lfus_budgets_and_the_other_leaders():
    recommend = [
        {"budget": 0.1, "rule": "LFU", "evidence per share held": 1.3},
        {"budget": 0.5, "rule": "LFU", "evidence per share held": 1.1},
        {"budget": 0.75, "rule": "Random eviction", "evidence per share held": 1.0137},
        {"budget": 1.0, "rule": "Keep everything", "evidence per share held": 1.0},
    ]
    values = readings.recommendation_values(recommend, 0.5)
    assert values["recommend_lfu_budgets_text"] == "0.1, 0.5" and values["recommend_lfu_to_headline"] is True
    assert (
        values["recommend_others_text"]
        == " (at 0.75 of the turns it is Random eviction, 1.01 times a random subset)"
    )
    assert readings.recommendation_values(recommend, 0.75)["recommend_lfu_to_headline"] is False
    alone = readings.recommendation_values(recommend[:2] + recommend[3:], 0.5)
    assert alone["recommend_others_text"] == ""
