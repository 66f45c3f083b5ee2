"""GovernedMemory: the governance chapter's policies, turn for turn, in one object.

Each rule plays as its policy: ``worth`` as ``combined``, ``discounted``, ``effect`` and
``sequential`` as themselves, on the chapter's published sessions and sweeps and on
hypothesis-generated ones.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgetting import DeprecationRule, GovernedMemory, MemoryStatus
from forgetting.pipeline.chapters import CHAPTERS
from forgetting.studies.governance.policies import (
    DEPLOYMENT_FACTS,
    GovernancePolicy,
    _play,
    noise_present,
    run_governance,
)
from forgetting.studies.governance.runs import GovernanceRun
from forgetting.studies.governance.world import (
    STALE,
    TRUE,
    GovernanceOutcome,
    GovernanceWorld,
    crowded_out,
    generate_governance_session,
)
from forgetting.worth import DiscountedMemoryWorth, EffectArms, HarmTest

HELD = MemoryStatus.HELD
RULE_SETTING = {
    DeprecationRule.WORTH: None,
    DeprecationRule.DISCOUNTED: "discount",
    DeprecationRule.EFFECT: "effect_z",
    DeprecationRule.SEQUENTIAL: "alpha",
}
"""The chapter's rule setting of each rule's policy (``run_governance``'s keyword)."""


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


def published_rule(rule: DeprecationRule) -> dict:
    """The chapter's published setting of ``rule`` (empty for ``worth``)."""
    name = RULE_SETTING[rule]
    return {} if name is None else {name: published()[name]}


def noise_id(turn: int, j: int) -> int:
    return turn * 10_000 + j


def drive(
    session, rules: dict, rule: DeprecationRule = DeprecationRule.WORTH, setting: dict | None = None
) -> tuple[GovernanceRun, GovernedMemory]:
    """Play ``session`` through a GovernedMemory: the world's events (its noise items, its choice
    among the facts the memory holds, crowding, outcome draws), the memory's decisions (what is
    held, what is deprecated, the evidence). The run is built as ``_play`` builds the policy's.

    Every outcome after the true fact is stored names the contradicting pair as its
    ``candidates``: the memory decides, as the chapter does, whether it is a contrast task (both
    held; for ``sequential``, one of them retrieved, i.e. not crowded out)."""
    world = session.world
    setting = dict(setting or {})
    if rule is DeprecationRule.SEQUENTIAL:
        setting["co_retrieval"] = world.co_retrieval
    memory = GovernedMemory(**rules, rule=rule, **setting)
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
            candidates = (STALE, TRUE) if TRUE in stored else ()
            memory.outcome(got, success=bool(success), turn=turn, candidates=candidates)  # one per outcome
            successes.append(bool(success))
            retrieved_log.append(tuple(got))
            crowded_log.append(crowded)
            trace.append(tuple(memory.worth(m) if m in stored else 0.5 for m in (STALE, TRUE)))
        memory.step(turn)
        for mem_id, born in facts:
            if turn >= born and mem_id not in removed and memory.status(mem_id) is not HELD:
                removed[mem_id] = turn
        sizes.append(len(memory))
    reads_worth = rule in (DeprecationRule.WORTH, DeprecationRule.DISCOUNTED)
    run = GovernanceRun(
        GovernancePolicy.of_rule(rule),
        session.seed,
        world.shift_turn,
        session.task_turns,
        tuple(successes),
        tuple(retrieved_log),
        tuple(sizes),
        tuple(trace) if reads_worth else None,
        removed.get(STALE),
        removed.get(TRUE),
        tuple(crowded_log),
    )
    return run, memory


def expected_evidence(run: GovernanceRun, rule: DeprecationRule, setting: dict, co_retrieval: float) -> dict:
    """Each fact's arms (``effect``) or test (``sequential``) rebuilt from the policy's own run: a
    contrast task is a task after the shift at which neither fact had been removed before."""
    removed = {STALE: run.stale_removed_turn, TRUE: run.true_removed_turn}
    evidence: dict = {}
    for turn, success, retrieved, crowded in zip(
        run.task_turns, run.successes, run.retrieved, run.crowded_out
    ):
        if turn < run.shift_turn or any(r is not None and r < turn for r in removed.values()):
            continue
        if rule is DeprecationRule.SEQUENTIAL and crowded:
            continue
        for mem_id in (STALE, TRUE):
            if mem_id not in evidence:
                evidence[mem_id] = (
                    EffectArms()
                    if rule is DeprecationRule.EFFECT
                    else HarmTest(co_retrieval, setting.get("alpha", 0.01))
                )
            evidence[mem_id].add(mem_id in retrieved, success)
    return evidence


def assert_same_as_policy(
    session, rules: dict, rule: DeprecationRule = DeprecationRule.WORTH, setting: dict | None = None
) -> GovernanceRun:
    """The memory's run is the rule's policy's, field for field, and so are its evidence (counters,
    arms, tests), its deprecations and the engine's facts at the end."""
    setting = dict(setting or {})
    run, memory = drive(session, rules, rule, setting)
    policy = GovernancePolicy.of_rule(rule)
    expected = run_governance(session, policy, **rules, **setting)
    assert run == expected
    world = session.world
    if rule is DeprecationRule.DISCOUNTED:  # the counters: the estimator's on the run's tasks
        estimator = DiscountedMemoryWorth(
            discount=setting.get("discount", 0.9), min_evidence=rules["min_evidence"]
        )
        for success, retrieved in zip(expected.successes, expected.retrieved):
            if retrieved:
                estimator.update(list(retrieved), success)
        for mem_id in (STALE, TRUE):
            assert memory.counters(mem_id) == estimator.counters(mem_id)
    else:  # one unit per task that retrieved the fact, in h+ or h-
        for mem_id in (STALE, TRUE):
            tasks = [s for s, r in zip(expected.successes, expected.retrieved) if mem_id in r]
            assert memory.counters(mem_id) == (float(sum(tasks)), float(len(tasks) - sum(tasks)))
    if rule in (DeprecationRule.EFFECT, DeprecationRule.SEQUENTIAL):
        evidence = expected_evidence(expected, rule, setting, world.co_retrieval)
        for mem_id in (STALE, TRUE):
            found = evidence.get(mem_id)
            arms = found if isinstance(found, EffectArms) or found is None else found.arms
            assert memory.arms(mem_id) == (
                (0, 0, 0, 0) if arms is None else (arms.n1, arms.k1, arms.n0, arms.k0)
            )
            if rule is DeprecationRule.SEQUENTIAL:
                assert memory.harm_evidence(mem_id) == (1.0 if found is None else found.evidence)
    else:
        assert memory.arms(STALE) == memory.arms(TRUE) == (0, 0, 0, 0)
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
        setting.get("discount", 1.0),
        setting.get("effect_z", 2.576),
        setting.get("alpha", 0.01),
    )
    engine = _play(session, policy, rule_tuple)[1]
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


