"""The knowledge-update chapter's study: histories, the contradiction rule, the scores, the sweep.

Everything but the last section runs on small invented questions with hand-made vectors (so every
cosine is known); the last reads the real LongMemEval copy where there is one (slow; skipped
without it).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from forgetting.conversations import KeepAll, Window, replay
from forgetting.conversations.longmemeval import parse_question
from forgetting.studies.executor import InProcess
from forgetting.studies.knowledge_updates import study, sweep
from forgetting.studies.knowledge_updates.histories import history_of, texts_to_embed
from forgetting.studies.knowledge_updates.replays import held_mask, recall_stream, score_held, score_policy
from forgetting.studies.knowledge_updates.supersede import Supersede, supersede_for
from longmemeval_examples import UPDATE, turn

ROOT = Path(__file__).resolve().parents[1]


#: A single-session question whose evidence is the assistant's (not stored: not scored).
ASSISTANT = {
    "question_id": "5e6f7a8b",
    "question_type": "single-session-assistant",
    "question": "Which soup did you suggest?",
    "answer": "lentil",
    "question_date": "2023/05/13 (Sat) 10:00",
    "haystack_session_ids": ["s1"],
    "haystack_dates": ["2023/05/12 (Fri) 18:30"],
    "haystack_sessions": [[turn("user", "Any soup recipes?"), turn("assistant", "Try lentil soup.", True)]],
    "answer_session_ids": ["s1"],
}


def question(doc):
    parsed, problems = parse_question(f"{len(doc['haystack_sessions'])}_{doc['question_id']}.json",
                                      json.dumps(doc).encode())  # fmt: skip
    assert not problems, problems
    return parsed


def unit(*components):
    """A 384-d unit vector with these leading components (scaled to norm 1)."""
    vector = np.zeros(384)
    vector[: len(components)] = components
    return vector / np.linalg.norm(vector)


# memories in date order: balcony (stale), soup, basement (current)
BALCONY, SOUP, BASEMENT = unit(1, 0, 0.2), unit(0, 1, 0), unit(0.9, 0, 0.5)


NEAR_BOTH = unit(1, 0, 0.6)  # a question nearer the update than the old value


def update_history(asked=NEAR_BOTH):
    return history_of(question(UPDATE), np.array([BALCONY, SOUP, BASEMENT]), asked)


# --- histories -------------------------------------------------------------------------------


def test_a_history_stores_the_user_turns_in_date_order_and_splits_old_from_new_evidence():
    history = update_history()
    assert history.ids == ("S1:1", "S2:1", "S3:1")  # sessions renumbered by date
    assert history.evidence.tolist() == [0, 2]
    assert history.stale.tolist() == [0] and history.current.tolist() == [2]
    assert history.conflict
    assert texts_to_embed([history.question]) == [
        "My bike lives on the balcony.", "Any soup recipes?", "I moved my bike to the basement.",
        "Where do I keep my bike now?",
    ]  # fmt: skip


def test_a_history_refuses_vectors_that_are_not_one_per_user_turn():
    with pytest.raises(ValueError, match=r"one vector per user turn \(3\), got 2"):
        history_of(question(UPDATE), np.array([BALCONY, SOUP]), unit(1))


def test_a_cosine_on_a_rounding_boundary_is_counted_as_fragile():
    from forgetting.studies.knowledge_updates.histories import fragile_cosines

    assert fragile_cosines(update_history()) == 0
    edge = unit(0.0005, np.sqrt(1 - 0.0005**2))  # cosine 0.0005 to unit(1): half a unit of 1e-3
    on_edge = history_of(question(UPDATE), np.array([unit(1), edge, unit(0, 0, 1)]), unit(1))
    assert fragile_cosines(on_edge) >= 1


def test_assistant_evidence_is_not_a_memory_so_the_question_has_no_evidence_to_score():
    history = history_of(question(ASSISTANT), np.array([SOUP]), unit(0, 1))
    assert history.evidence.size == 0 and not history.conflict
    score = score_held(history, np.ones(1, dtype=bool), 1)
    assert (score.questions, score.evidence, score.hits_all) == (0, 0, 0)


# --- the contradiction rule -------------------------------------------------------------------


def test_supersede_drops_the_held_memories_above_the_threshold_only():
    history = update_history()
    cos = history.turn_cosines
    assert cos[2, 0] > 0.8 and cos[2, 1] < 0.1  # basement is near balcony, far from soup
    events = recall_stream(history, 0.0)
    kept = replay(supersede_for(0.8, cos, history.ids), events, k=1).held
    assert kept == ("S2:1", "S3:1")  # the update superseded the stale value
    assert (
        replay(supersede_for(float(cos[2, 0]), cos, history.ids), events, k=1).held == history.ids
    )  # strict


def test_supersede_only_supersedes_memories_of_the_same_speaker():
    history = update_history()
    rule = Supersede(0.8, history.turn_cosines, history.ids, speakers=("a", "b", "b"))
    assert replay(rule, recall_stream(history, 0.0), k=1).held == history.ids


def test_supersede_refuses_bad_settings_naming_each():
    with pytest.raises(ValueError) as error:
        Supersede(1.5, np.zeros((2, 3)), ("a", "a"), speakers=("x",))
    message = str(error.value)
    assert "threshold" in message and "1.5" in message
    assert "cosines must be a (2, 2) matrix" in message
    assert "speakers must hold one speaker per id (2), got 1" in message
    assert "ids must be distinct" in message


# --- the scores -------------------------------------------------------------------------------


def test_keeping_everything_ranks_the_stale_value_first_when_it_is_nearer_the_question():
    history = update_history(asked=unit(1, 0, 0))  # the question is nearer the balcony
    score = score_held(history, np.ones(3, dtype=bool), question_k=1)
    assert (score.current_first, score.stale_only, score.current_top) == (0, 1, 0)
    assert (score.current_first_all, score.stale_only_all) == (0, 1)


def test_forgetting_the_stale_value_ranks_the_update_first():
    history = update_history(asked=unit(1, 0, 0))
    score = score_held(history, held_mask(history, ["S2:1", "S3:1"]), question_k=1)
    assert (score.current_first, score.stale_only, score.current_top) == (1, 0, 1)
    assert (score.stale_held, score.current_held, score.evidence_held, score.turns_held) == (0, 1, 1, 2)
    assert (score.current_first_all, score.stale_only_all) == (0, 1)  # over everything: unchanged
    assert (score.first_gained, score.first_lost) == (1, 0)
    assert (score_held(history, np.ones(3, dtype=bool), 1).first_gained, score.first_lost) == (0, 0)


def test_a_short_window_keeps_the_update_and_drops_the_old_value():
    history = update_history(asked=unit(1, 0, 0))
    events = recall_stream(history, 0.0)
    assert [event.turn for event in events] == [0, 2, 4]  # the history's turn clock counts assistant turns
    score = score_policy(history, Window(window_size=1), events, recall_k=1, question_k=1)
    assert (score.turns_held, score.current_first, score.stale_held) == (1, 1, 0)


# --- the sweep --------------------------------------------------------------------------------


def grid(thresholds=(0.8,)):
    from forgetting.studies.conversations.sweep import Setting

    keep = Setting("Keep everything", "-", 0.0, KeepAll())
    return sweep.Grid(
        (keep, Setting("Recency window", "W (turns)", 1, Window(window_size=1))), tuple(thresholds)
    )


def histories():
    return [
        update_history(asked=unit(1, 0, 0)),
        update_history(),
        history_of(question(ASSISTANT), np.array([SOUP]), unit(0, 1)),
    ]


def test_the_sweep_pools_by_type_and_does_not_depend_on_the_blocks(monkeypatch):
    rows, keep = sweep.run_sweep(grid(), histories(), 1, 0.0, 1, InProcess())
    by_family = {row["family"]: row for row in rows}
    assert set(by_family) == {"Keep everything", "Recency window", sweep.SUPERSEDE}
    everything = by_family["Keep everything"]
    assert everything["turns_share"] == 1.0 and everything["update_current_first"] == 0.5
    assert everything["update_stale_only"] == 0.5
    assert math.isnan(everything["old_evidence_kept"])  # no old-information question here
    window = by_family["Recency window"]
    assert window["update_current_first"] == 1.0 and window["update_stale_kept"] == 0.0
    assert by_family[sweep.SUPERSEDE]["update_current_first"] == 1.0
    assert keep["knowledge-update"].conflicts == 2
    monkeypatch.setattr(sweep, "BLOCK", 1)
    assert repr(sweep.run_sweep(grid(), histories(), 1, 0.0, 1, InProcess())[0]) == repr(rows)  # NaN != NaN


def test_the_sweep_refuses_bad_arguments():
    with pytest.raises(ValueError, match="recall_k"):
        sweep.run_sweep(grid(), histories(), 0, 0.0, 1)
    with pytest.raises(ValueError, match="thresholds"):
        grid(thresholds=(2.0,))
    with pytest.raises(ValueError, match="keep everything"):
        sweep.run_sweep(sweep.Grid((), (0.5,)), histories(), 1, 0.0, 1)


def test_the_recommendation_takes_the_setting_that_ranks_the_update_first_most_within_each_floor():
    def row(family, value, old, first, stale):
        return {"family": family, "parameter": "W (turns)", "value": value, "old_evidence_kept": old,
                "update_current_first": first, "update_stale_only": stale, "update_current_top": first,
                "turns_share": old, "update_current_kept": 1.0, "update_stale_kept": 1 - first,
                "update_first_gained": first, "update_first_lost": 0.0}  # fmt: skip

    rows = [row("Keep everything", 0.0, 1.0, 0.4, 0.3), row("Recency window", 5, 0.95, 0.6, 0.2),
            row("Recency window", 2, 0.5, 0.9, 0.05)]  # fmt: skip
    table = study.recommendation_rows(rows, [1.0, 0.9, 0.5, 0.0])
    assert [r["setting"] for r in table] == [
        "Keep everything", "Recency window, W (turns) = 5", "Recency window, W (turns) = 2",
        "Recency window, W (turns) = 2", "Keep everything",
    ]  # fmt: skip
    assert math.isnan(table[-1]["floor"])


# --- the real data ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def oracle():
    from forgetting.conversations.longmemeval import load_longmemeval
    from forgetting.pipeline.data import locate, unavailable

    try:
        path = locate("longmemeval")
    except unavailable() as error:
        pytest.skip(f"no LongMemEval copy: {error}")
    return load_longmemeval(path, "oracle")


@pytest.mark.slow
def test_the_oracle_counts_the_chapter_states(oracle):
    """The facts the chapter states about the data (vectors are not needed to count them)."""
    rng = np.random.default_rng(0)

    def vectors(n):
        v = rng.normal(size=(n, 384))
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    made = [history_of(q, vectors(sum(t.role == "user" for t in q.turns)), vectors(1)[0]) for q in oracle]
    values, rows = study.dataset_rows(study.Prepared("oracle", oracle, made, "x"))
    assert (values["n_questions"], values["n_turns"], values["n_user_turns"]) == (500, 10960, 5479)
    assert values["n_evidence"] == 896
    assert (values["n_evidence_assistant"], values["n_evidence_assistant_ssa"]) == (54, 51)
    assert (values["n_late_questions"], values["n_late_evidence"]) == (43, 62)
    assert (values["n_updates"], values["n_conflicts"]) == (78, 70)
    assert (values["n_updates_abstention"], values["n_updates_new_only"]) == (6, 2)
    assert values["n_texts_embedded"] == 5379
    assert sum(r["questions"] for r in rows) == 500


# --- the published results back the prose -----------------------------------------------------

RESULTS = ROOT / "data" / "results"


@pytest.fixture(scope="module")
def published():
    record = RESULTS / "knowledge-updates.json"
    if not record.is_file():
        pytest.skip("knowledge-updates is not published yet")
    return json.loads(record.read_text(encoding="utf-8"))["values"]


def test_the_published_chapter_reads_as_its_prose_says(published):
    """The introduction and "What to use": day-clock rules lead at every floor and beat keeping
    everything; the turn and capacity rules trail them; LFU retrieves the stale value alone more
    often; the contradiction rule is beaten on both measures by a day-clock setting."""
    import csv

    assert published["recommend_day_only"] is True
    with (RESULTS / "knowledge-updates-recommend.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[-1]["rule"] == "Keep everything"
    assert all(float(r["update_current_first"]) > published["keep_current_first"] for r in rows[:-1])
    assert published["days_updates"] > published["days_old"]
    assert published["turn_best_first"] < published["day_best_first"]
    assert published["lfu_stale_only"] > published["keep_stale_only"]
    assert published["day_best_gained"] > published["day_best_lost"]
    assert published["supersede_beaten"] is True and published["supersede_best_current_kept"] < 1.0
    assert published["n_questions"] == 500 and published["n_conflicts"] == 70


def test_a_run_of_knowledge_updates_only_recommends_nothing_and_still_reads_the_updates():
    """The S setting has no old-information question: no floor is reached, the updates are scored."""
    from forgetting.pipeline.chapters import spec

    params = dict(spec("knowledge-updates").quick)
    params = {**spec("knowledge-updates").defaults, **params}
    prepared = study.Prepared("s", [h.question for h in histories()[:2]], histories()[:2], "x")
    values, tables = study.chapter_results(prepared, params, InProcess())
    assert values["recommend_rules"] == "none" and math.isnan(values["keep_old_evidence"])
    assert [row["rule"] for row in tables["recommend"]] == ["none"] * len(params["floors"]) + [
        "Keep everything"
    ]
    assert values["keep_current_first"] == 0.5 and values["n_conflicts"] == 2
