"""GovernedMemory: the governance chapter's ``combined`` policy, turn for turn, in one object."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting import GovernedMemory, MemoryStatus
from forgetting.pipeline.chapters import CHAPTERS
from forgetting.studies.governance.policies import DEPLOYMENT_FACTS, _play, noise_present, run_governance
from forgetting.studies.governance.runs import GovernanceRun
from forgetting.studies.governance.world import (
    STALE,
    TRUE,
    GovernanceOutcome,
    GovernanceWorld,
    crowded_out,
    generate_governance_session,
)

HELD = MemoryStatus.HELD


def published() -> dict:
    """The beyond-governance chapter's registered (published) parameters."""
    return {p.name: p.default for p in CHAPTERS["beyond-governance"].params}


def published_world() -> tuple[GovernanceWorld, dict]:
    p = published()
    world = GovernanceWorld(
        session_length=p["session_length"],
        shift_turn=p["shift_turn"],
        task_rate=p["task_rate"],
        co_retrieval=p["co_retrieval"],
        noise_per_turn=p["noise_per_turn"],
        outcome=GovernanceOutcome(p["p_ok"], p["p_conflict"], p["p_wrong"], p["p_none"]),
    )
    rules = {k: p[k] for k in ("eviction_threshold", "min_evidence", "low_threshold")}
    return world, rules


def noise_id(turn: int, j: int) -> int:
    return turn * 10_000 + j


def drive(session, rules: dict) -> tuple[GovernanceRun, GovernedMemory]:
    """Play ``session`` through a GovernedMemory: the world's events (its noise items, its choice
    among the facts the memory holds, crowding, outcome draws), the memory's decisions (what is
    held, what is deprecated, the counters). The run is built as ``_play`` builds ``combined``'s."""
    world = session.world
    memory = GovernedMemory(**rules)
    tasks = {t: i for i, t in enumerate(session.task_turns)}
    facts = ((STALE, 1), (TRUE, world.shift_turn))
    stored: set[str] = set()
    removed: dict[str, int] = {}
    successes, retrieved_log, sizes, trace, crowded_log = [], [], [], [], []
    for turn in range(1, world.session_length + 1):
        if turn == 1:
            memory.store(STALE, turn=turn, content=DEPLOYMENT_FACTS[STALE])
            stored.add(STALE)
        if turn == world.shift_turn:
            memory.store(TRUE, turn=turn, content=DEPLOYMENT_FACTS[TRUE])
            stored.add(TRUE)
        for j in range(world.noise_per_turn):
            memory.store(noise_id(turn, j), turn=turn)
        i = tasks.get(turn)
        if i is not None:
            available = [m for m in (STALE, TRUE) if m in stored and memory.status(m) is HELD]
            retrieved = available
            hard = turn > world.shift_turn and session.draw_hard[i] < 0.5
            if len(retrieved) == 2 and session.draw_both[i] >= world.co_retrieval:
                retrieved = [STALE] if session.draw_which[i] < world.stale_alone(hard) else [TRUE]
            noise = (len(memory) - len(available)) if world.crowding else 0  # the memory's own count
            crowded = crowded_out(session.draw_crowd[i], world.crowding, noise)
            if crowded:
                retrieved = []
            if turn < world.shift_turn:
                success = session.draw_outcome[i] < world.outcome.probability(bool(retrieved), False)
            else:
                success = session.draw_outcome[i] < world.success_probability(
                    TRUE in retrieved, STALE in retrieved, hard
                )
            got = memory.retrieve(retrieved, turn=turn)  # one call per retrieval
            assert got == retrieved
            memory.outcome(got, success=bool(success), turn=turn)  # one per outcome
            successes.append(bool(success))
            retrieved_log.append(tuple(got))
            crowded_log.append(crowded)
            trace.append(tuple(memory.worth(m) if m in stored else 0.5 for m in (STALE, TRUE)))
        memory.step(turn)
        for mem_id, born in facts:
            if turn >= born and mem_id not in removed and memory.status(mem_id) is not HELD:
                removed[mem_id] = turn
        sizes.append(len(memory))
    run = GovernanceRun(
        "combined",
        session.seed,
        world.shift_turn,
        session.task_turns,
        tuple(successes),
        tuple(retrieved_log),
        tuple(sizes),
        tuple(trace),
        removed.get(STALE),
        removed.get(TRUE),
        tuple(crowded_log),
    )
    return run, memory