def assert_same_as_combined(session, rules: dict) -> GovernanceRun:
    return assert_same_as_policy(session, rules)


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


# --- the other rules: discounted, effect, sequential ----------------------------------------------

OTHER_RULES = (DeprecationRule.DISCOUNTED, DeprecationRule.EFFECT, DeprecationRule.SEQUENTIAL)


@pytest.mark.parametrize("seed", range(0, 8))
@pytest.mark.parametrize("rule", OTHER_RULES, ids=str)
def test_the_published_sessions_play_as_the_rules_policy(rule, seed):
    world, rules = published_world()
    assert_same_as_policy(generate_governance_session(world, seed), rules, rule, published_rule(rule))


@pytest.mark.parametrize("rule", [DeprecationRule.EFFECT, DeprecationRule.SEQUENTIAL], ids=str)
def test_the_evidence_rules_keep_the_true_fact_and_deprecate_the_stale_one(rule):
    """The comparison is not vacuous: as in the chapter (every one of its sessions), the stale
    fact is deprecated after the shift on evidence of both arms, and the true one is kept."""
    world, rules = published_world()
    for seed in range(0, 8):
        _, memory = drive(generate_governance_session(world, seed), rules, rule, published_rule(rule))
        assert list(memory.deprecated()) == [STALE] and memory.deprecated()[STALE] > world.shift_turn
        assert TRUE in memory.held()
        n1, _, n0, _ = memory.arms(STALE)
        assert n1 > 0 and n0 > 0


