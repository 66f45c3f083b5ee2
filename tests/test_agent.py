"""The use-agent chapter's study: the simulated agent's world, a conversation file in LoCoMo's
released layout (the example committed in data/examples/ passes the schema), the word-overlap
retriever and the rows of the rule table."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path

import pytest

from forgetting import GovernedMemory
from forgetting.conversations import KeepAll, Window, conversation_events, replay, resolve_evidence
from forgetting.conversations.records import Conversation, Turn
from forgetting.pipeline.chapters import spec
from forgetting.studies import agent

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / agent.EXAMPLE_FILE


def sample(**conversation_fields):
    """One well-formed sample of two sessions, with ``conversation_fields`` changed."""
    conversation = {
        "speaker_a": "Ana",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "My cat Miso likes boxes."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Miso and boxes, of course."},
        ],
        "session_2_date_time": "9:00 am on 20 May, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "How is Miso?"}],
        **conversation_fields,
    }
    qa = [{"question": "What is the cat's name?", "answer": "Miso", "evidence": ["D1:1"], "category": 4}]
    return {"sample_id": "s", "conversation": conversation, "qa": qa}


def write(tmp_path, document, name="c.json"):
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


# --- the example file ---------------------------------------------------------------------------


def test_the_example_conversation_passes_the_schema():
    assert spec("use-agent").defaults["conversation"] == agent.EXAMPLE
    (conversation,) = agent.load_conversations(ROOT, agent.EXAMPLE)
    assert conversation.name == "agent-example"
    assert [n for n, _ in conversation.sessions] == [1, 2, 3]
    assert [t.index for t in conversation.turns] == list(range(len(conversation.turns)))
    assert 20 <= len(conversation.turns) <= 40 and len(conversation.questions) >= 3
    assert all(not resolve_evidence(conversation, q).unknown for q in conversation.questions)
    assert all(q.category in (1, 2, 3, 4) and q.answer for q in conversation.questions)


def test_the_example_is_a_list_of_samples_as_locomo10_json_lays_them_out():
    document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert isinstance(document, list) and len(document) == 1
    assert set(document[0]) == {"sample_id", "conversation", "qa"}
    assert {"speaker_a", "speaker_b", "session_1", "session_1_date_time"} <= set(document[0]["conversation"])


# --- recall by shared words ---------------------------------------------------------------------


def conversation_of(*texts: str) -> Conversation:
    when = datetime(2023, 5, 8, 13, 56)
    turns = tuple(Turn("c", 1, i, f"D1:{i + 1}", "Ana", text, None, when) for i, text in enumerate(texts))
    return Conversation("c", ("Ana", "Bo"), turns, (), ((1, when),))


def test_content_words_are_long_lower_case_words_without_the_common_ones():
    assert agent.content_words("The DOG, the dog's bowl; a cat & 42 cats") == {"dog", "bowl", "cat", "cats"}
    assert agent.content_words("") == frozenset()


def test_rankings_put_the_most_shared_first_then_the_latest():
    conversation = conversation_of(
        "pottery class bowls",
        "pottery bowls",
        "pottery class",
        "unrelated words",
        "pottery class bowls today",
    )
    rankings = agent.overlap_rankings(conversation, min_overlap=2)
    assert rankings[0] == () and rankings[3] == ()
    assert rankings[1] == ("D1:1",) and rankings[2] == ("D1:1",)  # D1:2 shares one word with D1:3
    assert rankings[4] == ("D1:1", "D1:3", "D1:2")  # three shared; then two each, the latest first
    assert agent.overlap_rankings(conversation, min_overlap=3)[4] == ("D1:1",)


def test_rankings_are_a_retriever_the_replay_reads_and_recalls_count_its_first_k():
    conversation = conversation_of("red apple", "red apple pie", "green tea", "blue sky", "apple pie red")
    events = conversation_events(conversation, agent.overlap_rankings(conversation, 2))
    assert [e.recalled for e in events] == [(), ("D1:1",), (), (), ("D1:2", "D1:1")]
    assert agent.recall_count(events, 1) == 2 and agent.recall_count(events, 5) == 3
    assert replay(KeepAll(), events, k=1).missed_recalls == 0
    assert replay(Window(window_size=2), events, k=2).missed_recalls == 2  # both gone at turn 4
    assert replay(Window(window_size=2), events, k=1).missed_recalls == 1  # a top-1 retriever misses one
    assert replay(Window(window_size=3), events, k=2).missed_recalls == 0  # both touched at turn 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_bad_min_overlap_or_k_is_refused(bad):
    with pytest.raises(ValueError, match="min_overlap must be"):
        agent.overlap_rankings(conversation_of("a b c"), bad)
    with pytest.raises(ValueError, match="k must be"):
        agent.recall_count([], bad)


# --- the rule table -----------------------------------------------------------------------------


def test_keeping_everything_holds_every_turn_and_all_the_evidence():
    conversations = agent.load_conversations(ROOT, agent.EXAMPLE)
    events = [conversation_events(c, agent.overlap_rankings(c)) for c in conversations]
    runs = {
        "keep_all": [replay(KeepAll(), e, k=3) for e in events],
        "window": [replay(Window(window_size=2), e, k=3) for e in events],
    }
    keep, window = agent.rule_rows(conversations, runs)
    turns = sum(len(c.turns) for c in conversations)
    assert keep == {
        "rule": "Keep everything",
        "turns_held": turns,
        "share_held": 1.0,
        "missed_recalls": 0,
        "evidence_held": 1.0,
    }
    assert window["turns_held"] == len(runs["window"][0].held) < turns
    assert window["share_held"] == window["turns_held"] / turns and window["missed_recalls"] > 0
    with pytest.raises(
        ValueError, match=r"runs\['keep_all'\] must hold one replay per conversation \(1\), got 2"
    ):
        agent.rule_rows(conversations, {"keep_all": runs["keep_all"] * 2})


def test_a_file_without_evidence_has_no_evidence_share(tmp_path):
    plain = sample()
    plain["qa"] = []
    conversations = agent.load_conversations(tmp_path, str(write(tmp_path, [plain])))
    runs = {"keep_all": [replay(KeepAll(), conversation_events(c)) for c in conversations]}
    assert math.isnan(agent.rule_rows(conversations, runs)[0]["evidence_held"])


def test_a_malformed_evidence_reference_counts_the_turns_it_names_as_the_chapter_repairs_it(tmp_path):
    doc = sample()
    doc["qa"][0]["evidence"] = ["D1:01; D2:1"]  # locomo10's kinds of slip: a leading zero, two ids in one
    conversations = agent.load_conversations(tmp_path, str(write(tmp_path, [doc])))
    runs = {"window": [replay(Window(window_size=1), conversation_events(c)) for c in conversations]}
    (row,) = agent.rule_rows(conversations, runs)
    assert runs["window"][0].held == ("D1:2", "D2:1")  # of the two turns named, D2:1 is held
    assert row["evidence_held"] == 0.5


# --- the simulated agent ------------------------------------------------------------------------


def test_the_user_tells_three_facts_at_turn_one_and_the_new_endpoint_at_the_change():
    world = agent.DeploymentWorld(seed=0, change_turn=7)
    assert [f for f, _ in world.told(1)] == ["endpoint-v1", "runbook", "offsite"]
    assert world.told(7) == [("endpoint-v2", agent.FACTS["endpoint-v2"])]
    assert all(world.told(t) == [] for t in (2, 6, 8, 100))
    assert world.current("deploy", 6) == "endpoint-v1" and world.current("deploy", 7) == "endpoint-v2"


def test_a_turn_draws_the_same_task_whatever_was_drawn_before():
    world = agent.DeploymentWorld(seed=3)
    forward = [world.task(t) for t in range(1, 200)]
    assert [world.task(t) for t in range(199, 0, -1)][::-1] == forward
    assert [agent.DeploymentWorld(seed=4).task(t) for t in range(1, 200)] != forward
    topics = [task.topic for task in forward if task is not None]
    assert 70 <= topics.count("deploy") <= 130 and 20 <= topics.count("status") <= 60  # rates 0.5, 0.2


def test_a_task_succeeds_only_on_the_current_fact_and_when_not_flaky():
    world = agent.DeploymentWorld(seed=0, change_turn=5)
    assert world.succeeds(agent.Task(4, "deploy", False), ["endpoint-v1"])
    assert not world.succeeds(agent.Task(5, "deploy", False), ["endpoint-v1"])
    assert world.succeeds(agent.Task(5, "deploy", False), ["endpoint-v2", "endpoint-v1"])
    assert not world.succeeds(agent.Task(5, "deploy", True), ["endpoint-v2"])
    assert not world.succeeds(agent.Task(5, "status", False), [])
    assert world.succeeds(agent.Task(5, "status", False), ["runbook"])


def test_bad_settings_and_turns_are_refused():
    with pytest.raises(ValueError, match=r"seed must be .*change_turn must be .*flaky_rate must be"):
        agent.DeploymentWorld(seed=-1, change_turn=1, flaky_rate=2.0)
    with pytest.raises(ValueError, match=r"deploy_rate \+ status_rate must be at most 1, got 0.7 \+ 0.5"):
        agent.DeploymentWorld(seed=0, deploy_rate=0.7, status_rate=0.5)
    with pytest.raises(ValueError, match="turn must be"):
        agent.DeploymentWorld(seed=0).task(0)
    with pytest.raises(ValueError, match="topic must be 'deploy' or 'status', got 'lunch'"):
        agent.DeploymentWorld(seed=0).current("lunch", 3)


def agent_run(world, n_turns, restart_turn=None):
    """The chapter's loop (book/use-agent.ipynb), with a restart from JSON at ``restart_turn``."""
    memory = GovernedMemory(
        eviction_threshold=0.2, baseline_stability=8.0, min_evidence=5.0, low_threshold=0.3
    )
    log = []
    for turn in range(1, n_turns + 1):
        if turn == restart_turn:
            memory = GovernedMemory.from_dict(json.loads(json.dumps(memory.to_dict())))
        told = world.told(turn)
        for fact_id, text in told:
            memory.store(fact_id, turn=turn, content=text)
        task = world.task(turn)
        used, success, deprecated = [], None, []
        if task is not None:
            found = [m for m in memory.held() if task.topic in memory.content(m)]
            used = memory.retrieve(found, turn=turn)[:1]
            success = world.succeeds(task, used)
            deprecated = memory.outcome(used, success=success, turn=turn)
        evicted = memory.step(turn)
        log.append(
            {"turn": turn, "told": [f for f, _ in told], "task": task and task.topic, "used": used,
             "success": success, "deprecated": deprecated, "evicted": evicted, "held": memory.held()}
        )  # fmt: skip
    return memory, log