def assert_same_as_combined(session, rules: dict) -> GovernanceRun:
    """The memory's run is the ``combined`` policy's, field for field, and so are its counters,
    its deprecations and the engine's facts at the end."""
    run, memory = drive(session, rules)
    expected = run_governance(session, "combined", **rules)
    assert run == expected
    world = session.world
    # the counters: one unit per task that retrieved the fact, in h+ or h-
    for mem_id in (STALE, TRUE):
        tasks = [s for s, r in zip(expected.successes, expected.retrieved) if mem_id in r]
        assert memory.counters(mem_id) == (float(sum(tasks)), float(len(tasks) - sum(tasks)))
    # a deprecation is the fact's removal turn; a fact removed otherwise was evicted
    removal = {STALE: expected.stale_removed_turn, TRUE: expected.true_removed_turn}
    for mem_id, turn in removal.items():
        if mem_id in memory.deprecated():
            assert memory.deprecated()[mem_id] == turn
            assert memory.status(mem_id) is MemoryStatus.DEPRECATED
        elif turn is not None:
            assert memory.status(mem_id) is MemoryStatus.EVICTED
    # the engine after the last turn: the same facts, at the same retention
    rule_tuple = (
        rules["eviction_threshold"],
        rules["min_evidence"],
        rules["low_threshold"],
        1.0,
        2.576,
        0.01,
    )
    engine = _play(session, "combined", rule_tuple)[1]
    last = world.session_length
    for mem_id in (STALE, TRUE):
        if engine.is_present(mem_id):
            assert memory.retention(mem_id, last) == engine.retention(mem_id, last)  # type: ignore[attr-defined]
        else:
            assert memory.status(mem_id) is not HELD
    # the noise the world counts is what the memory holds
    held_noise = sum(isinstance(m, int) for m in memory.held())
    assert held_noise == noise_present(last, world.noise_per_turn, engine.untouched_delay(), stepped=True)
    return run


PUBLISHED_SEEDS = range(0, 12)


@pytest.mark.parametrize("seed", PUBLISHED_SEEDS)
def test_the_published_sessions_play_as_the_combined_policy(seed):
    world, rules = published_world()
    assert_same_as_combined(generate_governance_session(world, seed), rules)


def test_the_published_sessions_include_deprecations_and_evictions():
    """The comparison is not vacuous: over these seeds both facts are deprecated somewhere, one is
    held to the end somewhere, and the noise is evicted."""
    world, rules = published_world()
    deprecated, kept = set(), set()
    for seed in PUBLISHED_SEEDS:
        _, memory = drive(generate_governance_session(world, seed), rules)
        deprecated |= set(memory.deprecated()) & {STALE, TRUE}
        kept |= set(memory.held()) & {STALE, TRUE}
        assert memory.status(noise_id(1, 0)) is MemoryStatus.EVICTED
    assert deprecated == {STALE, TRUE}
    assert TRUE in kept


@pytest.mark.parametrize("field", ["co_retrievals", "crowdings", "confounds"])
def test_the_published_sweeps_play_as_the_combined_policy(field):
    world, rules = published_world()
    p = published()
    for value in p[field]:
        if field == "co_retrievals":
            swept = replace(world, co_retrieval=value)
        elif field == "crowdings":
            swept = replace(world, crowding=value)
        else:
            swept = replace(world, confound=value, difficulty=p["difficulty"])
        for seed in range(3):
            assert_same_as_combined(generate_governance_session(swept, seed), rules)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    session_length=st.integers(3, 160),
    shift=st.integers(2, 60),
    task_rate=st.floats(0.0, 1.0),
    co_retrieval=st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
    noise_per_turn=st.integers(0, 3),
    crowding=st.sampled_from([0.0, 0.01, 0.1]),
    eviction_threshold=st.floats(0.05, 0.6),
    min_evidence=st.sampled_from([1.0, 2.0, 5.0, 8.5]),
    low_threshold=st.floats(0.0, 0.6),
)
def test_any_session_plays_as_the_combined_policy(
    seed,
    session_length,
    shift,
    task_rate,
    co_retrieval,
    noise_per_turn,
    crowding,
    eviction_threshold,
    min_evidence,
    low_threshold,
):
    world = GovernanceWorld(
        session_length=session_length,
        shift_turn=min(shift, session_length - 1),
        task_rate=task_rate,
        co_retrieval=co_retrieval,
        noise_per_turn=noise_per_turn,
        crowding=crowding,
    )
    rules = {
        "eviction_threshold": eviction_threshold,
        "min_evidence": min_evidence,
        "low_threshold": low_threshold,
    }
    assert_same_as_combined(generate_governance_session(world, seed), rules)


# --- the calls --------------------------------------------------------------------------------


def test_defaults_are_the_combined_policys():
    from forgetting.decay import DEFAULT_EVICTION_THRESHOLD
    from forgetting.worth import DEFAULT_LOW_THRESHOLD, DEFAULT_MIN_EVIDENCE

    s = GovernedMemory().settings()
    assert (s["eviction_threshold"], s["min_evidence"], s["low_threshold"]) == (
        DEFAULT_EVICTION_THRESHOLD,
        DEFAULT_MIN_EVIDENCE,
        DEFAULT_LOW_THRESHOLD,
    )
    p = published()
    assert (s["eviction_threshold"], s["min_evidence"], s["low_threshold"]) == (
        p["eviction_threshold"],
        p["min_evidence"],
        p["low_threshold"],
    )