@pytest.mark.parametrize("field", ["co_retrievals", "crowdings", "confounds"])
@pytest.mark.parametrize("rule", OTHER_RULES, ids=str)
def test_the_published_sweeps_play_as_the_rules_policy(rule, field):
    """Both ends of the co_retrieval sweep (at 1 no task is a contrast of the two), crowded-out
    tasks (counted by the effect interval, not by the sequential test) and the confound."""
    world, rules = published_world()
    p = published()
    for value in p[field]:
        if field == "co_retrievals":
            swept = replace(world, co_retrieval=value)
        elif field == "crowdings":
            swept = replace(world, crowding=value)
        else:
            swept = replace(world, confound=value, difficulty=p["difficulty"])
        for seed in range(2):
            assert_same_as_policy(generate_governance_session(swept, seed), rules, rule, published_rule(rule))


@settings(max_examples=60, deadline=None)
@given(
    rule=st.sampled_from(OTHER_RULES),
    seed=st.integers(0, 2**32),
    session_length=st.integers(3, 160),
    shift=st.integers(2, 60),
    task_rate=st.floats(0.0, 1.0),
    co_retrieval=st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
    noise_per_turn=st.integers(0, 3),
    crowding=st.sampled_from([0.0, 0.01, 0.1]),
    confound=st.sampled_from([0.0, 0.5, 1.0]),
    difficulty=st.sampled_from([0.0, 0.5]),
    outcome=st.tuples(*[st.sampled_from([0.0, 0.05, 0.25, 0.5, 0.9, 1.0])] * 4),
    eviction_threshold=st.floats(0.05, 0.6),
    min_evidence=st.sampled_from([1.0, 2.0, 5.0]),
    low_threshold=st.floats(0.0, 0.6),
    discount=st.sampled_from([0.3, 0.8, 0.9, 0.99, 1.0]),
    effect_z=st.sampled_from([0.0, 1.0, 1.645, 2.576, 3.291]),
    alpha=st.sampled_from([0.001, 0.01, 0.05, 0.3, 0.9]),
)
def test_any_session_plays_as_the_rules_policy(
    rule,
    seed,
    session_length,
    shift,
    task_rate,
    co_retrieval,
    noise_per_turn,
    crowding,
    confound,
    difficulty,
    outcome,
    eviction_threshold,
    min_evidence,
    low_threshold,
    discount,
    effect_z,
    alpha,
):
    world = GovernanceWorld(
        session_length=session_length,
        shift_turn=min(shift, session_length - 1),
        task_rate=task_rate,
        co_retrieval=co_retrieval,
        noise_per_turn=noise_per_turn,
        crowding=crowding,
        confound=confound,
        difficulty=difficulty,
        outcome=GovernanceOutcome(*outcome),
    )
    rules = {
        "eviction_threshold": eviction_threshold,
        "min_evidence": min_evidence,
        "low_threshold": low_threshold,
    }
    name = RULE_SETTING[rule]
    setting = {name: {"discount": discount, "effect_z": effect_z, "alpha": alpha}[name]}
    assert_same_as_policy(generate_governance_session(world, seed), rules, rule, setting)


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


def test_the_rules_defaults_are_the_chapters_published_ones():
    p = published()
    defaults = inspect.signature(GovernedMemory).parameters
    for name in ("discount", "effect_z", "alpha"):
        assert defaults[name].default == p[name], name
    assert defaults["rule"].default is DeprecationRule.WORTH
    assert GovernedMemory(rule="effect").settings()["effect_z"] == p["effect_z"]
    assert GovernedMemory(rule="discounted").settings()["discount"] == p["discount"]
    s = GovernedMemory(rule=DeprecationRule.SEQUENTIAL, co_retrieval=p["co_retrieval"]).settings()
    assert (s["rule"], s["alpha"], s["co_retrieval"]) == ("sequential", p["alpha"], p["co_retrieval"])
    assert "effect_z" not in s and "discount" not in s  # only the rule's own settings
    assert GovernedMemory(**s).settings() == s


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


