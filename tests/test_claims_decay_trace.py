"""decay-trace: the traced fact never comes near its threshold, held to the published record."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from forgetting.decay.engines import EbbinghausEngine
from forgetting.studies.decay.sessions import SessionConfig, generate_session

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results"


def record(chapter: str) -> dict:
    return json.loads((RESULTS / f"{chapter}.json").read_text(encoding="utf-8"))


def test_the_traced_fact_is_lowest_as_its_first_recall_arrives_and_stays_far_above_theta():
    """'Its lowest is at turn T, E turns after registration, as the first recall arrives: R, k times
    theta': an engine replay of the published session reads the retention each recall meets (before
    it reinforces) and the retention after every turn's eviction check, and finds the same lowest."""
    published = record("decay-trace")
    parameters, values = published["parameters"], published["values"]
    theta = parameters["eviction_threshold"]
    config = SessionConfig(
        seed=parameters["seed"],
        session_length=parameters["session_length"],
        num_foundational=1,
        recalls_per_foundational=parameters["recalls_per_foundational"],
        noise_per_turn=parameters["noise_per_turn"],
    )
    session = generate_session(config)
    fact = session.foundational_ids[0]
    engine = EbbinghausEngine(eviction_threshold=theta)
    seen: list[tuple[float, int]] = []
    events, index = session.events, 0
    for turn in range(1, config.session_length + 1):
        while index < len(events) and events[index][0] == turn:
            _, action, mem_id, foundational = events[index]
            index += 1
            if action == "register":
                engine.register(mem_id, mem_id, turn, foundational)
            else:
                seen.append((engine.retention(fact, turn), turn))
                assert engine.recall(mem_id, turn)
        engine.step(turn)
        assert engine.is_present(fact)
        seen.append((engine.retention(fact, turn), turn))
    lowest, turn = min(seen)
    with (RESULTS / "decay-trace-recalls.csv").open(encoding="utf-8", newline="") as handle:
        first_recall = int(next(csv.DictReader(handle))["turn"])
    assert round(lowest, 3) == values["lowest_retention"]
    assert turn == values["lowest_turn"] == first_recall
    assert values["lowest_elapsed"] == first_recall - session.events[0][0]  # registered at turn 1
    assert values["lowest_ratio"] == round(lowest / theta, 1) and lowest > 2 * theta


def test_no_fact_of_the_headline_comes_lower_nor_can_any_seed():
    """'No fact of the headline's sessions comes lower, and no seed the schedule can draw lets one':
    the headline's lowest and its schedule floor are not below the traced fact's, at the same settings."""
    trace, headline = record("decay-trace"), record("decay-headline")
    for name in ("session_length", "recalls_per_foundational", "eviction_threshold"):
        assert trace["parameters"][name] == headline["parameters"][name], name
    lowest = trace["values"]["lowest_retention"]
    assert headline["values"]["lowest_retention"] >= lowest
    assert headline["values"]["floor_retention"] >= lowest


def test_the_traced_session_is_the_articles():
    """The article's traced session (data/published.yaml, decay-trace.*) is the published one: three
    recalls at the entries' turns before the window's eviction, a late recall the window misses
    and decay finds, and decay holding the fact to the end."""
    from forgetting.studies.decay import study, timeline
    from forgetting.studies.published import load_published

    published, paper = record("decay-trace"), load_published()
    parameters, values = published["parameters"], published["values"]
    config = SessionConfig(
        seed=parameters["seed"],
        session_length=parameters["session_length"],
        num_foundational=1,
        recalls_per_foundational=parameters["recalls_per_foundational"],
        noise_per_turn=parameters["noise_per_turn"],
    )
    policies = (
        study.DecayPolicy(parameters["eviction_threshold"]),
        study.WindowPolicy(parameters["window_size"]),
    )
    traces = {p.kind: study.trace_session(p, config) for p in policies}
    fact = traces["decay"].foundational_ids[0]
    checks = timeline.article_trace_checks(traces, fact)
    assert len(checks) == 4 + timeline.ARTICLE_TRACE_RECALLS
    for label, entry, value in checks:
        assert round(value) == paper[f"decay-trace.{entry}"].value, label
    turns = [
        int(paper[f"decay-trace.recall_{k}"].value) for k in range(1, timeline.ARTICLE_TRACE_RECALLS + 1)
    ]
    assert values["early_recalls"] == ", ".join(map(str, turns))
    assert values["last_early_recall"] == turns[-1]
    assert values["late_recall_window"] is False and values["late_recall_decay"] is True
    assert values["present_at_end_decay"] is True
