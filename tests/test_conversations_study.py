"""The real-conversation chapter's computation: budgets, headline values, retrieval settings,
and the chapter built without the data (it shows the published results and publishes nothing)."""

import json
import math
import os

import numpy as np
import pytest

from conftest import ROOT, copy_book
from forgetting.conversations.source import LOCOMO_ENV, OFFLINE_ENV
from forgetting.pipeline.chapters import spec
from forgetting.studies.conversations import prepared, presentation, study
from forgetting.studies.conversations.sweep import best_within

PARAMS = spec("real-conversations").defaults


def row(family, value, turns, evidence, hit=0.4, hit_all=0.5, k=5, m=0.0):
    return {"recall_k": k, "min_similarity": m, "family": family, "parameter": "p", "value": value,
            "turns_share": turns, "evidence_kept": evidence, "hit_held": hit, "hit_all": hit_all,
            "recall_held": hit * 0.8, "recall_all": 0.42, "every_held": hit * 0.7, "every_all": 0.37,
            "tokens_share": turns, "adv_evidence_kept": evidence, "adv_hit_held": hit, "adv_hit_all": 0.3}  # fmt: skip


def test_the_study_hands_on_the_prepared_data_the_chapter_calls_it_for():
    """The chapter calls ``study.prepare``; the data it returns is :mod:`.prepared`'s, the one
    type both study modules read."""
    assert study.prepare is prepared.prepare
    assert study.Prepared is prepared.Prepared


def test_best_within_takes_the_most_evidence_inside_the_budget_and_breaks_ties_by_footprint():
    rows = [row("A", 1, 0.2, 0.3), row("A", 2, 0.45, 0.5), row("A", 3, 0.4, 0.5), row("A", 4, 0.6, 0.9),
            row("B", 1, 0.7, 0.8)]  # fmt: skip
    best = best_within(rows, 0.5)
    assert [(r["family"], r["value"]) for r in best[:1]] == [("A", 3)]
    assert best[1]["family"] == "B" and math.isnan(best[1]["evidence_kept"])
    with pytest.raises(ValueError, match="budget"):
        best_within(rows, 1.5)


def test_retrieval_settings_cross_k_without_a_minimum_and_minima_at_the_headline_k():
    params = {"recall_ks": [1, 5, 10], "min_similarities": [0.0, 0.7], "recall_k": 5}
    assert study.retrieval_settings(params) == [(1, 0.0), (5, 0.0), (10, 0.0), (5, 0.7)]


def test_headline_values_read_the_tables():
    families = list(study.HEADLINE_FAMILIES.values()) + ["Keep everything", "MemoryBank, pass per day"]
    frontier = [row(f, 1, 0.4, 0.36 if f != "LFU" else 0.48) for f in families]
    frontier[-2] = row("Keep everything", 0, 1.0, 1.0, hit=0.5)
    frontier += [row("MemoryBank 3869efc as written, pass per session", 0, 0.05, 0.045, hit=0.2),
                 row("MemoryBank 3869efc, intent, pass per session", 0, 0.5, 0.45, hit=0.45)]  # fmt: skip
    budgets = [{**r, "budget": 0.5} for r in frontier if r["family"] != "Keep everything"]
    budgets.append(
        {"family": "Keep everything", "budget": 0.5, "value": float("nan"), "evidence_kept": float("nan")}
    )
    sweep = frontier + [row("FIFO", 1, 0.4, 0.36, k=1)]
    values = study.headline_values(
        {"frontier": frontier, "budgets": budgets, "sweep": sweep}, {"headline_budget": 0.5}
    )
    assert values["best_lfu"] == 0.48 and values["best_family"] == "LFU"
    assert values["lift_max_family"] == "LFU" and values["lift_max"] == pytest.approx(1.2)
    assert values["lift_min"] == pytest.approx(0.9)
    assert values["hit_all"] == 0.5 and values["n_settings_hit_above"] == 0
    assert values["n_settings_forgetting"] == len(sweep) - 1
    assert values["recall_blind_same"] is True
    assert values["bank_max_share"] == 0.4  # v0's families only
    assert (values["bank_head_share"], values["bank_head_kept"]) == (0.05, 0.045)
    assert (values["bank_intent_share"], values["bank_intent_kept"]) == (0.5, 0.45)
    assert (values["recall_all"], values["every_all"]) == (0.42, 0.37)
    assert values["n_settings_recall_above"] == 0 and values["n_settings_every_above"] == 0
    raised = [*sweep, {**row("LRU", 9, 0.9, 0.9), "recall_held": 0.43}]
    found = study.headline_values(
        {"frontier": frontier, "budgets": budgets, "sweep": raised}, {"headline_budget": 0.5}
    )
    assert (found["n_settings_recall_above"], found["n_settings_every_above"]) == (1, 0)
    with pytest.raises(ValueError, match="recall_all over the whole history must not depend on the policy"):
        study.headline_values({"frontier": [*frontier, {**frontier[0], "recall_all": 0.5}], "budgets": budgets,
                               "sweep": sweep}, {"headline_budget": 0.5})  # fmt: skip
    changed = sweep + [row("FIFO", 1, 0.4, 0.35, k=10)]
    assert study.recall_blind_rows_agree(changed) is False


def test_every_family_of_the_grid_has_a_style():
    for setting in study.full_grid(PARAMS):
        style = presentation.family_style(setting.family)
        assert style["linestyle"] in ("-", "--", ":")


# --- the chapter without the data ---------------------------------------------------------------


@pytest.mark.book
def test_without_the_data_the_chapter_shows_the_published_results_and_publishes_nothing(
    tmp_path, monkeypatch
):
    """A scratch checkout with no copy beside it, no cache, no $FORGETTING_LOCOMO and downloads
    off ($FORGETTING_OFFLINE=1): the chapter is not rerun, its page reads the published values."""
    from forgetting import pipeline

    monkeypatch.delenv(LOCOMO_ENV, raising=False)
    monkeypatch.setenv(OFFLINE_ENV, "1")
    root = copy_book(tmp_path / "repo")
    run = pipeline.run_chapter(root, "real-conversations", quick=True)
    assert run.not_rerun is not None and "LoCoMo" in run.not_rerun
    assert run.published is False
    record = json.loads((run.folder / "results" / "real-conversations.json").read_text())
    published = json.loads((ROOT / "data" / "results" / "real-conversations.json").read_text())
    assert record["rerun"] is False
    assert record["values"] == published["values"]
    assert record["tables"] == published["tables"]
    assert os.environ.get(LOCOMO_ENV) is None
    assert np.isfinite(published["values"]["hit_all"])


def test_the_budget_view_leaves_out_families_with_no_setting_within_the_budget():
    import pandas as pd

    budgets = pd.DataFrame(
        [{**row("A", 3, 0.4, 0.5), "budget": 0.5}, {"family": "Keep everything", "budget": 0.5, "value": float("nan"),
                                                   "evidence_kept": float("nan"), "turns_share": float("nan")}]
    )  # fmt: skip
    view = presentation.budget_view(budgets, 0.5)
    assert view["family"].tolist() == ["A"]
    assert view["evidence per share held"].tolist() == [pytest.approx(1.25)]