@pytest.mark.parametrize(
    ("kwargs", "parts"),
    [
        (
            {"rule": "effects", "effect_z": 11.0, "alpha": 0.0, "discount": 0.0},
            [
                "rule must be one of 'worth', 'discounted', 'effect', 'sequential'",
                "got 'effects'",
                "effect_z must be a real number in [0, 10], got 11.0",
                "alpha must be a real number in (0, 1), got 0.0",
                "discount must be a real number in (0, 1], got 0.0",
            ],
        ),
        (
            {"effect_z": 1.0, "co_retrieval": 0.5, "alpha": 0.01},  # alpha: the default, so fine
            [
                "effect_z is a setting of rule 'effect', not of rule 'worth': got effect_z=1.0",
                "co_retrieval is a setting of rule 'sequential', not of rule 'worth': got co_retrieval=0.5",
            ],
        ),
        (
            {"rule": "sequential", "alpha": 1.0, "min_evidence": -1},
            [
                "co_retrieval is required by rule 'sequential'",
                "alpha must be a real number in (0, 1), got 1.0",
            ],
        ),
        (
            {"rule": DeprecationRule.SEQUENTIAL, "co_retrieval": 1.5, "discount": 0.5},
            [
                "co_retrieval must be a real number in [0, 1], got 1.5",
                "discount is a setting of rule 'discounted', not of rule 'sequential'",
            ],
        ),
        ({"rule": 3}, ["rule must be one of", "got 3"]),
    ],
)
def test_bad_rule_settings_are_named_together(kwargs, parts):
    with pytest.raises(ValueError) as error:
        GovernedMemory(**kwargs)
    message = str(error.value)
    for part in parts:
        assert part in message
    if "min_evidence" in kwargs:
        assert "min_evidence" in message
    if kwargs.get("alpha") == 0.01:
        assert "alpha" not in message


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
        (
            lambda m: m.outcome([], success=True, turn=6, candidates="x"),
            r"candidates must be a sequence.*'x'",
        ),
        (
            lambda m: m.outcome([], success=True, turn=6, candidates=["x", "zz"]),
            r"candidates.*never-stored \['zz'\]",
        ),
        (lambda m: m.outcome([], success=True, turn=6, candidates=["x", "x"]), r"candidates must not repeat"),
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


def test_the_sequential_rule_takes_two_candidates_and_reads_its_own_evidence():
    memory = GovernedMemory(rule="sequential", co_retrieval=0.5)
    for mem_id in "abc":
        memory.store(mem_id, turn=1)
    before = memory.to_dict()
    for bad in (["a"], ["a", "b", "c"]):
        with pytest.raises(ValueError, match=r"candidates must be empty or two ids under rule 'sequential'"):
            memory.outcome(["a"], success=True, turn=2, candidates=bad)
    assert memory.to_dict() == before
    memory.outcome(["a"], success=False, turn=2, candidates=["a", "b"])
    assert memory.arms("a") == (1, 0, 0, 0) and memory.arms("b") == (0, 0, 1, 0)
    q = 0.75  # the first bet of a's product: 1 + lam / q with lam = share * min(q, 1 - q)
    assert memory.harm_evidence("a") == pytest.approx(sum(1 + s * 0.25 / q for s in (0.25, 0.5, 0.75)) / 3)
    assert memory.harm_evidence("c") == 1.0
    memory.outcome([], success=False, turn=3, candidates=["a", "b"])  # neither retrieved: not counted
    assert memory.arms("a") == (1, 0, 0, 0)
    with pytest.raises(ValueError, match=r"harm_evidence is the 'sequential' rule's; .* 'worth'"):
        GovernedMemory().harm_evidence("a")