def test_a_run_resumed_from_json_at_any_turn_ends_as_the_uninterrupted_run():
    world = agent.DeploymentWorld(seed=1, change_turn=6)
    memory, log = agent_run(world, 40)
    for restart in range(1, 41):
        resumed, resumed_log = agent_run(world, 40, restart)
        assert resumed_log == log and resumed.to_dict() == memory.to_dict(), restart


def test_the_stale_endpoint_is_deprecated_and_the_unused_fact_evicted():
    world = agent.DeploymentWorld(seed=0, change_turn=10)
    memory, log = agent_run(world, 60)
    rows = {row["memory"]: row for row in agent.memory_rows(memory, log)}
    assert list(rows) == ["endpoint-v1", "runbook", "offsite", "endpoint-v2"]
    stale = rows["endpoint-v1"]
    assert stale["status"] == "deprecated" and stale["deprecated_at"] > 10 and stale["class"] == "low-value"
    assert stale["worth"] == stale["successes"] / (stale["successes"] + stale["failures"]) <= 0.3
    assert rows["offsite"] == {
        "memory": "offsite", "stored_at": 1, "status": "evicted", "deprecated_at": None, "evicted_at": 14,
        "successes": 0, "failures": 0, "worth": 0.5, "class": "uncertain",
    }  # fmt: skip
    assert rows["endpoint-v2"]["stored_at"] == 10
    spans = agent.held_spans(log)
    assert spans["offsite"] == [(1, 13)] and spans["endpoint-v1"] == [(1, stale["deprecated_at"] - 1)]
    assert spans["endpoint-v2"] == [(10, 60)]
    table = agent.turn_rows(log)
    assert (
        table[0]["told"] == "endpoint-v1 runbook offsite"
        and table[0]["held"] == "endpoint-v1 runbook offsite"
    )
    assert {row["success"] for row in table if not row["task"]} == {""}


def test_a_memory_that_leaves_and_comes_back_has_two_spans():
    log = [{"turn": t, "held": held} for t, held in enumerate([["a"], ["a", "b"], ["b"], ["a", "b"]], 1)]
    assert agent.held_spans(log) == {"a": [(1, 2), (4, 4)], "b": [(2, 4)]}