def test_an_untouched_memory_is_evicted_as_the_engine_evicts_it():
    memory = GovernedMemory()
    memory.store(7, turn=np.int64(1))
    assert memory.step(13) == []
    assert memory.step(14) == [7]
    assert memory.status(7) is MemoryStatus.EVICTED
    memory.store(7, turn=15, content="again")  # an evicted id may come back
    assert memory.held() == [7] and memory.content(7) == "again"


def test_a_later_call_ends_the_turns_before_it():
    stepped, implicit = GovernedMemory(), GovernedMemory()
    for memory in (stepped, implicit):
        memory.store("a", turn=1)
        memory.store("b", turn=1)
    for turn in range(1, 14):
        stepped.step(turn)
    assert stepped.retrieve(["a", "b"], turn=14) == implicit.retrieve(["a", "b"], turn=14) == ["a", "b"]
    for turn in range(14, 300):
        stepped.step(turn)
    assert stepped.retrieve(["a", "b"], turn=300) == implicit.retrieve(["a", "b"], turn=300) == []
    assert stepped.to_dict() == implicit.to_dict()


def test_retrieval_leaves_out_deprecated_and_evicted_memories():
    memory = GovernedMemory(min_evidence=1.0)
    memory.store("bad", turn=1)
    memory.store("good", turn=1)
    assert memory.outcome(memory.retrieve(["bad"], turn=2), success=False, turn=2) == ["bad"]
    assert memory.retrieve(["good", "bad"], turn=3) == ["good"]
    assert memory.held() == ["good"] and len(memory) == 1
    assert memory.deprecated() == {"bad": 2}
    assert memory.outcome([], success=True, turn=3) == []


def test_worth_and_class_read_the_counters():
    memory = GovernedMemory()
    memory.store(("a", 1), turn=0)  # any hashable id in memory
    assert memory.worth(("a", 1)) == 0.5 and memory.worth_class(("a", 1)) == "uncertain"
    memory.outcome([("a", 1)], success=True, turn=0)
    assert memory.counters(("a", 1)) == (1.0, 0.0) and memory.worth(("a", 1)) == 1.0


# --- bad input ----------------------------------------------------------------------------------


def test_bad_settings_are_named_together():
    with pytest.raises(ValueError) as error:
        GovernedMemory(eviction_threshold=1.5, min_evidence=-1, low_threshold=True)
    message = str(error.value)
    assert "eviction_threshold" in message and "1.5" in message
    assert "min_evidence" in message and "low_threshold" in message


def test_positional_settings_are_refused():
    with pytest.raises(TypeError, match="positional"):
        GovernedMemory(0.2)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda m: m.store(True, turn=5), r"mem_id must not be a bool.*True"),
        (lambda m: m.store(float("nan"), turn=5), r"mem_id must not be a bool.*nan"),
        (lambda m: m.store([1], turn=5), r"mem_id must be hashable, got \[1\]"),
        (lambda m: m.store("new", turn=4), r"turn must not go backwards: got turn=4 after turn 5"),
        (lambda m: m.store("new", turn=5.0), r"turn must be an int >= 0, got 5\.0"),
        (lambda m: m.store("new", turn=6, content=3), r"content must be a str, got 3"),
        (lambda m: m.store("x", turn=6), r"mem_id 'x' is already held"),
        (lambda m: m.store("gone", turn=6), r"mem_id 'gone' was deprecated at turn 5"),
        (lambda m: m.retrieve("x", turn=6), r"mem_ids must be a sequence of memory ids.*'x'"),
        (lambda m: m.retrieve(["x", "zz"], turn=6), r"never-stored \['zz'\]"),
        (lambda m: m.retrieve(["x", "x"], turn=6), r"must not repeat an id, got duplicates \['x'\]"),
        (lambda m: m.retrieve([True], turn=6), r"mem_ids must hold hashable ids.*\[True\]"),
        (lambda m: m.outcome(["x"], success=1, turn=6), r"success must be a bool.*got 1"),
        (lambda m: m.outcome(["x"], success=True, turn=-1), r"turn must be an int >= 0, got -1"),
        (lambda m: m.step(3), r"turn must not go backwards: got turn=3 after turn 5"),
        (lambda m: m.status("zz"), r"mem_id must be the id of a stored memory, got never-stored 'zz'"),
        (lambda m: m.worth(float("nan")), r"mem_id must not be a bool.*nan"),
    ],
)
def test_bad_calls_are_refused_and_change_nothing(call, match):
    memory = GovernedMemory(min_evidence=1.0)
    memory.store("x", turn=1)
    memory.store("gone", turn=1)
    memory.outcome(["gone"], success=False, turn=5)
    before = memory.to_dict()
    with pytest.raises(ValueError, match=match):
        call(memory)
    assert memory.to_dict() == before