def test_a_contrast_task_needs_every_candidate_held():
    memory = GovernedMemory(rule="effect", effect_z=0.5)  # one look each: no session-wide level
    memory.store("a", turn=1)
    memory.store("b", turn=1)
    assert memory.outcome(["a"], success=False, turn=2, candidates=["a", "b"]) == []
    assert memory.outcome(["b"], success=True, turn=3, candidates=["a", "b"]) == ["a"]
    assert memory.arms("a") == (1, 0, 1, 1) and memory.counters("a") == (0.0, 1.0)
    assert memory.outcome([], success=True, turn=4, candidates=["a", "b"]) == []  # a is deprecated
    assert memory.arms("b") == (1, 1, 1, 0)
    memory.store("c", turn=5)
    memory.step(40)  # evicts b and c
    assert memory.outcome([], success=True, turn=41, candidates=["b", "c"]) == []
    assert memory.arms("b") == (1, 1, 1, 0) and memory.arms("c") == (0, 0, 0, 0)
    worth = GovernedMemory(min_evidence=1.0)  # the worth rules ignore candidates
    worth.store("a", turn=1)
    worth.store("b", turn=1)
    assert worth.outcome([], success=False, turn=2, candidates=["a", "b"]) == []
    assert worth.arms("a") == (0, 0, 0, 0) and worth.counters("a") == (0.0, 0.0)


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
CANDIDATES = [[], ["a", "b"], ["b", "a"], ["a", "c"], ["a"], ["a", "b", "c"], ["a", "zz"]]
EVENT = st.tuples(
    st.sampled_from(["store", "retrieve", "outcome", "step"]),
    st.integers(0, 3),  # turns to advance
    st.lists(st.sampled_from(IDS), max_size=4),
    st.booleans(),
    st.sampled_from(CANDIDATES),
)
RULE_SETTINGS = {
    DeprecationRule.WORTH: st.just({}),
    DeprecationRule.DISCOUNTED: st.fixed_dictionaries({"discount": st.sampled_from([0.01, 0.5, 0.9, 1.0])}),
    DeprecationRule.EFFECT: st.fixed_dictionaries({"effect_z": st.sampled_from([0.0, 0.5, 2.576])}),
    DeprecationRule.SEQUENTIAL: st.fixed_dictionaries(
        {"alpha": st.sampled_from([0.01, 0.3, 0.9]), "co_retrieval": st.sampled_from([0.0, 0.5, 0.9])}
    ),
}


def apply(memory: GovernedMemory, event, turn: int):
    """One event; what it returned, or the refusal's message."""
    kind, _, ids, flag, candidates = event
    try:
        if kind == "store":
            return memory.store(ids[0] if ids else "a", turn=turn, content=f"c{turn}")
        if kind == "retrieve":
            return memory.retrieve(list(dict.fromkeys(ids)), turn=turn)
        if kind == "outcome":
            return memory.outcome(list(dict.fromkeys(ids)), success=flag, turn=turn, candidates=candidates)
        if kind == "task":  # a retrieval and its outcome
            used = memory.retrieve(ids, turn=turn)
            return used, memory.outcome(used, success=flag, turn=turn, candidates=candidates)
        return memory.step(turn)
    except ValueError as error:
        return f"refused: {error}"


def assert_round_trip_keeps_the_future(memory: GovernedMemory, events, turn: int) -> None:
    """``memory`` through JSON: the same dict and, event after event, the same answers."""
    data = memory.to_dict()
    text = json.dumps(data, allow_nan=False)
    restored = GovernedMemory.from_dict(json.loads(text))
    assert restored.to_dict() == data
    assert json.dumps(restored.to_dict(), allow_nan=False) == text
    for event in events:
        turn += event[1]
        assert apply(restored, event, turn) == apply(memory, event, turn)
        assert restored.to_dict() == memory.to_dict()
    for mem_id, _ in memory.to_dict()["memories"]:
        assert restored.status(mem_id) is memory.status(mem_id)
        assert restored.counters(mem_id) == memory.counters(mem_id)
        assert restored.arms(mem_id) == memory.arms(mem_id)
        if memory.rule is DeprecationRule.SEQUENTIAL:
            assert restored.harm_evidence(mem_id) == memory.harm_evidence(mem_id)


@pytest.mark.parametrize("rule", list(DeprecationRule), ids=str)
@settings(max_examples=20, deadline=None)
@given(
    events=st.lists(EVENT, min_size=200, max_size=400),
    cut=st.floats(0.0, 1.0),
    rules=st.fixed_dictionaries(
        {"eviction_threshold": st.floats(0.05, 0.5), "min_evidence": st.sampled_from([1.0, 3.0, 5.0])}
    ),
    data=st.data(),
)
def test_a_json_round_trip_keeps_the_state_and_the_future(rule, events, cut, rules, data):
    memory = GovernedMemory(**rules, rule=rule, **data.draw(RULE_SETTINGS[rule]))
    for mem_id in "abc":  # the candidates' memories, stored from the start
        memory.store(mem_id, turn=0)
    turn = 0
    split = int(cut * len(events))
    for event in events[:split]:
        turn += event[1]
        before = memory.to_dict()
        if str(apply(memory, event, turn)).startswith("refused"):
            assert memory.to_dict() == before  # a refused call changes nothing
    assert_round_trip_keeps_the_future(memory, events[split:], turn)


@pytest.mark.parametrize("rule", list(DeprecationRule), ids=str)
def test_a_json_round_trip_midway_through_contrast_tasks_keeps_the_evidence(rule):
    """A stream like the chapter's after its shift (a coin retrieves both facts or one of them;
    the stale one, a, hurts): cut midway, where the evidence is substantial, the restored memory
    plays the rest as the memory does."""
    rng = np.random.default_rng(3)
    memory = GovernedMemory(
        rule=rule, **({"co_retrieval": 0.5} if rule is DeprecationRule.SEQUENTIAL else {})
    )
    events = [("store", 1, ["a"], True, []), ("store", 0, ["b"], True, [])]
    for _ in range(80):
        which = [["a", "b"], ["a", "b"], ["a"], ["b"]][rng.integers(4)]
        success = rng.random() < {"ab": 0.25, "a": 0.05, "b": 0.9}["".join(which)]
        events.append(("task", 1, which, bool(success), ["a", "b"]))
    turn = 0
    for event in events[:30]:
        turn += event[1]
        assert not str(apply(memory, event, turn)).startswith("refused")
    evidence = rule in (DeprecationRule.EFFECT, DeprecationRule.SEQUENTIAL)
    if evidence:
        assert all(n > 0 for n in memory.arms("a")[::2]), memory.arms("a")
    assert_round_trip_keeps_the_future(memory, events[30:], turn)
    assert "a" in memory.deprecated()
    if evidence:  # the worth rules lose b with a here: it shares a's failures when both come back
        assert memory.held() == ["b"]


def test_a_discounted_round_trip_keeps_the_rescaled_counters():
    """At discount 0.01 the estimator rescales its counters every ~60 outcomes; the stored values
    and the scale are written as they are, so the future is the same to the last bit."""
    memory = GovernedMemory(rule="discounted", discount=0.01, min_evidence=1e-300)
    memory.store("a", turn=0)
    memory.store("b", turn=0)
    events = [("outcome", 0, ["a"] if i % 3 else ["a", "b"], i % 2 == 0, []) for i in range(300)]
    for event in events[:130]:
        apply(memory, event, 0)
    assert memory.to_dict()["worth_scale"] != 1.0
    assert_round_trip_keeps_the_future(memory, events[130:], 0)


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


VERSION_1 = {
    "format": "forgetting.GovernedMemory",
    "version": 1,
    "settings": {
        "eviction_threshold": 0.2,
        "baseline_stability": 8.0,
        "prior": 0.5,
        "min_evidence": 2.0,
        "high_threshold": 0.7,
        "low_threshold": 0.3,
    },
    "turn": 6,
    "memories": [["a", "x"], [7, ""], ["b", ""]],
    "working_set": [[0, 1, 4, 3], [1, 1, 1, 1], [2, 2, 6, 5]],
    "worth": [[0, 0.0, 2.0], [2, 1.0, 1.0]],
    "outcomes": 4,
    "deprecated": [[0, 4]],
}
"""What version 1 (before the rules) wrote after stores of a, 7 and b, three tasks that retrieved
a and b and failed, reported for the first retrieved only, and one that retrieved b and succeeded."""


def test_version_1_is_read_as_a_worth_memory():
    memory = GovernedMemory.from_dict(json.loads(json.dumps(VERSION_1)))
    assert memory.rule is DeprecationRule.WORTH
    assert memory.deprecated() == {"a": 4} and memory.held() == [7, "b"]
    assert memory.counters("b") == (1.0, 1.0) and memory.content("a") == "x"
    again = GovernedMemory(min_evidence=2.0)  # the same calls today
    again.store("a", turn=1, content="x")
    again.store(7, turn=1)
    again.store("b", turn=2)
    for turn in range(3, 6):
        used = again.retrieve(["a", "b"], turn=turn)
        again.outcome(used[:1], success=False, turn=turn)
    again.outcome(again.retrieve(["b"], turn=6), success=True, turn=6)
    assert memory.to_dict() == again.to_dict()
    assert memory.to_dict()["version"] == 2
    with pytest.raises(ValueError, match=r"data has version 1 but settings with a rule"):
        GovernedMemory.from_dict({**VERSION_1, "settings": {**VERSION_1["settings"], "rule": "effect"}})