def test_every_problem_of_a_call_is_named_at_once():
    memory = GovernedMemory()
    memory.store("x", turn=3)
    with pytest.raises(ValueError) as error:
        memory.outcome(["x", "zz", "x"], success="yes", turn=2)
    message = str(error.value)
    assert "never-stored ['zz']" in message and "duplicates ['x']" in message
    assert "success must be a bool" in message and "turn must not go backwards" in message


# --- JSON ---------------------------------------------------------------------------------------

IDS = ["a", "b", "c", "d", 0, 1, -5, 2**70, "", "0"]
EVENT = st.tuples(
    st.sampled_from(["store", "retrieve", "outcome", "step"]),
    st.integers(0, 3),  # turns to advance
    st.lists(st.sampled_from(IDS), max_size=4),
    st.booleans(),
)


def apply(memory: GovernedMemory, event, turn: int):
    """One event; what it returned, or the refusal's message."""
    kind, _, ids, flag = event
    try:
        if kind == "store":
            return memory.store(ids[0] if ids else "a", turn=turn, content=f"c{turn}")
        if kind == "retrieve":
            return memory.retrieve(list(dict.fromkeys(ids)), turn=turn)
        if kind == "outcome":
            return memory.outcome(list(dict.fromkeys(ids)), success=flag, turn=turn)
        return memory.step(turn)
    except ValueError as error:
        return f"refused: {error}"


@settings(max_examples=20, deadline=None)
@given(
    events=st.lists(EVENT, min_size=200, max_size=400),
    cut=st.floats(0.0, 1.0),
    rules=st.fixed_dictionaries(
        {"eviction_threshold": st.floats(0.05, 0.5), "min_evidence": st.sampled_from([1.0, 3.0, 5.0])}
    ),
)
def test_a_json_round_trip_keeps_the_state_and_the_future(events, cut, rules):
    memory = GovernedMemory(**rules)
    turn = 0
    split = int(cut * len(events))
    for event in events[:split]:
        turn += event[1]
        before = memory.to_dict()
        if str(apply(memory, event, turn)).startswith("refused"):
            assert memory.to_dict() == before  # a refused call changes nothing
    data = memory.to_dict()
    text = json.dumps(data, allow_nan=False)
    restored = GovernedMemory.from_dict(json.loads(text))
    assert restored.to_dict() == data
    assert json.dumps(restored.to_dict(), allow_nan=False) == text
    for event in events[split:]:
        turn += event[1]
        assert apply(restored, event, turn) == apply(memory, event, turn)
        assert restored.to_dict() == memory.to_dict()
    for mem_id in memory.to_dict()["memories"]:
        assert restored.status(mem_id[0]) is memory.status(mem_id[0])


def test_to_dict_names_an_id_json_cannot_keep():
    memory = GovernedMemory()
    memory.store(("a", 1), turn=1)
    with pytest.raises(ValueError, match=r"str and int ids only.*\('a', 1\) \(tuple\)"):
        memory.to_dict()


def test_numpy_ids_are_stored_as_python_ints():
    memory = GovernedMemory()
    memory.store(np.int64(3), turn=1)
    assert memory.held() == [3] and type(memory.held()[0]) is int
    assert memory.to_dict()["memories"] == [[3, ""]]


def test_another_version_is_refused_clearly():
    data = GovernedMemory().to_dict()
    with pytest.raises(ValueError, match=r"data has version 2; this library reads version 1"):
        GovernedMemory.from_dict({**data, "version": 2})
    with pytest.raises(ValueError, match=r"data must be a dict with format 'forgetting.GovernedMemory'"):
        GovernedMemory.from_dict({"version": 1})


def test_a_damaged_dict_is_refused():
    memory = GovernedMemory()
    memory.store("a", turn=1)
    memory.outcome(["a"], success=True, turn=2)
    data = memory.to_dict()
    with pytest.raises(ValueError, match=r"not a GovernedMemory's to_dict \(KeyError"):
        GovernedMemory.from_dict({k: v for k, v in data.items() if k != "worth"})
    with pytest.raises(ValueError, match=r"memory index must be an int >= 0 and <= 0, got -1"):
        GovernedMemory.from_dict({**data, "worth": [[-1, 1.0, 0.0]]})
    with pytest.raises(ValueError, match=r"working_set entry \[0, 1, 0, 1\] is not an item"):
        GovernedMemory.from_dict({**data, "working_set": [[0, 1, 0, 1]]})
    with pytest.raises(ValueError, match=r"eviction_threshold"):
        GovernedMemory.from_dict({**data, "settings": {**data["settings"], "eviction_threshold": 2.0}})