def test_another_version_is_refused_clearly():
    data = GovernedMemory().to_dict()
    for version in (3, 0, "2", True):
        with pytest.raises(ValueError, match=r"data has version .*; this library reads versions 1 and 2"):
            GovernedMemory.from_dict({**data, "version": version})
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


def test_damaged_evidence_is_refused():
    memory = GovernedMemory(rule="sequential", co_retrieval=0.5)
    memory.store("a", turn=1)
    memory.store("b", turn=1)
    for turn in range(2, 6):
        memory.outcome(["a"], success=False, turn=turn, candidates=["a", "b"])
    data = memory.to_dict()
    (i, n1, k1, n0, k0, products), _ = data["evidence"]
    assert (n1, k1, n0, k0) == (4, 0, 0, 0) and products[0] > 1.0

    def with_evidence(entry):
        return {**data, "evidence": [entry, data["evidence"][1]]}

    with pytest.raises(ValueError, match=r"has products that are not its counts'"):
        GovernedMemory.from_dict(with_evidence([i, n1, k1, n0, k0, [products[0] * 1.01, *products[1:]]]))
    with pytest.raises(ValueError, match=r"has products that are not its counts'"):
        GovernedMemory.from_dict(with_evidence([i, n1, k1, n0, k0, products[:2]]))
    with pytest.raises(ValueError, match=r"is not the arms of a memory listed once"):
        GovernedMemory.from_dict(with_evidence([i, n1, 5, n0, k0, products]))
    with pytest.raises(ValueError, match=r"is not the arms of a memory listed once"):
        GovernedMemory.from_dict({**data, "evidence": [data["evidence"][0]] * 2})
    with pytest.raises(ValueError, match=r"evidence entry \[0, 4, 0, 0, 0\] is not a 6-item list"):
        GovernedMemory.from_dict(with_evidence([i, n1, k1, n0, k0]))
    worth = GovernedMemory().to_dict()
    with pytest.raises(ValueError, match=r"evidence must be empty under rule 'worth'"):
        GovernedMemory.from_dict({**worth, "evidence": [[0, 1, 0, 0, 0]]})
    with pytest.raises(ValueError, match=r"worth_scale must be 1.0 under rule 'worth', got 0.5"):
        GovernedMemory.from_dict({**worth, "worth_scale": 0.5})
    discounted = GovernedMemory(rule="discounted").to_dict()
    with pytest.raises(ValueError, match=r"worth_scale must be a real number in \(0, 1\], got 0.0"):
        GovernedMemory.from_dict({**discounted, "worth_scale": 0.0})
    with pytest.raises(ValueError, match=r"not a GovernedMemory's to_dict \(KeyError: 'evidence'"):
        GovernedMemory.from_dict({k: v for k, v in data.items() if k != "evidence"})


def test_a_long_stream_round_trip_keeps_underflowed_products():
    """Over thousands of contrast tasks of a fact with no effect the test's products shrink below
    the smallest float; they are written as they are and read back as consistent with the counts."""
    rng = np.random.default_rng(1)
    memory = GovernedMemory(rule="sequential", co_retrieval=0.5)
    memory.store("a", turn=0)
    memory.store("b", turn=0)
    for turn in range(4000):
        used = memory.retrieve([["a", "b"], ["a"], ["b"]][rng.integers(3)], turn=turn)
        memory.outcome(used, success=bool(rng.random() < 0.5), turn=turn, candidates=["a", "b"])
    products = memory.to_dict()["evidence"][0][5]
    assert products[-1] < 1e-290 and memory.deprecated() == {}
    events = [("task", 1, ["a"], i % 2 == 0, ["a", "b"]) for i in range(50)]
    assert_round_trip_keeps_the_future(memory, events, 3999)
